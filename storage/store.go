package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Store is one merchant store; every tenant row belongs to one.
type Store struct {
	ID              uuid.UUID
	OwnerUserID     uuid.UUID
	Name            string
	Subdomain       string
	Currency        string
	DefaultLanguage string
	LifecycleState  string
	CreatedAt       time.Time
}

const storeColumns = `id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, created_at`

// fields are the scan targets of storeColumns.
func (s *Store) fields() []any {
	return []any{&s.ID, &s.OwnerUserID, &s.Name, &s.Subdomain, &s.Currency, &s.DefaultLanguage, &s.LifecycleState, &s.CreatedAt}
}

func scanStore(row pgx.Row) (Store, error) {
	var s Store
	err := row.Scan(s.fields()...)
	return s, err
}

// FindStoreByID returns one store.
func (r reader) FindStoreByID(ctx context.Context, storeID uuid.UUID) (Store, error) {
	s, err := scanStore(r.q.QueryRow(ctx, `SELECT `+storeColumns+` FROM stores WHERE id = $1`, storeID))
	if err != nil {
		return Store{}, notFoundIfNoRows(err, "find store")
	}
	return s, nil
}

// FindStoreBySubdomain finds the store a storefront address names.
func (r reader) FindStoreBySubdomain(ctx context.Context, subdomain string) (Store, error) {
	s, err := scanStore(r.q.QueryRow(ctx, `SELECT `+storeColumns+` FROM stores WHERE subdomain = $1`, subdomain))
	if err != nil {
		return Store{}, notFoundIfNoRows(err, "find store by subdomain")
	}
	return s, nil
}

// FindStoresByOwner lists the stores a user owns, oldest first.
func (r reader) FindStoresByOwner(ctx context.Context, userID uuid.UUID) ([]Store, error) {
	rows, err := r.q.Query(ctx, `SELECT `+storeColumns+` FROM stores WHERE owner_user_id = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("find stores by owner: %w", err)
	}
	stores, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Store, error) { return scanStore(row) })
	if err != nil {
		return nil, fmt.Errorf("find stores by owner: %w", err)
	}
	return stores, nil
}
