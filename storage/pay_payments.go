package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
) // Payment refusals the API answers with 409.
var (
	ErrOrderAlreadyPaid      = errors.New("order already paid")
	ErrOrderNotPaid          = errors.New("order not paid")
	ErrPaymentNotReversible  = errors.New("payment not reversible")
	ErrRefundPending         = errors.New("refund pending")
	ErrProofNotReviewable    = errors.New("proof already reviewed")
	ErrPaymentNotVoidable    = errors.New("payment not voidable")
	ErrProofsNotAccepted     = errors.New("order takes no payment proofs")
	ErrOrderClosedForPayment = errors.New("order closed for payment")
)

// ProofKind is where a payment proof came from (decisions §4).
type ProofKind string

// Payment proof kinds.
const (
	ProofKindProof    ProofKind = "proof"    // uploaded by the buyer, reviewed by the merchant
	ProofKindRecorded ProofKind = "recorded" // a receipt the merchant records with an amount
)

// ProofStatus is where a payment proof is in its review (decisions §4).
type ProofStatus string

// Payment proof statuses.
const (
	ProofAwaitingReview ProofStatus = "awaiting_review"
	ProofApproved       ProofStatus = "approved"
	ProofRejected       ProofStatus = "rejected"
	ProofRecorded       ProofStatus = "recorded"
	ProofVoided         ProofStatus = "voided"
)

// Perceptual-hash search (spec §4.3 rule 2).
const (
	DuplicateDistance = 5
	SimilarDistance   = 8
	ProofWindow       = 90 * 24 * time.Hour
	maxSimilar        = 50
)

// PaymentStatusFor is the payment status an order's figures imply: paid once
// the collectible total is covered, awaiting review while its latest proof
// waits, partially paid with anything credited, pending otherwise. Refund
// states are kept as they are.
func PaymentStatusFor(current PaymentStatus, paidTotal, collectibleTotal int64, latestProof *ProofStatus) PaymentStatus {
	switch {
	case current == PaymentRefunded || current == PaymentPartiallyRefunded:
		return current
	case paidTotal >= collectibleTotal && (paidTotal > 0 || current == PaymentPaid):
		return PaymentPaid
	case latestProof != nil && *latestProof == ProofAwaitingReview:
		return PaymentAwaitingReview
	case paidTotal > 0:
		return PaymentPartiallyPaid
	default:
		return PaymentPending
	}
}

// Commission is the platform's cut of amount at rate basis points, rounded
// half up to the minor unit.
func Commission(amount int64, bps int) int64 {
	return (amount*int64(bps) + 5000) / 10000
}

// credit adds a succeeded payment to the order's ledger and its paid total.
func (tx *Tx) credit(ctx context.Context, o *Order, source string, proofID *uuid.UUID, amount int64, actor *uuid.UUID) error {
	if amount <= 0 {
		return nil
	}
	_, err := tx.tx.Exec(ctx, `INSERT INTO order_payments (id, store_id, order_id, source, proof_id, amount, status, actor_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, 'succeeded', $7, $8)`, NewID(), o.StoreID, o.ID, source, proofID, amount, actor, tx.now())
	if err != nil {
		return fmt.Errorf("record payment: %w", err)
	}
	o.PaidTotal += amount
	return nil
}

// settlePayment is the one routine behind every payment change (mark-paid,
// proof approval, recorded payments, partial acceptance, void, unmark): it
// derives the payment status from the ledger, saves the order, and when the
// order has just become paid writes order.paid, the activity, the wallet
// commission and the e-invoice — once per transition to paid.
func (tx *Tx) settlePayment(ctx context.Context, o *Order, via string, actor *uuid.UUID) error {
	latest, err := tx.refreshLatestProof(ctx, o.StoreID, o.ID)
	if err != nil {
		return err
	}
	before := o.PaymentStatus
	o.PaymentStatus = PaymentStatusFor(before, o.PaidTotal, o.CollectibleTotal, latest)
	o.UpdatedAt = tx.now()
	if _, err := tx.tx.Exec(ctx, `UPDATE orders SET payment_status = $3, paid_total = $4, collectible_total = $5, collected_total = $6,
			refund_due = $7, updated_at = $8
		WHERE store_id = $1 AND id = $2`, o.StoreID, o.ID, o.PaymentStatus, o.PaidTotal, o.CollectibleTotal, o.CollectedTotal,
		o.RefundDue, o.UpdatedAt); err != nil {
		return fmt.Errorf("update order payment: %w", err)
	}
	if o.PaymentStatus != PaymentPaid || before == PaymentPaid {
		return nil
	}
	return tx.recordPaid(ctx, o, via, actor)
}

