package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Location is a place that holds stock (decisions §11). Orders reserve from
// active locations by priority, lowest first; one location per store is the
// default, where `quantity` writes land.
type Location struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Name      string
	Address   json.RawMessage // null for a default location not yet described
	Phone     *string
	Priority  int
	IsDefault bool
	IsActive  bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// LocationUpdate is a partial update.
type LocationUpdate struct {
	Name      *string
	Address   json.RawMessage
	Phone     Field[string]
	Priority  *int
	IsDefault *bool
	IsActive  *bool
}

// DefaultLocationName names the location every store starts with.
func DefaultLocationName(language string) string {
	if language == "en" {
		return "Main warehouse"
	}
	return "المستودع الرئيسي"
}

// ErrLocationInUse refuses deleting a location that holds something.
var ErrLocationInUse = fmt.Errorf("location in use: %w", ErrConflict)

const locationColumns = `id, store_id, name, address, phone, priority, is_default, is_active, created_at, updated_at`

func scanLocation(row pgx.Row) (Location, error) {
	var l Location
	err := row.Scan(&l.ID, &l.StoreID, &l.Name, &l.Address, &l.Phone, &l.Priority, &l.IsDefault, &l.IsActive, &l.CreatedAt, &l.UpdatedAt)
	return l, err
}

