package storage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Payment refusals the API answers with 409.
var (
	ErrOrderAlreadyPaid      = errors.New("order already paid")
	ErrOrderNotPaid          = errors.New("order not paid")
	ErrPaymentNotReversible  = errors.New("payment not reversible")
	ErrProofNotReviewable    = errors.New("proof already reviewed")
	ErrPaymentNotVoidable    = errors.New("payment not voidable")
	ErrProofsNotAccepted     = errors.New("order takes no payment proofs")
	ErrOrderClosedForPayment = errors.New("order closed for payment")
)

// Payment proof kinds and states (decisions §4).
const (
	ProofKindProof    = "proof"    // uploaded by the buyer, reviewed by the merchant
	ProofKindRecorded = "recorded" // a receipt the merchant records with an amount

	ProofAwaitingReview = "awaiting_review"
	ProofApproved       = "approved"
	ProofRejected       = "rejected"
	ProofRecorded       = "recorded"
	ProofVoided         = "voided"
)

// proofMethods are the payment methods a buyer proves by uploading a receipt.
var proofMethods = []string{"instapay", "mobile_wallet", "bank_transfer"}

// Perceptual-hash search (spec §4.3 rule 2).
const (
	DuplicateDistance = 5
	SimilarDistance   = 8
	ProofWindow       = 90 * 24 * time.Hour
	maxSimilar        = 50
)

// PaymentProof is a buyer's proof or a merchant-recorded receipt.
type PaymentProof struct {
	ID                 uuid.UUID
	StoreID            uuid.UUID
	OrderID            uuid.UUID
	Kind               string
	Status             string
	Amount             *int64
	ImageKey           string
	ContentType        string
	PerceptualHash     *uint64
	DuplicateSuspected bool
	DuplicateOf        *uuid.UUID
	Reason             *string
	ReviewedBy         *uuid.UUID
	ReviewedAt         *time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Distance           int // set by the similar search
}

const proofColumns = `id, store_id, order_id, kind, status, amount, image_key, content_type, perceptual_hash, duplicate_suspected,
	duplicate_of, reason, reviewed_by, reviewed_at, created_at, updated_at`

func scanProof(row pgx.Row) (PaymentProof, error) {
	var p PaymentProof
	err := scanProofInto(row, &p)
	return p, err
}

// scanProofInto reads proofColumns, then any extra columns, into p.
func scanProofInto(row pgx.Row, p *PaymentProof, extra ...any) error {
	var hash *int64 // the column is signed; the hash is not
	err := row.Scan(append([]any{&p.ID, &p.StoreID, &p.OrderID, &p.Kind, &p.Status, &p.Amount, &p.ImageKey, &p.ContentType, &hash,
		&p.DuplicateSuspected, &p.DuplicateOf, &p.Reason, &p.ReviewedBy, &p.ReviewedAt, &p.CreatedAt, &p.UpdatedAt}, extra...)...)
	if hash != nil {
		h := uint64(*hash)
		p.PerceptualHash = &h
	}
	return err
}

