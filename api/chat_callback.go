package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

var errBadSignature = newError(http.StatusForbidden, "INVALID_SIGNATURE",
	"The callback signature does not match", "توقيع الاستدعاء غير مطابق")

// chatCallback is the WhatsApp-Cloud-style status and reply notification.
type chatCallback struct {
	Entry []struct {
		Changes []struct {
			Value struct {
				Statuses []struct {
					ID     string `json:"id"`
					Status string `json:"status"`
					Errors []struct {
						Code  int    `json:"code"`
						Title string `json:"title"`
					} `json:"errors"`
				} `json:"statuses"`
				Messages []struct {
					Type    string `json:"type"`
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
		mac := hmac.New(sha256.New, []byte(s.cfg.ChatWebhookSecret))
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		if !hmac.Equal([]byte(strings.ToLower(r.Header.Get("X-Hub-Signature-256"))), []byte(want)) {
			return errBadSignature
		}
		var cb chatCallback
		if err := json.Unmarshal(body, &cb); err != nil {
			return wire.ErrMalformedJSON
		}
		updated, confirmed := 0, 0
		for _, entry := range cb.Entry {
			for _, change := range entry.Changes {
				for _, st := range change.Value.Statuses {
					var (
						code    *int
						message string
					)
					if len(st.Errors) > 0 {
						code, message = &st.Errors[0].Code, st.Errors[0].Title
					}
					_, _, err := s.db.ApplyChatStatus(r.Context(), st.ID, st.Status, code, message)
					if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrInvalid) {
						continue // not ours, or a state we do not track
					}
					if err != nil {
						return err
					}
					updated++
				}
				for _, m := range change.Value.Messages {
					if m.Type != "button" || !strings.EqualFold(m.Button.Payload, "confirm") {
						continue
					}
					moved, err := s.db.ConfirmByChat(r.Context(), m.Context.ID)
					if err != nil && !errors.Is(err, storage.ErrNotFound) {
						return err
					}
					if moved {
						confirmed++
					}
				}
			}
		}
		respond(w, http.StatusOK, map[string]int{"statuses_applied": updated, "orders_confirmed": confirmed})
		return nil
	}
}
