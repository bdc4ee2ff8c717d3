package api

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/whatsapp"
	"github.com/merchantsvc/svc/storage"
)

// Message templates (decisions §25): a WhatsApp template is submitted to
// the provider at creation and waits for its verdict (the channel's
// callback); an email template is approved at once.

var (
	errChannelNotConnected = newError(http.StatusConflict, "CHANNEL_NOT_CONNECTED",
		"Connect the store's WhatsApp number first", "اربط رقم واتساب الخاص بالمتجر أولًا")
	errDuplicateTemplate = newError(http.StatusConflict, "DUPLICATE_TEMPLATE",
		"A template of this name and language exists on this channel", "يوجد قالب بهذا الاسم واللغة على هذه القناة")
)

type messageTemplateResponse struct {
	ID                 uuid.UUID         `json:"id"`
	Channel            string            `json:"channel"`
	Name               string            `json:"name"`
	Category           string            `json:"category"`
	Language           string            `json:"language"`
	Header             *string           `json:"header"`
	Body               string            `json:"body"`
	Footer             *string           `json:"footer"`
	Buttons            []string          `json:"buttons"`
	Examples           map[string]string `json:"examples"`
	Status             string            `json:"status"`
	RejectionReason    *string           `json:"rejection_reason"`
	ProviderTemplateID *string           `json:"provider_template_id"`
	CreatedAt          time.Time         `json:"created_at"`
	UpdatedAt          time.Time         `json:"updated_at"`
}

func newMessageTemplateResponse(t storage.MessageTemplate) messageTemplateResponse {
	return messageTemplateResponse{ID: t.ID, Channel: t.Channel, Name: t.Name, Category: t.Category, Language: t.Language, Header: t.Header,
		Body: t.Body, Footer: t.Footer, Buttons: t.Buttons, Examples: t.Examples, Status: t.Status, RejectionReason: t.RejectionReason,
		ProviderTemplateID: t.ProviderTemplateID, CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC()}
}

// handleCreateMessageTemplate serves POST /stores/{store_id}/messaging/templates (marketing:write).
func (s *Server) handleCreateMessageTemplate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateMessageTemplate](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		t := storage.MessageTemplate{StoreID: storeID, Channel: req.Channel, Name: req.Name, Category: req.Category, Language: req.Language,
			Header: req.Header, Body: req.Body, Footer: req.Footer, Buttons: req.Buttons, Examples: req.Examples, Status: storage.TemplateApproved}
		if req.Channel == storage.ChannelWhatsApp {
			exists, err := s.db.MessageTemplateExists(r.Context(), storeID, req.Channel, req.Name, req.Language)
			if err != nil {
				return err
			}
			if exists { // before the provider hears of it
				return errDuplicateTemplate
			}
			ch, err := s.db.FindWhatsAppSender(r.Context(), s.cfg.Secrets, storeID)
			if err != nil {
				return err
			}
			if ch == nil {
				return errChannelNotConnected
			}
			id, err := whatsapp.SubmitTemplate(r.Context(), s.cfg.WhatsAppAPIBase, ch.WABAID, ch.AccessToken, whatsapp.Template{Name: req.Name,
				Category: req.Category, Language: req.Language, Header: textOf(req.Header), Footer: textOf(req.Footer), Body: req.Body,
				BodyExamples: req.BodyExamples(), Buttons: req.Buttons})
			var refused *whatsapp.RefusedError
			switch {
			case errors.As(err, &refused):
				return validationError([]wire.FieldError{{Field: "body", Code: "provider_refused",
					Message: "WhatsApp refused this template", MessageAr: "رفض واتساب هذا القالب"}})
			case err != nil:
				loggerFrom(r.Context()).WarnContext(r.Context(), "submit template: the provider did not answer", slog.String("error", err.Error()))
				return errChannelProviderUnavailable
			}
			t.Status, t.ProviderTemplateID = storage.TemplatePending, &id
		}
		return writeView(s, w, r, http.StatusCreated, newMessageTemplateResponse, func(tx *storage.Tx) (storage.MessageTemplate, error) {
			out, err := tx.CreateMessageTemplate(r.Context(), t)
			if errors.Is(err, storage.ErrDuplicateTemplate) {
				return out, errDuplicateTemplate
			}
			return out, err
		})
	}
}

// handleListMessageTemplates serves GET /stores/{store_id}/messaging/templates (marketing:read).
func (s *Server) handleListMessageTemplates() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := storage.MessageTemplateFilter{Page: storage.Page{Page: page, Limit: limit}}
		if c := q.enum("channel", []string{"whatsapp", "email"}, ""); c != "" {
			f.Channel = &c
		}
		if st := q.enum("status", []string{storage.TemplatePending, storage.TemplateApproved, storage.TemplateRejected,
			storage.TemplatePaused, storage.TemplateDisabled}, ""); st != "" {
			f.Status = &st
		}
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindMessageTemplates(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(list, newMessageTemplateResponse), page, limit, total))
		return nil
	}
}

// handleGetMessageTemplate serves GET /stores/{store_id}/messaging/templates/{template_id} (marketing:read).
func (s *Server) handleGetMessageTemplate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "template_id")
		if err != nil {
			return err
		}
		t, err := s.db.FindMessageTemplate(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newMessageTemplateResponse(t))
		return nil
	}
}

// handleDeleteMessageTemplate serves DELETE /stores/{store_id}/messaging/templates/{template_id}
// (marketing:write). The provider keeps its copy; no campaign can use the template any more.
func (s *Server) handleDeleteMessageTemplate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "template_id")
		if err != nil {
			return err
		}
		if err := s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			return tx.DeleteMessageTemplate(r.Context(), storeIDFrom(r.Context()), id)
		}); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// textOf is the string s points at, else "".
func textOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
