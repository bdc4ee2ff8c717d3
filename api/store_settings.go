package api

import (
	"net/http"
	"strings"
	_ "time/tzdata" // zone names do not depend on the host's zoneinfo

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

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
	Numerals              string   `json:"numerals"`
}

func newSettingsResponse(s storage.StoreSettings) settingsResponse {
	return settingsResponse{Name: s.Name, DefaultLanguage: s.DefaultLanguage, AutoCreateShipment: s.AutoCreateShipment,
		ChatConfirmations: s.ChatConfirmations, ConfirmInChat: s.ConfirmInChat, ChatTemplatesApproved: orEmpty(s.ChatTemplatesApproved),
		EInvoicing: s.EInvoicing, AbandonmentMinutes: s.AbandonmentMinutes, MaxLineQuantity: s.MaxLineQuantity, MaxOrderQuantity: s.MaxOrderQuantity,
		Timezone: s.Timezone, WeekStart: s.WeekStart, CardPaymentMinutes: s.CardPaymentMinutes, Numerals: s.Numerals}
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

// handleUpdateSettings serves PATCH /stores/{store_id}/settings: it changes the store's name, language
// and order automation switches (settings:write).
func (s *Server) handleUpdateSettings() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.UpdateSettings](r)
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
		if req.Numerals.Set {
			upd.Numerals = &req.Numerals.Value
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
