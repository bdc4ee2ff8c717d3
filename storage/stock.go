package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Inventory (decisions §11): stock lives on (variant, location) levels, and
// every change appends a movement in the same transaction. Locks are always
// taken variants first, then their levels, each in id order, so concurrent
// orders, adjustments and quantity writes cannot deadlock.

// Movement reasons.
const (
	ReasonReceived      = "received"
	ReasonDamaged       = "damaged"
	ReasonCorrection    = "correction"
	ReasonOrderReserve  = "order_reserve"
	ReasonOrderRelease  = "order_release"
	ReasonOrderShip     = "order_ship"
	ReasonReturnRestock = "return_restock"
)

// MovementReasons are every reason a movement may carry, in the ledger's words.
var MovementReasons = []string{ReasonReceived, ReasonDamaged, ReasonCorrection, ReasonOrderReserve, ReasonOrderRelease,
	ReasonOrderShip, ReasonReturnRestock}

// AdjustmentReasons are the reasons a client may post.
var AdjustmentReasons = []string{ReasonReceived, ReasonCorrection, ReasonDamaged}

// Actor is who changed stock: a merchant user, an app, or the system.
type Actor struct {
	Type string     `json:"type"` // user, app or system
	ID   *uuid.UUID `json:"id"`
}

// UserActor is the merchant behind an order action, or the system when none.
func UserActor(userID *uuid.UUID) Actor {
	if userID == nil {
		return Actor{Type: "system"}
	}
	return Actor{Type: "user", ID: userID}
}

// Level is the stock of one variant at one location.
type Level struct {
	VariantID  uuid.UUID
	ProductID  uuid.UUID
	LocationID uuid.UUID
	SKU        *string // the variant's, else the product's
	OnHand     int
	Reserved   int
	UpdatedAt  time.Time
}

// Available is what can still be promised.
func (l Level) Available() int { return l.OnHand - l.Reserved }

// Movement is one entry of the ledger.
type Movement struct {
	ID            uuid.UUID
	VariantID     uuid.UUID
	LocationID    uuid.UUID
	Reason        string
	OnHandDelta   int
	ReservedDelta int
	OnHandAfter   int
	ReservedAfter int
	OrderID       *uuid.UUID
	ShipmentID    *uuid.UUID
	ReturnID      *uuid.UUID
	AdjustmentID  *uuid.UUID
	Note          string
	Actor         Actor
	CreatedAt     time.Time
}

// levelChange is a signed change to one level.
type levelChange struct {
	variantID, locationID uuid.UUID
	onHand, reserved      int
}

// movementSource is what every movement of one write shares: its reason
// and what caused it (decisions §11): an order's moves name the order, and
// the shipment or return that moved its units when there is one; an
// adjustment's name the adjustment.
type movementSource struct {
	reason       string
	orderID      *uuid.UUID
	shipmentID   *uuid.UUID
	returnID     *uuid.UUID
	adjustmentID *uuid.UUID
	note         string
	actor        Actor
}

// lockedLevel is a level read under lock with its location's standing.
type lockedLevel struct {
	Level
	priority  int
	active    bool
	isDefault bool
}

const movementColumns = `id, variant_id, location_id, reason, on_hand_delta, reserved_delta, on_hand_after, reserved_after,
	order_id, shipment_id, return_id, adjustment_id, note, actor_type, actor_id, created_at`

func scanMovement(row pgx.CollectableRow) (Movement, error) {
	var m Movement
	err := row.Scan(&m.ID, &m.VariantID, &m.LocationID, &m.Reason, &m.OnHandDelta, &m.ReservedDelta, &m.OnHandAfter,
		&m.ReservedAfter, &m.OrderID, &m.ShipmentID, &m.ReturnID, &m.AdjustmentID, &m.Note, &m.Actor.Type, &m.Actor.ID, &m.CreatedAt)
	return m, err
}

