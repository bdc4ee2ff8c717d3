package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/orderemail"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/workflows"
)

// orderInStore reads the {order_id} path parameter and finds the store's order.
func (s *Server) orderInStore(r *http.Request) (storage.Order, error) {
	id, err := pathUUID(r, "order_id")
	if err != nil {
		return storage.Order{}, err
	}
	return s.db.FindOrderByRef(r.Context(), storeIDFrom(r.Context()), id.String())
}

// handleConvertDraft serves POST /stores/{store_id}/orders/{order_id}/convert: the draft moves to
// PENDING in the request's transaction, taking its stock, and the dispatcher starts its order-placed
// workflow after commit, as for any new order.
func (s *Server) handleConvertDraft() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, newOrderResponse, func(tx *storage.Tx) (storage.Order, error) {
			return tx.ConvertDraft(r.Context(), storeIDFrom(r.Context()), id, actor(principalFrom(r.Context())))
		})
	}
}

type autopilotResponse struct {
	ID        uuid.UUID `json:"id"`
	OrderID   uuid.UUID `json:"order_id"`
	Reason    string    `json:"reason"`
	Message   string    `json:"message"`
	MessageAr string    `json:"message_ar"`
	Data      any       `json:"data"`
	CreatedAt time.Time `json:"created_at"`
}

// handleListAutopilot serves GET /stores/{store_id}/orders/autopilot-exceptions.
func (s *Server) handleListAutopilot() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		limit := q.intIn("limit", 1, 200, 50)
		offset := q.intIn("offset", 0, 1<<30, 0)
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindAutopilotExceptions(r.Context(), storeIDFrom(r.Context()), limit, offset)
		if err != nil {
			return err
		}
		items := make([]autopilotResponse, 0, len(list))
		for _, e := range list {
			items = append(items, autopilotResponse{ID: e.ID, OrderID: e.OrderID, Reason: e.Reason, Message: e.Message,
				MessageAr: e.MessageAr, Data: e.Data, CreatedAt: e.CreatedAt.UTC()})
		}
		respond(w, http.StatusOK, map[string]any{"items": items, "pagination": map[string]any{
			"offset": offset, "limit": limit, "total": total, "has_next": offset+len(items) < total}})
		return nil
	}
}

// handleResolveAutopilot serves POST
// /stores/{store_id}/orders/autopilot-exceptions/{order_id}/resolve.
func (s *Server) handleResolveAutopilot() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		if _, err := wire.Decode[request.Resolve](r); err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
			n, err := tx.ResolveAutopilotExceptions(r.Context(), storeIDFrom(r.Context()), id)
			if err != nil {
				return nil, err
			}
			if n == 0 {
				return nil, fmt.Errorf("no open exception for order %s: %w", id, storage.ErrNotFound)
			}
			return ok(map[string]any{"order_id": id, "resolved": n}), nil
		})
	}
}

// emailPreviewCSP lets the preview show the email as a mail client would
// (inline styles, data: images) and nothing else.
const emailPreviewCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// handleEmailPreview serves GET /stores/{store_id}/orders/{order_id}/email-preview.
func (s *Server) handleEmailPreview() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := s.orderInStore(r)
		if err != nil {
			return err
		}
		storeID := o.StoreID
		status := storage.OrderStatus(r.URL.Query().Get("status"))
		if status == "" {
			status = o.Status
		}
		var c request.Checker
		c.OneOf("status", string(status), request.AsStrings(storage.OrderStatuses))
		if len(c.Fields) > 0 {
			return validationError(c.Fields)
		}
		settings, err := s.db.FindStoreSettings(r.Context(), storeID)
		if err != nil {
			return err
		}
		email, err := orderemail.Render(settings.Name, settings.DefaultLanguage, settings.Numerals, o, status)
		if err != nil {
			return err
		}
		// The email is the store's text as HTML on the API's origin: it
		// loads nothing, runs nothing and is framed by nobody.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", emailPreviewCSP)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Email-Subject", email.Subject)
		_, _ = w.Write([]byte(email.HTML))
		return nil
	}
}

