package request

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/numerals"
)

// chatTemplates are the templates the order confirmations use.
var chatTemplates = []string{"order_confirmation", "order_confirmation_request"}

// UpdateSettings is the JSON body handleUpdateSettings reads (api/store_settings.go).
type UpdateSettings struct {
	Name                  wire.Optional[string]   `json:"name"`
	DefaultLanguage       wire.Optional[string]   `json:"default_language"`
	AutoCreateShipment    wire.Optional[bool]     `json:"auto_create_shipment"`
	ChatConfirmations     wire.Optional[bool]     `json:"chat_confirmations"`
	ConfirmInChat         wire.Optional[bool]     `json:"confirm_in_chat"`
	ChatTemplatesApproved wire.Optional[[]string] `json:"chat_templates_approved"`
	EInvoicing            wire.Optional[bool]     `json:"e_invoicing"`
	AbandonmentMinutes    wire.Optional[int]      `json:"abandonment_threshold_minutes"`
	MaxLineQuantity       wire.Optional[int]      `json:"max_line_quantity"`
	MaxOrderQuantity      wire.Optional[int]      `json:"max_order_quantity"`
	Timezone              wire.Optional[string]   `json:"timezone"`
	WeekStart             wire.Optional[string]   `json:"week_start"`
	CardPaymentMinutes    wire.Optional[int]      `json:"card_payment_timeout_minutes"`
	Numerals              wire.Optional[string]   `json:"numerals"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateSettings) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "name", req.Name) {
		c.Text("name", req.Name.Value, 1, 200)
	}
	if notNull(&c, "default_language", req.DefaultLanguage) {
		c.OneOf("default_language", req.DefaultLanguage.Value, []string{"ar", "en"})
	}
	notNull(&c, "auto_create_shipment", req.AutoCreateShipment)
	notNull(&c, "chat_confirmations", req.ChatConfirmations)
	notNull(&c, "confirm_in_chat", req.ConfirmInChat)
	notNull(&c, "e_invoicing", req.EInvoicing)
	if notNull(&c, "abandonment_threshold_minutes", req.AbandonmentMinutes) {
		v := req.AbandonmentMinutes.Value
		if v < storage.MinAbandonmentMinutes || v > storage.MaxAbandonmentMinutes {
			c.Add("abandonment_threshold_minutes", "out_of_range", "must be between 5 and 2880")
		}
	}
	if notNull(&c, "max_line_quantity", req.MaxLineQuantity) && (req.MaxLineQuantity.Value < 1 || req.MaxLineQuantity.Value > 100000) {
		c.Add("max_line_quantity", "out_of_range", "must be between 1 and 100000")
	}
	if notNull(&c, "max_order_quantity", req.MaxOrderQuantity) && (req.MaxOrderQuantity.Value < 1 || req.MaxOrderQuantity.Value > 1000000) {
		c.Add("max_order_quantity", "out_of_range", "must be between 1 and 1000000")
	}
	// A null timezone goes back to the currency's default (§17).
	if req.Timezone.Set && !req.Timezone.Null && !knownTimezone(req.Timezone.Value) {
		c.Add("timezone", "unknown_timezone", "must be an IANA time zone name such as Africa/Cairo")
	}
	if notNull(&c, "card_payment_timeout_minutes", req.CardPaymentMinutes) {
		if v := req.CardPaymentMinutes.Value; v < storage.MinCardPaymentMinutes || v > storage.MaxCardPaymentMinutes {
			c.Add("card_payment_timeout_minutes", "out_of_range", "must be between 10 and 1440")
		}
	}
	if notNull(&c, "numerals", req.Numerals) {
		c.OneOf("numerals", req.Numerals.Value, numerals.Systems)
	}
	if notNull(&c, "week_start", req.WeekStart) {
		c.OneOf("week_start", req.WeekStart.Value, storage.WeekStarts)
	}
	if notNull(&c, "chat_templates_approved", req.ChatTemplatesApproved) {
		for i, t := range req.ChatTemplatesApproved.Value {
			if !slices.Contains(chatTemplates, t) {
				c.Add("chat_templates_approved["+strconv.Itoa(i)+"]", "one_of", "must be one of "+strings.Join(chatTemplates, ", "))
			}
		}
	}
	return c.Result()
}

// knownTimezone reports whether name is an IANA zone (the binary carries
// the zone database, so this does not depend on the host's).
func knownTimezone(name string) bool {
	if name == "" || name == "Local" || len(name) > 64 {
		return false
	}
	_, err := time.LoadLocation(name)
	return err == nil
}
