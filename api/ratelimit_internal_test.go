package api

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// fakeClock is a limiter's clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClockedLimiter(limit int) (*slidingLimiter, *fakeClock) {
	l := newSlidingLimiter("token", limit, time.Minute)
	clock := &fakeClock{t: time.Date(2026, 11, 24, 10, 0, 40, 0, time.UTC)}
	l.now = clock.now
	return l, clock
}

// The window is exact: 300 requests spread over 40 s across a minute
// boundary leave no room until the first of them is 60 s old, however the
// wall-clock minutes fall (an approximated window let the 301st through).
func TestRateLimitWindowIsExactAcrossAMinuteBoundary(t *testing.T) {
	l, clock := newClockedLimiter(300)
	first := clock.t
	for i := range 300 {
		v := l.allow("k")
		require.True(t, v.allowed, "request %d", i+1)
		require.Equal(t, 299-i, v.remaining)
		clock.advance(40 * time.Second / 300) // 10:00:40 … 10:01:20
	}
	refused := l.allow("k")
	require.False(t, refused.allowed, "the 301st inside 60 s")
	require.Equal(t, 0, refused.remaining)
	require.Equal(t, first.Add(time.Minute), refused.reset, "room again when the first request is 60 s old")

	clock.t = first.Add(time.Minute - time.Millisecond) // the first is not yet 60 s old
	require.False(t, l.allow("k").allowed)
	clock.advance(time.Millisecond)
	require.True(t, l.allow("k").allowed, "at 60 s the first leaves, one enters")
	require.False(t, l.allow("k").allowed)
	require.True(t, l.allow("other").allowed, "per key")
}

// A failed sync keeps the counts for the next one; a sync adds them once;
// another replica's counts take room; a key unused for a window is
// forgotten here and in the table.
func TestSlidingLimiterShares(t *testing.T) {
	db := testenv.DB(t)
	a, clock := newClockedLimiter(10)
	b, _ := newClockedLimiter(10)
	b.now = clock.now
	for range 3 {
		require.True(t, a.allow("k").allowed)
	}
	failed, cancel := context.WithCancel(context.Background())
	cancel()
	require.Error(t, a.sync(failed, db, clock.t))
	require.Equal(t, 6, a.allow("k").remaining, "still counted here: 4 used")

	require.NoError(t, a.sync(context.Background(), db, clock.t))
	var stored int
	require.NoError(t, testenv.SQL(t, db).QueryRow(context.Background(),
		`SELECT sum(count) FROM rate_limit_counts WHERE limiter = 'token' AND key = 'k'`).Scan(&stored))
	require.Equal(t, 4, stored, "added once, after the failure")
	require.Equal(t, 5, a.allow("k").remaining, "not counted twice here")

	require.Equal(t, 9, b.allow("k").remaining, "before a sync b knows only its own")
	require.NoError(t, b.sync(context.Background(), db, clock.t))
	require.Equal(t, 4, b.allow("k").remaining, "a's four it shared and b's two")

	clock.advance(3 * time.Minute)
	for _, l := range []*slidingLimiter{a, b} {
		require.NoError(t, l.sync(context.Background(), db, clock.t)) // the allows above marked the key in use
		require.NoError(t, l.sync(context.Background(), db, clock.t))
		require.Empty(t, l.keys)
	}
	require.NoError(t, testenv.SQL(t, db).QueryRow(context.Background(), `SELECT count(*) FROM rate_limit_counts`).Scan(&stored))
	require.Zero(t, stored)
}

// After a key's first sync reads its totals whole, each sync reads only the
// totals written since the sync before, and still misses none: another
// replica's counts for a second already read, and counts a sync still
// committing while this one read (its transaction unseen by this read's
// snapshot), arrive with the next sync.
func TestSlidingLimiterReadsWhatChanged(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	a, clock := newClockedLimiter(10)
	b, _ := newClockedLimiter(10)
	b.now = clock.now
	since := clock.t.Add(-2 * time.Minute)

	require.True(t, a.allow("k").allowed)
	require.NoError(t, a.sync(ctx, db, clock.t))
	require.True(t, a.keys["k"].known, "read whole once")
	require.NoError(t, a.sync(ctx, db, clock.t)) // may read its own count once more
	totals, snapshot, err := db.SyncRateCounts(ctx, "token", nil, nil, []string{"k"}, since, a.snapshot)
	require.NoError(t, err)
	require.Empty(t, totals, "nothing written since a's sync")

	for range 2 {
		require.True(t, b.allow("k").allowed) // the second a counted in
	}
	require.NoError(t, b.sync(ctx, db, clock.t))
	totals, _, err = db.SyncRateCounts(ctx, "token", nil, nil, []string{"k"}, since, &snapshot)
	require.NoError(t, err)
	require.Equal(t, []storage.RateCount{{Key: "k", WindowStart: clock.t.Truncate(time.Second), Count: 3}}, totals, "b's two in a's second")
	require.NoError(t, a.sync(ctx, db, clock.t))
	require.Equal(t, 7, a.room("k").remaining, "b's two count at a")

	// A replica's sync still committing when a reads: a sees it next time.
	pool := testenv.SQL(t, db)
	late, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer late.Rollback(ctx)
	_, err = late.Exec(ctx, `INSERT INTO rate_limit_counts (limiter, key, window_start, count, writer)
		VALUES ('token', 'k', $1, 4, pg_current_xact_id())`, clock.t.Add(-10*time.Second).Truncate(time.Second))
	require.NoError(t, err)
	require.NoError(t, a.sync(ctx, db, clock.t))
	require.Equal(t, 7, a.room("k").remaining, "the uncommitted four are not seen")
	require.NoError(t, late.Commit(ctx))
	require.NoError(t, a.sync(ctx, db, clock.t))
	require.Equal(t, 3, a.room("k").remaining, "committed after a's read, read by a's next sync")
}

// A reservation counts at once and holds room until given back; a refused
// reserve counts nothing; a count given back after it was shared is taken
// back from the other replicas too, and giving back twice gives back once.
func TestSlidingLimiterReservesAndGivesBack(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	a, clock := newClockedLimiter(3)
	b, _ := newClockedLimiter(3)
	b.now = clock.now
	var held []*reservation
	for i := range 3 {
		r, v := a.reserve("k")
		require.NotNil(t, r, "reservation %d", i+1)
		require.Equal(t, 2-i, v.remaining)
		held = append(held, r)
	}
	refused, v := a.reserve("k")
	require.Nil(t, refused, "the fourth while three are held")
	require.False(t, v.allowed)
	refused.giveBack() // nil: nothing

	held[0].giveBack()
	held[0].giveBack()
	require.Equal(t, 1, a.room("k").remaining, "one given back, once")

	require.NoError(t, a.sync(ctx, db, clock.t))
	require.Equal(t, 3, b.room("k").remaining, "b knows only its own yet")
	require.NoError(t, b.sync(ctx, db, clock.t))
	require.Equal(t, 1, b.room("k").remaining, "b sees a's two")
	held[1].giveBack() // after it was shared
	require.NoError(t, a.sync(ctx, db, clock.t))
	require.NoError(t, b.sync(ctx, db, clock.t))
	require.Equal(t, 2, a.room("k").remaining)
	require.Equal(t, 2, b.room("k").remaining, "the give-back reached b")
}
