package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// EInvoiceStatus is where an e-invoice is: pending → issued →
// cancel_requested → cancelled, or failed when the authority refuses.
type EInvoiceStatus string

// E-invoice statuses.
const (
	EInvoicePending         EInvoiceStatus = "pending"
	EInvoiceIssued          EInvoiceStatus = "issued"
	EInvoiceCancelRequested EInvoiceStatus = "cancel_requested"
	EInvoiceCancelled       EInvoiceStatus = "cancelled"
	EInvoiceFailed          EInvoiceStatus = "failed"
)

// EInvoice is the tax-authority invoice of one payment of an order.
type EInvoice struct {
	ID                 uuid.UUID
	StoreID            uuid.UUID
	OrderID            uuid.UUID
	OrderNumber        string
	Amount             int64
	Currency           string
	Status             EInvoiceStatus
	AuthorityReference *string
	CancelReason       *string
	LastError          *string
	IssuedAt           *time.Time
	CancelledAt        *time.Time
	CreatedAt          time.Time
	// Kind is invoice, or credit_note for a succeeded refund, which names
	// the refund and the invoice it credits.
	Kind     string
	RefundID *uuid.UUID
	Credits  *uuid.UUID
}

const eInvoiceColumns = `e.id, e.store_id, e.order_id, o.order_number, e.amount, e.currency, e.status, e.authority_reference,
	e.cancel_reason, e.last_error, e.issued_at, e.cancelled_at, e.created_at, e.kind, e.refund_id, e.credits`

func scanEInvoice(row pgx.Row) (EInvoice, error) {
	var e EInvoice
	err := row.Scan(&e.ID, &e.StoreID, &e.OrderID, &e.OrderNumber, &e.Amount, &e.Currency, &e.Status, &e.AuthorityReference,
		&e.CancelReason, &e.LastError, &e.IssuedAt, &e.CancelledAt, &e.CreatedAt, &e.Kind, &e.RefundID, &e.Credits)
	return e, err
}

// FindEInvoice reads one e-invoice of the store.
func (r reader) FindEInvoice(ctx context.Context, storeID, id uuid.UUID) (EInvoice, error) {
	e, err := scanEInvoice(r.q.QueryRow(ctx, `SELECT `+eInvoiceColumns+` FROM e_invoices e
		JOIN orders o ON o.store_id = e.store_id AND o.id = e.order_id WHERE e.store_id = $1 AND e.id = $2`, storeID, id))
	if err != nil {
		return EInvoice{}, notFoundIfNoRows(err, "find e-invoice "+id.String())
	}
	return e, nil
}

// FindEInvoices lists an order's e-invoices, oldest first.
func (r reader) FindEInvoices(ctx context.Context, storeID, orderID uuid.UUID) ([]EInvoice, error) {
	rows, err := r.q.Query(ctx, `SELECT `+eInvoiceColumns+` FROM e_invoices e
		JOIN orders o ON o.store_id = e.store_id AND o.id = e.order_id
		WHERE e.store_id = $1 AND e.order_id = $2 ORDER BY e.created_at, e.id`, storeID, orderID)
	if err != nil {
		return nil, fmt.Errorf("find e-invoices: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (EInvoice, error) { return scanEInvoice(row) })
}

// EInvoiceRef names an e-invoice with its store.
type EInvoiceRef struct {
	StoreID uuid.UUID
	ID      uuid.UUID
}

// EInvoiceChange is an e-invoice with a change the authority has not been
// told of, as of UpdatedAt.
type EInvoiceChange struct {
	EInvoiceRef
	UpdatedAt      time.Time
	StoreSubdomain string // for the workflow's summary
}

// FindEInvoicesAwaitingSync lists e-invoices with a change the authority
// has not been told of and no workflow started for it.
func (db *DB) FindEInvoicesAwaitingSync(ctx context.Context, limit int) ([]EInvoiceChange, error) {
	rows, err := db.pool.Query(ctx, `SELECT e.store_id, e.id, e.updated_at, COALESCE(s.subdomain, '')
		FROM e_invoices e LEFT JOIN stores s ON s.id = e.store_id
		WHERE e.sync_started_at IS NULL ORDER BY e.updated_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find e-invoices awaiting sync: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (EInvoiceChange, error) {
		var c EInvoiceChange
		err := row.Scan(&c.StoreID, &c.ID, &c.UpdatedAt, &c.StoreSubdomain)
		return c, err
	})
}

// MarkEInvoiceSyncStarted records that a workflow took the e-invoice's
// change. A change made since it was found stays unmarked for the next round.
func (db *DB) MarkEInvoiceSyncStarted(ctx context.Context, c EInvoiceChange) error {
	if _, err := db.pool.Exec(ctx, `UPDATE e_invoices SET sync_started_at = $4
		WHERE store_id = $1 AND id = $2 AND sync_started_at IS NULL AND updated_at = $3`,
		c.StoreID, c.ID, c.UpdatedAt, db.now()); err != nil {
		return fmt.Errorf("mark e-invoice sync started: %w", err)
	}
	return nil
}

// RecordEInvoiceIssued stores the authority's reference. An invoice asked to
// be cancelled meanwhile keeps that state, now with a reference to cancel.
func (db *DB) RecordEInvoiceIssued(ctx context.Context, storeID, id uuid.UUID, reference string) error {
	_, err := db.pool.Exec(ctx, `UPDATE e_invoices SET authority_reference = $3, issued_at = $4, last_error = NULL, updated_at = $4,
			status = CASE WHEN status = 'pending' THEN 'issued' ELSE status END
		WHERE store_id = $1 AND id = $2`, storeID, id, reference, db.now())
	if err != nil {
		return fmt.Errorf("record e-invoice issued: %w", err)
	}
	return nil
}

// RecordEInvoiceCancelled marks an e-invoice cancelled at the authority (or
// never sent there).
func (db *DB) RecordEInvoiceCancelled(ctx context.Context, storeID, id uuid.UUID) error {
	_, err := db.pool.Exec(ctx, `UPDATE e_invoices SET status = 'cancelled', cancelled_at = $3, last_error = NULL, updated_at = $3
		WHERE store_id = $1 AND id = $2 AND status = 'cancel_requested'`, storeID, id, db.now())
	if err != nil {
		return fmt.Errorf("record e-invoice cancelled: %w", err)
	}
	return nil
}

// RecordEInvoiceFailed keeps the authority's refusal on the invoice.
func (db *DB) RecordEInvoiceFailed(ctx context.Context, storeID, id uuid.UUID, message string) error {
	_, err := db.pool.Exec(ctx, `UPDATE e_invoices SET status = 'failed', last_error = $3, updated_at = $4 WHERE store_id = $1 AND id = $2`,
		storeID, id, message, db.now())
	if err != nil {
		return fmt.Errorf("record e-invoice failure: %w", err)
	}
	return nil
}
