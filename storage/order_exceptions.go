package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Autopilot exception reasons.
const (
	ReasonCODHighRisk      = "cod_high_risk"
	ReasonSideEffectFailed = "side_effect_failed"
)

// AutopilotException is an order flagged for a person.
type AutopilotException struct {
	ID        uuid.UUID
	OrderID   uuid.UUID
	Reason    string
	Message   string
	MessageAr string
	Data      json.RawMessage
	CreatedAt time.Time
	// OrderNumber is the order's number (ORD-1042), for people.
	OrderNumber string
}

// FlagOrder opens an exception unless one with the reason is open already.
func (tx *Tx) FlagOrder(ctx context.Context, storeID, orderID uuid.UUID, reason, message, messageAr string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = tx.tx.Exec(ctx, `INSERT INTO autopilot_exceptions (id, store_id, order_id, reason, message, message_ar, data, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (order_id, reason) WHERE status = 'open' DO NOTHING`,
		NewID(), storeID, orderID, reason, message, messageAr, raw, tx.now())
	if err != nil {
		return fmt.Errorf("flag order: %w", err)
	}
	return nil
}

// FlagOrder opens an exception outside any other change (a failed side effect).
func (db *DB) FlagOrder(ctx context.Context, storeID, orderID uuid.UUID, reason, message, messageAr string, data any) error {
	return db.InTx(ctx, func(tx *Tx) error { return tx.FlagOrder(ctx, storeID, orderID, reason, message, messageAr, data) })
}

// FindAutopilotExceptions lists a store's open exceptions, newest first.
func (r reader) FindAutopilotExceptions(ctx context.Context, storeID uuid.UUID, limit, offset int) ([]AutopilotException, int, error) {
	return findPage(ctx, r, "autopilot exceptions", listQuery{
		columns: "id, order_id, reason, message, message_ar, data, created_at, " +
			"COALESCE((SELECT o.order_number FROM orders o WHERE o.store_id = autopilot_exceptions.store_id AND o.id = autopilot_exceptions.order_id), '')",
		from: "FROM autopilot_exceptions WHERE store_id = $1 AND status = 'open'", args: []any{storeID},
		orderBy: "created_at DESC, id DESC",
	}, limit, offset, func(row pgx.CollectableRow) (AutopilotException, error) {
		var e AutopilotException
		err := row.Scan(&e.ID, &e.OrderID, &e.Reason, &e.Message, &e.MessageAr, &e.Data, &e.CreatedAt, &e.OrderNumber)
		return e, err
	})
}

// ResolveAutopilotExceptions dismisses an order's open flags without
// touching the order; it reports how many it dismissed.
func (tx *Tx) ResolveAutopilotExceptions(ctx context.Context, storeID, orderID uuid.UUID) (int, error) {
	tag, err := tx.tx.Exec(ctx, `UPDATE autopilot_exceptions SET status = 'resolved', resolved_at = $3
		WHERE store_id = $1 AND order_id = $2 AND status = 'open'`, storeID, orderID, tx.now())
	if err != nil {
		return 0, fmt.Errorf("resolve autopilot exceptions: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
