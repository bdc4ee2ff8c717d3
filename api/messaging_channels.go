package api

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/whatsapp"
	"github.com/merchantsvc/svc/storage"
)

// Messaging channels (decisions §25): the store's own WhatsApp Cloud API
// number. The answer never holds the access token or the app secret.

var errChannelProviderUnavailable = newError(http.StatusServiceUnavailable, "CHANNEL_PROVIDER_UNAVAILABLE",
	"WhatsApp did not answer in time; try again shortly", "لم يستجب واتساب في الوقت المحدد؛ أعد المحاولة بعد قليل")

type messagingChannelResponse struct {
	ID            uuid.UUID `json:"id"`
	Channel       string    `json:"channel"`
	Connected     bool      `json:"connected"`
	PhoneNumberID string    `json:"phone_number_id"`
	WABAID        string    `json:"waba_id"`
	DisplayPhone  string    `json:"display_phone"`
	QualityRating *string   `json:"quality_rating"`
	MessagingTier *string   `json:"messaging_tier"`
	CallbackURL   string    `json:"callback_url"`
	VerifyToken   string    `json:"verify_token"`
	ConnectedAt   time.Time `json:"connected_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

func (s *Server) newMessagingChannelResponse(c storage.MessagingChannel) messagingChannelResponse {
	return messagingChannelResponse{ID: c.ID, Channel: c.Channel, Connected: true, PhoneNumberID: c.PhoneNumberID, WABAID: c.WABAID,
		DisplayPhone: c.DisplayPhone, QualityRating: c.QualityRating, MessagingTier: c.MessagingTier,
		CallbackURL: s.cfg.BaseURL + "/api/v1/messaging/whatsapp/" + c.ID.String(), VerifyToken: c.VerifyToken,
		ConnectedAt: c.ConnectedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
}

// whatsAppChannel refuses any channel but whatsapp with 404.
func whatsAppChannel(r *http.Request) error {
	if chi.URLParam(r, "channel") != storage.ChannelWhatsApp {
		return errNotFound
	}
	return nil
}

// handleConnectWhatsApp serves PUT /stores/{store_id}/messaging/channels/{channel}
// (settings:write): the number is read at the provider with the token
// first, then the secrets are kept sealed.
func (s *Server) handleConnectWhatsApp() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := whatsAppChannel(r); err != nil {
			return err
		}
		req, err := wire.Decode[request.ConnectWhatsApp](r)
		if err != nil {
			return err
		}
		if s.cfg.Secrets == nil {
			return errSecretsKeyMissing
		}
		number, err := whatsapp.CheckPhoneNumber(r.Context(), s.cfg.WhatsAppAPIBase, req.PhoneNumberID, req.AccessToken)
		var refused *whatsapp.RefusedError
		switch {
		case errors.As(err, &refused) && (refused.Code == 190 || refused.Status == http.StatusUnauthorized):
			return validationError([]wire.FieldError{{Field: "access_token", Code: "provider_refused",
				Message: "WhatsApp refused this access token", MessageAr: "رفض واتساب رمز الوصول هذا"}})
		case errors.As(err, &refused):
			return validationError([]wire.FieldError{{Field: "phone_number_id", Code: "provider_refused",
				Message: "WhatsApp does not know this phone number id for this token", MessageAr: "لا يعرف واتساب معرّف رقم الهاتف هذا لهذا الرمز"}})
		case err != nil:
			loggerFrom(r.Context()).WarnContext(r.Context(), "check whatsapp number: the provider did not answer", slog.String("error", err.Error()))
			return errChannelProviderUnavailable
		}
		conn := storage.WhatsAppConnection{StoreID: storeIDFrom(r.Context()), PhoneNumberID: req.PhoneNumberID, WABAID: req.WABAID,
			AccessToken: req.AccessToken, AppSecret: req.AppSecret, DisplayPhone: number.DisplayPhoneNumber,
			QualityRating: nullIfEmpty(number.QualityRating), MessagingTier: nullIfEmpty(number.MessagingLimitTier)}
		var ch storage.MessagingChannel
		if err := s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			ch, err = tx.ConnectWhatsApp(r.Context(), s.cfg.Secrets, conn)
			return err
		}); err != nil {
			return err
		}
		respond(w, http.StatusOK, s.newMessagingChannelResponse(ch))
		return nil
	}
}

// handleListMessagingChannels serves GET /stores/{store_id}/messaging/channels (settings:read).
func (s *Server) handleListMessagingChannels() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		channels, err := s.db.FindMessagingChannels(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			return err
		}
		out := make([]messagingChannelResponse, 0, len(channels))
		for _, c := range channels {
			out = append(out, s.newMessagingChannelResponse(c))
		}
		respond(w, http.StatusOK, out)
		return nil
	}
}

// handleGetMessagingChannel serves GET /stores/{store_id}/messaging/channels/{channel} (settings:read).
func (s *Server) handleGetMessagingChannel() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := whatsAppChannel(r); err != nil {
			return err
		}
		c, err := s.db.FindMessagingChannel(r.Context(), storeIDFrom(r.Context()), storage.ChannelWhatsApp)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, s.newMessagingChannelResponse(c))
		return nil
	}
}

// handleDisconnectMessagingChannel serves DELETE /stores/{store_id}/messaging/channels/{channel}
// (settings:write): messages go through the process-wide sender again.
func (s *Server) handleDisconnectMessagingChannel() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := whatsAppChannel(r); err != nil {
			return err
		}
		if err := s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			return tx.DisconnectWhatsApp(r.Context(), storeIDFrom(r.Context()))
		}); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}
