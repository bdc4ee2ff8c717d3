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
var RefundMethods = []string{RefundOriginal, RefundCash, RefundWallet, RefundBankTransfer, RefundStoreCredit}

// Refusals of refunds.
var (
	ErrRefundNotPending = errors.New("refund not pending")
	ErrRefundAutomatic  = errors.New("refund settled by the gateway")
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
	// Payout is where a manual refund is paid out, whole: show it Masked.
	Payout *RefundPayout
	// Gateway is the provider a card refund goes back through; such a
	// refund settles itself (the refund:<id> workflow), never by hand.
	Gateway *string
	// GiftCardAmount is the part of an `original` refund credited at
	// once to the gift cards that paid the order (§19); the rest goes back
	// by the order's other method. That part stays credited whatever
	// becomes of the rest.
	GiftCardAmount int64
	CreatedAt      time.Time
	SettledAt      *time.Time
}

// NewRefund asks for a refund; nil fields take §13's defaults.
type NewRefund struct {
	Amount   *int64
	Lines    []RefundLine // Amount ignored: each line's value less its discount share
	Shipping *int64
	Method   string
	Reason   string
	ReturnID *uuid.UUID
	Payout   *RefundPayout
	Settled  bool
}

const refundColumns = `id, store_id, order_id, return_id, amount, lines, shipping, method, status, reason, reference, failure_reason, payout,
	gateway, gift_card_amount, created_at, settled_at`

