package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// WorkRef names one row whose workflow start is due: an image, an import,
// or a requeued delivery (with the attempt its ladder begins at).
type WorkRef struct {
	StoreID   uuid.UUID
	ID        uuid.UUID
	ProductID uuid.UUID // images only
	From      int       // deliveries only
	// StoreSubdomain names the store in the workflow's summary.
	StoreSubdomain string
}

// FindLostStarts lists up to limit rows of each kind whose workflow was not
// recorded as started within olderThan of being written.
func (db *DB) FindLostStarts(ctx context.Context, olderThan time.Duration, limit int) (images, imports, ladders []WorkRef, err error) {
	cutoff := db.now().Add(-max(olderThan, 0))
	batch := &pgx.Batch{}
	batch.Queue(`SELECT w.store_id, w.id, w.product_id, 0, COALESCE(s.subdomain, '') FROM product_images w LEFT JOIN stores s ON s.id = w.store_id
		WHERE w.workflow_started_at IS NULL AND w.status = 'processing' AND w.created_at <= $1 ORDER BY w.created_at LIMIT $2`, cutoff, limit).
		Query(func(rows pgx.Rows) error { images, err = collectWorkRefs(rows); return err })
	batch.Queue(`SELECT w.store_id, w.id, w.id, 0, COALESCE(s.subdomain, '') FROM product_imports w LEFT JOIN stores s ON s.id = w.store_id
		WHERE w.workflow_started_at IS NULL AND w.status = 'running' AND w.created_at <= $1 ORDER BY w.created_at LIMIT $2`, cutoff, limit).
		Query(func(rows pgx.Rows) error { imports, err = collectWorkRefs(rows); return err })
	batch.Queue(`SELECT w.store_id, w.id, w.id, w.ladder_from, COALESCE(s.subdomain, '') FROM webhook_deliveries w LEFT JOIN stores s ON s.id = w.store_id
		WHERE w.ladder_from IS NOT NULL AND w.requeued_at <= $1 ORDER BY w.requeued_at LIMIT $2`, cutoff, limit).
		Query(func(rows pgx.Rows) error { ladders, err = collectWorkRefs(rows); return err })
	if berr := db.pool.SendBatch(ctx, batch).Close(); berr != nil {
		return nil, nil, nil, fmt.Errorf("find lost workflow starts: %w", berr)
	}
	return images, imports, ladders, nil
}

func collectWorkRefs(rows pgx.Rows) ([]WorkRef, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (WorkRef, error) {
		var r WorkRef
		return r, row.Scan(&r.StoreID, &r.ID, &r.ProductID, &r.From, &r.StoreSubdomain)
	})
}

// MarkImageStarted records that the image's workflow was started.
func (db *DB) MarkImageStarted(ctx context.Context, storeID, imageID uuid.UUID) error {
	_, err := db.pool.Exec(ctx, `UPDATE product_images SET workflow_started_at = $3 WHERE store_id = $1 AND id = $2 AND workflow_started_at IS NULL`,
		storeID, imageID, db.now())
	if err != nil {
		return fmt.Errorf("mark image started: %w", err)
	}
	return nil
}

// MarkImportStarted records that the import's workflow was started.
func (db *DB) MarkImportStarted(ctx context.Context, storeID, importID uuid.UUID) error {
	_, err := db.pool.Exec(ctx, `UPDATE product_imports SET workflow_started_at = $3 WHERE store_id = $1 AND id = $2 AND workflow_started_at IS NULL`,
		storeID, importID, db.now())
	if err != nil {
		return fmt.Errorf("mark import started: %w", err)
	}
	return nil
}

// MarkLadderStarted records that the delivery's ladder from attempt from
// was started; a later requeue (another from) is left waiting.
func (db *DB) MarkLadderStarted(ctx context.Context, storeID, deliveryID uuid.UUID, from int) error {
	_, err := db.pool.Exec(ctx, `UPDATE webhook_deliveries SET ladder_from = NULL WHERE store_id = $1 AND id = $2 AND ladder_from = $3`,
		storeID, deliveryID, from)
	if err != nil {
		return fmt.Errorf("mark ladder started: %w", err)
	}
	return nil
}