// refusals are the workflows' refusals (ApplicationError types) a caller sees.
var refusals = map[string]*apiError{
	workflows.RefusalChatDisabled: newError(http.StatusConflict, "CHAT_DISABLED",
		"Chat confirmations are switched off for this store", "رسائل التأكيد عبر الدردشة متوقفة لهذا المتجر"),
	workflows.RefusalChatOptedOut: newError(http.StatusConflict, "CHAT_OPTED_OUT",
		"The customer opted out of chat messages", "اختار العميل عدم تلقي رسائل الدردشة"),
	workflows.RefusalChatNotApproved: newError(http.StatusConflict, "CHAT_TEMPLATE_NOT_APPROVED",
		"The chat template for this order is not approved", "قالب رسالة الدردشة لهذا الطلب غير معتمد"),
	workflows.RefusalChatNoPhone: newError(http.StatusConflict, "CHAT_NO_PHONE",
		"The customer has no phone number", "لا يوجد رقم هاتف للعميل"),
}

// handleResend serves POST /stores/{store_id}/orders/{order_id}/resend-email and POST
// /stores/{store_id}/orders/{order_id}/resend-chat-message: it resends the status email or the chat
// confirmation through the worker and answers what happened.
func (s *Server) handleResend(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := s.orderInStore(r)
		if err != nil {
			return err
		}
		id, storeID := o.ID, o.StoreID
		in := workflows.OrderMessageInput{StoreID: storeID, OrderID: id, Kind: kind}
		ctx, cancel := context.WithTimeout(r.Context(), 40*time.Second)
		defer cancel()
		work := workflows.Work{Kind: workflows.KindOrderMessage, StoreID: storeID, ResourceID: id, OrderNumber: o.OrderNumber,
			Summary: o.OrderNumber + " · resend " + kind + " · " + s.storeLabel(ctx, storeID)}
		run, err := s.temporal.ExecuteWorkflow(ctx, work.StartOptions(workflows.OrderMessageWorkflowID(id, kind, requestID(r.Context())), s.cfg.TaskQueue),
			workflows.OrderMessage, in)
		if err != nil {
			return fmt.Errorf("start resend: %w", err)
		}
		var out workflows.OrderMessageResult
		if err := run.Get(ctx, &out); err != nil {
			return fmt.Errorf("resend %s: %w", kind, err)
		}
		// The change is the workflow's, which has run: its entry commits alone.
		if err := s.commitAuditAlone(r.Context()); err != nil {
			return err
		}
		respond(w, http.StatusOK, map[string]any{"status": out.Status, "detail": out.Detail})
		return nil
	}
}

type chatMessageResponse struct {
	ID                uuid.UUID `json:"id"`
	Template          string    `json:"template"`
	To                string    `json:"to"`
	Status            string    `json:"status"`
	ErrorCode         *int      `json:"error_code"`
	ErrorMessage      *string   `json:"error_message"`
	ProviderMessageID *string   `json:"provider_message_id"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

// handleChatMessages serves GET /stores/{store_id}/orders/{order_id}/chat-messages.
func (s *Server) handleChatMessages() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := s.orderInStore(r)
		if err != nil {
			return err
		}
		id, storeID := o.ID, o.StoreID
		list, err := s.db.FindChatMessages(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		items := make([]chatMessageResponse, 0, len(list))
		for _, m := range list {
			items = append(items, chatMessageResponse{ID: m.ID, Template: m.Template, To: m.ToPhone, Status: m.Status,
				ErrorCode: m.ErrorCode, ErrorMessage: m.ErrorMessage, ProviderMessageID: m.ProviderMessageID,
				CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()})
		}
		respond(w, http.StatusOK, items)
		return nil
	}
}
