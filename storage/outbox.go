package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Event names of spec §6.1, the only ones a subscription may name.
const (
	EventOrderCreated       = "order.created"
	EventOrderPaid          = "order.paid"
	EventOrderStatusChanged = "order.status_changed"
	EventProductCreated     = "product.created"
	EventProductUpdated     = "product.updated"
	EventProductDeleted     = "product.deleted"
)

// OutboxChannel is the Postgres notification channel signalled on every event.
const OutboxChannel = "svc_outbox"

// OutboxEvent is a fact written with the change it describes.
type OutboxEvent struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Event     string
	Body      []byte
	CreatedAt time.Time
}

// eventBody is the delivery body of spec §2.8. It is serialised once, here, and
// the same bytes are sent on every attempt.
type eventBody struct {
	Event     string `json:"event"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data"`
}

// emit writes one outbox row in the caller's transaction.
func (tx *Tx) emit(ctx context.Context, storeID uuid.UUID, event string, data any) error {
	batch := &pgx.Batch{}
	if err := tx.queueEmit(ctx, batch, storeID, event, data); err != nil || batch.Len() == 0 {
		return err
	}
	if err := tx.tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("write %s event: %w", event, err)
	}
	return nil
}

// queueEmit is emit as one statement of a batch (none while the
// transaction holds its writes back). pg_notify is delivered at commit and
// wakes the dispatcher at once; the dispatcher also polls, so a lost
// notification only delays delivery.
func (tx *Tx) queueEmit(ctx context.Context, batch *pgx.Batch, storeID uuid.UUID, event string, data any) error {
	now := tx.now()
	body, err := json.Marshal(eventBody{Event: event, Timestamp: now.Format(time.RFC3339), Data: data})
	if err != nil {
		return fmt.Errorf("encode %s event: %w", event, err)
	}
	if tx.deferred != nil {
		tx.deferred.outbox = append(tx.deferred.outbox, deferredOutbox{id: NewID(), storeID: storeID, event: event, body: body,
			createdAt: now, traceParent: traceParent(ctx)})
		return nil
	}
	batch.Queue(`WITH row AS (INSERT INTO outbox (id, store_id, event, body, created_at, trace_parent)
			VALUES ($1, $2, $3, $4, $5, NULLIF($6, '')))
		SELECT pg_notify('`+OutboxChannel+`', '')`, NewID(), storeID, event, body, now, traceParent(ctx))
	return nil
}

// FindOutboxEvents lists a store's events, oldest first.
func (r reader) FindOutboxEvents(ctx context.Context, storeID uuid.UUID) ([]OutboxEvent, error) {
	rows, err := r.q.Query(ctx, `SELECT id, store_id, event, body, created_at FROM outbox WHERE store_id = $1 ORDER BY created_at, id`, storeID)
	if err != nil {
		return nil, fmt.Errorf("find outbox events: %w", err)
	}
	defer rows.Close()
	var events []OutboxEvent
	for rows.Next() {
		var e OutboxEvent
		if err := rows.Scan(&e.ID, &e.StoreID, &e.Event, &e.Body, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("find outbox events: %w", err)
		}
		events = append(events, e)
	}
	return events, rows.Err()
}

// OutboxBacklog counts the events not yet dispatched and the age in seconds
// of the oldest (0 when there is none).
func (db *DB) OutboxBacklog(ctx context.Context) (int, float64, error) {
	var (
		n   int
		age float64
	)
	err := db.pool.QueryRow(ctx, `SELECT count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8
		FROM outbox WHERE dispatched_at IS NULL`).Scan(&n, &age)
	if err != nil {
		return 0, 0, fmt.Errorf("outbox backlog: %w", err)
	}
	return n, age, nil
}

// deferredOutbox is an outbox row held back until flushDeferred (deferWrites).
type deferredOutbox struct {
	id, storeID uuid.UUID
	event       string
	body        []byte
	createdAt   time.Time
	traceParent string
}
