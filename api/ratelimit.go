package api

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/merchantsvc/svc/storage"
)

// sharedCounter is the httprate.LimitCounter every API replica shares
// through Postgres. A request is counted in memory at once, so the limiter
// never waits on the database; SyncRateLimits adds the new counts to the
// shared totals every interval and brings back what the other replicas
// counted. A replica therefore sees the others' requests up to one interval
// late: a token spread over N replicas can pass its limit by what N-1 of
// them admit in one interval (about 5 requests at 300 a minute and 1 s).
// Without syncs it is a plain per-process counter.
type sharedCounter struct {
	limiter string // the name its rows carry
	mu      sync.Mutex
	window  time.Duration
	keys    map[string]*keyCounts
}

// keyCounts are one key's counts by window start (unix seconds).
type keyCounts struct {
	shared  map[int64]int // every replica's total, as of the last sync
	syncing map[int64]int // counted here and being added by a sync in flight
	pending map[int64]int // counted here since
	fresh   bool          // asked about since the last sync
}

func newSharedCounter(limiter string, window time.Duration) *sharedCounter {
	return &sharedCounter{limiter: limiter, window: window, keys: map[string]*keyCounts{}}
}

// Config is called by httprate with the limiter's settings.
func (c *sharedCounter) Config(_ int, window time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.window = window
}

func (c *sharedCounter) Increment(key string, window time.Time) error {
	return c.IncrementBy(key, window, 1)
}

func (c *sharedCounter) IncrementBy(key string, window time.Time, amount int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key(key).pending[window.Unix()] += amount
	return nil
}

func (c *sharedCounter) Get(key string, current, previous time.Time) (int, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.key(key)
	k.fresh = true
	count := func(w int64) int { return k.shared[w] + k.syncing[w] + k.pending[w] }
	return count(current.Unix()), count(previous.Unix()), nil
}

func (c *sharedCounter) key(key string) *keyCounts {
	k, ok := c.keys[key]
	if !ok {
		k = &keyCounts{shared: map[int64]int{}, syncing: map[int64]int{}, pending: map[int64]int{}}
		c.keys[key] = k
	}
	return k
}

// sync adds the counts made here since the last sync to the shared totals
// and reads back the totals of the current and previous windows of every
// key in use. On failure the counts stay here for the next sync.
func (c *sharedCounter) sync(ctx context.Context, db *storage.DB, now time.Time) error {
	c.mu.Lock()
	current := now.UTC().Truncate(c.window)
	windows := [2]time.Time{current.Add(-c.window), current}
	var counts []storage.RateCount
	for name, k := range c.keys {
		for _, m := range []map[int64]int{k.shared, k.pending} {
			for w := range m {
				if w < windows[0].Unix() {
					delete(m, w)
				}
			}
		}
		if len(k.pending) == 0 && !k.fresh && len(k.shared) == 0 {
			delete(c.keys, name) // not used for two windows
			continue
		}
		for _, w := range windows {
			counts = append(counts, storage.RateCount{Key: name, WindowStart: w, Count: k.pending[w.Unix()]})
		}
		k.syncing, k.pending, k.fresh = k.pending, map[int64]int{}, false
	}
	c.mu.Unlock()

	totals, err := db.SyncRateCounts(ctx, c.limiter, counts, windows[0])

	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		for _, k := range c.keys {
			for w, n := range k.syncing {
				k.pending[w] += n
			}
			k.syncing = map[int64]int{}
		}
		return err
	}
	byKey := map[string]map[int64]int{}
	for _, t := range totals {
		if byKey[t.Key] == nil {
			byKey[t.Key] = map[int64]int{}
		}
		byKey[t.Key][t.WindowStart.Unix()] = t.Count
	}
	for _, rc := range counts {
		if k, ok := c.keys[rc.Key]; ok {
			if n := byKey[rc.Key][rc.WindowStart.Unix()]; n > 0 {
				k.shared[rc.WindowStart.Unix()] = n
			} else {
				delete(k.shared, rc.WindowStart.Unix())
			}
			k.syncing = map[int64]int{}
		}
	}
	return nil
}

// SyncRateLimits shares this replica's rate-limit counts with the others
// every interval until ctx ends; `svc api` runs it beside the server.
func (s *Server) SyncRateLimits(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := s.ShareRateLimits(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("share rate-limit counts", slog.Any("error", err))
			}
		}
	}
}

// ShareRateLimits runs one sync of every limiter's counts.
func (s *Server) ShareRateLimits(ctx context.Context) error {
	now := time.Now()
	for _, c := range []*sharedCounter{s.tokenCounts, s.buyerCounts} {
		if err := c.sync(ctx, s.db, now); err != nil {
			return fmt.Errorf("%s limiter: %w", c.limiter, err)
		}
	}
	return nil
}
