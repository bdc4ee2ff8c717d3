package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Refunds (decisions §13): a ledger that never pays out more than was paid.
// Refundable = paid_total − pending and succeeded refunds, checked under the
// order's row lock.

// Refund methods and statuses.
const (
	RefundOriginal     = "original"
	RefundCash         = "cash"
	RefundWallet       = "wallet"
	RefundBankTransfer = "bank_transfer"

	RefundPending   = "pending"
	RefundSucceeded = "succeeded"
	RefundFailed    = "failed"
)

// RefundMethods lists every refund method.
var RefundMethods = []string{RefundOriginal, RefundCash, RefundWallet, RefundBankTransfer}

// Refusals of refunds.
var (
	ErrRefundNotPending = errors.New("refund not pending")
)

// Order activity kinds of refunds.
const (
	ActivityRefundCreated   ActivityKind = "refund_created"
	ActivityRefundSucceeded ActivityKind = "refund_succeeded"
	ActivityRefundFailed    ActivityKind = "refund_failed"
)

// RefundLine is pieces of an order line a refund pays back.
type RefundLine struct {
	LineID   uuid.UUID `json:"line_id"`
	Quantity int       `json:"quantity"`
	Amount   int64     `json:"amount"`
}

// Refund is money going back to the buyer.
type Refund struct {
	ID            uuid.UUID
	StoreID       uuid.UUID
	OrderID       uuid.UUID
	ReturnID      *uuid.UUID
	Amount        int64
	Lines         []RefundLine
	Shipping      int64
	Method        string
	Status        string
	Reason        string
	Reference     *string
	FailureReason *string
	Payout        json.RawMessage
	CreatedAt     time.Time
	SettledAt     *time.Time
}

// NewRefund asks for a refund; nil fields take §13's defaults.
type NewRefund struct {
	Amount   *int64
	Lines    []RefundLine // Amount ignored: each line's value less its discount share
	Shipping *int64
	Method   string
	Reason   string
	ReturnID *uuid.UUID
	Payout   json.RawMessage
	Settled  bool
}

const refundColumns = `id, store_id, order_id, return_id, amount, lines, shipping, method, status, reason, reference, failure_reason, payout, created_at, settled_at`

func scanRefund(row pgx.Row) (Refund, error) {
	var (
		r     Refund
		lines []byte
	)
	if err := row.Scan(&r.ID, &r.StoreID, &r.OrderID, &r.ReturnID, &r.Amount, &lines, &r.Shipping, &r.Method, &r.Status, &r.Reason,
		&r.Reference, &r.FailureReason, &r.Payout, &r.CreatedAt, &r.SettledAt); err != nil {
		return Refund{}, err
	}
	r.Lines = []RefundLine{}
	return r, json.Unmarshal(lines, &r.Lines)
}

// refundedSoFar is what an order's live refunds hold: the amount, the
// shipping, and the pieces of each line.
type refundedSoFar struct {
	amount, shipping int64
	pieces           map[uuid.UUID]int
}

func (tx *Tx) refundedSoFar(ctx context.Context, o Order) (refundedSoFar, error) {
	rows, err := tx.tx.Query(ctx, `SELECT amount, shipping, lines FROM order_refunds
		WHERE store_id = $1 AND order_id = $2 AND status IN ('pending', 'succeeded')`, o.StoreID, o.ID)
	if err != nil {
		return refundedSoFar{}, fmt.Errorf("read refunds: %w", err)
	}
	so := refundedSoFar{pieces: map[uuid.UUID]int{}}
	var (
		amount, shipping int64
		raw              []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&amount, &shipping, &raw}, func() error {
		so.amount += amount
		so.shipping += shipping
		var lines []RefundLine
		if err := json.Unmarshal(raw, &lines); err != nil {
			return err
		}
		for _, l := range lines {
			so.pieces[l.LineID] += l.Quantity
		}
		return nil
	})
	if err != nil {
		return refundedSoFar{}, fmt.Errorf("read refunds: %w", err)
	}
	return so, nil
}

