package api

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// slidingLimiter allows at most limit requests per key in any window (60 s):
// the 301st request inside any 60 s answers 429, wherever the window starts
// (decisions §10). Each replica keeps an exact log of the requests it
// admitted; SyncRateLimits shares them with the other replicas through
// Postgres as counts per second, so a replica sees the others' requests up
// to one sync late and counts each of their seconds whole while any part of
// it is inside the window (never fewer than were made). Without syncs it is
// an exact per-process limiter. A request never waits on the database.
type slidingLimiter struct {
	name   string // the name its rows carry
	limit  int
	window time.Duration
	now    func() time.Time
	mu     sync.Mutex
	keys   map[string]*keyLog
	// snapshot is what the last sync's reads saw: the next reads, for the
	// keys read whole before, only the totals written since.
	snapshot *string
}

// keyLog is one key's requests: this replica's, exactly, and every
// replica's per second as of the last sync.
type keyLog struct {
	admitted []time.Time   // admitted here within the window, oldest first
	pending  map[int64]int // admitted here per second, not yet shared
	syncing  map[int64]int // being added by a sync in flight
	shared   map[int64]int // every replica's total per second, as of the last sync
	mine     map[int64]int // what this replica added to shared
	fresh    bool          // asked about since the last sync
	// known is set once a sync has read the key's totals whole; from then
	// on each sync reads only those written since the sync before.
	known bool
}

func newSlidingLimiter(name string, limit int, window time.Duration) *slidingLimiter {
	return &slidingLimiter{name: name, limit: limit, window: window, now: time.Now, keys: map[string]*keyLog{}}
}

// verdict is the answer for one request and the X-RateLimit-* values.
type verdict struct {
	allowed   bool
	remaining int
	reset     time.Time // when the oldest counted request leaves the window
}

// allow counts a request for key if the key has room, and says so.
func (l *slidingLimiter) allow(key string) verdict { return l.look(key, true) }

// room says whether key has room without counting anything.
func (l *slidingLimiter) room(key string) verdict { return l.look(key, false) }

// reservation is one count reserve took for a key. It stands unless given
// back, so an attempt counts from the moment it is admitted and a burst
// cannot run past the limit before the first of it finishes.
type reservation struct {
	l     *slidingLimiter
	key   string
	at    time.Time
	given bool // given back already (under l.mu)
}

// reserve counts one event for key if the key has room, as allow does, and
// answers the reservation to give back once the attempt turns out not to
// count (a checkout not placed, a password that was right). Refused, it
// counts nothing and answers a nil reservation.
func (l *slidingLimiter) reserve(key string) (*reservation, verdict) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, at := l.lookLocked(key, true)
	if !v.allowed {
		return nil, v
	}
	return &reservation{l: l, key: key, at: at}, v
}

// giveBack takes the reserved count away again; on a nil reservation, or
// the second time, it does nothing. A count already shared with the other
// replicas is taken back from them by the next sync (it adds -1).
func (r *reservation) giveBack() {
	if r == nil {
		return
	}
	l := r.l
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.keys[r.key]
	if k == nil || r.given {
		return
	}
	r.given = true
	for i := len(k.admitted) - 1; i >= 0; i-- {
		if k.admitted[i].Equal(r.at) {
			k.admitted = append(k.admitted[:i], k.admitted[i+1:]...)
			second := r.at.Unix()
			if k.pending[second]--; k.pending[second] == 0 {
				delete(k.pending, second)
			}
			return
		}
	}
}

// limitSlot is one key of one limiter.
type limitSlot struct {
	l   *slidingLimiter
	key string
}

// reserveAll reserves one count in every slot, in order, or none: when a
// slot has no room, the counts already taken are given back and wait is
// how long until that slot has room. Admitted, giveBack returns every
// count, for an attempt that turns out not to count.
func reserveAll(slots ...limitSlot) (giveBack func(), wait time.Duration, ok bool) {
	held := make([]*reservation, 0, len(slots))
	giveBack = func() {
		for _, h := range held {
			h.giveBack()
		}
	}
	for _, slot := range slots {
		h, v := slot.l.reserve(slot.key)
		if h == nil {
			giveBack()
			return nil, slot.l.wait(v), false
		}
		held = append(held, h)
	}
	return giveBack, 0, true
}

