package api

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// Refunds (decisions §13).

var errRefundNotPending = newError(http.StatusConflict, "REFUND_NOT_PENDING",
	"The refund was already settled", "تمت تسوية هذا الاسترداد مسبقًا")

var errRefundAutomatic = newError(http.StatusConflict, "REFUND_AUTOMATIC",
	"The refund goes back through the card gateway and settles itself", "يُسترد هذا المبلغ عبر بوابة الدفع وتتم تسويته تلقائيًا")

type refundPayout struct {
	Phone *string `json:"phone,omitempty"`
	IBAN  *string `json:"iban,omitempty"`
	Name  *string `json:"name,omitempty"`
}

type createRefundRequest struct {
	Amount *int64 `json:"amount"`
	Lines  []struct {
		LineID   uuid.UUID `json:"line_id"`
		Quantity int       `json:"quantity"`
	} `json:"lines"`
	Shipping *int64        `json:"shipping"`
	Method   string        `json:"method"`
	Reason   string        `json:"reason"`
	ReturnID *uuid.UUID    `json:"return_id"`
	Payout   *refundPayout `json:"payout"`
	Settled  bool          `json:"settled"`
}

// validIBAN checks an IBAN's shape and its ISO 13616 mod-97 check digits.
func validIBAN(raw string) bool {
	iban := strings.ToUpper(strings.ReplaceAll(raw, " ", ""))
	if len(iban) < 15 || len(iban) > 34 {
		return false
	}
	var digits strings.Builder
	for _, r := range iban[4:] + iban[:4] {
		switch {
		case r >= '0' && r <= '9':
			digits.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			fmt.Fprintf(&digits, "%d", r-'A'+10)
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

func (req createRefundRequest) Valid() []fieldError {
	var c checker
	c.oneOf("method", req.Method, storage.RefundMethods)
	c.text("reason", req.Reason, 1, 1000)
	if req.Amount != nil {
		c.amount("amount", *req.Amount)
	}
	if req.Shipping != nil {
		c.amount("shipping", *req.Shipping)
	}
	if len(req.Lines) > 100 {
		c.add("lines", "out_of_range", "must list at most 100 lines")
	}
	for i, l := range req.Lines {
		if l.LineID == uuid.Nil {
			c.add(fmt.Sprintf("lines[%d].line_id", i), "required", "is required")
		}
		if l.Quantity < 1 {
			c.add(fmt.Sprintf("lines[%d].quantity", i), "exceeds_refundable_quantity", "must be at least 1")
		}
	}
	switch req.Method {
	case storage.RefundWallet:
		if req.Payout == nil || req.Payout.Phone == nil {
			c.add("payout.phone", "required", "is required for a wallet refund")
		} else if !phonePattern.MatchString(normalizePhone(*req.Payout.Phone)) {
			c.add("payout.phone", "invalid", "must be a phone number such as +201001234567")
		}
	case storage.RefundBankTransfer:
		if req.Payout == nil || req.Payout.IBAN == nil {
			c.add("payout.iban", "required", "is required for a bank transfer")
		} else if !validIBAN(*req.Payout.IBAN) {
			c.add("payout.iban", "invalid", "is not a valid IBAN (its check digits do not match)")
		}
	}
	if req.Payout != nil && req.Payout.Name != nil {
		c.text("payout.name", *req.Payout.Name, 1, 200)
	}
	return c.result()
}

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
		req, err := decode[createRefundRequest](r)
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
				req.Payout.Phone = new(normalizePhone(*req.Payout.Phone))
			}
			in.Payout, _ = json.Marshal(req.Payout)
		}
		return writeView(s, w, r, http.StatusCreated, newRefundResponse, func(tx *storage.Tx) (storage.Refund, error) {
			return tx.CreateRefund(r.Context(), storeIDFrom(r.Context()), orderID, in, actor(principalFrom(r.Context())))
		})
	}
}

type settleRefundRequest struct {
	Status        string  `json:"status"`
	Reference     *string `json:"reference"`
	FailureReason *string `json:"failure_reason"`
}

func (req settleRefundRequest) Valid() []fieldError {
	var c checker
	c.oneOf("status", req.Status, []string{storage.RefundSucceeded, storage.RefundFailed})
	if req.Reference != nil {
		c.text("reference", *req.Reference, 1, 200)
	}
	if req.Status == storage.RefundFailed && (req.FailureReason == nil || strings.TrimSpace(*req.FailureReason) == "") {
		c.add("failure_reason", "required", "is required when the refund failed")
	}
	return c.result()
}

// handleSettleRefund serves POST /stores/{store_id}/refunds/{refund_id}/settle.
func (s *Server) handleSettleRefund() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "refund_id")
		if err != nil {
			return err
		}
		req, err := decode[settleRefundRequest](r)
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
