package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/orderemail"
	"github.com/merchantsvc/svc/workflows"
)

// orderInStore reads the {order_id} path parameter and checks the order is
// the store's, answering the error itself when not.
func (s *Server) orderInStore(w http.ResponseWriter, r *http.Request) (storage.Order, bool) {
	id, err := pathUUID(r, "order_id")
	if err == nil {
		var o storage.Order
		if o, err = s.db.FindOrderByRef(r.Context(), storeIDFrom(r.Context()), id.String()); err == nil {
			return o, true
		}
	}
	s.writeError(w, r, err)
	return storage.Order{}, false
}

var conversionErrors = map[string]*apiError{
	"INSUFFICIENT_STOCK": newError(http.StatusConflict, "INSUFFICIENT_STOCK",
		"Not enough stock to convert this draft", "المخزون غير كافٍ لتحويل هذه المسودة"),
	"INVALID_STATUS_TRANSITION": newError(http.StatusConflict, "INVALID_STATUS_TRANSITION",
		"Only a draft can be converted", "لا يمكن تحويل إلا المسودات"),
	"VALIDATION_FAILED": newError(http.StatusUnprocessableEntity, "VALIDATION_FAILED",
		"The draft can no longer be placed", "لم يعد من الممكن تنفيذ هذه المسودة"),
}

// handleConvertDraft runs the draft-conversion workflow and answers once
// the draft has moved (or was refused); the side effects go on after.
func (s *Server) handleConvertDraft() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		o, found := s.orderInStore(w, r)
		if !found {
			return
		}
		id, storeID := o.ID, o.StoreID
		if o.Status != storage.OrderDraft {
			s.writeError(w, r, &storage.TransitionError{From: o.Status, To: storage.OrderPending, AllowedNext: storage.AllowedNext(o.Status)})
			return
		}
		run, err := s.temporal.ExecuteWorkflow(r.Context(), client.StartWorkflowOptions{
			ID: workflows.DraftConversionWorkflowID(id), TaskQueue: s.cfg.TaskQueue,
		}, workflows.DraftConversion, workflows.OrderInput{StoreID: storeID, OrderID: id})
		if err != nil {
			s.writeError(w, r, fmt.Errorf("start draft conversion: %w", err))
			return
		}
		deadline := time.Now().Add(s.cfg.ImportWait)
		for {
			var state workflows.ConversionState
			value, err := s.temporal.QueryWorkflow(r.Context(), run.GetID(), run.GetRunID(), workflows.ConversionQuery)
			if err == nil && value.Get(&state) == nil && state.Done {
				if state.Code != "" {
					e, known := conversionErrors[state.Code]
					if !known {
						s.writeError(w, r, errors.New(state.Message))
						return
					}
					refusal := *e
					refusal.Message += ": " + state.Message
					s.writeError(w, r, &refusal)
					return
				}
				break
			}
			if time.Now().After(deadline) || r.Context().Err() != nil {
				s.writeError(w, r, fmt.Errorf("draft conversion did not finish: %v", err))
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		converted, err := s.db.FindOrderByRef(r.Context(), storeID, id.String())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		respond(w, http.StatusOK, newOrderResponse(converted))
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

func (s *Server) handleListAutopilot() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := newQueryParser(r)
		limit := q.intIn("limit", 1, 200, 50)
		offset := q.intIn("offset", 0, 1<<30, 0)
		if err := q.err(); err != nil {
			s.writeError(w, r, err)
			return
		}
		list, total, err := s.db.FindAutopilotExceptions(r.Context(), storeIDFrom(r.Context()), limit, offset)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		items := make([]autopilotResponse, 0, len(list))
		for _, e := range list {
			items = append(items, autopilotResponse{ID: e.ID, OrderID: e.OrderID, Reason: e.Reason, Message: e.Message,
				MessageAr: e.MessageAr, Data: e.Data, CreatedAt: e.CreatedAt.UTC()})
		}
		respond(w, http.StatusOK, map[string]any{"items": items, "pagination": map[string]any{
			"offset": offset, "limit": limit, "total": total, "has_next": offset+len(items) < total}})
	}
}