func locationConflict(err error, what string) error {
	if isUniqueViolation(err, "locations_store_name_idx") {
		return &ConflictError{Field: "name", Message: "a location with this name exists in the store"}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// createDefaultLocation gives a new store its default location.
func (tx *Tx) createDefaultLocation(ctx context.Context, s Store) error {
	now := tx.now()
	_, err := tx.tx.Exec(ctx, `INSERT INTO locations (id, store_id, name, is_default, created_at, updated_at) VALUES ($1, $2, $3, true, $4, $4)`,
		NewID(), s.ID, DefaultLocationName(s.DefaultLanguage), now)
	if err != nil {
		return fmt.Errorf("create default location: %w", err)
	}
	return nil
}

// FindLocationByID returns one location of the store.
func (r reader) FindLocationByID(ctx context.Context, storeID, id uuid.UUID) (Location, error) {
	l, err := scanLocation(r.q.QueryRow(ctx, `SELECT `+locationColumns+` FROM locations WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Location{}, notFoundIfNoRows(err, "find location "+id.String())
	}
	return l, nil
}

// FindLocations returns a page of the store's locations in reservation
// order: priority, then name.
func (r reader) FindLocations(ctx context.Context, storeID uuid.UUID, page Page) ([]Location, int, error) {
	return findPage(ctx, r, "locations", listQuery{
		columns: locationColumns, from: "FROM locations WHERE store_id = $1", args: []any{storeID},
		orderBy: "priority, name, id",
	}, page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (Location, error) { return scanLocation(row) })
}

// CreateLocation adds a location; made the default, it takes the mark from
// the store's previous default.
func (tx *Tx) CreateLocation(ctx context.Context, l *Location) error {
	l.ID = NewID()
	now := tx.now()
	l.CreatedAt, l.UpdatedAt, l.IsActive = now, now, true
	if l.IsDefault {
		if err := tx.clearDefaultLocation(ctx, l.StoreID); err != nil {
			return err
		}
	}
	_, err := tx.tx.Exec(ctx, `INSERT INTO locations (`+locationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		l.ID, l.StoreID, l.Name, l.Address, l.Phone, l.Priority, l.IsDefault, l.IsActive, l.CreatedAt, l.UpdatedAt)
	if err != nil {
		return locationConflict(err, "create location")
	}
	return nil
}

func (tx *Tx) clearDefaultLocation(ctx context.Context, storeID uuid.UUID) error {
	if _, err := tx.tx.Exec(ctx, `UPDATE locations SET is_default = false, updated_at = $2 WHERE store_id = $1 AND is_default`,
		storeID, tx.now()); err != nil {
		return fmt.Errorf("move default location: %w", err)
	}
	return nil
}

// UpdateLocation applies a partial update. The default location cannot be
// switched off or stop being the default except by making another one the
// default (422 default_location on is_default or is_active).
func (tx *Tx) UpdateLocation(ctx context.Context, storeID, id uuid.UUID, upd LocationUpdate) (Location, error) {
	l, err := scanLocation(tx.tx.QueryRow(ctx, `SELECT `+locationColumns+` FROM locations WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Location{}, notFoundIfNoRows(err, "update location "+id.String())
	}
	if upd.IsDefault != nil && !*upd.IsDefault && l.IsDefault {
		return Location{}, &InvalidError{Field: "is_default", Code: "default_location",
			Message: "make another location the default instead"}
	}
	if upd.IsActive != nil && !*upd.IsActive && (l.IsDefault || (upd.IsDefault != nil && *upd.IsDefault)) {
		return Location{}, &InvalidError{Field: "is_active", Code: "default_location", Message: "the default location cannot be switched off"}
	}
	if upd.IsDefault != nil && *upd.IsDefault && !l.IsDefault {
		if !l.IsActive && (upd.IsActive == nil || !*upd.IsActive) {
			return Location{}, &InvalidError{Field: "is_default", Code: "default_location", Message: "switch the location on to make it the default"}
		}
		if err := tx.clearDefaultLocation(ctx, storeID); err != nil {
			return Location{}, err
		}
		l.IsDefault = true
	}
	if upd.Name != nil {
		l.Name = *upd.Name
	}
	if upd.Address != nil {
		l.Address = upd.Address
	}
	if upd.Phone.Set {
		l.Phone = upd.Phone.ptr()
	}
	if upd.Priority != nil {
		l.Priority = *upd.Priority
	}
	wasActive := l.IsActive
	if upd.IsActive != nil {
		l.IsActive = *upd.IsActive
	}
	l.UpdatedAt = tx.now()
	_, err = tx.tx.Exec(ctx, `UPDATE locations SET name = $3, address = $4, phone = $5, priority = $6, is_default = $7, is_active = $8, updated_at = $9
		WHERE store_id = $1 AND id = $2`, storeID, id, l.Name, l.Address, l.Phone, l.Priority, l.IsDefault, l.IsActive, l.UpdatedAt)
	if err != nil {
		return Location{}, locationConflict(err, "update location")
	}
	if l.IsActive != wasActive {
		// A variant's quantity counts active locations only.
		if _, err := tx.tx.Exec(ctx, `WITH held AS (
				SELECT id FROM variants WHERE store_id = $1
				AND id IN (SELECT variant_id FROM inventory_levels WHERE store_id = $1 AND location_id = $2)
				ORDER BY id FOR UPDATE)
			UPDATE variants v SET quantity = (SELECT COALESCE(sum(lv.on_hand - lv.reserved), 0) FROM inventory_levels lv
				JOIN locations loc ON loc.store_id = lv.store_id AND loc.id = lv.location_id AND loc.is_active
				WHERE lv.store_id = $1 AND lv.variant_id = v.id)
			FROM held WHERE v.store_id = $1 AND v.id = held.id`, storeID, id); err != nil {
			return Location{}, fmt.Errorf("recount variants: %w", err)
		}
	}
	return l, nil
}

// DeleteLocation removes a location that holds nothing: not the default,
// no stock or reservations, no units of a SHIPPED order sent from it
// (ErrLocationInUse). Its empty levels go with it; the ledger keeps its history.
func (tx *Tx) DeleteLocation(ctx context.Context, storeID, id uuid.UUID) error {
	l, err := scanLocation(tx.tx.QueryRow(ctx, `SELECT `+locationColumns+` FROM locations WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return notFoundIfNoRows(err, "delete location "+id.String())
	}
	if l.IsDefault {
		return ErrLocationInUse
	}
	var inUse bool
	if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM inventory_levels WHERE store_id = $1 AND location_id = $2 AND (on_hand > 0 OR reserved > 0))
		OR EXISTS (SELECT 1 FROM order_allocations a JOIN orders o ON o.store_id = a.store_id AND o.id = a.order_id
		           WHERE a.store_id = $1 AND a.location_id = $2 AND (a.reserved > 0 OR (a.shipped > 0 AND o.status = 'SHIPPED')))
		OR EXISTS (SELECT 1 FROM shipments WHERE store_id = $1 AND location_id = $2 AND status NOT IN ('delivered', 'returned_to_sender', 'cancelled'))`,
		storeID, id).Scan(&inUse); err != nil {
		return fmt.Errorf("check location: %w", err)
	}
	if inUse {
		return ErrLocationInUse
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM inventory_levels WHERE store_id = $1 AND location_id = $2`, storeID, id); err != nil {
		return fmt.Errorf("delete empty levels: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM locations WHERE store_id = $1 AND id = $2`, storeID, id); err != nil {
		return fmt.Errorf("delete location: %w", err)
	}
	return nil
}
