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

// SyncRateCounts adds each count to the shared total of its key and window
// (a zero count only reads) and returns the totals, in one statement. Windows
// older than keepAfter are deleted first.
func (db *DB) SyncRateCounts(ctx context.Context, limiter string, counts []RateCount, keepAfter time.Time) ([]RateCount, error) {
	if _, err := db.pool.Exec(ctx, `DELETE FROM rate_limit_counts WHERE limiter = $1 AND window_start < $2`, limiter, keepAfter); err != nil {
		return nil, fmt.Errorf("expire rate counts: %w", err)
	}
	if len(counts) == 0 {
		return nil, nil
	}
	keys, windows, adds := make([]string, len(counts)), make([]time.Time, len(counts)), make([]int32, len(counts))
	for i, c := range counts {
		keys[i], windows[i], adds[i] = c.Key, c.WindowStart, int32(c.Count)
	}
	rows, err := db.pool.Query(ctx, `WITH d AS (
			SELECT * FROM unnest($2::text[], $3::timestamptz[], $4::int[]) AS d (key, window_start, add)
		), added AS (
			INSERT INTO rate_limit_counts (limiter, key, window_start, count)
			SELECT $1, key, window_start, add FROM d WHERE add > 0
			ON CONFLICT (limiter, key, window_start) DO UPDATE SET count = rate_limit_counts.count + EXCLUDED.count
			RETURNING key, window_start, count
		)
		SELECT key, window_start, count FROM added
		UNION ALL
		SELECT c.key, c.window_start, c.count FROM rate_limit_counts c
		JOIN d ON d.add = 0 AND c.limiter = $1 AND c.key = d.key AND c.window_start = d.window_start`,
		limiter, keys, windows, adds)
	if err != nil {
		return nil, fmt.Errorf("sync rate counts: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (RateCount, error) {
		var c RateCount
		err := row.Scan(&c.Key, &c.WindowStart, &c.Count)
		c.WindowStart = c.WindowStart.UTC()
		return c, err
	})
}
