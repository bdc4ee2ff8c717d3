package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// proofMethods are the payment methods a buyer proves by uploading a receipt.
var proofMethods = []string{"instapay", "mobile_wallet", "bank_transfer"}

// PaymentProof is a buyer's proof or a merchant-recorded receipt.
type PaymentProof struct {
	ID                 uuid.UUID
	StoreID            uuid.UUID
	OrderID            uuid.UUID
	Kind               ProofKind
	Status             ProofStatus
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

// refreshLatestProof records the status of the order's newest proof on the
// order (the pending-review list reads it) and returns it.
func (tx *Tx) refreshLatestProof(ctx context.Context, storeID, orderID uuid.UUID) (*ProofStatus, error) {
	var latest *ProofStatus
	err := tx.tx.QueryRow(ctx, `UPDATE orders SET latest_proof_status = (SELECT status FROM payment_proofs
			WHERE store_id = $1 AND order_id = $2 ORDER BY created_at DESC, id DESC LIMIT 1)
		WHERE store_id = $1 AND id = $2 RETURNING latest_proof_status`, storeID, orderID).Scan(&latest)
	if err != nil {
		return nil, fmt.Errorf("refresh latest proof: %w", err)
	}
	return latest, nil
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

func (tx *Tx) insertProof(ctx context.Context, in NewProof, kind ProofKind, status ProofStatus, amount *int64) (PaymentProof, error) {
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

// MaxProofsPerOrder is how many proofs a buyer may upload for one order,
// rejected ones included (docs/guide/limits.md, "Limits against abuse").
const MaxProofsPerOrder = 5

// ErrProofLimit refuses a proof beyond MaxProofsPerOrder.
var ErrProofLimit = errors.New("proof limit reached for this order")

// CreatePaymentProof saves a buyer's proof for review. The order must be an
// unpaid, open order on a manual rail. The hash is computed afterwards by
// the payment-proof workflow.
func (tx *Tx) CreatePaymentProof(ctx context.Context, in NewProof) (PaymentProof, error) {
	o, err := tx.lockOrder(ctx, in.StoreID, in.OrderID)
	if err != nil {
		return PaymentProof{}, err
	}
	if o.PaymentStatus == PaymentPaid {
		return PaymentProof{}, ErrOrderAlreadyPaid
	}
	if err := openForPayment(o); err != nil {
		return PaymentProof{}, err
	}
	if !slices.Contains(proofMethods, o.PaymentMethod) {
		return PaymentProof{}, ErrProofsNotAccepted
	}
	var uploaded int
	if err := tx.tx.QueryRow(ctx, `SELECT count(*) FROM payment_proofs WHERE store_id = $1 AND order_id = $2 AND kind = 'proof'`,
		in.StoreID, in.OrderID).Scan(&uploaded); err != nil {
		return PaymentProof{}, fmt.Errorf("count proofs: %w", err)
	}
	if uploaded >= MaxProofsPerOrder {
		return PaymentProof{}, ErrProofLimit
	}
	p, err := tx.insertProof(ctx, in, ProofKindProof, ProofAwaitingReview, nil)
	if err != nil {
		return PaymentProof{}, err
	}
	if err := tx.addActivity(ctx, o, ActivityPaymentProofUploaded, "", map[string]any{"proof_id": p.ID}, nil); err != nil {
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
	if o.PaymentStatus == PaymentPaid {
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
	if err := tx.addActivity(ctx, o, ActivityPaymentRecorded, "", map[string]any{"proof_id": p.ID, "amount": in.Amount}, in.ActorUserID); err != nil {
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

func (tx *Tx) setProofStatus(ctx context.Context, p *PaymentProof, status ProofStatus, amount *int64, reason *string, actor *uuid.UUID) error {
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
	if o.PaymentStatus == PaymentPaid {
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
	if err := tx.addActivity(ctx, o, ActivityPaymentProofApproved, "", map[string]any{"proof_id": p.ID, "amount": amount}, actor); err != nil {
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
	if err := tx.addActivity(ctx, o, ActivityPaymentProofRejected, reason, map[string]any{"proof_id": p.ID}, actor); err != nil {
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
	if o.PaymentStatus == PaymentPaid {
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
	so, err := tx.refundedSoFar(ctx, o)
	if err != nil {
		return PaymentProof{}, Order{}, err
	}
	if o.PaidTotal < so.amount {
		// Refunds would exceed what is left paid (decisions §13).
		return PaymentProof{}, Order{}, ErrPaymentNotVoidable
	}
	if err := tx.setProofStatus(ctx, &p, ProofVoided, nil, &reason, actor); err != nil {
		return PaymentProof{}, Order{}, err
	}
	if err := tx.addActivity(ctx, o, ActivityPaymentVoided, reason, map[string]any{"proof_id": p.ID, "amount": voided}, actor); err != nil {
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
	return findPage(ctx, r, "pending review orders", listQuery{
		columns: orderColumns,
		from: `FROM orders WHERE store_id = $1 AND latest_proof_status = 'awaiting_review'
			AND payment_method IN ('instapay', 'mobile_wallet')`, args: []any{storeID},
		orderBy: "created_at DESC, id DESC",
	}, page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (Order, error) { return scanOrder(row) })
}