// wait is how long until a refused key has room again.
func (l *slidingLimiter) wait(v verdict) time.Duration { return max(v.reset.Sub(l.now()), time.Second) }

func (l *slidingLimiter) keyLog(key string) *keyLog {
	k := l.keys[key]
	if k == nil {
		k = &keyLog{pending: map[int64]int{}, syncing: map[int64]int{}, shared: map[int64]int{}, mine: map[int64]int{}}
		l.keys[key] = k
	}
	k.fresh = true
	return k
}

func (l *slidingLimiter) look(key string, count bool) verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, _ := l.lookLocked(key, count)
	return v
}

// lookLocked is look under l.mu; it also answers the time it counted at.
func (l *slidingLimiter) lookLocked(key string, count bool) (verdict, time.Time) {
	now := l.now()
	start := now.Add(-l.window)
	k := l.keyLog(key)
	drop := 0
	for drop < len(k.admitted) && !k.admitted[drop].After(start) {
		drop++
	}
	k.admitted = k.admitted[drop:]
	// The others' seconds that overlap the window count whole.
	others, oldestOther := 0, int64(0)
	for second, total := range k.shared {
		if n := total - k.mine[second]; n > 0 && second+1 > start.Unix() {
			others += n
			if oldestOther == 0 || second < oldestOther {
				oldestOther = second
			}
		}
	}
	used := len(k.admitted) + others
	allowed := used < l.limit
	if allowed && count {
		k.admitted = append(k.admitted, now)
		k.pending[now.Unix()]++
		used++
	}
	reset := now.Add(l.window)
	if len(k.admitted) > 0 {
		reset = k.admitted[0].Add(l.window)
	}
	if oldestOther != 0 {
		if r := time.Unix(oldestOther+1, 0).Add(l.window); r.Before(reset) {
			reset = r
		}
	}
	return verdict{allowed: allowed, remaining: max(l.limit-used, 0), reset: reset}, now
}

// sync adds the counts made here since the last sync to the shared totals
// and reads back every replica's totals of the window for the keys in use:
// whole for a key new here, and for the others the totals written since the
// last sync read (a key in use for a whole window was read 60 times over
// before). On failure the counts stay here for the next sync.
func (l *slidingLimiter) sync(ctx context.Context, db *storage.DB, now time.Time) error {
	l.mu.Lock()
	since := now.Add(-l.window - time.Second).Truncate(time.Second)
	var (
		counts         []storage.RateCount
		keys           []string
		whole, changed []string
	)
	for name, k := range l.keys {
		for _, m := range []map[int64]int{k.shared, k.mine, k.pending} {
			for second := range m {
				if second < since.Unix() {
					delete(m, second)
				}
			}
		}
		for len(k.admitted) > 0 && k.admitted[0].Before(since) {
			k.admitted = k.admitted[1:]
		}
		if len(k.admitted) == 0 && len(k.pending) == 0 && len(k.shared) == 0 && !k.fresh {
			delete(l.keys, name) // unused for a whole window
			continue
		}
		keys = append(keys, name)
		if k.known && l.snapshot != nil {
			changed = append(changed, name)
		} else {
			whole = append(whole, name)
		}
		for second, n := range k.pending {
			counts = append(counts, storage.RateCount{Key: name, WindowStart: time.Unix(second, 0).UTC(), Count: n})
		}
		k.syncing, k.pending, k.fresh = k.pending, map[int64]int{}, false
	}
	l.mu.Unlock()
	if len(keys) == 0 {
		// Nothing in use here: no round trip. Old rows are deleted by the
		// next sync of a replica that uses the limiter.
		return nil
	}

	totals, snapshot, err := db.SyncRateCounts(ctx, l.name, counts, whole, changed, since, l.snapshot)

	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		for _, k := range l.keys {
			for second, n := range k.syncing {
				k.pending[second] += n
			}
			k.syncing = map[int64]int{}
		}
		return err
	}
	l.snapshot = &snapshot
	for _, name := range whole {
		if k, ok := l.keys[name]; ok {
			k.shared, k.known = map[int64]int{}, true
		}
	}
	for _, t := range totals {
		if k, ok := l.keys[t.Key]; ok {
			k.shared[t.WindowStart.Unix()] = t.Count
		}
	}
	for _, name := range keys {
		k, ok := l.keys[name]
		if !ok {
			continue
		}
		for second, n := range k.syncing {
			k.mine[second] += n
		}
		k.syncing = map[int64]int{}
	}
	return nil
}

