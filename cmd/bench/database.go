package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/merchantsvc/svc/storage"
)

// database is the service's storage and, beside it, a plain pool on the
// same database: the benchmarks seed rows in bulk and run the bare
// baselines on it, which storage keeps to itself.
type database struct {
	*storage.DB
	Pool *pgxpool.Pool
}

func openDatabase(ctx context.Context, url string) (*database, error) {
	db, err := storage.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open bench pool: %w", err)
	}
	return &database{DB: db, Pool: pool}, nil
}

// Close closes both.
func (d *database) Close() {
	d.Pool.Close()
	d.DB.Close()
}
