package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// What follows a placed order: the dispatcher starts its order-placed
// workflow (FindOrdersAwaitingPlacement, MarkPlacementsStarted), whose side
// effects read what they need in one round trip and record each outcome once.

const sideEffectStatusQuery = `SELECT status FROM order_side_effects WHERE store_id = $1 AND order_id = $2 AND kind = $3`

// scanSideEffectDone reads whether a placed order's side effect was already recorded.
func scanSideEffectDone(row pgx.Row) (bool, error) {
	var status string
	err := row.Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read side effect: %w", err)
	}
	return true, nil
}

// SideEffectStart is what a placed order's side effect reads before it
// runs: whether it was already recorded, the order with its lines, and
// the store's settings.
type SideEffectStart struct {
	Done     bool
	Order    Order
	Settings StoreSettings
}

// FindSideEffectStart reads a side effect's SideEffectStart in one round
// trip. Three side effects run for every order placed, and these reads
// were four round trips of each.
func (db *DB) FindSideEffectStart(ctx context.Context, storeID, orderID uuid.UUID, kind string) (SideEffectStart, error) {
	return db.findSideEffectStart(ctx, storeID, orderID, kind, true)
}

// FindSideEffectSettings is FindSideEffectStart without the order (Order
// is left empty), for a side effect that needs only the settings: the
// shipment writes from the order's rows in SQL.
func (db *DB) FindSideEffectSettings(ctx context.Context, storeID, orderID uuid.UUID, kind string) (SideEffectStart, error) {
	return db.findSideEffectStart(ctx, storeID, orderID, kind, false)
}

func (db *DB) findSideEffectStart(ctx context.Context, storeID, orderID uuid.UUID, kind string, withOrder bool) (SideEffectStart, error) {
	batch := &pgx.Batch{}
	batch.Queue(sideEffectStatusQuery, storeID, orderID, kind)
	if withOrder {
		batch.Queue(orderByIDQuery, storeID, orderID)
		batch.Queue(orderLinesQuery, storeID, orderID)
	}
	batch.Queue(storeSettingsQuery, storeID)
	results := db.pool.SendBatch(ctx, batch)
	defer results.Close()
	var (
		start SideEffectStart
		err   error
	)
	if start.Done, err = scanSideEffectDone(results.QueryRow()); err != nil {
		return SideEffectStart{}, err
	}
	if withOrder {
		if start.Order, err = orderWithLinesFrom(results, orderID); err != nil {
			return SideEffectStart{}, err
		}
	}
	if start.Settings, err = scanStoreSettings(results.QueryRow()); err != nil {
		return SideEffectStart{}, err
	}
	return start, results.Close()
}

// orderWithLinesFrom reads the results of orderByIDQuery and then
// orderLinesQuery from a batch.
func orderWithLinesFrom(results pgx.BatchResults, orderID uuid.UUID) (Order, error) {
	o, err := scanOrder(results.QueryRow())
	if err != nil {
		return Order{}, notFoundIfNoRows(err, "find order "+orderID.String())
	}
	rows, err := results.Query()
	if err != nil {
		return Order{}, fmt.Errorf("find order lines: %w", err)
	}
	o.Lines, err = collectOrderLines(rows)
	return o, err
}

// OrderSideEffectsStart is what a placed order's side effects read before
// they run together: the outcomes already recorded (by kind), the order
// with its lines, the store's settings, and whether the order's customer
// opted out of chat messages.
type OrderSideEffectsStart struct {
	Recorded   map[string]string
	Order      Order
	Settings   StoreSettings
	ChatOptOut bool
}

// FindOrderSideEffectsStart reads an OrderSideEffectsStart in one round
// trip: what the three side effects each read for themselves (five
// statements each for email and chat, two for the shipment) read once.
func (db *DB) FindOrderSideEffectsStart(ctx context.Context, storeID, orderID uuid.UUID) (OrderSideEffectsStart, error) {
	batch := &pgx.Batch{}
	batch.Queue(`SELECT kind, status FROM order_side_effects WHERE store_id = $1 AND order_id = $2`, storeID, orderID)
	batch.Queue(orderByIDQuery, storeID, orderID)
	batch.Queue(orderLinesQuery, storeID, orderID)
	batch.Queue(storeSettingsQuery, storeID)
	batch.Queue(`SELECT c.chat_opt_out FROM orders o JOIN customers c ON c.store_id = o.store_id AND c.id = o.customer_id
		WHERE o.store_id = $1 AND o.id = $2`, storeID, orderID)
	results := db.pool.SendBatch(ctx, batch)
	defer results.Close()
	start := OrderSideEffectsStart{Recorded: map[string]string{}}
	rows, err := results.Query()
	var kind, status string
	if err == nil {
		_, err = pgx.ForEachRow(rows, []any{&kind, &status}, func() error {
			start.Recorded[kind] = status
			return nil
		})
	}
	if err != nil {
		return OrderSideEffectsStart{}, fmt.Errorf("read side effects: %w", err)
	}
	if start.Order, err = orderWithLinesFrom(results, orderID); err != nil {
		return OrderSideEffectsStart{}, err
	}
	if start.Settings, err = scanStoreSettings(results.QueryRow()); err != nil {
		return OrderSideEffectsStart{}, err
	}
	if err := results.QueryRow().Scan(&start.ChatOptOut); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return OrderSideEffectsStart{}, fmt.Errorf("read the customer's chat opt-out: %w", err)
	}
	return start, results.Close()
}