// lockVariants locks the variants in id order and returns those that exist.
func (tx *Tx) lockVariants(ctx context.Context, storeID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	rows, err := tx.tx.Query(ctx, `SELECT id FROM variants WHERE store_id = $1 AND id = ANY ($2) ORDER BY id FOR UPDATE`, storeID, ids)
	if err != nil {
		return nil, fmt.Errorf("lock variants: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("lock variants: %w", err)
	}
	exists := make(map[uuid.UUID]bool, len(found))
	for _, id := range found {
		exists[id] = true
	}
	return exists, nil
}

// lockLevels locks the variants' levels in (variant_id, location_id) order;
// the caller holds the variants.
func (tx *Tx) lockLevels(ctx context.Context, storeID uuid.UUID, variantIDs []uuid.UUID) ([]lockedLevel, error) {
	rows, err := tx.tx.Query(ctx, lockLevelsQuery, storeID, variantIDs)
	if err != nil {
		return nil, fmt.Errorf("lock levels: %w", err)
	}
	return collectLockedLevels(rows)
}

// lockLevelsQuery locks a store's levels of some variants ($2), in lock order.
const lockLevelsQuery = `SELECT l.variant_id, l.product_id, l.location_id, l.on_hand, l.reserved, l.updated_at,
		loc.priority, loc.is_active, loc.is_default
	FROM inventory_levels l JOIN locations loc ON loc.store_id = l.store_id AND loc.id = l.location_id
	WHERE l.store_id = $1 AND l.variant_id = ANY ($2)
	ORDER BY l.variant_id, l.location_id FOR UPDATE OF l`

func collectLockedLevels(rows pgx.Rows) ([]lockedLevel, error) {
	levels, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (lockedLevel, error) {
		var l lockedLevel
		err := row.Scan(&l.VariantID, &l.ProductID, &l.LocationID, &l.OnHand, &l.Reserved, &l.UpdatedAt, &l.priority, &l.active, &l.isDefault)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("lock levels: %w", err)
	}
	return levels, nil
}

// defaultLocationID is the store's default location.
func (tx *Tx) defaultLocationID(ctx context.Context, storeID uuid.UUID) (uuid.UUID, error) {
	var id uuid.UUID
	if err := tx.tx.QueryRow(ctx, `SELECT id FROM locations WHERE store_id = $1 AND is_default`, storeID).Scan(&id); err != nil {
		return uuid.Nil, fmt.Errorf("find default location: %w", err)
	}
	return id, nil
}

// errLevelMoved means a level changed although its row was locked: a bug,
// never a client's fault.
var errLevelMoved = errors.New("inventory level changed under its lock")

// writeLevelChanges applies signed changes to levels (creating missing ones),
// appends one movement per level, and keeps each variant's quantity (the sum
// of available over active locations), in one statement. The caller holds
// the variants' and levels' locks. A change that would break
// 0 ≤ reserved ≤ on_hand is not applied and fails the write.
func (tx *Tx) writeLevelChanges(ctx context.Context, storeID uuid.UUID, changes []levelChange, src movementSource) ([]Movement, error) {
	w := tx.levelWriteOf(storeID, changes, src)
	if w.levels == 0 {
		return []Movement{}, nil
	}
	if err := tx.openLevels(ctx, storeID, w.newVariants, w.newLocations); err != nil {
		return nil, err
	}
	rows, err := tx.tx.Query(ctx, w.sql, w.args...)
	if err != nil {
		return nil, fmt.Errorf("write stock: %w", err)
	}
	movements, err := w.collect(rows)
	if err != nil {
		return nil, err
	}
	// Stock decides `available` in smart collections' rules.
	if err := tx.syncStockMembership(ctx, storeID, movements); err != nil {
		return nil, err
	}
	return movements, nil
}

// syncStockMembership re-evaluates the smart collections of the products
// whose stock moved.
func (tx *Tx) syncStockMembership(ctx context.Context, storeID uuid.UUID, movements []Movement) error {
	variants := make([]uuid.UUID, 0, len(movements))
	for _, m := range movements {
		variants = append(variants, m.VariantID)
	}
	rows, err := tx.tx.Query(ctx, `SELECT DISTINCT product_id FROM variants WHERE store_id = $1 AND id = ANY ($2)`, storeID, variants)
	if err != nil {
		return fmt.Errorf("find moved products: %w", err)
	}
	products, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return fmt.Errorf("find moved products: %w", err)
	}
	return tx.syncSmartMembership(ctx, storeID, products...)
}

// levelWrite is the one statement of writeLevelChanges, and the levels it
// must open first (only added stock opens one).
type levelWrite struct {
	sql                       string
	args                      []any
	levels                    int // levels it writes; 0 writes nothing
	newVariants, newLocations []uuid.UUID
}

// collect reads the write's movements; a level it did not write broke
// its checks under the lock, which is errLevelMoved.
func (w levelWrite) collect(rows pgx.Rows) ([]Movement, error) {
	movements, err := pgx.CollectRows(rows, scanMovement)
	if err != nil {
		return nil, fmt.Errorf("write stock: %w", err)
	}
	if len(movements) != w.levels {
		return nil, errLevelMoved
	}
	return movements, nil
}