// CreateRefund records a refund (§13) under the order's lock: lines at
// their value less the pro-rata discount share, shipping up to the fee,
// the amount their sum (or refund_due when neither is given, or an explicit
// goodwill amount), never above what is refundable. Manual methods stay
// pending until settled, or succeed at once with Settled. Lines release
// unshipped units; a refund never restocks.
func (tx *Tx) CreateRefund(ctx context.Context, storeID, orderID uuid.UUID, in NewRefund, actor *uuid.UUID) (Refund, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Refund{}, err
	}
	if o.PaidTotal <= 0 {
		return Refund{}, ErrOrderNotPaid
	}
	if in.Method == RefundOriginal && o.PaymentMethod == "card" {
		return Refund{}, &InvalidError{Field: "method", Code: "original_unavailable",
			Message: "card refunds through the gateway are not available yet; choose cash, wallet or bank_transfer"}
	}
	if in.ReturnID != nil {
		var exists bool
		if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM returns WHERE store_id = $1 AND id = $2 AND order_id = $3)`,
			storeID, *in.ReturnID, orderID).Scan(&exists); err != nil {
			return Refund{}, fmt.Errorf("find return: %w", err)
		}
		if !exists {
			return Refund{}, &InvalidError{Field: "return_id", Code: "not_found", Message: "is not a return of this order"}
		}
	}
	so, err := tx.refundedSoFar(ctx, o)
	if err != nil {
		return Refund{}, err
	}
	byID := map[uuid.UUID]OrderLine{}
	for _, l := range o.Lines {
		byID[l.ID] = l
	}
	r := Refund{ID: NewID(), StoreID: storeID, OrderID: orderID, ReturnID: in.ReturnID, Lines: []RefundLine{}, Method: in.Method,
		Status: RefundPending, Reason: in.Reason, Payout: in.Payout, CreatedAt: tx.now()}
	var sum int64
	release := map[uuid.UUID]int{}
	for i, l := range in.Lines {
		line, ok := byID[l.LineID]
		if !ok {
			return Refund{}, &InvalidError{Field: fmt.Sprintf("lines[%d].line_id", i), Code: "not_found", Message: "is not a line of this order"}
		}
		if room := line.Quantity - so.pieces[l.LineID]; l.Quantity < 1 || l.Quantity > room {
			return Refund{}, &InvalidError{Field: fmt.Sprintf("lines[%d].quantity", i), Code: "exceeds_refundable_quantity",
				Message: fmt.Sprintf("must be between 1 and %d (the pieces not yet refunded)", max(room, 0))}
		}
		so.pieces[l.LineID] += l.Quantity
		amount := lineValue(o, line, l.Quantity)
		r.Lines = append(r.Lines, RefundLine{LineID: l.LineID, Quantity: l.Quantity, Amount: amount})
		sum += amount
		release[l.LineID] += l.Quantity
	}
	if in.Shipping != nil {
		if *in.Shipping > o.ShippingFee-so.shipping {
			return Refund{}, &InvalidError{Field: "shipping", Code: "exceeds_shipping",
				Message: fmt.Sprintf("must be at most %d (the shipping fee not yet refunded)", max(o.ShippingFee-so.shipping, 0))}
		}
		r.Shipping = *in.Shipping
		sum += r.Shipping
	}
	switch {
	case in.Amount != nil:
		r.Amount = *in.Amount
	case len(in.Lines) > 0 || in.Shipping != nil:
		r.Amount = sum
	default:
		r.Amount = o.RefundDue
	}
	refundable := o.PaidTotal - so.amount
	if r.Amount < 1 || r.Amount > refundable {
		return Refund{}, &InvalidError{Field: "amount", Code: "exceeds_refundable",
			Message: fmt.Sprintf("must be between 1 and %d (paid less pending and succeeded refunds)", max(refundable, 0))}
	}
	lines, err := json.Marshal(r.Lines)
	if err != nil {
		return Refund{}, err
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO order_refunds (id, store_id, order_id, return_id, amount, lines, shipping, method, status, reason,
			payout, actor_user_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10, $11, $12)`, r.ID, storeID, orderID, r.ReturnID, r.Amount, lines, r.Shipping,
		r.Method, r.Reason, nullJSON(r.Payout), actor, r.CreatedAt); err != nil {
		return Refund{}, fmt.Errorf("create refund: %w", err)
	}
	if len(release) > 0 {
		if err := tx.moveOrderStock(ctx, o, release, releaseUnits, UserActor(actor)); err != nil {
			return Refund{}, err
		}
	}
	if err := tx.addActivity(ctx, o, ActivityRefundCreated, r.Reason, map[string]any{"refund_id": r.ID, "amount": r.Amount, "method": r.Method}, actor); err != nil {
		return Refund{}, err
	}
	if in.Settled {
		if err := tx.settleRefund(ctx, &o, &r, RefundSucceeded, nil, nil, actor); err != nil {
			return Refund{}, err
		}
	}
	return tx.FindRefund(ctx, storeID, r.ID)
}

