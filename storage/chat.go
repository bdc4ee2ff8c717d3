package storage

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	_, err := db.pool.Exec(ctx, `INSERT INTO chat_messages (id, store_id, order_id, template, to_phone, status, created_at, updated_at)
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
	_, err := db.pool.Exec(ctx, `UPDATE chat_messages SET status = $3, provider_message_id = COALESCE($4, provider_message_id),
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

// chatStatusRank orders delivery states so a late "delivered" cannot undo "read".
var chatStatusRank = map[string]int{"queued": 0, "sent": 1, "delivered": 2, "read": 3, "failed": 4}

// ApplyChatStatus records a provider status callback for one of our
// messages, found by the provider's id; it returns the message's store and
// order, or ErrNotFound for a message we never sent. scope, when set, is
// the only store whose messages the callback may touch (a store's own
// channel's callback); nil is the shared sender's, any store.
func (db *DB) ApplyChatStatus(ctx context.Context, scope *uuid.UUID, providerID, status string, code *int, message string) (storeID, orderID uuid.UUID, err error) {
	rank, known := chatStatusRank[status]
	if !known {
		return uuid.Nil, uuid.Nil, &InvalidError{Field: "status", Code: "one_of", Message: "unknown message status"}
	}
	var current string
	err = db.InTx(ctx, func(tx *Tx) error {
		err := tx.tx.QueryRow(ctx, `SELECT store_id, order_id, status FROM chat_messages
			WHERE provider_message_id = $1 AND ($2::uuid IS NULL OR store_id = $2) FOR UPDATE`, providerID, scope).
			Scan(&storeID, &orderID, &current)
		if err != nil {
			return notFoundIfNoRows(err, "find chat message")
		}
		if rank <= chatStatusRank[current] && status != "failed" {
			return nil
		}
		var msg *string
		if message != "" {
			msg = &message
		}
		_, err = tx.tx.Exec(ctx, `UPDATE chat_messages SET status = $2, error_code = COALESCE($3, error_code),
			error_message = COALESCE($4, error_message), updated_at = $5 WHERE provider_message_id = $1`,
			providerID, status, code, msg, tx.now())
		return err
	})
	return storeID, orderID, err
}

// ConfirmByChat applies a customer's tap on "confirm": a PENDING
// cash-on-delivery order whose tap-to-confirm message this is moves to
// CONFIRMED. It reports whether anything moved. scope is as
// ApplyChatStatus's.
func (db *DB) ConfirmByChat(ctx context.Context, scope *uuid.UUID, providerID string) (bool, error) {
	moved := false
	err := db.InTx(ctx, func(tx *Tx) error {
		var (
			storeID, orderID uuid.UUID
			template         string
		)
		err := tx.tx.QueryRow(ctx, `SELECT store_id, order_id, template FROM chat_messages
			WHERE provider_message_id = $1 AND ($2::uuid IS NULL OR store_id = $2)`, providerID, scope).
			Scan(&storeID, &orderID, &template)
		if err != nil {
			return notFoundIfNoRows(err, "find chat message")
		}
		o, err := tx.lockOrder(ctx, storeID, orderID)
		if err != nil {
			return err
		}
		if template != "order_confirmation_request" || o.Status != OrderPending || o.PaymentMethod != "cod" {
			return nil
		}
		_, err = tx.TransitionOrder(ctx, storeID, orderID, OrderConfirmed, nil, "confirmed by the customer in chat", nil)
		moved = err == nil
		return err
	})
	return moved, err
}

// ClaimContactSend records that the store sends order's automatic
// confirmation to contact on channel now, unless another order's went to
// the same contact within interval; it reports whether the send may go
// (the same order's retries may). The contact is kept only as a hash.
func (db *DB) ClaimContactSend(ctx context.Context, storeID, orderID uuid.UUID, channel, contact string, interval time.Duration) (bool, error) {
	now := db.now()
	tag, err := db.pool.Exec(ctx, claimContactSend, contactClaimArgs(storeID, orderID, ContactClaim{channel, contact}, now, interval)...)
	if err != nil {
		return false, fmt.Errorf("claim contact send: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

const claimContactSend = `INSERT INTO contact_sends (store_id, channel, contact_hash, last_sent_at, order_id) VALUES ($1, $2, $3, $4, $6)
	ON CONFLICT (store_id, channel, contact_hash) DO UPDATE SET last_sent_at = EXCLUDED.last_sent_at, order_id = EXCLUDED.order_id
	WHERE contact_sends.last_sent_at <= $5 OR contact_sends.order_id = EXCLUDED.order_id`

func contactClaimArgs(storeID, orderID uuid.UUID, c ContactClaim, now time.Time, interval time.Duration) []any {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(c.Contact))))
	return []any{storeID, c.Channel, sum[:], now, now.Add(-interval), orderID}
}

// ContactClaim is an order's automatic confirmation about to go to a
// contact on a channel (ClaimContactSend).
type ContactClaim struct{ Channel, Contact string }

// SideEffectSkip is a placed order's side effect that will not run, and why.
type SideEffectSkip struct{ Kind, Reason string }

// BeginSideEffects claims the contacts the side effects of a placed order
// are about to send to (as ClaimContactSend does, each) and records the
// side effects that will not run as skipped, all in one round trip. It
// reports, claim by claim, whether the send may go.
func (db *DB) BeginSideEffects(ctx context.Context, storeID, orderID uuid.UUID, claims []ContactClaim, interval time.Duration, skips []SideEffectSkip) ([]bool, error) {
	if len(claims) == 0 && len(skips) == 0 {
		return nil, nil
	}
	now := db.now()
	fresh := make([]bool, len(claims))
	batch := &pgx.Batch{}
	for i, c := range claims {
		batch.Queue(claimContactSend, contactClaimArgs(storeID, orderID, c, now, interval)...).Exec(func(tag pgconn.CommandTag) error {
			fresh[i] = tag.RowsAffected() == 1
			return nil
		})
	}
	for _, s := range skips {
		raw, err := json.Marshal(map[string]string{"reason": s.Reason})
		if err != nil {
			return nil, err
		}
		batch.Queue(insertSideEffect, storeID, orderID, s.Kind, "skipped", raw, now)
	}
	if err := db.pool.SendBatch(ctx, batch).Close(); err != nil {
		return nil, fmt.Errorf("begin side effects: %w", err)
	}
	return fresh, nil
}
