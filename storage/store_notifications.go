package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// NotificationKind names what a dashboard notification is about.
type NotificationKind string

// Notification kinds.
const (
	NotificationWebhookDisabled NotificationKind = "webhook.disabled"
	NotificationImportFinished  NotificationKind = "import.finished"
)

// Notification is a dashboard message for the merchant.
type Notification struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Kind      NotificationKind
	Title     string
	TitleAr   string
	Body      string
	BodyAr    string
	Data      json.RawMessage
	CreatedAt time.Time
	ReadAt    *time.Time
}

// CreateNotification adds a dashboard notification.
func (tx *Tx) CreateNotification(ctx context.Context, n Notification) error {
	if n.Data == nil {
		n.Data = json.RawMessage(`{}`)
	}
	_, err := tx.tx.Exec(ctx, `INSERT INTO notifications (id, store_id, kind, title, title_ar, body, body_ar, data, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, NewID(), n.StoreID, n.Kind, n.Title, n.TitleAr, n.Body, n.BodyAr, n.Data, tx.now())
	if err != nil {
		return fmt.Errorf("create notification: %w", err)
	}
	return nil
}

// FindNotifications lists a store's notifications, newest first.
func (r reader) FindNotifications(ctx context.Context, storeID uuid.UUID, page Page) ([]Notification, int, error) {
	return findPage(ctx, r, "notifications", listQuery{
		columns: "id, store_id, kind, title, title_ar, body, body_ar, data, created_at, read_at",
		from:    "FROM notifications WHERE store_id = $1", args: []any{storeID},
		orderBy: "created_at DESC, id",
	}, page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (Notification, error) {
		var n Notification
		err := row.Scan(&n.ID, &n.StoreID, &n.Kind, &n.Title, &n.TitleAr, &n.Body, &n.BodyAr, &n.Data, &n.CreatedAt, &n.ReadAt)
		return n, err
	})
}
