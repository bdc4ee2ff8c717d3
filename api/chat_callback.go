package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

var errBadSignature = newError(http.StatusForbidden, "INVALID_SIGNATURE",
	"The callback signature does not match", "توقيع الاستدعاء غير مطابق")

// chatCallback is the WhatsApp-Cloud-style status and reply notification.
type chatCallback struct {
	Entry []struct {
		Changes []struct {
			Field string `json:"field"`
			Value struct {
				// A template's verdict (field message_template_status_update).
				Event                   string          `json:"event"`
				MessageTemplateID       json.RawMessage `json:"message_template_id"`
				MessageTemplateName     string          `json:"message_template_name"`
				MessageTemplateLanguage string          `json:"message_template_language"`
				Reason                  string          `json:"reason"`

				Statuses []struct {
					ID     string `json:"id"`
					Status string `json:"status"`
					Errors []struct {
						Code  int    `json:"code"`
						Title string `json:"title"`
					} `json:"errors"`
				} `json:"statuses"`
				Messages []struct {
					From string `json:"from"`
					Type string `json:"type"`
					Text struct {
						Body string `json:"body"`
					} `json:"text"`
					Context struct {
						ID string `json:"id"`
					} `json:"context"`
					Button struct {
						Payload string `json:"payload"`
					} `json:"button"`
				} `json:"messages"`
			} `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

// handleChatCallback serves POST /chat/callback: it takes the provider's notifications: message status
// changes, and the customer's tap on "confirm", which confirms a PENDING COD order. The body must be
// signed with SVC_CHAT_WEBHOOK_SECRET (X-Hub-Signature-256: sha256=<hex HMAC of the raw body>).
func (s *Server) handleChatCallback() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, wire.MaxJSONBody))
		if err != nil {
			return wire.ErrPayloadTooLarge
		}
		if s.cfg.ChatWebhookSecret == "" {
			return errNotFound
		}
		if !hubSignatureValid(r, body, s.cfg.ChatWebhookSecret) {
			return errBadSignature
		}
		updated, confirmed, _, err := s.applyChatCallback(r.Context(), nil, body)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, map[string]int{"statuses_applied": updated, "orders_confirmed": confirmed})
		return nil
	}
}

// hubSignatureValid checks Meta's X-Hub-Signature-256 (sha256=<hex
// HMAC-SHA256 of the raw body under secret>) in constant time.
func hubSignatureValid(r *http.Request, body []byte, secret string) bool {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(strings.ToLower(r.Header.Get("X-Hub-Signature-256"))), []byte(want))
}

// applyChatCallback takes a provider's notification body: status changes of
// our messages, a customer's tap on "confirm" (a PENDING COD order is
// confirmed) and, on a store's own channel (scope set), an opt-out keyword.
// scope limits every change to one store's messages; nil is the shared
// sender's callback. Repeats change nothing: statuses only move forward, a
// confirmed order is no longer pending and an opted-out customer stays so.
func (s *Server) applyChatCallback(ctx context.Context, scope *uuid.UUID, body []byte) (updated, confirmed, optedOut int, err error) {
	var cb chatCallback
	if err := json.Unmarshal(body, &cb); err != nil {
		return 0, 0, 0, wire.ErrMalformedJSON
	}
	for _, entry := range cb.Entry {
		for _, change := range entry.Changes {
			if change.Field == "message_template_status_update" && scope != nil {
				v := change.Value
				status, known := templateEvents[v.Event]
				if !known {
					continue
				}
				var reason *string
				if v.Reason != "" && v.Reason != "NONE" {
					reason = &v.Reason
				}
				language, _, _ := strings.Cut(v.MessageTemplateLanguage, "_") // en_US is en
				if _, err := s.db.ApplyTemplateStatus(ctx, *scope, strings.Trim(string(v.MessageTemplateID), `"`), v.MessageTemplateName,
					language, status, reason); err != nil {
					return 0, 0, 0, err
				}
				updated++
				continue
			}
			for _, st := range change.Value.Statuses {
				var (
					code    *int
					message string
				)
				if len(st.Errors) > 0 {
					code, message = &st.Errors[0].Code, st.Errors[0].Title
				}
				_, _, err := s.db.ApplyChatStatus(ctx, scope, st.ID, st.Status, code, message)
				if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalid) {
					continue // not ours, or a state we do not track
				}
				if err != nil {
					return 0, 0, 0, err
				}
				updated++
			}
			for _, m := range change.Value.Messages {
				switch {
				case m.Type == "button" && strings.EqualFold(m.Button.Payload, "confirm"):
					moved, err := s.db.ConfirmByChat(ctx, scope, m.Context.ID)
					if err != nil && !errors.Is(err, storage.ErrNotFound) {
						return 0, 0, 0, err
					}
					if moved {
						confirmed++
					}
				case m.Type == "text" && scope != nil && isOptOutKeyword(m.Text.Body) && m.From != "":
					n, err := s.db.OptOutByChat(ctx, *scope, "+"+strings.TrimPrefix(m.From, "+"))
					if err != nil {
						return 0, 0, 0, err
					}
					optedOut += int(n)
				}
			}
		}
	}
	return updated, confirmed, optedOut, nil
}