// queue adds the write to a batch of the transaction's; it must open no
// level (a reservation adds no stock).
func (w levelWrite) queue(batch *pgx.Batch) error {
	if len(w.newVariants) > 0 {
		return errors.New("a queued stock write cannot open levels")
	}
	if w.levels == 0 {
		return nil
	}
	batch.Queue(w.sql, w.args...).Query(func(rows pgx.Rows) error {
		_, err := w.collect(rows)
		return err
	})
	return nil
}

// levelWriteOf merges changes by level, in lock order, into one levelWrite.
func (tx *Tx) levelWriteOf(storeID uuid.UUID, changes []levelChange, src movementSource) levelWrite {
	merged := map[[2]uuid.UUID]*levelChange{}
	var keys [][2]uuid.UUID
	for _, c := range changes {
		key := [2]uuid.UUID{c.variantID, c.locationID}
		if m, ok := merged[key]; ok {
			m.onHand += c.onHand
			m.reserved += c.reserved
			continue
		}
		c := c
		merged[key] = &c
		keys = append(keys, key)
	}
	slices.SortFunc(keys, func(a, b [2]uuid.UUID) int {
		if c := strings.Compare(a[0].String(), b[0].String()); c != 0 {
			return c
		}
		return strings.Compare(a[1].String(), b[1].String())
	})
	var (
		variants, locations []uuid.UUID
		onHand, reserved    []int32
	)
	for _, k := range keys {
		c := merged[k]
		if c.onHand == 0 && c.reserved == 0 {
			continue
		}
		variants, locations = append(variants, c.variantID), append(locations, c.locationID)
		onHand, reserved = append(onHand, int32(c.onHand)), append(reserved, int32(c.reserved))
	}
	w := levelWrite{levels: len(variants)}
	if w.levels == 0 {
		return w
	}
	// Only added stock can open a level; reservations, shipments and
	// removals need one that exists. (An upsert cannot do this: the row it
	// proposes would break the table's checks before the conflict is seen.)
	for i := range variants {
		if onHand[i] > 0 {
			w.newVariants, w.newLocations = append(w.newVariants, variants[i]), append(w.newLocations, locations[i])
		}
	}
	w.sql = `WITH ch AS (
			SELECT * FROM unnest($2::uuid[], $3::uuid[], $4::int[], $5::int[]) WITH ORDINALITY AS c(variant_id, location_id, d_on_hand, d_reserved, n)
		), lvl AS (
			UPDATE inventory_levels l SET on_hand = l.on_hand + ch.d_on_hand, reserved = l.reserved + ch.d_reserved, updated_at = $6
			FROM ch
			WHERE l.store_id = $1 AND l.variant_id = ch.variant_id AND l.location_id = ch.location_id
				AND l.reserved + ch.d_reserved >= 0 AND l.reserved + ch.d_reserved <= l.on_hand + ch.d_on_hand
			RETURNING l.variant_id, l.location_id, l.on_hand, l.reserved
		), mov AS (
			INSERT INTO inventory_movements (store_id, variant_id, location_id, reason, on_hand_delta, reserved_delta, on_hand_after,
				reserved_after, order_id, shipment_id, return_id, adjustment_id, note, actor_type, actor_id, created_at)
			SELECT $1, lvl.variant_id, lvl.location_id, $7, ch.d_on_hand, ch.d_reserved, lvl.on_hand, lvl.reserved, $8, $9, $10, $11, $12, $13,
				$14, $6
			FROM lvl JOIN ch USING (variant_id, location_id)
			ORDER BY ch.n
			RETURNING ` + movementColumns + `
		), sums AS (
			UPDATE variants v SET quantity = v.quantity + d.n, updated_at = $6
			FROM (SELECT ch.variant_id, sum(ch.d_on_hand - ch.d_reserved) AS n
			      FROM lvl JOIN ch USING (variant_id, location_id)
			      JOIN locations loc ON loc.store_id = $1 AND loc.id = ch.location_id AND loc.is_active
			      GROUP BY ch.variant_id) d
			WHERE v.store_id = $1 AND v.id = d.variant_id
		)
		SELECT ` + movementColumns + ` FROM mov ORDER BY variant_id, location_id`
	w.args = []any{storeID, variants, locations, onHand, reserved, tx.now(), src.reason, src.orderID, src.shipmentID, src.returnID,
		src.adjustmentID, src.note, src.actor.Type, src.actor.ID}
	return w
}

