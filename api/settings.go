package api

import (
	"net/http"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // zone names do not depend on the host's zoneinfo

	"github.com/merchantsvc/svc/storage"
)

// chatTemplates are the templates the order confirmations use.
var chatTemplates = []string{"order_confirmation", "order_confirmation_request"}

type settingsResponse struct {
	Name                  string   `json:"name"`
	DefaultLanguage       string   `json:"default_language"`
	AutoCreateShipment    bool     `json:"auto_create_shipment"`
	ChatConfirmations     bool     `json:"chat_confirmations"`
	ConfirmInChat         bool     `json:"confirm_in_chat"`
	ChatTemplatesApproved []string `json:"chat_templates_approved"`
	EInvoicing            bool     `json:"e_invoicing"`
	AbandonmentMinutes    int      `json:"abandonment_threshold_minutes"`
	MaxLineQuantity       int      `json:"max_line_quantity"`
	MaxOrderQuantity      int      `json:"max_order_quantity"`
	Timezone              string   `json:"timezone"`
	WeekStart             string   `json:"week_start"`
	CardPaymentMinutes    int      `json:"card_payment_timeout_minutes"`
}

func newSettingsResponse(s storage.StoreSettings) settingsResponse {
	return settingsResponse{Name: s.Name, DefaultLanguage: s.DefaultLanguage, AutoCreateShipment: s.AutoCreateShipment,
		ChatConfirmations: s.ChatConfirmations, ConfirmInChat: s.ConfirmInChat, ChatTemplatesApproved: orEmpty(s.ChatTemplatesApproved),
		EInvoicing: s.EInvoicing, AbandonmentMinutes: s.AbandonmentMinutes, MaxLineQuantity: s.MaxLineQuantity, MaxOrderQuantity: s.MaxOrderQuantity,
		Timezone: s.Timezone, WeekStart: s.WeekStart, CardPaymentMinutes: s.CardPaymentMinutes}
}

// handleGetSettings serves GET /stores/{store_id}/settings.
func (s *Server) handleGetSettings() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		settings, err := s.db.FindStoreSettings(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newSettingsResponse(settings))
		return nil
	}
}

type updateSettingsRequest struct {
	Name                  optional[string]   `json:"name"`
	DefaultLanguage       optional[string]   `json:"default_language"`
	AutoCreateShipment    optional[bool]     `json:"auto_create_shipment"`
	ChatConfirmations     optional[bool]     `json:"chat_confirmations"`
	ConfirmInChat         optional[bool]     `json:"confirm_in_chat"`
	ChatTemplatesApproved optional[[]string] `json:"chat_templates_approved"`
	EInvoicing            optional[bool]     `json:"e_invoicing"`
	AbandonmentMinutes    optional[int]      `json:"abandonment_threshold_minutes"`
	MaxLineQuantity       optional[int]      `json:"max_line_quantity"`
	MaxOrderQuantity      optional[int]      `json:"max_order_quantity"`
	Timezone              optional[string]   `json:"timezone"`
	WeekStart             optional[string]   `json:"week_start"`
	CardPaymentMinutes    optional[int]      `json:"card_payment_timeout_minutes"`
}

