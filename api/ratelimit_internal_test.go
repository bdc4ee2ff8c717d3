package api

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
)

// A failed sync keeps the counts for the next one, and a key unused for two
// windows is forgotten here and in the table.
func TestSharedCounterKeepsCountsThroughAFailedSync(t *testing.T) {
	db := testenv.DB(t)
	c := newSharedCounter("token", time.Minute)
	now := time.Now().UTC()
	current := now.Truncate(time.Minute)
	previous := current.Add(-time.Minute)
	require.NoError(t, c.IncrementBy("k", current, 3))

	failed, cancel := context.WithCancel(context.Background())
	cancel()
	require.Error(t, c.sync(failed, db, now))
	cur, prev, err := c.Get("k", current, previous)
	require.NoError(t, err)
	require.Equal(t, [2]int{3, 0}, [2]int{cur, prev}, "still counted here")

	require.NoError(t, c.sync(context.Background(), db, now))
	var stored int
	require.NoError(t, testenv.SQL(t, db).QueryRow(context.Background(), `SELECT count FROM rate_limit_counts WHERE limiter = 'token' AND key = 'k'`).Scan(&stored))
	require.Equal(t, 3, stored, "added once, after the failure")
	cur, _, _ = c.Get("k", current, previous)
	require.Equal(t, 3, cur, "not counted twice here either")

	later := now.Add(3 * time.Minute)
	require.NoError(t, c.sync(context.Background(), db, later)) // the Get above marked it in use
	require.NoError(t, c.sync(context.Background(), db, later))
	require.Empty(t, c.keys)
	require.NoError(t, testenv.SQL(t, db).QueryRow(context.Background(), `SELECT count(*) FROM rate_limit_counts`).Scan(&stored))
	require.Zero(t, stored)
}