// PaymentStatusFor is the payment status an order's figures imply: paid once
// the collectible total is covered, awaiting review while its latest proof
// waits, partially paid with anything credited, pending otherwise. Refund
// states are kept as they are.
func PaymentStatusFor(current string, paidTotal, collectibleTotal int64, latestProof *string) string {
	switch {
	case current == "refunded" || current == "partially_refunded":
		return current
	case paidTotal >= collectibleTotal && (paidTotal > 0 || current == "paid"):
		return "paid"
	case latestProof != nil && *latestProof == ProofAwaitingReview:
		return "awaiting_review"
	case paidTotal > 0:
		return "partially_paid"
	default:
		return "pending"
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
	if o.PaymentStatus != "paid" || before == "paid" {
		return nil
	}
	if err := tx.addActivity(ctx, *o, "payment_paid", "", map[string]any{"via": via, "paid_total": o.PaidTotal}, actor); err != nil {
		return err
	}
	if err := tx.emit(ctx, o.StoreID, EventOrderPaid, orderPaidEvent{StoreID: o.StoreID, OrderID: o.ID, OrderNumber: o.OrderNumber,
		PaymentMethod: o.PaymentMethod, Total: FormatPrice(o.Total, CurrencyExponent(o.Currency))}); err != nil {
		return err
	}
	var (
		bps       int
		eInvoices bool
	)
	if err := tx.tx.QueryRow(ctx, `SELECT commission_bps, e_invoicing FROM stores WHERE id = $1`, o.StoreID).Scan(&bps, &eInvoices); err != nil {
		return fmt.Errorf("find store payment settings: %w", err)
	}
	if fee := Commission(o.PaidTotal, bps); fee > 0 {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO wallet_entries (id, store_id, order_id, kind, amount, created_at)
			VALUES ($1, $2, $3, 'commission', $4, $5)`, NewID(), o.StoreID, o.ID, -fee, tx.now()); err != nil {
			return fmt.Errorf("charge commission: %w", err)
		}
	}
	if eInvoices {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO e_invoices (id, store_id, order_id, amount, currency, status, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6)`, NewID(), o.StoreID, o.ID, o.PaidTotal, o.Currency, tx.now()); err != nil {
			return fmt.Errorf("create e-invoice: %w", err)
		}
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

// refreshLatestProof records the status of the order's newest proof on the
// order (the pending-review list reads it) and returns it.
func (tx *Tx) refreshLatestProof(ctx context.Context, storeID, orderID uuid.UUID) (*string, error) {
	var latest *string
	err := tx.tx.QueryRow(ctx, `UPDATE orders SET latest_proof_status = (SELECT status FROM payment_proofs
			WHERE store_id = $1 AND order_id = $2 ORDER BY created_at DESC, id DESC LIMIT 1)
		WHERE store_id = $1 AND id = $2 RETURNING latest_proof_status`, storeID, orderID).Scan(&latest)
	if err != nil {
		return nil, fmt.Errorf("refresh latest proof: %w", err)
	}
	return latest, nil
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
	if o.PaymentStatus == "paid" {
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

// UnmarkOrderPaid undoes a payment made by hand. Refused when a gateway
// charge succeeded or a refund completed. Every succeeded manual payment is
// reversed (recorded and approved proofs become voided), the wallet
// commission is reversed by a new entry, and the e-invoice is asked to be
// cancelled at the authority.
func (tx *Tx) UnmarkOrderPaid(ctx context.Context, storeID, orderID uuid.UUID, reason string, actor *uuid.UUID) (Order, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Order{}, err
	}
	if o.PaymentStatus != "paid" {
		return Order{}, ErrOrderNotPaid
	}
	var final bool
	if err := tx.tx.QueryRow(ctx, `SELECT
			EXISTS (SELECT 1 FROM order_payments WHERE store_id = $1 AND order_id = $2 AND source = 'gateway' AND status = 'succeeded')
			OR EXISTS (SELECT 1 FROM order_refunds WHERE store_id = $1 AND order_id = $2 AND status = 'completed')`,
		storeID, orderID).Scan(&final); err != nil {
		return Order{}, fmt.Errorf("check payment reversibility: %w", err)
	}
	if final {
		return Order{}, ErrPaymentNotReversible
	}
	now := tx.now()
	if _, err := tx.tx.Exec(ctx, `UPDATE order_payments SET status = 'reversed', reason = $3, ended_at = $4
		WHERE store_id = $1 AND order_id = $2 AND status = 'succeeded'`, storeID, orderID, reason, now); err != nil {
		return Order{}, fmt.Errorf("reverse payments: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE payment_proofs SET status = 'voided', reason = $3, updated_at = $4
		WHERE store_id = $1 AND order_id = $2 AND status IN ('approved', 'recorded')`, storeID, orderID, "unmarked paid: "+reason, now); err != nil {
		return Order{}, fmt.Errorf("void proofs: %w", err)
	}
	if err := tx.reverseCommission(ctx, storeID, orderID, reason); err != nil {
		return Order{}, err
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE e_invoices SET status = 'cancel_requested', cancel_reason = $3, sync_started_at = NULL, updated_at = $4
		WHERE store_id = $1 AND order_id = $2 AND status IN ('pending', 'issued')`, storeID, orderID, reason, now); err != nil {
		return Order{}, fmt.Errorf("cancel e-invoice: %w", err)
	}
	o.PaidTotal, o.PaymentStatus = 0, "pending"
	if err := tx.settlePayment(ctx, &o, "unmark_paid", actor); err != nil {
		return Order{}, err
	}
	return o, tx.addActivity(ctx, o, "payment_unmarked", reason, map[string]any{"payment_status": o.PaymentStatus}, actor)
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

// IssueOrderToken mints the buyer's key to an order's proof upload (handed
// out once, at storefront checkout); only its hash is kept.
func (tx *Tx) IssueOrderToken(ctx context.Context, storeID, orderID uuid.UUID) (string, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	token := "svc_ot_" + base64.RawURLEncoding.EncodeToString(secret)
	sum := sha256.Sum256([]byte(token))
	if _, err := tx.tx.Exec(ctx, `INSERT INTO order_tokens (token_hash, store_id, order_id, created_at) VALUES ($1, $2, $3, $4)`,
		sum[:], storeID, orderID, tx.now()); err != nil {
		return "", fmt.Errorf("issue order token: %w", err)
	}
	return token, nil
}

// OrderTokenValid reports whether token opens the order's proof upload.
func (r reader) OrderTokenValid(ctx context.Context, storeID, orderID uuid.UUID, token string) (bool, error) {
	sum := sha256.Sum256([]byte(token))
	var ok bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM order_tokens WHERE token_hash = $1 AND store_id = $2 AND order_id = $3)`,
		sum[:], storeID, orderID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("check order token: %w", err)
	}
	return ok, nil
}

// NewProof is a proof or recorded receipt to save; its image is already in
// the object store under ImageKey.
type NewProof struct {
	ID          uuid.UUID
	StoreID     uuid.UUID
	OrderID     uuid.UUID
	ImageKey    string
	ContentType string
	Amount      int64 // recorded payments only
	ActorUserID *uuid.UUID
}

// ProofImageKey is where a proof's image lives in the object store.
func ProofImageKey(storeID, proofID uuid.UUID) string {
	return fmt.Sprintf("stores/%s/payment-proofs/%s", storeID, proofID)
}

func (tx *Tx) insertProof(ctx context.Context, in NewProof, kind, status string, amount *int64) (PaymentProof, error) {
	now := tx.now()
	p, err := scanProof(tx.tx.QueryRow(ctx, `INSERT INTO payment_proofs (id, store_id, order_id, kind, status, amount, image_key,
			content_type, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING `+proofColumns,
		in.ID, in.StoreID, in.OrderID, kind, status, amount, in.ImageKey, in.ContentType, now))
	if err != nil {
		return PaymentProof{}, fmt.Errorf("create payment proof: %w", err)
	}
	return p, nil
}

// CreatePaymentProof saves a buyer's proof for review. The order must be an
// unpaid, open order on a manual rail. The hash is computed afterwards by
// the payment-proof workflow.
func (tx *Tx) CreatePaymentProof(ctx context.Context, in NewProof) (PaymentProof, error) {
	o, err := tx.lockOrder(ctx, in.StoreID, in.OrderID)
	if err != nil {
		return PaymentProof{}, err
	}
	if o.PaymentStatus == "paid" {
		return PaymentProof{}, ErrOrderAlreadyPaid
	}
	if err := openForPayment(o); err != nil {
		return PaymentProof{}, err
	}
	if !slices.Contains(proofMethods, o.PaymentMethod) {
		return PaymentProof{}, ErrProofsNotAccepted
	}
	p, err := tx.insertProof(ctx, in, ProofKindProof, ProofAwaitingReview, nil)
	if err != nil {
		return PaymentProof{}, err
	}
	if err := tx.addActivity(ctx, o, "payment_proof_uploaded", "", map[string]any{"proof_id": p.ID}, nil); err != nil {
		return PaymentProof{}, err
	}
	return p, tx.settlePayment(ctx, &o, "proof_uploaded", nil)
}

// RecordPayment records a receipt the merchant took with the amount paid.
// The balance falls by the amount, which may not exceed it; when the paid
// total reaches the collectible total the order is paid through the shared
// routine. The order row lock serialises concurrent recordings.
func (tx *Tx) RecordPayment(ctx context.Context, in NewProof) (PaymentProof, Order, error) {
	o, err := tx.lockOrder(ctx, in.StoreID, in.OrderID)
	if err != nil {
		return PaymentProof{}, Order{}, err
	}
	if o.PaymentStatus == "paid" {
		return PaymentProof{}, Order{}, ErrOrderAlreadyPaid
	}
	if err := openForPayment(o); err != nil {
		return PaymentProof{}, Order{}, err
	}
	if in.Amount > o.BalanceDue() {
		return PaymentProof{}, Order{}, &InvalidError{Field: "amount", Code: "exceeds_balance",
			Message: fmt.Sprintf("must not exceed the balance due (%d)", o.BalanceDue())}
	}
	p, err := tx.insertProof(ctx, in, ProofKindRecorded, ProofRecorded, &in.Amount)
	if err != nil {
		return PaymentProof{}, Order{}, err
	}
	if err := tx.credit(ctx, &o, "recorded", &p.ID, in.Amount, in.ActorUserID); err != nil {
		return PaymentProof{}, Order{}, err
	}
	if err := tx.addActivity(ctx, o, "payment_recorded", "", map[string]any{"proof_id": p.ID, "amount": in.Amount}, in.ActorUserID); err != nil {
		return PaymentProof{}, Order{}, err
	}
	if err := tx.settlePayment(ctx, &o, "recorded_payment", in.ActorUserID); err != nil {
		return PaymentProof{}, Order{}, err
	}
	return p, o, nil
}

// lockProof locks a proof's order, then the proof (always in that order).
func (tx *Tx) lockProof(ctx context.Context, storeID, proofID uuid.UUID) (PaymentProof, Order, error) {
	var orderID uuid.UUID
	if err := tx.tx.QueryRow(ctx, `SELECT order_id FROM payment_proofs WHERE store_id = $1 AND id = $2`, storeID, proofID).Scan(&orderID); err != nil {
		return PaymentProof{}, Order{}, notFoundIfNoRows(err, "find payment proof "+proofID.String())
	}
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return PaymentProof{}, Order{}, err
	}
	p, err := scanProof(tx.tx.QueryRow(ctx, `SELECT `+proofColumns+` FROM payment_proofs WHERE store_id = $1 AND id = $2 FOR UPDATE`,
		storeID, proofID))
	if err != nil {
		return PaymentProof{}, Order{}, notFoundIfNoRows(err, "find payment proof "+proofID.String())
	}
	return p, o, nil
}

func (tx *Tx) setProofStatus(ctx context.Context, p *PaymentProof, status string, amount *int64, reason *string, actor *uuid.UUID) error {
	now := tx.now()
	p.Status, p.Reason, p.UpdatedAt = status, reason, now
	if amount != nil {
		p.Amount = amount
	}
	if actor != nil || status == ProofApproved || status == ProofRejected {
		p.ReviewedBy, p.ReviewedAt = actor, &now
	}
	_, err := tx.tx.Exec(ctx, `UPDATE payment_proofs SET status = $3, amount = $4, reason = $5, reviewed_by = $6, reviewed_at = $7, updated_at = $8
		WHERE store_id = $1 AND id = $2`, p.StoreID, p.ID, p.Status, p.Amount, p.Reason, p.ReviewedBy, p.ReviewedAt, now)
	if err != nil {
		return fmt.Errorf("update payment proof: %w", err)
	}
	return nil
}

// ApproveProof accepts a buyer's proof: the balance is credited against it
// and the order is paid through the shared routine.
func (tx *Tx) ApproveProof(ctx context.Context, storeID, proofID uuid.UUID, actor *uuid.UUID) (PaymentProof, error) {
	p, o, err := tx.lockProof(ctx, storeID, proofID)
	if err != nil {
		return PaymentProof{}, err
	}
	if p.Kind != ProofKindProof || p.Status != ProofAwaitingReview {
		return PaymentProof{}, ErrProofNotReviewable
	}
	if o.PaymentStatus == "paid" {
		return PaymentProof{}, ErrOrderAlreadyPaid
	}
	if err := openForPayment(o); err != nil {
		return PaymentProof{}, err
	}
	amount := o.BalanceDue()
	var credited *int64
	if amount > 0 {
		credited = &amount
	}
	if err := tx.setProofStatus(ctx, &p, ProofApproved, credited, nil, actor); err != nil {
		return PaymentProof{}, err
	}
	if err := tx.credit(ctx, &o, "proof", &p.ID, amount, actor); err != nil {
		return PaymentProof{}, err
	}
	if err := tx.addActivity(ctx, o, "payment_proof_approved", "", map[string]any{"proof_id": p.ID, "amount": amount}, actor); err != nil {
		return PaymentProof{}, err
	}
	return p, tx.settlePayment(ctx, &o, "proof_approved", actor)
}

// RejectProof turns a buyer's proof down with a reason.
func (tx *Tx) RejectProof(ctx context.Context, storeID, proofID uuid.UUID, reason string, actor *uuid.UUID) (PaymentProof, error) {
	p, o, err := tx.lockProof(ctx, storeID, proofID)
	if err != nil {
		return PaymentProof{}, err
	}
	if p.Kind != ProofKindProof || p.Status != ProofAwaitingReview {
		return PaymentProof{}, ErrProofNotReviewable
	}
	if err := tx.setProofStatus(ctx, &p, ProofRejected, nil, &reason, actor); err != nil {
		return PaymentProof{}, err
	}
	if err := tx.addActivity(ctx, o, "payment_proof_rejected", reason, map[string]any{"proof_id": p.ID}, actor); err != nil {
		return PaymentProof{}, err
	}
	return p, tx.settlePayment(ctx, &o, "proof_rejected", actor)
}

// VoidPayment voids a recorded payment (or an approved proof) of an order
// that is not paid: the balance rises by its amount again.
func (tx *Tx) VoidPayment(ctx context.Context, storeID, proofID uuid.UUID, reason string, actor *uuid.UUID) (PaymentProof, Order, error) {
	p, o, err := tx.lockProof(ctx, storeID, proofID)
	if err != nil {
		return PaymentProof{}, Order{}, err
	}
	if o.PaymentStatus == "paid" {
		return PaymentProof{}, Order{}, ErrOrderAlreadyPaid
	}
	if p.Status != ProofRecorded && p.Status != ProofApproved {
		return PaymentProof{}, Order{}, ErrPaymentNotVoidable
	}
	var voided int64
	if err := tx.tx.QueryRow(ctx, `WITH v AS (UPDATE order_payments SET status = 'voided', reason = $4, ended_at = $5
			WHERE store_id = $1 AND order_id = $2 AND proof_id = $3 AND status = 'succeeded' RETURNING amount)
		SELECT COALESCE(sum(amount), 0) FROM v`, storeID, o.ID, p.ID, reason, tx.now()).Scan(&voided); err != nil {
		return PaymentProof{}, Order{}, fmt.Errorf("void payment: %w", err)
	}
	o.PaidTotal -= voided
	if err := tx.setProofStatus(ctx, &p, ProofVoided, nil, &reason, actor); err != nil {
		return PaymentProof{}, Order{}, err
	}
	if err := tx.addActivity(ctx, o, "payment_voided", reason, map[string]any{"proof_id": p.ID, "amount": voided}, actor); err != nil {
		return PaymentProof{}, Order{}, err
	}
	if err := tx.settlePayment(ctx, &o, "payment_voided", actor); err != nil {
		return PaymentProof{}, Order{}, err
	}
	return p, o, nil
}

// FindPaymentProof reads one proof of the store.
func (r reader) FindPaymentProof(ctx context.Context, storeID, proofID uuid.UUID) (PaymentProof, error) {
	p, err := scanProof(r.q.QueryRow(ctx, `SELECT `+proofColumns+` FROM payment_proofs WHERE store_id = $1 AND id = $2`, storeID, proofID))
	if err != nil {
		return PaymentProof{}, notFoundIfNoRows(err, "find payment proof "+proofID.String())
	}
	return p, nil
}

// FindPaymentProofs lists an order's proofs and recorded payments, newest first.
func (r reader) FindPaymentProofs(ctx context.Context, storeID, orderID uuid.UUID) ([]PaymentProof, error) {
	if _, err := r.FindOrderByRef(ctx, storeID, orderID.String()); err != nil {
		return nil, err
	}
	rows, err := r.q.Query(ctx, `SELECT `+proofColumns+` FROM payment_proofs WHERE store_id = $1 AND order_id = $2
		ORDER BY created_at DESC, id DESC`, storeID, orderID)
	if err != nil {
		return nil, fmt.Errorf("find payment proofs: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (PaymentProof, error) { return scanProof(row) })
}

// FindPendingReviewOrders lists orders on a manual wallet rail whose latest
// proof awaits review, newest first.
func (r reader) FindPendingReviewOrders(ctx context.Context, storeID uuid.UUID, page Page) ([]Order, int, error) {
	const where = ` FROM orders WHERE store_id = $1 AND latest_proof_status = 'awaiting_review'
		AND payment_method IN ('instapay', 'mobile_wallet')`
	var total int
	if err := r.q.QueryRow(ctx, `SELECT count(*)`+where, storeID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count pending review orders: %w", err)
	}
	rows, err := r.q.Query(ctx, `SELECT `+orderColumns+where+` ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
		storeID, page.Limit, page.Offset())
	if err != nil {
		return nil, 0, fmt.Errorf("find pending review orders: %w", err)
	}
	orders, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Order, error) { return scanOrder(row) })
	return orders, total, err
}