func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return []byte(raw)
}

// SettleRefund records how a pending manual refund ended: succeeded (with
// its reference) or failed (with why; its amount is refundable again).
func (tx *Tx) SettleRefund(ctx context.Context, storeID, id uuid.UUID, status string, reference, failure *string, actor *uuid.UUID) (Refund, error) {
	o, err := tx.lockOrderOf(ctx, "order_refunds", storeID, id)
	if err != nil {
		return Refund{}, err
	}
	r, err := scanRefund(tx.tx.QueryRow(ctx, `SELECT `+refundColumns+` FROM order_refunds WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Refund{}, notFoundIfNoRows(err, "find refund "+id.String())
	}
	if r.Status != RefundPending {
		return Refund{}, ErrRefundNotPending
	}
	if err := tx.settleRefund(ctx, &o, &r, status, reference, failure, actor); err != nil {
		return Refund{}, err
	}
	return tx.FindRefund(ctx, storeID, id)
}

// settleRefund ends a pending refund; a success lowers refund_due, moves
// payment_status to partially_refunded or refunded, and on a full refund
// reverses the commission.
func (tx *Tx) settleRefund(ctx context.Context, o *Order, r *Refund, status string, reference, failure *string, actor *uuid.UUID) error {
	now := tx.now()
	if _, err := tx.tx.Exec(ctx, `UPDATE order_refunds SET status = $3, reference = $4, failure_reason = $5, settled_at = $6
		WHERE store_id = $1 AND id = $2`, r.StoreID, r.ID, status, reference, failure, now); err != nil {
		return fmt.Errorf("settle refund: %w", err)
	}
	r.Status = status
	if status == RefundFailed {
		return tx.addActivity(ctx, *o, ActivityRefundFailed, deref(failure), map[string]any{"refund_id": r.ID, "amount": r.Amount}, actor)
	}
	var refunded int64
	if err := tx.tx.QueryRow(ctx, `SELECT COALESCE(sum(amount), 0)::bigint FROM order_refunds WHERE store_id = $1 AND order_id = $2 AND status = 'succeeded'`,
		o.StoreID, o.ID).Scan(&refunded); err != nil {
		return fmt.Errorf("sum refunds: %w", err)
	}
	o.PaymentStatus = PaymentPartiallyRefunded
	if refunded >= o.PaidTotal {
		o.PaymentStatus = PaymentRefunded
	}
	o.RefundDue = max(o.RefundDue-r.Amount, 0)
	if _, err := tx.tx.Exec(ctx, `UPDATE orders SET payment_status = $3, refund_due = $4, updated_at = $5 WHERE store_id = $1 AND id = $2`,
		o.StoreID, o.ID, o.PaymentStatus, o.RefundDue, now); err != nil {
		return fmt.Errorf("record refund on order: %w", err)
	}
	if o.PaymentStatus == PaymentRefunded {
		if err := tx.reverseCommission(ctx, o.StoreID, o.ID, "refunded"); err != nil {
			return err
		}
	}
	return tx.addActivity(ctx, *o, ActivityRefundSucceeded, "", map[string]any{"refund_id": r.ID, "amount": r.Amount, "reference": reference}, actor)
}

// FindRefund reads one refund.
func (r reader) FindRefund(ctx context.Context, storeID, id uuid.UUID) (Refund, error) {
	ref, err := scanRefund(r.q.QueryRow(ctx, `SELECT `+refundColumns+` FROM order_refunds WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Refund{}, notFoundIfNoRows(err, "find refund "+id.String())
	}
	return ref, nil
}

// FindOrderRefunds lists an order's refunds, newest first.
func (r reader) FindOrderRefunds(ctx context.Context, storeID, orderID uuid.UUID, page Page) ([]Refund, int, error) {
	return findPage(ctx, r, "refunds", listQuery{columns: refundColumns, from: "FROM order_refunds WHERE store_id = $1 AND order_id = $2",
		args: []any{storeID, orderID}, orderBy: "created_at DESC, id DESC"}, page.Limit, int(page.Offset()),
		func(row pgx.CollectableRow) (Refund, error) { return scanRefund(row) })
}
