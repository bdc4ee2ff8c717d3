package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Refunds (decisions §13).

var errRefundNotPending = newError(http.StatusConflict, "REFUND_NOT_PENDING",
	"The refund was already settled", "تمت تسوية هذا الاسترداد مسبقًا")

var errRefundAutomatic = newError(http.StatusConflict, "REFUND_AUTOMATIC",
	"The refund goes back through the card gateway and settles itself", "يُسترد هذا المبلغ عبر بوابة الدفع وتتم تسويته تلقائيًا")

type refundResponse struct {
	ID             uuid.UUID             `json:"id"`
	OrderID        uuid.UUID             `json:"order_id"`
	ReturnID       *uuid.UUID            `json:"return_id"`
	Amount         int64                 `json:"amount"`
	Lines          []storage.RefundLine  `json:"lines"`
	Shipping       int64                 `json:"shipping"`
	Method         string                `json:"method"`
	Status         string                `json:"status"`
	Reason         string                `json:"reason"`
	Reference      *string               `json:"reference"`
	FailureReason  *string               `json:"failure_reason"`
	Payout         *storage.MaskedPayout `json:"payout"`
	GiftCardAmount int64                 `json:"gift_card_amount"`
	CreatedAt      time.Time             `json:"created_at"`
	SettledAt      *time.Time            `json:"settled_at"`
}

// newRefundResponse is a refund as the API shows it: the payout
// destination masked, in every answer (issue 48 §6).
func newRefundResponse(r storage.Refund) refundResponse {
	out := refundResponse{ID: r.ID, OrderID: r.OrderID, ReturnID: r.ReturnID, Amount: r.Amount, Lines: r.Lines, Shipping: r.Shipping,
		Method: r.Method, Status: r.Status, Reason: r.Reason, Reference: r.Reference, FailureReason: r.FailureReason,
		GiftCardAmount: r.GiftCardAmount, CreatedAt: r.CreatedAt.UTC(), SettledAt: utcPtr(r.SettledAt)}
	if r.Payout != nil {
		masked := r.Payout.Masked()
		out.Payout = &masked
	}
	return out
}

// refundAuditFields are what a refund's audit entry lists as set by its
// creation: how much, how and to where (the payout masked, as the answer
// shows it), so the log says where money went without holding the whole
// destination.
var refundAuditFields = []string{"amount", "shipping", "method", "payout", "return_id"}

// auditRefundCreated gives the request's audit entry the new refund's
// refundAuditFields as changes from null.
func auditRefundCreated(ctx context.Context, view refundResponse) {
	body, err := json.Marshal(view)
	if err != nil {
		return
	}
	var before map[string]any
	if json.Unmarshal(body, &before) != nil {
		return
	}
	for _, field := range refundAuditFields {
		delete(before, field)
	}
	auditBefore(ctx, before)
}

// handleCreateRefund serves POST /stores/{store_id}/orders/{order_id}/refunds.
func (s *Server) handleCreateRefund() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		orderID, err := pathUUID(r, "order_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.CreateRefund](r)
		if err != nil {
			return err
		}
		in := storage.NewRefund{Amount: req.Amount, Shipping: req.Shipping, Method: req.Method, Reason: strings.TrimSpace(req.Reason),
			ReturnID: req.ReturnID, Payout: req.PayoutDestination(), Settled: req.Settled}
		for _, l := range req.Lines {
			in.Lines = append(in.Lines, storage.RefundLine{LineID: l.LineID, Quantity: l.Quantity})
		}
		return writeView(s, w, r, http.StatusCreated, newRefundResponse, func(tx *storage.Tx) (storage.Refund, error) {
			ref, err := tx.CreateRefund(r.Context(), storeIDFrom(r.Context()), orderID, in, actor(principalFrom(r.Context())))
			if err == nil {
				auditRefundCreated(r.Context(), newRefundResponse(ref))
			}
			return ref, err
		})
	}
}

// handleSettleRefund serves POST /stores/{store_id}/refunds/{refund_id}/settle.
func (s *Server) handleSettleRefund() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "refund_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.SettleRefund](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, newRefundResponse, func(tx *storage.Tx) (storage.Refund, error) {
			return tx.SettleRefund(r.Context(), storeIDFrom(r.Context()), id, req.Status, req.Reference, req.FailureReason, actor(principalFrom(r.Context())))
		})
	}
}

// handleListRefunds serves GET /stores/{store_id}/orders/{order_id}/refunds.
func (s *Server) handleListRefunds() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		err := q.err()
		if err != nil {
			return err
		}
		orderID, err := s.pathOrder(r)
		if err != nil {
			return err
		}
		list, total, err := s.db.FindOrderRefunds(r.Context(), storeIDFrom(r.Context()), *orderID, storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		items := make([]refundResponse, 0, len(list))
		for _, ref := range list {
			items = append(items, newRefundResponse(ref))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleGetRefund serves GET /stores/{store_id}/refunds/{refund_id}.
func (s *Server) handleGetRefund() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "refund_id")
		if err != nil {
			return err
		}
		ref, err := s.db.FindRefund(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newRefundResponse(ref))
		return nil
	}
}