type resolveRequest struct {
	Note string `json:"note"`
}

func (req resolveRequest) Valid() []fieldError {
	var c checker
	c.text("note", req.Note, 0, 1000)
	return c.result()
}

func (s *Server) handleResolveAutopilot() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathUUID(r, "order_id")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if _, err := decode[resolveRequest](r); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
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

func (s *Server) handleEmailPreview() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		o, found := s.orderInStore(w, r)
		if !found {
			return
		}
		storeID := o.StoreID
		status := r.URL.Query().Get("status")
		if status == "" {
			status = o.Status
		}
		var c checker
		c.oneOf("status", status, storage.OrderStatuses)
		if len(c.fields) > 0 {
			s.writeError(w, r, validationError(c.fields))
			return
		}
		settings, err := s.db.FindStoreSettings(r.Context(), storeID)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		email, err := orderemail.Render(settings.Name, settings.DefaultLanguage, o, status)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Email-Subject", email.Subject)
		_, _ = w.Write([]byte(email.HTML))
	}
}

var chatRefusals = map[string]*apiError{
	"CHAT_DISABLED": newError(http.StatusConflict, "CHAT_DISABLED",
		"Chat confirmations are switched off for this store", "رسائل التأكيد عبر الدردشة متوقفة لهذا المتجر"),
	"CHAT_OPTED_OUT": newError(http.StatusConflict, "CHAT_OPTED_OUT",
		"The customer opted out of chat messages", "اختار العميل عدم تلقي رسائل الدردشة"),
	"CHAT_TEMPLATE_NOT_APPROVED": newError(http.StatusConflict, "CHAT_TEMPLATE_NOT_APPROVED",
		"The chat template for this order is not approved", "قالب رسالة الدردشة لهذا الطلب غير معتمد"),
	"CHAT_NO_PHONE": newError(http.StatusConflict, "CHAT_NO_PHONE",
		"The customer has no phone number", "لا يوجد رقم هاتف للعميل"),
}

// handleResend resends the status email or the chat confirmation through
// the worker and answers what happened.
func (s *Server) handleResend(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		o, found := s.orderInStore(w, r)
		if !found {
			return
		}
		id, storeID := o.ID, o.StoreID
		in := workflows.OrderMessageInput{OrderInput: workflows.OrderInput{StoreID: storeID, OrderID: id}, Kind: kind}
		ctx, cancel := context.WithTimeout(r.Context(), 40*time.Second)
		defer cancel()
		run, err := s.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: workflows.OrderMessageWorkflowID(in, requestID(r.Context())), TaskQueue: s.cfg.TaskQueue,
		}, workflows.OrderMessage, in)
		if err != nil {
			s.writeError(w, r, fmt.Errorf("start resend: %w", err))
			return
		}
		var out workflows.OrderMessageResult
		if err := run.Get(ctx, &out); err != nil {
			s.writeError(w, r, fmt.Errorf("resend %s: %w", kind, err))
			return
		}
		if out.Status == "refused" {
			if e, known := chatRefusals[out.Detail]; known {
				s.writeError(w, r, e)
				return
			}
		}
		respond(w, http.StatusOK, map[string]any{"status": out.Status, "detail": out.Detail})
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

func (s *Server) handleChatMessages() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		o, found := s.orderInStore(w, r)
		if !found {
			return
		}
		id, storeID := o.ID, o.StoreID
		list, err := s.db.FindChatMessages(r.Context(), storeID, id)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		items := make([]chatMessageResponse, 0, len(list))
		for _, m := range list {
			items = append(items, chatMessageResponse{ID: m.ID, Template: m.Template, To: m.ToPhone, Status: m.Status,
				ErrorCode: m.ErrorCode, ErrorMessage: m.ErrorMessage, ProviderMessageID: m.ProviderMessageID,
				CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()})
		}
		respond(w, http.StatusOK, items)
	}
}
