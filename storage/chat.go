package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// ChatMessage is one chat-app message sent for an order.
type ChatMessage struct {
	ID                uuid.UUID
	OrderID           uuid.UUID
	Template          string
	ToPhone           string
	Status            string // queued, sent, delivered, read, failed
	ErrorCode         *int
	ErrorMessage      *string
	ProviderMessageID *string
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// CreateChatMessage records a message about to be sent.
func (db *DB) CreateChatMessage(ctx context.Context, storeID, orderID uuid.UUID, template, phone string) (uuid.UUID, error) {
	id := NewID()
	now := db.now()
	_, err := db.Pool.Exec(ctx, `INSERT INTO chat_messages (id, store_id, order_id, template, to_phone, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, 'queued', $6, $6)`, id, storeID, orderID, template, phone, now)
	if err != nil {
		return uuid.Nil, fmt.Errorf("record chat message: %w", err)
	}
	return id, nil
}

// UpdateChatMessage records what the provider said about a message.
func (db *DB) UpdateChatMessage(ctx context.Context, storeID, id uuid.UUID, status string, providerID *string, code *int, message string) error {
	var msg *string
	if message != "" {
		msg = &message
	}
	_, err := db.Pool.Exec(ctx, `UPDATE chat_messages SET status = $3, provider_message_id = COALESCE($4, provider_message_id),
		error_code = $5, error_message = $6, updated_at = $7 WHERE store_id = $1 AND id = $2`,
		storeID, id, status, providerID, code, msg, db.now())
	if err != nil {
		return fmt.Errorf("update chat message: %w", err)
	}
	return nil
}

// FindChatMessages lists an order's chat messages, newest first.
func (r reader) FindChatMessages(ctx context.Context, storeID, orderID uuid.UUID) ([]ChatMessage, error) {
	rows, err := r.q.Query(ctx, `SELECT id, order_id, template, to_phone, status, error_code, error_message, provider_message_id, created_at, updated_at
		FROM chat_messages WHERE store_id = $1 AND order_id = $2 ORDER BY created_at DESC, id DESC`, storeID, orderID)
	if err != nil {
		return nil, fmt.Errorf("find chat messages: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ChatMessage, error) {
		var m ChatMessage
		err := row.Scan(&m.ID, &m.OrderID, &m.Template, &m.ToPhone, &m.Status, &m.ErrorCode, &m.ErrorMessage, &m.ProviderMessageID, &m.CreatedAt, &m.UpdatedAt)
		return m, err
	})
}