// templateEvents are the provider's template verdicts as template
// statuses; other events (a flag, a pending deletion) change nothing.
var templateEvents = map[string]string{"APPROVED": storage.TemplateApproved, "REINSTATED": storage.TemplateApproved,
	"REJECTED": storage.TemplateRejected, "PAUSED": storage.TemplatePaused, "DISABLED": storage.TemplateDisabled,
	"PENDING": storage.TemplatePending}

// optOutKeywords are the replies that stop a store's chat messages
// (decisions §25), compared after normalising.
var optOutKeywords = []string{"stop", "ايقاف", "الغاء", "توقف"}

// isOptOutKeyword reports whether a reply is an opt-out keyword: case, the
// spaces around it, Arabic diacritics and tatweel, and the hamza forms of
// alef (إ أ آ → ا) are ignored, so "إيقاف", "ايقاف" and " STOP " all count.
func isOptOutKeyword(text string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == 'إ' || r == 'أ' || r == 'آ':
			b.WriteRune('ا')
		case r == 'ـ' || (r >= 0x064B && r <= 0x0652): // tatweel, harakat
		default:
			b.WriteRune(r)
		}
	}
	return slices.Contains(optOutKeywords, b.String())
}

// handleWhatsAppHandshake serves GET /messaging/whatsapp/{channel_id}: Meta's subscription check,
// answered with hub.challenge as text/plain when hub.mode is subscribe and hub.verify_token is the
// channel's; 403 otherwise, 404 for an unknown channel.
func (s *Server) handleWhatsAppHandshake() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "channel_id")
		if err != nil {
			return errNotFound
		}
		ch, err := s.db.FindWhatsAppCallbackChannel(r.Context(), s.cfg.Secrets, id)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		if q.Get("hub.mode") != "subscribe" || !hmac.Equal([]byte(q.Get("hub.verify_token")), []byte(ch.VerifyToken)) {
			return errVerifyTokenMismatch
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, q.Get("hub.challenge"))
		return nil
	}
}

var errVerifyTokenMismatch = newError(http.StatusForbidden, "VERIFY_TOKEN_MISMATCH",
	"The verify token is not this channel's", "رمز التحقق لا يخص هذه القناة")

var errChannelSignature = newError(http.StatusUnauthorized, "INVALID_SIGNATURE",
	"The callback signature does not match", "توقيع الاستدعاء غير مطابق")

// handleWhatsAppCallback serves POST /messaging/whatsapp/{channel_id}: a store's own channel's
// notifications, signed by Meta with the channel's app secret (X-Hub-Signature-256: sha256=<hex HMAC
// of the raw body>, compared in constant time; 401 and nothing changes otherwise). Only that store's
// messages and customers are touched.
func (s *Server) handleWhatsAppCallback() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, wire.MaxJSONBody))
		if err != nil {
			return wire.ErrPayloadTooLarge
		}
		id, err := pathUUID(r, "channel_id")
		if err != nil {
			return errNotFound
		}
		ch, err := s.db.FindWhatsAppCallbackChannel(r.Context(), s.cfg.Secrets, id)
		if err != nil {
			return err
		}
		if !hubSignatureValid(r, body, ch.AppSecret) {
			return errChannelSignature
		}
		updated, confirmed, optedOut, err := s.applyChatCallback(r.Context(), &ch.StoreID, body)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, map[string]int{"statuses_applied": updated, "orders_confirmed": confirmed, "opted_out": optedOut})
		return nil
	}
}