// RecordSideEffect records the outcome of one side effect, once.
func (tx *Tx) RecordSideEffect(ctx context.Context, storeID, orderID uuid.UUID, kind, status string, detail any) error {
	return recordSideEffect(ctx, tx.tx, tx.now(), storeID, orderID, kind, status, detail)
}

// RecordSideEffect records an outcome on its own: one statement, so no
// transaction around it (a BEGIN and a COMMIT were two of its three
// round trips).
func (db *DB) RecordSideEffect(ctx context.Context, storeID, orderID uuid.UUID, kind, status string, detail any) error {
	return recordSideEffect(ctx, db.pool, db.now(), storeID, orderID, kind, status, detail)
}

// RecordSideEffectFailure records that a side effect kept failing, unless
// another outcome was recorded for it before (one that an attempt which
// timed out had reached); it reports whether the side effect stands as
// failed.
func (db *DB) RecordSideEffectFailure(ctx context.Context, storeID, orderID uuid.UUID, kind, reason string) (bool, error) {
	raw, err := json.Marshal(map[string]string{"error": reason})
	if err != nil {
		return false, err
	}
	// The second SELECT sees the row from before the statement, if any.
	var status string
	err = db.pool.QueryRow(ctx, `WITH inserted AS (`+insertSideEffect+` RETURNING status)
		SELECT status FROM inserted
		UNION ALL SELECT status FROM order_side_effects WHERE store_id = $1 AND order_id = $2 AND kind = $3
		LIMIT 1`, storeID, orderID, kind, "failed", raw, db.now()).Scan(&status)
	if err != nil {
		return false, fmt.Errorf("record side effect: %w", err)
	}
	return status == "failed", nil
}

func recordSideEffect(ctx context.Context, q querier, now time.Time, storeID, orderID uuid.UUID, kind, status string, detail any) error {
	raw, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, insertSideEffect, storeID, orderID, kind, status, raw, now)
	if err != nil {
		return fmt.Errorf("record side effect: %w", err)
	}
	return nil
}

// insertSideEffect records one side effect's outcome, once.
const insertSideEffect = `INSERT INTO order_side_effects (store_id, order_id, kind, status, detail, created_at)
	VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (order_id, kind) DO NOTHING`

// OrderRef names an order with its store.
type OrderRef struct {
	StoreID uuid.UUID
	OrderID uuid.UUID
}

// Placement is an order whose order-placed workflow is not started yet, with
// the traceparent of the request that placed it (empty when untraced).
type Placement struct {
	OrderRef
	TraceParent    string
	OrderNumber    string
	StoreSubdomain string // for the workflow's summary
}

// FindOrdersAwaitingPlacement lists placed orders whose order-placed
// workflow has not been started yet, oldest first.
func (db *DB) FindOrdersAwaitingPlacement(ctx context.Context, limit int) ([]Placement, error) {
	rows, err := db.pool.Query(ctx, `SELECT o.store_id, o.id, COALESCE(o.trace_parent, ''), o.order_number, COALESCE(s.subdomain, '')
		FROM orders o LEFT JOIN stores s ON s.id = o.store_id
		WHERE o.placed_started_at IS NULL AND o.status <> 'DRAFT' ORDER BY o.created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find orders awaiting placement: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Placement, error) {
		var p Placement
		err := row.Scan(&p.StoreID, &p.OrderID, &p.TraceParent, &p.OrderNumber, &p.StoreSubdomain)
		return p, err
	})
}

// MarkPlacementsStarted records that the orders' order-placed workflows
// exist, in one statement for a dispatcher round's orders. It waits for no
// row: an order another transaction holds (another dispatcher marking it,
// a merchant's change) is left unmarked, and the next round finds its
// workflow started and marks it. Waiting would let two dispatchers that
// mark overlapping rounds in different orders deadlock.
func (db *DB) MarkPlacementsStarted(ctx context.Context, refs []OrderRef) error {
	if len(refs) == 0 {
		return nil
	}
	storeIDs, orderIDs := make([]uuid.UUID, len(refs)), make([]uuid.UUID, len(refs))
	for i, r := range refs {
		storeIDs[i], orderIDs[i] = r.StoreID, r.OrderID
	}
	_, err := db.pool.Exec(ctx, `WITH free AS (
			SELECT o.store_id, o.id FROM orders o JOIN unnest($1::uuid[], $2::uuid[]) AS u(store_id, id) ON o.store_id = u.store_id AND o.id = u.id
			WHERE o.placed_started_at IS NULL
			FOR NO KEY UPDATE OF o SKIP LOCKED)
		UPDATE orders o SET placed_started_at = $3 FROM free WHERE o.store_id = free.store_id AND o.id = free.id`, storeIDs, orderIDs, db.now())
	if err != nil {
		return fmt.Errorf("mark placements started: %w", err)
	}
	return nil
}
