package storage

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// StoreSettings are the switches of what follows a placed order.
type StoreSettings struct {
	AutoCreateShipment    bool
	ChatConfirmations     bool
	ConfirmInChat         bool
	ChatTemplatesApproved []string
	DefaultLanguage       string
	Name                  string
	EInvoicing            bool
	AbandonmentMinutes    int
	// MaxLineQuantity and MaxOrderQuantity bound a storefront cart: pieces
	// per line and pieces in all.
	MaxLineQuantity  int
	MaxOrderQuantity int
	// Timezone is the IANA zone reports are read in: the store's choice, or
	// its currency's default (§17). WeekStart is the first day of a week.
	Timezone  string
	WeekStart string
	Currency  string
	// CardPaymentMinutes is how long a card order waits for its payment
	// before it is cancelled (decisions §18).
	CardPaymentMinutes int
	// Numerals are the digits buyers reading Arabic are shown: latn or
	// arab (storage/numerals; decisions §23).
	Numerals string
}

// currencyTimezones are the default report zones by currency (§17); any
// other currency reads in UTC.
var currencyTimezones = map[string]string{
	"EGP": "Africa/Cairo", "SAR": "Asia/Riyadh", "AED": "Asia/Dubai", "KWD": "Asia/Kuwait", "BHD": "Asia/Bahrain",
	"OMR": "Asia/Muscat", "JOD": "Asia/Amman", "QAR": "Asia/Qatar",
}

// DefaultTimezone is the zone a store's reports are read in until it
// chooses one.
func DefaultTimezone(currency string) string {
	if tz, ok := currencyTimezones[currency]; ok {
		return tz
	}
	return "UTC"
}

// WeekStarts are the days a store's weeks may start on; the first is the default.
var WeekStarts = []string{"saturday", "sunday", "monday"}

// Bounds of a store's card payment timeout (decisions §18).
const (
	MinCardPaymentMinutes = 10
	MaxCardPaymentMinutes = 1440
)

// storeSettingsQuery reads a store's settings. Once the store has its own
// WhatsApp number, chat_templates_approved is derived (decisions §25): the
// order templates approved at the provider, utility, in the store's
// language; until then it is the stored list.
const storeSettingsQuery = `SELECT auto_create_shipment, chat_confirmations, confirm_in_chat,
		CASE WHEN EXISTS (SELECT 1 FROM messaging_channels c WHERE c.store_id = stores.id AND c.channel = 'whatsapp')
			THEN ARRAY(SELECT DISTINCT t.name FROM message_templates t WHERE t.store_id = stores.id AND t.channel = 'whatsapp'
				AND t.category = 'utility' AND t.status = 'approved' AND t.language = stores.default_language
				AND t.name IN ('order_confirmation', 'order_confirmation_request') ORDER BY t.name)
			ELSE chat_templates_approved END, default_language, name,
		e_invoicing, abandonment_threshold_minutes, max_line_quantity, max_order_quantity, currency, timezone, week_start,
		card_payment_timeout_minutes, numerals
	FROM stores WHERE id = $1`

// FindStoreSettings reads a store's automation switches.
func (r reader) FindStoreSettings(ctx context.Context, storeID uuid.UUID) (StoreSettings, error) {
	return scanStoreSettings(r.q.QueryRow(ctx, storeSettingsQuery, storeID))
}

func scanStoreSettings(row pgx.Row) (StoreSettings, error) {
	var (
		s        StoreSettings
		timezone *string
	)
	err := row.Scan(&s.AutoCreateShipment, &s.ChatConfirmations, &s.ConfirmInChat,
		&s.ChatTemplatesApproved, &s.DefaultLanguage, &s.Name, &s.EInvoicing, &s.AbandonmentMinutes, &s.MaxLineQuantity, &s.MaxOrderQuantity,
		&s.Currency, &timezone, &s.WeekStart, &s.CardPaymentMinutes, &s.Numerals)
	if err != nil {
		return StoreSettings{}, notFoundIfNoRows(err, "find store settings")
	}
	s.Timezone = DefaultTimezone(s.Currency)
	if timezone != nil {
		s.Timezone = *timezone
	}
	return s, nil
}

// StoreSettingsUpdate is a partial update of the store's switches.
type StoreSettingsUpdate struct {
	Name                  *string
	DefaultLanguage       *string
	AutoCreateShipment    *bool
	ChatConfirmations     *bool
	ConfirmInChat         *bool
	ChatTemplatesApproved []string // nil leaves them
	EInvoicing            *bool
	AbandonmentMinutes    *int
	MaxLineQuantity       *int
	MaxOrderQuantity      *int
	// Timezone set to nil goes back to the currency's default.
	Timezone           Field[string]
	WeekStart          *string
	CardPaymentMinutes *int
	Numerals           *string
}

// UpdateStoreSettings applies a partial update and returns the settings.
func (tx *Tx) UpdateStoreSettings(ctx context.Context, storeID uuid.UUID, upd StoreSettingsUpdate) (StoreSettings, error) {
	if upd.ChatTemplatesApproved != nil {
		var derived bool
		if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM messaging_channels WHERE store_id = $1 AND channel = 'whatsapp')`,
			storeID).Scan(&derived); err != nil {
			return StoreSettings{}, fmt.Errorf("find whatsapp channel: %w", err)
		}
		if derived {
			return StoreSettings{}, &InvalidError{Field: "chat_templates_approved", Code: "read_only",
				Message: "follows the approved utility templates of the store's WhatsApp number"}
		}
	}
	_, err := tx.tx.Exec(ctx, `UPDATE stores SET name = COALESCE($2, name), default_language = COALESCE($3, default_language),
			auto_create_shipment = COALESCE($4, auto_create_shipment), chat_confirmations = COALESCE($5, chat_confirmations),
			confirm_in_chat = COALESCE($6, confirm_in_chat), chat_templates_approved = COALESCE($7, chat_templates_approved),
			e_invoicing = COALESCE($9, e_invoicing), abandonment_threshold_minutes = COALESCE($10, abandonment_threshold_minutes),
			max_line_quantity = COALESCE($11, max_line_quantity), max_order_quantity = COALESCE($12, max_order_quantity),
			timezone = CASE WHEN $13 THEN $14 ELSE timezone END, week_start = COALESCE($15, week_start),
			card_payment_timeout_minutes = COALESCE($16, card_payment_timeout_minutes), numerals = COALESCE($17, numerals), updated_at = $8
		WHERE id = $1`, storeID, upd.Name, upd.DefaultLanguage, upd.AutoCreateShipment, upd.ChatConfirmations, upd.ConfirmInChat,
		upd.ChatTemplatesApproved, tx.now(), upd.EInvoicing, upd.AbandonmentMinutes, upd.MaxLineQuantity, upd.MaxOrderQuantity,
		upd.Timezone.Set, upd.Timezone.ptr(), upd.WeekStart, upd.CardPaymentMinutes, upd.Numerals)
	if err != nil {
		return StoreSettings{}, fmt.Errorf("update store settings: %w", err)
	}
	if upd.EInvoicing != nil { // the older switch of the tax regime (decisions §27)
		if err := tx.switchInvoicing(ctx, storeID, *upd.EInvoicing); err != nil {
			return StoreSettings{}, err
		}
	}
	return tx.FindStoreSettings(ctx, storeID)
}
