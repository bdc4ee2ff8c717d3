package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RateCount is one limiter key's count in one window.
type RateCount struct {
	Key         string
	WindowStart time.Time
	Count       int
}

// SyncRateCounts adds each count to the shared total of its key and
// second, deletes the limiter's counts older than since, and returns every
// total since then of the given keys, in one round trip.
func (db *DB) SyncRateCounts(ctx context.Context, limiter string, counts []RateCount, keys []string, since time.Time) ([]RateCount, error) {
	addKeys, windows, adds := make([]string, len(counts)), make([]time.Time, len(counts)), make([]int32, len(counts))
	for i, c := range counts {
		addKeys[i], windows[i], adds[i] = c.Key, c.WindowStart, int32(c.Count)
	}
	var totals []RateCount
	batch := &pgx.Batch{}
	batch.Queue(`DELETE FROM rate_limit_counts WHERE limiter = $1 AND window_start < $2`, limiter, since)
	batch.Queue(`INSERT INTO rate_limit_counts (limiter, key, window_start, count)
		SELECT $1, key, window_start, add FROM unnest($2::text[], $3::timestamptz[], $4::int[]) AS d (key, window_start, add)
		ON CONFLICT (limiter, key, window_start) DO UPDATE SET count = rate_limit_counts.count + EXCLUDED.count`,
		limiter, addKeys, windows, adds)
	batch.Queue(`SELECT key, window_start, count FROM rate_limit_counts
		WHERE limiter = $1 AND key = ANY ($2) AND window_start >= $3`, limiter, keys, since).Query(func(rows pgx.Rows) error {
		var err error
		totals, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (RateCount, error) {
			var c RateCount
			err := row.Scan(&c.Key, &c.WindowStart, &c.Count)
			c.WindowStart = c.WindowStart.UTC()
			return c, err
		})
		return err
	})
	// One implicit transaction: the totals read include the counts just added.
	if err := db.pool.SendBatch(ctx, batch).Close(); err != nil {
		return nil, fmt.Errorf("sync rate counts: %w", err)
	}
	return totals, nil
}