func (req updateSettingsRequest) Valid() []fieldError {
	var c checker
	if notNull(&c, "name", req.Name) {
		c.text("name", req.Name.Value, 1, 200)
	}
	if notNull(&c, "default_language", req.DefaultLanguage) {
		c.oneOf("default_language", req.DefaultLanguage.Value, []string{"ar", "en"})
	}
	notNull(&c, "auto_create_shipment", req.AutoCreateShipment)
	notNull(&c, "chat_confirmations", req.ChatConfirmations)
	notNull(&c, "confirm_in_chat", req.ConfirmInChat)
	notNull(&c, "e_invoicing", req.EInvoicing)
	if notNull(&c, "abandonment_threshold_minutes", req.AbandonmentMinutes) {
		v := req.AbandonmentMinutes.Value
		if v < storage.MinAbandonmentMinutes || v > storage.MaxAbandonmentMinutes {
			c.add("abandonment_threshold_minutes", "out_of_range", "must be between 5 and 2880")
		}
	}
	if notNull(&c, "max_line_quantity", req.MaxLineQuantity) && (req.MaxLineQuantity.Value < 1 || req.MaxLineQuantity.Value > 100000) {
		c.add("max_line_quantity", "out_of_range", "must be between 1 and 100000")
	}
	if notNull(&c, "max_order_quantity", req.MaxOrderQuantity) && (req.MaxOrderQuantity.Value < 1 || req.MaxOrderQuantity.Value > 1000000) {
		c.add("max_order_quantity", "out_of_range", "must be between 1 and 1000000")
	}
	// A null timezone goes back to the currency's default (§17).
	if req.Timezone.Set && !req.Timezone.Null && !knownTimezone(req.Timezone.Value) {
		c.add("timezone", "unknown_timezone", "must be an IANA time zone name such as Africa/Cairo")
	}
	if notNull(&c, "card_payment_timeout_minutes", req.CardPaymentMinutes) {
		if v := req.CardPaymentMinutes.Value; v < storage.MinCardPaymentMinutes || v > storage.MaxCardPaymentMinutes {
			c.add("card_payment_timeout_minutes", "out_of_range", "must be between 10 and 1440")
		}
	}
	if notNull(&c, "week_start", req.WeekStart) {
		c.oneOf("week_start", req.WeekStart.Value, storage.WeekStarts)
	}
	if notNull(&c, "chat_templates_approved", req.ChatTemplatesApproved) {
		for i, t := range req.ChatTemplatesApproved.Value {
			if !slices.Contains(chatTemplates, t) {
				c.add("chat_templates_approved["+itoa(i)+"]", "one_of", "must be one of "+strings.Join(chatTemplates, ", "))
			}
		}
	}
	return c.result()
}

// handleUpdateSettings serves PATCH /stores/{store_id}/settings: it changes the store's name, language
// and order automation switches (settings:write).
func (s *Server) handleUpdateSettings() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[updateSettingsRequest](r)
		if err != nil {
			return err
		}
		var upd storage.StoreSettingsUpdate
		if req.Name.Set {
			name := strings.TrimSpace(req.Name.Value)
			upd.Name = &name
		}
		if req.DefaultLanguage.Set {
			upd.DefaultLanguage = &req.DefaultLanguage.Value
		}
		if req.AutoCreateShipment.Set {
			upd.AutoCreateShipment = &req.AutoCreateShipment.Value
		}
		if req.ChatConfirmations.Set {
			upd.ChatConfirmations = &req.ChatConfirmations.Value
		}
		if req.ConfirmInChat.Set {
			upd.ConfirmInChat = &req.ConfirmInChat.Value
		}
		if req.AbandonmentMinutes.Set {
			upd.AbandonmentMinutes = &req.AbandonmentMinutes.Value
		}
		if req.MaxLineQuantity.Set {
			upd.MaxLineQuantity = &req.MaxLineQuantity.Value
		}
		if req.MaxOrderQuantity.Set {
			upd.MaxOrderQuantity = &req.MaxOrderQuantity.Value
		}
		if req.EInvoicing.Set {
			upd.EInvoicing = &req.EInvoicing.Value
		}
		upd.Timezone = storage.Field[string](req.Timezone)
		if req.WeekStart.Set {
			upd.WeekStart = &req.WeekStart.Value
		}
		if req.CardPaymentMinutes.Set {
			upd.CardPaymentMinutes = &req.CardPaymentMinutes.Value
		}
		if req.ChatTemplatesApproved.Set {
			upd.ChatTemplatesApproved = dedupe(orEmpty(req.ChatTemplatesApproved.Value))
			if upd.ChatTemplatesApproved == nil {
				upd.ChatTemplatesApproved = []string{}
			}
		}
		return writeView(s, w, r, http.StatusOK, newSettingsResponse, func(tx *storage.Tx) (storage.StoreSettings, error) {
			// Settings change rarely: the log shows each field's before and after.
			if current, err := tx.FindStoreSettings(r.Context(), storeIDFrom(r.Context())); err == nil {
				auditBefore(r.Context(), newSettingsResponse(current))
			}
			return tx.UpdateStoreSettings(r.Context(), storeIDFrom(r.Context()), upd)
		})
	}
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
