package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// What the merchant pages that watch long work read (issue 18): recent
// imports, recent deliveries per subscription, images still processing.

// RecentImport is an import as the imports page lists it.
type RecentImport struct {
	ID        uuid.UUID
	Status    ImportStatus
	DryRun    bool
	TotalRows int
	CreatedAt time.Time
}

// FindRecentImports lists the store's newest imports, running ones first.
func (r reader) FindRecentImports(ctx context.Context, storeID uuid.UUID, limit int) ([]RecentImport, error) {
	rows, err := r.q.Query(ctx, `SELECT id, status, dry_run, total_rows, created_at FROM product_imports
		WHERE store_id = $1 ORDER BY status = 'running' DESC, created_at DESC, id LIMIT $2`, storeID, limit)
	if err != nil {
		return nil, fmt.Errorf("find recent imports: %w", err)
	}
	imports, err := pgx.CollectRows(rows, pgx.RowToStructByPos[RecentImport])
	if err != nil {
		return nil, fmt.Errorf("find recent imports: %w", err)
	}
	return imports, nil
}

// RecentDelivery is a delivery as the deliveries page lists it.
type RecentDelivery struct {
	ID               uuid.UUID
	SubscriptionID   uuid.UUID
	Event            string
	Status           DeliveryStatus
	Attempts         int
	LastResponseCode *int
	CreatedAt        time.Time
	LastAttemptAt    *time.Time
}

// FindRecentDeliveries lists the newest deliveries of each of the store's
// own subscriptions (those FindSubscriptions lists; an app's are the app's),
// up to perSubscription each, with their last attempt's time.
func (r reader) FindRecentDeliveries(ctx context.Context, storeID uuid.UUID, perSubscription int) ([]RecentDelivery, error) {
	rows, err := r.q.Query(ctx, `SELECT d.id, d.subscription_id, d.event, d.status, d.attempts, d.last_response_code, d.created_at,
			(SELECT max(a.attempted_at) FROM webhook_attempts a WHERE a.store_id = d.store_id AND a.delivery_id = d.id)
		FROM webhook_subscriptions s
		CROSS JOIN LATERAL (SELECT * FROM webhook_deliveries d WHERE d.store_id = s.store_id AND d.subscription_id = s.id
			ORDER BY d.created_at DESC, d.id LIMIT $2) d
		WHERE s.store_id = $1 AND s.app_id IS NULL
		ORDER BY d.created_at DESC, d.id`, storeID, perSubscription)
	if err != nil {
		return nil, fmt.Errorf("find recent deliveries: %w", err)
	}
	deliveries, err := pgx.CollectRows(rows, pgx.RowToStructByPos[RecentDelivery])
	if err != nil {
		return nil, fmt.Errorf("find recent deliveries: %w", err)
	}
	return deliveries, nil
}

// ProcessingImage is an image whose pipeline has not finished.
type ProcessingImage struct {
	ID          uuid.UUID
	ProductID   uuid.UUID
	ProductName string
	CreatedAt   time.Time
}

// FindProcessingImages lists the store's images still processing, oldest first.
func (r reader) FindProcessingImages(ctx context.Context, storeID uuid.UUID, limit int) ([]ProcessingImage, error) {
	rows, err := r.q.Query(ctx, `SELECT i.id, i.product_id, p.name, i.created_at FROM product_images i
		JOIN products p ON p.store_id = i.store_id AND p.id = i.product_id
		WHERE i.store_id = $1 AND i.status = 'processing' ORDER BY i.created_at, i.id LIMIT $2`, storeID, limit)
	if err != nil {
		return nil, fmt.Errorf("find processing images: %w", err)
	}
	images, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ProcessingImage])
	if err != nil {
		return nil, fmt.Errorf("find processing images: %w", err)
	}
	return images, nil
}