func scanRefund(row pgx.Row) (Refund, error) {
	var (
		r             Refund
		lines, payout []byte
		err           error
	)
	if err := row.Scan(&r.ID, &r.StoreID, &r.OrderID, &r.ReturnID, &r.Amount, &lines, &r.Shipping, &r.Method, &r.Status, &r.Reason,
		&r.Reference, &r.FailureReason, &payout, &r.Gateway, &r.GiftCardAmount, &r.CreatedAt, &r.SettledAt); err != nil {
		return Refund{}, err
	}
	if r.Payout, err = scanPayout(payout); err != nil {
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

func (r reader) refundedSoFar(ctx context.Context, o Order) (refundedSoFar, error) {
	// A failed refund's lines and amount are refundable again, except the
	// part it credited to gift cards, which stayed there.
	rows, err := r.q.Query(ctx, `SELECT CASE WHEN status = 'failed' THEN gift_card_amount ELSE amount END, shipping, lines, status FROM order_refunds
		WHERE store_id = $1 AND order_id = $2 AND (status IN ('pending', 'succeeded') OR gift_card_amount > 0)`, o.StoreID, o.ID)
	if err != nil {
		return refundedSoFar{}, fmt.Errorf("read refunds: %w", err)
	}
	so := refundedSoFar{pieces: map[uuid.UUID]int{}}
	var (
		amount, shipping int64
		raw              []byte
		status           string
	)
	_, err = pgx.ForEachRow(rows, []any{&amount, &shipping, &raw, &status}, func() error {
		so.amount += amount
		if status == RefundFailed {
			return nil
		}
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
// pending until settled, or succeed at once with Settled; store_credit
// succeeds at once on the customer's store-credit card. Lines release
// unshipped units; a refund never restocks.
func (tx *Tx) CreateRefund(ctx context.Context, storeID, orderID uuid.UUID, in NewRefund, actor *uuid.UUID) (Refund, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Refund{}, err
	}
	if o.PaidTotal <= 0 {
		return Refund{}, ErrOrderNotPaid
	}
	if in.Method == RefundStoreCredit && o.CustomerID == nil {
		return Refund{}, errRefundNoCustomer
	}
	// `original` gives the card-paid part back to the gift cards first
	// (§19), the rest to the gateway when the order was paid by card, else
	// by hand.
	var (
		card      *gatewayPayment
		noGateway error
		giftRooms []giftCardRoom
	)
	if in.Method == RefundOriginal {
		if o.PaymentMethod == "card" {
			if card, err = tx.gatewayPaymentOf(ctx, o); err != nil {
				if !errors.As(err, new(*InvalidError)) {
					return Refund{}, err
				}
				noGateway = err
			}
		}
		if giftRooms, err = tx.giftCardRefundRooms(ctx, o); err != nil {
			return Refund{}, err
		}
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
	// A sold gift card's line refunded takes its unspent cards back (§19).
	if err := tx.disableRefundedGiftCards(ctx, o, release, "refunded"); err != nil {
		return Refund{}, err
	}
	r.Amount = RefundAmount(in.Amount, len(in.Lines) > 0 || in.Shipping != nil, sum, o.RefundDue)
	r.GiftCardAmount = min(max(r.Amount, 0), roomOf(giftRooms))
	if r.Amount > r.GiftCardAmount {
		if noGateway != nil {
			return Refund{}, noGateway
		}
		if card != nil && in.Settled {
			return Refund{}, &InvalidError{Field: "settled", Code: "automatic", Message: "a refund through the card gateway settles itself"}
		}
	} else {
		card = nil // the gift cards take it all: nothing goes to the gateway
	}
	refundable := refundableOf(o, so, card, roomOf(giftRooms)).ForMethod(in.Method)
	if r.Amount < 1 || r.Amount > refundable {
		return Refund{}, &InvalidError{Field: "amount", Code: "exceeds_refundable",
			Message: fmt.Sprintf("must be between 1 and %d (paid less pending and succeeded refunds)", max(refundable, 0))}
	}
	lines, err := json.Marshal(r.Lines)
	if err != nil {
		return Refund{}, err
	}
	if card != nil {
		r.Gateway = &card.provider
	}
	payout, err := payoutJSON(r.Payout)
	if err != nil {
		return Refund{}, err
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO order_refunds (id, store_id, order_id, return_id, amount, lines, shipping, method, status, reason,
			payout, gateway, gift_card_amount, actor_user_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10, $11, $12, $13, $14)`, r.ID, storeID, orderID, r.ReturnID, r.Amount, lines, r.Shipping,
		r.Method, r.Reason, payout, r.Gateway, r.GiftCardAmount, actor, r.CreatedAt); err != nil {
		return Refund{}, fmt.Errorf("create refund: %w", err)
	}
	if card != nil {
		if err := tx.notifyDispatcher(ctx); err != nil {
			return Refund{}, err
		}
	}
	if len(release) > 0 {
		if err := tx.moveOrderStock(ctx, o, release, releaseUnits, UserActor(actor)); err != nil {
			return Refund{}, err
		}
	}
	created := map[string]any{"refund_id": r.ID, "amount": r.Amount, "method": r.Method}
	if r.Payout != nil {
		created["payout"] = r.Payout.Masked() // the timeline shows the destination masked, never whole
	}
	if err := tx.addActivity(ctx, o, ActivityRefundCreated, r.Reason, created, actor); err != nil {
		return Refund{}, err
	}
	var reference *string
	if r.GiftCardAmount > 0 {
		cards, err := tx.refundToGiftCards(ctx, o, r, giftRooms)
		if err != nil {
			return Refund{}, err
		}
		if r.GiftCardAmount == r.Amount { // nothing left to pay back another way
			reference, in.Settled = new(cards), true
		}
	}
	if in.Method == RefundStoreCredit {
		// Paid at once onto the customer's card, in this transaction: never
		// pending, never settled by hand, no gateway. The reference is the
		// card's id.
		cardID, err := tx.creditStoreCredit(ctx, o, r)
		if err != nil {
			return Refund{}, err
		}
		reference, in.Settled = new(cardID.String()), true
	}
	if in.Settled {
		if err := tx.settleRefund(ctx, &o, &r, RefundSucceeded, reference, nil, actor); err != nil {
			return Refund{}, err
		}
	}
	return tx.FindRefund(ctx, storeID, r.ID)
}

// RefundAmount is what a refund pays (§13): an explicit amount as sent
// (goodwill may differ from the lines), else the lines' values plus the
// shipping refunded (covered, their sum), else what the order owes back
// (refund_due: 0 on COD, what was paid less what was accepted or kept).
func RefundAmount(explicit *int64, covers bool, linesAndShipping, refundDue int64) int64 {
	switch {
	case explicit != nil:
		return *explicit
	case covers:
		return linesAndShipping
	default:
		return refundDue
	}
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
	if r.Gateway != nil {
		return Refund{}, ErrRefundAutomatic
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
	given := r.Amount // what went back to the buyer
	if status == RefundFailed {
		if err := tx.addActivity(ctx, *o, ActivityRefundFailed, deref(failure), map[string]any{"refund_id": r.ID, "amount": r.Amount}, actor); err != nil {
			return err
		}
		if r.GiftCardAmount == 0 {
			return nil
		}
		given = r.GiftCardAmount // the gift cards keep their credit
	}
	var refunded int64
	if err := tx.tx.QueryRow(ctx, `SELECT COALESCE(sum(CASE WHEN status = 'succeeded' THEN amount ELSE gift_card_amount END), 0)::bigint
		FROM order_refunds WHERE store_id = $1 AND order_id = $2 AND (status = 'succeeded' OR (status = 'failed' AND gift_card_amount > 0))`,
		o.StoreID, o.ID).Scan(&refunded); err != nil {
		return fmt.Errorf("sum refunds: %w", err)
	}
	o.PaymentStatus = PaymentPartiallyRefunded
	if refunded >= o.PaidTotal {
		o.PaymentStatus = PaymentRefunded
	}
	o.RefundDue = max(o.RefundDue-given, 0)
	if _, err := tx.tx.Exec(ctx, `UPDATE orders SET payment_status = $3, refund_due = $4, updated_at = $5 WHERE store_id = $1 AND id = $2`,
		o.StoreID, o.ID, o.PaymentStatus, o.RefundDue, now); err != nil {
		return fmt.Errorf("record refund on order: %w", err)
	}
	if o.PaymentStatus == PaymentRefunded {
		if err := tx.reverseCommission(ctx, o.StoreID, o.ID, "refunded"); err != nil {
			return err
		}
	}
	if status == RefundFailed {
		return nil
	}
	if err := tx.queueCreditNote(ctx, *o, *r); err != nil {
		return err
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

// Refundable is what an order can still give back (decisions §13): Total
// by a manual method, and, for an order paid through the card gateway,
// ToCard, the most an `original` refund can still send to the card (the
// card payment less the refunds already going back to it).
type Refundable struct {
	Total  int64
	ToCard *int64
	// ToGiftCards is what an `original` refund would give back to the
	// gift cards that paid the order before anything goes to the card.
	ToGiftCards int64
}

// ForMethod is the most a refund by method may be, never below zero.
func (r Refundable) ForMethod(method string) int64 {
	if method == RefundOriginal && r.ToCard != nil {
		return max(min(r.Total, r.ToGiftCards+*r.ToCard), 0)
	}
	return max(r.Total, 0)
}

// refundableOf is the rule CreateRefund holds a refund to: the paid total
// less live (pending and succeeded) refunds, capped for the card by what
// the card payment has left.
func refundableOf(o Order, so refundedSoFar, card *gatewayPayment, toGiftCards int64) Refundable {
	r := Refundable{Total: o.PaidTotal - so.amount, ToGiftCards: toGiftCards}
	if card != nil {
		r.ToCard = &card.refundable
	}
	return r
}

// FindRefundable reads what an order can still give back, judged as
// CreateRefund would judge a refund now, so a page never shows an amount
// the API would refuse. It only reads: the pool runs it, or the caller's
// transaction.
func (r reader) FindRefundable(ctx context.Context, storeID, orderID uuid.UUID) (Refundable, error) {
	o, err := scanOrder(r.q.QueryRow(ctx, orderByIDQuery, storeID, orderID))
	if err != nil {
		return Refundable{}, notFoundIfNoRows(err, "find order "+orderID.String())
	}
	so, err := r.refundedSoFar(ctx, o)
	if err != nil {
		return Refundable{}, err
	}
	var card *gatewayPayment
	if o.PaymentMethod == "card" {
		if card, err = r.gatewayPaymentOf(ctx, o); err != nil {
			var invalid *InvalidError
			if !errors.As(err, &invalid) {
				return Refundable{}, err
			}
			card = nil // paid by card some other way: no card to send back to
		}
	}
	rooms, err := r.giftCardRefundRooms(ctx, o)
	if err != nil {
		return Refundable{}, err
	}
	return refundableOf(o, so, card, roomOf(rooms)), nil
}

// gatewayPayment is the card payment an order's `original` refunds go back
// to, and how much of it is not yet refunded.
type gatewayPayment struct {
	provider, reference string
	refundable          int64
}

// gatewayPaymentOf finds the order's succeeded gateway payment; an order
// paid by card some other way (marked paid by hand) has no original to
// refund to.
func (r reader) gatewayPaymentOf(ctx context.Context, o Order) (*gatewayPayment, error) {
	var p gatewayPayment
	var paid int64
	err := r.q.QueryRow(ctx, `SELECT provider, reference, amount FROM order_payments
		WHERE store_id = $1 AND order_id = $2 AND source = 'gateway' AND status = 'succeeded' AND provider IS NOT NULL AND reference IS NOT NULL
		ORDER BY created_at DESC LIMIT 1`, o.StoreID, o.ID).Scan(&p.provider, &p.reference, &paid)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &InvalidError{Field: "method", Code: "original_unavailable",
			Message: "the order was not paid through the card gateway; choose cash, wallet or bank_transfer"}
	}
	if err != nil {
		return nil, fmt.Errorf("find gateway payment: %w", err)
	}
	var back int64
	if err := r.q.QueryRow(ctx, `SELECT COALESCE(sum(amount - gift_card_amount), 0)::bigint FROM order_refunds
		WHERE store_id = $1 AND order_id = $2 AND gateway IS NOT NULL AND status IN ('pending', 'succeeded')`, o.StoreID, o.ID).Scan(&back); err != nil {
		return nil, fmt.Errorf("sum gateway refunds: %w", err)
	}
	p.refundable = paid - back
	return &p, nil
}

// queueCreditNote writes the credit note a succeeded refund calls for
// (storage/invoice.go).
func (tx *Tx) queueCreditNote(ctx context.Context, o Order, r Refund) error {
	return tx.correctInvoice(ctx, o, InvoiceReasonRefund, &r.ID)
}

// GatewayRefundDue is a gateway refund no workflow was started for.
type GatewayRefundDue struct {
	StoreID        uuid.UUID
	RefundID       uuid.UUID
	OrderNumber    string
	StoreSubdomain string
}

// FindGatewayRefundsDue lists gateway refunds whose workflow was not started.
func (db *DB) FindGatewayRefundsDue(ctx context.Context, limit int) ([]GatewayRefundDue, error) {
	rows, err := db.pool.Query(ctx, `SELECT r.store_id, r.id, o.order_number, COALESCE(s.subdomain, '')
		FROM order_refunds r JOIN orders o ON o.store_id = r.store_id AND o.id = r.order_id LEFT JOIN stores s ON s.id = r.store_id
		WHERE r.gateway IS NOT NULL AND r.gateway_started_at IS NULL ORDER BY r.created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find gateway refunds due: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (GatewayRefundDue, error) {
		var d GatewayRefundDue
		return d, row.Scan(&d.StoreID, &d.RefundID, &d.OrderNumber, &d.StoreSubdomain)
	})
}

// MarkGatewayRefundStarted records that the refund's workflow was started.
func (db *DB) MarkGatewayRefundStarted(ctx context.Context, storeID, refundID uuid.UUID) error {
	if _, err := db.pool.Exec(ctx, `UPDATE order_refunds SET gateway_started_at = $3 WHERE store_id = $1 AND id = $2`,
		storeID, refundID, db.now()); err != nil {
		return fmt.Errorf("mark gateway refund started: %w", err)
	}
	return nil
}

// GatewayRefundRequest is what the gateway is asked to pay back: Amount,
// the refund less the part its gift cards took.
type GatewayRefundRequest struct {
	Refund   Refund
	Amount   int64
	Currency string
	Provider string
	Payment  string // the gateway's id of the payment
}

// FindGatewayRefundRequest reads a gateway refund with the payment it goes
// back to.
func (r reader) FindGatewayRefundRequest(ctx context.Context, storeID, refundID uuid.UUID) (GatewayRefundRequest, error) {
	ref, err := r.FindRefund(ctx, storeID, refundID)
	if err != nil {
		return GatewayRefundRequest{}, err
	}
	if ref.Gateway == nil {
		return GatewayRefundRequest{}, fmt.Errorf("refund %s is not a gateway refund", refundID)
	}
	req := GatewayRefundRequest{Refund: ref, Amount: ref.Amount - ref.GiftCardAmount, Provider: *ref.Gateway}
	if err := r.q.QueryRow(ctx, `SELECT o.currency, p.reference FROM orders o
		JOIN order_payments p ON p.store_id = o.store_id AND p.order_id = o.id AND p.source = 'gateway' AND p.provider = $3 AND p.reference IS NOT NULL
		WHERE o.store_id = $1 AND o.id = $2 ORDER BY p.created_at DESC LIMIT 1`, storeID, ref.OrderID, req.Provider).Scan(&req.Currency, &req.Payment); err != nil {
		return GatewayRefundRequest{}, notFoundIfNoRows(err, "find gateway payment of refund "+refundID.String())
	}
	return req, nil
}

// RecordGatewayRefund keeps the gateway's answer on a pending refund:
// succeeded and failed settle it (as the gateway, no actor); pending keeps
// the gateway's reference until the gateway confirms. A refund no longer
// pending is left as it is.
func (tx *Tx) RecordGatewayRefund(ctx context.Context, storeID, refundID uuid.UUID, status, reference, failure string) (Refund, error) {
	o, err := tx.lockOrderOf(ctx, "order_refunds", storeID, refundID)
	if err != nil {
		return Refund{}, err
	}
	r, err := scanRefund(tx.tx.QueryRow(ctx, `SELECT `+refundColumns+` FROM order_refunds WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, refundID))
	if err != nil {
		return Refund{}, notFoundIfNoRows(err, "find refund "+refundID.String())
	}
	if r.Status != RefundPending {
		return r, nil
	}
	ref := nilIfEmpty(reference)
	switch status {
	case RefundSucceeded:
		err = tx.settleRefund(ctx, &o, &r, RefundSucceeded, ref, nil, nil)
	case RefundFailed:
		err = tx.settleRefund(ctx, &o, &r, RefundFailed, ref, &failure, nil)
	default:
		_, err = tx.tx.Exec(ctx, `UPDATE order_refunds SET reference = $3 WHERE store_id = $1 AND id = $2`, storeID, refundID, ref)
	}
	if err != nil {
		return Refund{}, err
	}
	return tx.FindRefund(ctx, storeID, refundID)
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
