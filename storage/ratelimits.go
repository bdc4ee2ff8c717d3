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
// second, deletes the limiter's counts older than since, and reads totals
// back, in one round trip: for the keys in whole, every total since then;
// for the keys in changed, only the totals written since the snapshot
// after (a previous sync's; nil reads none). It answers the snapshot its
// reads saw, for the next sync's after.
//
// A total written by a transaction the snapshot after did not see is read,
// whenever that transaction committed: a replica whose sync was still
// committing when another read is read by that other's next sync, never
// skipped. A sync's own counts may be read once more by its next sync.
func (db *DB) SyncRateCounts(ctx context.Context, limiter string, counts []RateCount, whole, changed []string, since time.Time, after *string) ([]RateCount, string, error) {
	addKeys, windows, adds := make([]string, len(counts)), make([]time.Time, len(counts)), make([]int32, len(counts))
	for i, c := range counts {
		addKeys[i], windows[i], adds[i] = c.Key, c.WindowStart, int32(c.Count)
	}
	var (
		totals   []RateCount
		snapshot string
	)
	batch := &pgx.Batch{}
	batch.Queue(`DELETE FROM rate_limit_counts WHERE limiter = $1 AND window_start < $2`, limiter, since)
	batch.Queue(`INSERT INTO rate_limit_counts (limiter, key, window_start, count, writer)
		SELECT $1, key, window_start, add, pg_current_xact_id() FROM unnest($2::text[], $3::timestamptz[], $4::int[]) AS d (key, window_start, add)
		ON CONFLICT (limiter, key, window_start) DO UPDATE SET count = rate_limit_counts.count + EXCLUDED.count, writer = EXCLUDED.writer`,
		limiter, addKeys, windows, adds)
	// One statement, so the snapshot answered is the one the reads saw.
	batch.Queue(`SELECT key, window_start, count, NULL FROM rate_limit_counts
			WHERE limiter = $1 AND key = ANY ($2) AND window_start >= $4
		UNION ALL
		SELECT key, window_start, count, NULL FROM rate_limit_counts
			WHERE limiter = $1 AND writer >= pg_snapshot_xmin($5::pg_snapshot) AND NOT pg_visible_in_snapshot(writer, $5::pg_snapshot)
			AND key = ANY ($3) AND window_start >= $4
		UNION ALL
		SELECT NULL, NULL, NULL, pg_current_snapshot()::text`, limiter, whole, changed, since, after).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var (
				c    RateCount
				key  *string
				at   *time.Time
				n    *int
				snap *string
			)
			if err := rows.Scan(&key, &at, &n, &snap); err != nil {
				return err
			}
			if snap != nil {
				snapshot = *snap
				continue
			}
			c.Key, c.WindowStart, c.Count = *key, at.UTC(), *n
			totals = append(totals, c)
		}
		return rows.Err()
	})
	// One implicit transaction: the totals read include the counts just added.
	if err := db.pool.SendBatch(ctx, batch).Close(); err != nil {
		return nil, "", fmt.Errorf("sync rate counts: %w", err)
	}
	return totals, snapshot, nil
}
