package api

import (
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
	ID            uuid.UUID            `json:"id"`
	OrderID       uuid.UUID            `json:"order_id"`
	ReturnID      *uuid.UUID           `json:"return_id"`
	Amount        int64                `json:"amount"`
	Lines         []storage.RefundLine `json:"lines"`
	Shipping      int64                `json:"shipping"`
	Method        string               `json:"method"`
	Status        string               `json:"status"`
	Reason        string               `json:"reason"`
	Reference     *string              `json:"reference"`
	FailureReason *string              `json:"failure_reason"`
	CreatedAt     time.Time            `json:"created_at"`
	SettledAt     *time.Time           `json:"settled_at"`
}

func newRefundResponse(r storage.Refund) refundResponse {
	return refundResponse{ID: r.ID, OrderID: r.OrderID, ReturnID: r.ReturnID, Amount: r.Amount, Lines: r.Lines, Shipping: r.Shipping,
		Method: r.Method, Status: r.Status, Reason: r.Reason, Reference: r.Reference, FailureReason: r.FailureReason,
		CreatedAt: r.CreatedAt.UTC(), SettledAt: utcPtr(r.SettledAt)}
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
			ReturnID: req.ReturnID, Settled: req.Settled}
		for _, l := range req.Lines {
			in.Lines = append(in.Lines, storage.RefundLine{LineID: l.LineID, Quantity: l.Quantity})
		}
		if req.Payout != nil {
			if req.Payout.Phone != nil {
				req.Payout.Phone = new(request.NormalizePhone(*req.Payout.Phone))
			}
			in.Payout, _ = json.Marshal(req.Payout)
		}
		return writeView(s, w, r, http.StatusCreated, newRefundResponse, func(tx *storage.Tx) (storage.Refund, error) {
			return tx.CreateRefund(r.Context(), storeIDFrom(r.Context()), orderID, in, actor(principalFrom(r.Context())))
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