// openLevels creates the missing (variant, location) levels at zero, in
// lock order. Variants that do not exist are skipped.
func (tx *Tx) openLevels(ctx context.Context, storeID uuid.UUID, variants, locations []uuid.UUID) error {
	if len(variants) == 0 {
		return nil
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO inventory_levels (store_id, variant_id, location_id, product_id, updated_at)
		SELECT $1, v.id, n.location_id, v.product_id, $4
		FROM unnest($2::uuid[], $3::uuid[]) AS n(variant_id, location_id) JOIN variants v ON v.store_id = $1 AND v.id = n.variant_id
		ORDER BY v.id, n.location_id
		ON CONFLICT DO NOTHING`, storeID, variants, locations, tx.now()); err != nil {
		return fmt.Errorf("open stock levels: %w", err)
	}
	return nil
}

// reserveOrder takes stock for every line of a placed order (lines carry
// their ids): by location priority, lowest first, splitting a line only
// when no one location can hold it whole. Short stock is a StockError. The
// caller holds the lines' variants.
func (tx *Tx) reserveOrder(ctx context.Context, o Order, actor Actor) error {
	ids := make([]uuid.UUID, 0, len(o.Lines))
	for _, l := range o.Lines {
		ids = append(ids, *l.VariantID)
	}
	levels, err := tx.lockLevels(ctx, o.StoreID, ids)
	if err != nil {
		return err
	}
	batch := &pgx.Batch{}
	if err := tx.queueReservation(batch, o, levels, actor); err != nil {
		return err
	}
	return tx.tx.SendBatch(ctx, batch).Close()
}

// queueReservation adds to batch the writes that reserve stock for every
// line of a placed order from its variants' locked levels: by location
// priority, lowest first, splitting a line only when no one location can
// hold it whole. Short stock is a StockError, before anything is queued.
func (tx *Tx) queueReservation(batch *pgx.Batch, o Order, levels []lockedLevel, actor Actor) error {
	byVariant := map[uuid.UUID][]*lockedLevel{}
	for i := range levels {
		l := &levels[i]
		if l.active {
			byVariant[l.VariantID] = append(byVariant[l.VariantID], l)
		}
	}
	for _, ls := range byVariant {
		slices.SortStableFunc(ls, func(a, b *lockedLevel) int {
			if a.priority != b.priority {
				return a.priority - b.priority
			}
			return strings.Compare(a.LocationID.String(), b.LocationID.String())
		})
	}
	var (
		changes                         []levelChange
		allocLines, allocVariants, locs []uuid.UUID
		allocQty                        []int32
	)
	take := func(line OrderLine, l *lockedLevel, n int) {
		l.Reserved += n
		changes = append(changes, levelChange{variantID: l.VariantID, locationID: l.LocationID, reserved: n})
		allocLines, allocVariants, locs = append(allocLines, line.ID), append(allocVariants, l.VariantID), append(locs, l.LocationID)
		allocQty = append(allocQty, int32(n))
	}
	for i, line := range o.Lines {
		if line.GiftCardValue != nil {
			continue // a gift card is never out of stock (§19): nothing to hold
		}
		candidates := byVariant[*line.VariantID]
		whole := slices.IndexFunc(candidates, func(l *lockedLevel) bool { return l.Available() >= line.Quantity })
		if whole >= 0 {
			take(line, candidates[whole], line.Quantity)
			continue
		}
		total := 0
		for _, l := range candidates {
			total += l.Available()
		}
		if total < line.Quantity {
			return &StockError{Line: i, VariantID: *line.VariantID, Available: total, Requested: line.Quantity}
		}
		left := line.Quantity
		for _, l := range candidates {
			if n := min(l.Available(), left); n > 0 {
				take(line, l, n)
				left -= n
			}
		}
	}
	w := tx.levelWriteOf(o.StoreID, changes, movementSource{reason: ReasonOrderReserve, orderID: &o.ID, actor: actor})
	if err := w.queue(batch); err != nil {
		return err
	}
	batch.Queue(`INSERT INTO order_allocations AS a (store_id, order_id, line_id, variant_id, location_id, reserved)
		SELECT $1, $2, u.line_id, u.variant_id, u.location_id, u.n FROM unnest($3::uuid[], $4::uuid[], $5::uuid[], $6::int[]) AS u(line_id, variant_id, location_id, n)
		ON CONFLICT (store_id, order_id, line_id, location_id) DO UPDATE SET reserved = a.reserved + EXCLUDED.reserved`,
		o.StoreID, o.ID, allocLines, allocVariants, locs, allocQty)
	return nil
}

// stockMove is what happens to an order's held units.
type stockMove int

const (
	releaseUnits stockMove = iota // reserved → back to available (cancel, refusal before shipping)
	shipUnits                     // reserved → gone from the building
	restockUnits                  // shipped → back on hand (return)
)

type allocation struct {
	lineID, variantID, locationID uuid.UUID
	reserved, shipped             int
}

// allocationsOf reads where an order's units are held, by line and location.
func (tx *Tx) allocationsOf(ctx context.Context, o Order) ([]allocation, error) {
	rows, err := tx.tx.Query(ctx, `SELECT line_id, variant_id, location_id, reserved, shipped FROM order_allocations
		WHERE store_id = $1 AND order_id = $2 ORDER BY line_id, location_id`, o.StoreID, o.ID)
	if err != nil {
		return nil, fmt.Errorf("read allocations: %w", err)
	}
	allocs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (allocation, error) {
		var a allocation
		return a, row.Scan(&a.lineID, &a.variantID, &a.locationID, &a.reserved, &a.shipped)
	})
	if err != nil {
		return nil, fmt.Errorf("read allocations: %w", err)
	}
	return allocs, nil
}

// moveOrderStock releases, ships or restocks an order's units, line by line:
// want maps a line to the units to move, nil meaning all it holds. Units of
// a variant that no longer exists are skipped; returned units shipped
// before allocations were recorded go back to the default location. Its
// movements name the order alone.
func (tx *Tx) moveOrderStock(ctx context.Context, o Order, want map[uuid.UUID]int, move stockMove, actor Actor) error {
	return tx.moveOrderStockFrom(ctx, o, want, move, actor, nil)
}

// moveOrderStockFrom is moveOrderStock for the units a shipment carries,
// when it is given: they are taken at its location first, and its
// movements name it beside the order.
func (tx *Tx) moveOrderStockFrom(ctx context.Context, o Order, want map[uuid.UUID]int, move stockMove, actor Actor, s *Shipment) error {
	allocs, err := tx.allocationsOf(ctx, o)
	if err != nil {
		return err
	}
	var location, shipmentID *uuid.UUID
	if s != nil {
		location, shipmentID = s.LocationID, &s.ID
	}
	if location != nil {
		slices.SortStableFunc(allocs, func(a, b allocation) int {
			if a.lineID != b.lineID {
				return strings.Compare(a.lineID.String(), b.lineID.String())
			}
			return boolOrder(a.locationID != *location) - boolOrder(b.locationID != *location)
		})
	}
	left := map[uuid.UUID]int{}
	if want != nil {
		for id, n := range want {
			left[id] = n
		}
	}
	var changes []levelChange
	var updLines, updLocs []uuid.UUID
	var updReserved, updShipped []int32
	for _, a := range allocs {
		held := a.reserved
		if move == restockUnits {
			held = a.shipped
		}
		n := held
		if want != nil {
			n = min(held, left[a.lineID])
			left[a.lineID] -= n
		}
		if n <= 0 {
			continue
		}
		switch move {
		case releaseUnits:
			a.reserved -= n
			changes = append(changes, levelChange{variantID: a.variantID, locationID: a.locationID, reserved: -n})
		case shipUnits:
			a.reserved -= n
			a.shipped += n
			changes = append(changes, levelChange{variantID: a.variantID, locationID: a.locationID, onHand: -n, reserved: -n})
		case restockUnits:
			a.shipped -= n
			changes = append(changes, levelChange{variantID: a.variantID, locationID: a.locationID, onHand: n})
		}
		updLines, updLocs = append(updLines, a.lineID), append(updLocs, a.locationID)
		updReserved, updShipped = append(updReserved, int32(a.reserved)), append(updShipped, int32(a.shipped))
	}
	if move == restockUnits && want != nil {
		var fallback uuid.UUID
		for _, l := range o.Lines {
			if left[l.ID] <= 0 || l.VariantID == nil {
				continue
			}
			if fallback == uuid.Nil {
				if fallback, err = tx.defaultLocationID(ctx, o.StoreID); err != nil {
					return err
				}
			}
			changes = append(changes, levelChange{variantID: *l.VariantID, locationID: fallback, onHand: left[l.ID]})
		}
	}
	if len(changes) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, 0, len(changes))
	for _, c := range changes {
		ids = append(ids, c.variantID)
	}
	exists, err := tx.lockVariants(ctx, o.StoreID, ids)
	if err != nil {
		return err
	}
	changes = slices.DeleteFunc(changes, func(c levelChange) bool { return !exists[c.variantID] })
	if _, err := tx.lockLevels(ctx, o.StoreID, ids); err != nil {
		return err
	}
	reason := map[stockMove]string{releaseUnits: ReasonOrderRelease, shipUnits: ReasonOrderShip, restockUnits: ReasonReturnRestock}[move]
	if _, err := tx.writeLevelChanges(ctx, o.StoreID, changes, movementSource{reason: reason, orderID: &o.ID, shipmentID: shipmentID,
		actor: actor}); err != nil {
		return err
	}
	if len(updLines) > 0 {
		if _, err := tx.tx.Exec(ctx, `UPDATE order_allocations a SET reserved = u.reserved, shipped = u.shipped
			FROM unnest($3::uuid[], $4::uuid[], $5::int[], $6::int[]) AS u(line_id, location_id, reserved, shipped)
			WHERE a.store_id = $1 AND a.order_id = $2 AND a.line_id = u.line_id AND a.location_id = u.location_id`,
			o.StoreID, o.ID, updLines, updLocs, updReserved, updShipped); err != nil {
			return fmt.Errorf("update allocations: %w", err)
		}
	}
	return nil
}

// setDefaultOnHand is a `quantity` write (decisions §11): a correction at the
// default location to on_hand = quantity + reserved there. It refuses a
// variant stocked at another location. The caller holds the variant.
func (tx *Tx) setDefaultOnHand(ctx context.Context, storeID, variantID uuid.UUID, quantity int, actor Actor) error {
	levels, err := tx.lockLevels(ctx, storeID, []uuid.UUID{variantID})
	if err != nil {
		return err
	}
	defaultID, err := tx.defaultLocationID(ctx, storeID)
	if err != nil {
		return err
	}
	current := lockedLevel{}
	for _, l := range levels {
		if l.LocationID == defaultID {
			current = l
		} else if l.OnHand > 0 {
			return &InvalidError{Field: "quantity", Code: "multiple_locations",
				Message: "the variant is stocked at more than one location; use /inventory/adjustments"}
		}
	}
	delta := quantity + current.Reserved - current.OnHand
	if delta == 0 { // nothing moves; a new variant still gets its level
		return tx.openLevels(ctx, storeID, []uuid.UUID{variantID}, []uuid.UUID{defaultID})
	}
	_, err = tx.writeLevelChanges(ctx, storeID, []levelChange{{variantID: variantID, locationID: defaultID, onHand: delta}},
		movementSource{reason: ReasonCorrection, actor: actor})
	return err
}

// AdjustmentChange is one line of an adjustment: a signed delta to on_hand
// or a new on_hand, at a location (the default when nil), optionally
// compare-and-set against the on_hand the client counted from.
type AdjustmentChange struct {
	VariantID      uuid.UUID
	LocationID     *uuid.UUID
	Delta          *int
	SetOnHand      *int
	ExpectedOnHand *int
}

// Adjustment is a client's stock change (received, damaged, correction).
type Adjustment struct {
	Reason    string
	Note      string
	Reference *string
	Changes   []AdjustmentChange
	Actor     Actor
}

// AdjustmentResult is what an adjustment wrote.
type AdjustmentResult struct {
	ID        uuid.UUID
	Movements []Movement
	Levels    []Level
}

// StockConflictError refuses an adjustment change: STOCK_RESERVED when
// on_hand would fall below what is reserved, STOCK_CHANGED when on_hand is
// not what the client expected.
type StockConflictError struct {
	Code     string // STOCK_RESERVED or STOCK_CHANGED
	Index    int
	OnHand   int
	Reserved int
}

func (e *StockConflictError) Error() string {
	return fmt.Sprintf("changes[%d]: %s (on_hand %d, reserved %d)", e.Index, e.Code, e.OnHand, e.Reserved)
}

// Adjust applies an adjustment all or nothing: locks the variants, then
// their levels, checks every change against what is there, writes the
// levels and one movement per change.
func (tx *Tx) Adjust(ctx context.Context, storeID uuid.UUID, in Adjustment) (AdjustmentResult, error) {
	defaultID, err := tx.defaultLocationID(ctx, storeID)
	if err != nil {
		return AdjustmentResult{}, err
	}
	var asked []uuid.UUID
	for _, c := range in.Changes {
		if c.LocationID != nil {
			asked = append(asked, *c.LocationID)
		}
	}
	known := map[uuid.UUID]bool{defaultID: true}
	if len(asked) > 0 {
		rows, err := tx.tx.Query(ctx, `SELECT id FROM locations WHERE store_id = $1 AND id = ANY ($2)`, storeID, asked)
		if err != nil {
			return AdjustmentResult{}, fmt.Errorf("find locations: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return AdjustmentResult{}, fmt.Errorf("find locations: %w", err)
		}
		for _, id := range ids {
			known[id] = true
		}
	}
	locationOf := make([]uuid.UUID, len(in.Changes))
	seen := map[[2]uuid.UUID]bool{}
	variantIDs := make([]uuid.UUID, 0, len(in.Changes))
	for i, c := range in.Changes {
		locationOf[i] = defaultID
		if c.LocationID != nil {
			locationOf[i] = *c.LocationID
		}
		if !known[locationOf[i]] {
			return AdjustmentResult{}, &InvalidError{Field: fmt.Sprintf("changes[%d].location_id", i), Code: "not_found", Message: "no such location in this store"}
		}
		key := [2]uuid.UUID{c.VariantID, locationOf[i]}
		if seen[key] {
			return AdjustmentResult{}, &InvalidError{Field: fmt.Sprintf("changes[%d]", i), Code: "duplicate",
				Message: "another change names the same variant and location"}
		}
		seen[key] = true
		variantIDs = append(variantIDs, c.VariantID)
	}
	exists, err := tx.lockVariants(ctx, storeID, variantIDs)
	if err != nil {
		return AdjustmentResult{}, err
	}
	for i, c := range in.Changes {
		if !exists[c.VariantID] {
			return AdjustmentResult{}, &InvalidError{Field: fmt.Sprintf("changes[%d].variant_id", i), Code: "not_found", Message: "no such variant in this store"}
		}
	}
	levels, err := tx.lockLevels(ctx, storeID, variantIDs)
	if err != nil {
		return AdjustmentResult{}, err
	}
	current := map[[2]uuid.UUID]lockedLevel{}
	for _, l := range levels {
		current[[2]uuid.UUID{l.VariantID, l.LocationID}] = l
	}
	changes := make([]levelChange, 0, len(in.Changes))
	for i, c := range in.Changes {
		l := current[[2]uuid.UUID{c.VariantID, locationOf[i]}]
		if c.ExpectedOnHand != nil && *c.ExpectedOnHand != l.OnHand {
			return AdjustmentResult{}, &StockConflictError{Code: "STOCK_CHANGED", Index: i, OnHand: l.OnHand, Reserved: l.Reserved}
		}
		next, field := l.OnHand, fmt.Sprintf("changes[%d].delta", i)
		if c.Delta != nil {
			next += *c.Delta
		} else {
			next, field = *c.SetOnHand, fmt.Sprintf("changes[%d].set_on_hand", i)
		}
		delta := next - l.OnHand
		if (in.Reason == ReasonReceived && delta < 0) || (in.Reason == ReasonDamaged && delta > 0) {
			return AdjustmentResult{}, &InvalidError{Field: field, Code: "sign",
				Message: fmt.Sprintf("a %s adjustment must %s on_hand (now %d)", in.Reason, map[string]string{ReasonReceived: "raise", ReasonDamaged: "lower"}[in.Reason], l.OnHand)}
		}
		if next < 0 && l.Reserved == 0 {
			return AdjustmentResult{}, &InvalidError{Field: field, Code: "out_of_range",
				Message: fmt.Sprintf("would leave on_hand below zero (now %d)", l.OnHand)}
		}
		if next < l.Reserved {
			return AdjustmentResult{}, &StockConflictError{Code: "STOCK_RESERVED", Index: i, OnHand: l.OnHand, Reserved: l.Reserved}
		}
		changes = append(changes, levelChange{variantID: c.VariantID, locationID: locationOf[i], onHand: delta})
	}
	result := AdjustmentResult{ID: NewID()}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO inventory_adjustments (id, store_id, reason, note, reference, actor_type, actor_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, result.ID, storeID, in.Reason, in.Note, in.Reference, in.Actor.Type, in.Actor.ID, tx.now()); err != nil {
		return AdjustmentResult{}, fmt.Errorf("record adjustment: %w", err)
	}
	if result.Movements, err = tx.writeLevelChanges(ctx, storeID, changes, movementSource{reason: in.Reason, adjustmentID: &result.ID,
		note: in.Note, actor: in.Actor}); err != nil {
		return AdjustmentResult{}, err
	}
	// A change that set on_hand to what it was writes no movement, but its level is still answered.
	if err := tx.openLevels(ctx, storeID, variantIDs, locationOf); err != nil {
		return AdjustmentResult{}, err
	}
	byKey := map[[2]uuid.UUID]Level{}
	found, _, err := tx.FindLevels(ctx, storeID, LevelFilter{VariantIDs: variantIDs, Page: Page{Page: 1, Limit: 100 * 100}})
	if err != nil {
		return AdjustmentResult{}, err
	}
	for _, l := range found {
		byKey[[2]uuid.UUID{l.VariantID, l.LocationID}] = l
	}
	for i, c := range in.Changes {
		result.Levels = append(result.Levels, byKey[[2]uuid.UUID{c.VariantID, locationOf[i]}])
	}
	return result, nil
}

// LevelFilter narrows a levels list.
type LevelFilter struct {
	VariantIDs   []uuid.UUID
	ProductID    *uuid.UUID
	LocationID   *uuid.UUID
	SKU          *string
	AvailableLTE *int
	Page         Page
}

func scanLevel(row pgx.CollectableRow) (Level, error) {
	var l Level
	err := row.Scan(&l.VariantID, &l.ProductID, &l.SKU, &l.LocationID, &l.OnHand, &l.Reserved, &l.UpdatedAt)
	return l, err
}

// FindLevels lists the store's stock levels by product, variant and location.
func (r reader) FindLevels(ctx context.Context, storeID uuid.UUID, f LevelFilter) ([]Level, int, error) {
	where := sq.And{sq.Eq{"l.store_id": storeID}}
	if f.VariantIDs != nil {
		where = append(where, sq.Expr("l.variant_id = ANY (?)", f.VariantIDs))
	}
	if f.ProductID != nil {
		where = append(where, sq.Eq{"l.product_id": *f.ProductID})
	}
	if f.LocationID != nil {
		where = append(where, sq.Eq{"l.location_id": *f.LocationID})
	}
	if f.SKU != nil {
		where = append(where, sq.Expr("COALESCE(v.sku, p.sku) = ?", *f.SKU))
	}
	if f.AvailableLTE != nil {
		where = append(where, sq.Expr("l.on_hand - l.reserved <= ?", *f.AvailableLTE))
	}
	sql, args, err := dollarSQL(where)
	if err != nil {
		return nil, 0, fmt.Errorf("find levels: %w", err)
	}
	return findPage(ctx, r, "levels", listQuery{
		columns: `l.variant_id, l.product_id, COALESCE(v.sku, p.sku), l.location_id, l.on_hand, l.reserved, l.updated_at`,
		from: `FROM inventory_levels l JOIN variants v ON v.store_id = l.store_id AND v.id = l.variant_id
			JOIN products p ON p.store_id = l.store_id AND p.id = l.product_id WHERE ` + sql,
		args:    args,
		orderBy: "l.product_id, l.variant_id, l.location_id",
	}, f.Page.Limit, int(f.Page.Offset()), scanLevel)
}

// MovementFilter narrows the ledger.
type MovementFilter struct {
	VariantID    *uuid.UUID
	LocationID   *uuid.UUID
	Reason       *string
	OrderID      *uuid.UUID
	ShipmentID   *uuid.UUID
	ReturnID     *uuid.UUID
	AdjustmentID *uuid.UUID
	DateFrom     *time.Time
	DateTo       *time.Time
	Page         Page
}

// FindMovements lists the ledger, newest first.
func (r reader) FindMovements(ctx context.Context, storeID uuid.UUID, f MovementFilter) ([]Movement, int, error) {
	eq := sq.Eq{"store_id": storeID} // squirrel orders the columns: one SQL text per filter set
	for column, value := range map[string]*uuid.UUID{"variant_id": f.VariantID, "location_id": f.LocationID, "order_id": f.OrderID,
		"shipment_id": f.ShipmentID, "return_id": f.ReturnID, "adjustment_id": f.AdjustmentID} {
		if value != nil {
			eq[column] = *value
		}
	}
	where := sq.And{eq}
	if f.Reason != nil {
		where = append(where, sq.Eq{"reason": *f.Reason})
	}
	if f.DateFrom != nil {
		where = append(where, sq.GtOrEq{"created_at": *f.DateFrom})
	}
	if f.DateTo != nil {
		where = append(where, sq.LtOrEq{"created_at": *f.DateTo})
	}
	sql, args, err := dollarSQL(where)
	if err != nil {
		return nil, 0, fmt.Errorf("find movements: %w", err)
	}
	return findPage(ctx, r, "movements", listQuery{columns: movementColumns, from: "FROM inventory_movements WHERE " + sql,
		args: args, orderBy: "seq DESC"}, f.Page.Limit, int(f.Page.Offset()), scanMovement)
}

// boolOrder sorts false before true.
func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}