// recordPaid writes what an order's transition to paid brings, once per
// transition: the gift cards it sold, the activity, order.paid, the wallet
// commission and the invoice (decisions §27).
func (tx *Tx) recordPaid(ctx context.Context, o *Order, via string, actor *uuid.UUID) error {
	if err := tx.issueSoldGiftCards(ctx, *o); err != nil { // §19: one card per unit sold, at paid
		return err
	}
	if err := tx.addActivity(ctx, *o, "payment_paid", "", map[string]any{"via": via, "paid_total": o.PaidTotal}, actor); err != nil {
		return err
	}
	if err := tx.emit(ctx, o.StoreID, EventOrderPaid, orderPaidEvent{StoreID: o.StoreID, OrderID: o.ID, OrderNumber: o.OrderNumber,
		PaymentMethod: o.PaymentMethod, Total: FormatPrice(o.Total, CurrencyExponent(o.Currency))}); err != nil {
		return err
	}
	terms, err := tx.storeTerms(ctx, o.StoreID)
	if err != nil {
		return err
	}
	bps, eInvoices := terms.commissionBPS, terms.eInvoices
	if fee := Commission(o.PaidTotal, bps); fee > 0 {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO wallet_entries (id, store_id, order_id, kind, amount, created_at)
			VALUES ($1, $2, $3, 'commission', $4, $5)`, NewID(), o.StoreID, o.ID, -fee, tx.now()); err != nil {
			return fmt.Errorf("charge commission: %w", err)
		}
	}
	if eInvoices {
		return tx.issueInvoice(ctx, *o)
	}
	return nil
}

// orderPaidEvent is order.paid's data: exactly the fields of the spec's sample.
type orderPaidEvent struct {
	StoreID       uuid.UUID `json:"store_id"`
	OrderID       uuid.UUID `json:"order_id"`
	OrderNumber   string    `json:"order_number"`
	PaymentMethod string    `json:"payment_method"`
	Total         string    `json:"total"`
}

// openForPayment refuses payments on drafts and cancelled orders.
func openForPayment(o Order) error {
	if o.Status == OrderDraft || o.Status == OrderCancelled {
		return fmt.Errorf("pay a %s order: %w", o.Status, ErrOrderClosedForPayment)
	}
	return nil
}

// MarkOrderPaid marks an order paid by hand: the balance is credited and the
// order settles through the shared routine.
func (tx *Tx) MarkOrderPaid(ctx context.Context, storeID, orderID uuid.UUID, actor *uuid.UUID) (Order, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Order{}, err
	}
	if o.PaymentStatus == PaymentPaid {
		return Order{}, ErrOrderAlreadyPaid
	}
	if err := openForPayment(o); err != nil {
		return Order{}, err
	}
	if err := tx.credit(ctx, &o, "mark_paid", nil, o.BalanceDue(), actor); err != nil {
		return Order{}, err
	}
	return o, tx.settlePayment(ctx, &o, "mark_paid", actor)
}

// PayThroughGateway records a card payment the gateway confirmed (source
// gateway, with the provider and the gateway's id of the payment, which
// `original` refunds go back to) and settles the order through the shared
// routine. A reference already recorded on the order changes nothing.
func (tx *Tx) PayThroughGateway(ctx context.Context, storeID, orderID uuid.UUID, provider, reference string, amount int64) (Order, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Order{}, err
	}
	if err := openForPayment(o); err != nil {
		return Order{}, err
	}
	var seen bool
	if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM order_payments
		WHERE store_id = $1 AND order_id = $2 AND source = 'gateway' AND provider = $3 AND reference = $4)`,
		storeID, orderID, provider, reference).Scan(&seen); err != nil {
		return Order{}, fmt.Errorf("find gateway payment: %w", err)
	}
	if seen || amount <= 0 {
		return o, nil
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO order_payments (id, store_id, order_id, source, provider, reference, amount, status, created_at)
		VALUES ($1, $2, $3, 'gateway', $4, $5, $6, 'succeeded', $7)`, NewID(), storeID, orderID, provider, reference, amount, tx.now()); err != nil {
		return Order{}, fmt.Errorf("record gateway payment: %w", err)
	}
	o.PaidTotal += amount
	return o, tx.settlePayment(ctx, &o, "gateway", nil)
}

// UnmarkOrderPaid undoes a payment made by hand. Refused when a gateway
// charge succeeded or a refund completed. Every succeeded manual payment is
// reversed (recorded and approved proofs become voided), the wallet
// commission is reversed by a new entry, and a credit note cancels the
// invoice (decisions §27).
func (tx *Tx) UnmarkOrderPaid(ctx context.Context, storeID, orderID uuid.UUID, reason string, actor *uuid.UUID) (Order, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Order{}, err
	}
	if o.PaymentStatus == PaymentRefunded || o.PaymentStatus == PaymentPartiallyRefunded {
		return Order{}, ErrPaymentNotReversible // a refund succeeded (decisions §13)
	}
	if o.PaymentStatus != PaymentPaid {
		return Order{}, ErrOrderNotPaid
	}
	var final, pending bool
	if err := tx.tx.QueryRow(ctx, `SELECT
			EXISTS (SELECT 1 FROM order_payments WHERE store_id = $1 AND order_id = $2 AND source = 'gateway' AND status = 'succeeded')
			OR EXISTS (SELECT 1 FROM order_refunds WHERE store_id = $1 AND order_id = $2 AND status = 'succeeded'),
			EXISTS (SELECT 1 FROM order_refunds WHERE store_id = $1 AND order_id = $2 AND status = 'pending')`,
		storeID, orderID).Scan(&final, &pending); err != nil {
		return Order{}, fmt.Errorf("check payment reversibility: %w", err)
	}
	switch {
	case final:
		return Order{}, ErrPaymentNotReversible
	case pending:
		return Order{}, ErrRefundPending
	}
	// Gift card payments stay: only cancel gives a card its debit back (§19).
	cards, err := tx.giftCardPaid(ctx, storeID, orderID)
	if err != nil {
		return Order{}, err
	}
	if cards >= o.PaidTotal {
		return Order{}, ErrPaymentNotReversible // nothing was paid by hand
	}
	now := tx.now()
	if _, err := tx.tx.Exec(ctx, `UPDATE order_payments SET status = 'reversed', reason = $3, ended_at = $4
		WHERE store_id = $1 AND order_id = $2 AND status = 'succeeded' AND source <> 'gift_card'`, storeID, orderID, reason, now); err != nil {
		return Order{}, fmt.Errorf("reverse payments: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE payment_proofs SET status = 'voided', reason = $3, updated_at = $4
		WHERE store_id = $1 AND order_id = $2 AND status IN ('approved', 'recorded')`, storeID, orderID, "unmarked paid: "+reason, now); err != nil {
		return Order{}, fmt.Errorf("void proofs: %w", err)
	}
	if err := tx.reverseCommission(ctx, storeID, orderID, reason); err != nil {
		return Order{}, err
	}
	if err := tx.correctInvoice(ctx, o, InvoiceReasonUnmarkPaid, nil); err != nil {
		return Order{}, err
	}
	o.PaidTotal, o.PaymentStatus = cards, PaymentPending
	if err := tx.settlePayment(ctx, &o, "unmark_paid", actor); err != nil {
		return Order{}, err
	}
	return o, tx.addActivity(ctx, o, ActivityPaymentUnmarked, reason, map[string]any{"payment_status": o.PaymentStatus}, actor)
}