// limit answers 429 when key has no room left, and otherwise sets the
// X-RateLimit-* headers and reports true.
func (s *Server) limit(w http.ResponseWriter, r *http.Request, l *slidingLimiter, key string, refusal *apiError) bool {
	if s.limitHeaders(w, l, key) {
		return true
	}
	writeError(w, r, refusal)
	return false
}

// limitHeaders counts a request for key in l and sets the X-RateLimit-*
// headers, and Retry-After when refused; it reports whether key had room.
// The caller writes the refusal (limit's JSON error, a page's problem page).
func (s *Server) limitHeaders(w http.ResponseWriter, l *slidingLimiter, key string) bool {
	v := l.allow(key)
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(l.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(v.remaining))
	reset := v.reset.Unix()
	if v.reset.After(time.Unix(reset, 0)) {
		reset++ // whole seconds, never early
	}
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
	if v.allowed {
		return true
	}
	s.metrics.RateLimited.WithLabelValues(l.name).Inc()
	h.Set("Retry-After", retryAfterSeconds(l.wait(v)))
	return false
}

// exportLimit allows each token, and each signed-in user, at most
// ExportRateLimitPerMinute expensive reads (the CSV exports) in any 60 s,
// on top of the ordinary limit; with onlyCSV it counts only requests asking
// for format=csv (the audit log's and the analytics' JSON reads are
// ordinary). Its X-RateLimit-* headers replace the ordinary limit's.
func (s *Server) exportLimit(onlyCSV bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if onlyCSV && r.URL.Query().Get("format") != "csv" {
				next.ServeHTTP(w, r)
				return
			}
			if s.limit(w, r, s.exportLimiter, exportKey(principalFrom(r.Context())), s.errExportRateLimited) {
				next.ServeHTTP(w, r)
			}
		})
	}
}

// exportKey is whom an expensive read counts against: the token, or the
// signed-in user (all their sessions together).
func exportKey(p *principal) string {
	if p.isToken() {
		return "token:" + p.token.ID.String()
	}
	return "user:" + p.userID.String()
}

// pageExportAllowed is the pages' ExpensiveRead: the print run counts
// against the signed-in user's export limit.
func (s *Server) pageExportAllowed(w http.ResponseWriter, userID uuid.UUID) bool {
	return s.limitHeaders(w, s.exportLimiter, "user:"+userID.String())
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
	for _, l := range []*slidingLimiter{s.tokenLimiter, s.sessionLimiter, s.exportLimiter, s.buyerLimiter, s.invitationLimiter, s.passwords.accounts, s.passwords.known, s.passwords.addresses, s.passwords.signups, s.buyerOrders.phones, s.buyerOrders.networks,
		s.invitationMails.stores, s.invitationMails.users, s.giftCardMisses} {
		if err := l.sync(ctx, s.db, now); err != nil {
			return fmt.Errorf("%s limiter: %w", l.name, err)
		}
	}
	return nil
}

// retryAfterSeconds is a Retry-After value: whole seconds, at least one.
func retryAfterSeconds(wait time.Duration) string {
	return strconv.FormatInt(max(int64(math.Ceil(wait.Seconds())), 1), 10)
}