// reverseCommission writes a reversal entry for each commission of the order
// not yet reversed (the unique reverses_id makes a second reversal fail).
func (tx *Tx) reverseCommission(ctx context.Context, storeID, orderID uuid.UUID, reason string) error {
	rows, err := tx.tx.Query(ctx, `SELECT c.id, c.amount FROM wallet_entries c
		WHERE c.store_id = $1 AND c.order_id = $2 AND c.kind = 'commission'
		  AND NOT EXISTS (SELECT 1 FROM wallet_entries r WHERE r.reverses_id = c.id)`, storeID, orderID)
	if err != nil {
		return fmt.Errorf("find commission: %w", err)
	}
	type charge struct {
		ID     uuid.UUID
		Amount int64
	}
	charges, err := pgx.CollectRows(rows, pgx.RowToStructByPos[charge])
	if err != nil {
		return fmt.Errorf("find commission: %w", err)
	}
	for _, c := range charges {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO wallet_entries (id, store_id, order_id, kind, amount, reverses_id, reason, created_at)
			VALUES ($1, $2, $3, 'commission_reversal', $4, $5, $6, $7)`, NewID(), storeID, orderID, -c.Amount, c.ID, reason, tx.now()); err != nil {
			return fmt.Errorf("reverse commission: %w", err)
		}
	}
	return nil
}

// storeTerms are what a store's payments read of it; a transaction that
// holds its writes back caches them (deferredWrites.storeTerms).
type storeTerms struct {
	commissionBPS int
	eInvoices     bool
}

// storeTerms reads a store's commission and e-invoicing switch (once per
// transaction that holds its writes back).
func (tx *Tx) storeTerms(ctx context.Context, storeID uuid.UUID) (storeTerms, error) {
	if tx.deferred != nil {
		if t, ok := tx.deferred.storeTerms[storeID]; ok {
			return t, nil
		}
	}
	var t storeTerms
	if err := tx.tx.QueryRow(ctx, `SELECT commission_bps, e_invoicing FROM stores WHERE id = $1`, storeID).Scan(&t.commissionBPS, &t.eInvoices); err != nil {
		return storeTerms{}, fmt.Errorf("find store payment settings: %w", err)
	}
	if tx.deferred != nil {
		tx.deferred.storeTerms[storeID] = t
	}
	return t, nil
}
