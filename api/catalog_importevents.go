package api

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/merchantsvc/svc/storage"
)

// Server-sent events of one import: the merchants' imports page and any
// API client watch an import without polling its JSON.
//
//	event: progress   data: {status, total_rows, processed_rows, created, updated, unchanged, failed}
//	event: result     data: the import as GET /products/imports/{id} answers it; the stream ends
//
// Each event's id is the rows processed, so a reconnecting EventSource's
// Last-Event-ID skips what it has seen. A stream lasts at most
// importStreamFor; the browser reconnects by itself.
//
// A stream holds a connection and reads the database for as long as it
// runs, so a user may hold only Config.ImportStreamsPerUser at once (per
// replica; a further one answers 429 RATE_LIMITED), and a stream asks
// again every importStreamRecheck whether its credential may still read
// the store's catalogue: a member removed or given a role without
// catalog:read, a session signed out, a token revoked or a store suspended
// or closed ends the stream within that second, not at its natural end.
// Its reconnect then gets the refusal every request gets.
const (
	importStreamFor      = 5 * time.Minute
	importStreamKeepOpen = 15 * time.Second // a comment line, so proxies keep the connection
	importStreamWrite    = 30 * time.Second // per event, beyond the server's write timeout
	importStreamRecheck  = time.Second
	// importStreamRetry is the Retry-After of a stream refused for the cap:
	// a running import's stream frees its slot when the import ends.
	importStreamRetry = 5 * time.Second
)

// importProgressEvent is a progress event's data.
type importProgressEvent struct {
	Status        string `json:"status"`
	TotalRows     int    `json:"total_rows"`
	ProcessedRows int    `json:"processed_rows"`
	Created       int    `json:"created"`
	Updated       int    `json:"updated"`
	Unchanged     int    `json:"unchanged"`
	Failed        int    `json:"failed"`
}

func (s *Server) handleImportEvents() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		release, ok := s.importStreams.take(streamHolder(principalFrom(r.Context())))
		if !ok {
			s.metrics.RateLimited.WithLabelValues("import_stream").Inc()
			return s.errImportStreamsBusy
		}
		defer release()
		imp, err := s.importInStore(r)
		if err != nil {
			return err // 404 in the envelope, before the stream starts
		}
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no") // nginx: pass events on as they come
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		send := func(event string, id int, data any) error {
			body, err := json.Marshal(data)
			if err != nil {
				return err
			}
			_ = rc.SetWriteDeadline(time.Now().Add(importStreamWrite))
			if _, err := fmt.Fprintf(w, "event: %s\nid: %d\ndata: %s\n\n", event, id, body); err != nil {
				return err
			}
			return rc.Flush()
		}
		lastSent := -1
		if last := r.Header.Get("Last-Event-ID"); last != "" {
			_, _ = fmt.Sscan(last, &lastSent)
		}
		ended := time.After(importStreamFor)
		tick := time.NewTicker(s.cfg.ImportEventsInterval)
		defer tick.Stop()
		keepOpen := time.NewTicker(importStreamKeepOpen)
		defer keepOpen.Stop()
		recheck := time.NewTicker(importStreamRecheck)
		defer recheck.Stop()
		for {
			if imp.Status != storage.ImportRunning {
				_ = send("result", imp.ProcessedRows, newImportResponse(imp))
				return nil
			}
			if imp.ProcessedRows != lastSent {
				if err := send("progress", imp.ProcessedRows, importProgressEvent{Status: string(imp.Status), TotalRows: imp.TotalRows,
					ProcessedRows: imp.ProcessedRows, Created: imp.Created, Updated: imp.Updated, Unchanged: imp.Unchanged, Failed: imp.Failed}); err != nil {
					return nil // the client went away
				}
				lastSent = imp.ProcessedRows
			}
			select {
			case <-r.Context().Done():
				return nil
			case <-s.streamsEnd:
				return nil // shutting down: the browser reconnects to another instance
			case <-ended:
				return nil
			case <-recheck.C:
				if err := s.streamAccess(r, "catalog:read"); err != nil {
					loggerFrom(r.Context()).InfoContext(r.Context(), "import event stream ended: its access ended",
						slog.Any("reason", err))
					return nil // the reconnect answers the refusal
				}
				continue
			case <-keepOpen.C:
				_ = rc.SetWriteDeadline(time.Now().Add(importStreamWrite))
				if _, err := fmt.Fprint(w, ": still running\n\n"); err != nil || rc.Flush() != nil {
					return nil
				}
				continue
			case <-tick.C:
			}
			if imp, err = s.db.FindImport(r.Context(), imp.StoreID, imp.ID); err != nil {
				return nil // the stream has begun; the client reconnects
			}
		}
	}
}

// EndStreams ends the event streams in flight, so a shutdown does not wait
// for them; `svc api` calls it when it starts to drain.
func (s *Server) EndStreams() { s.endStreamsOnce.Do(func() { close(s.streamsEnd) }) }

// streamAccess asks again what authenticate, bindStore and the route's
// scope check asked when a stream began, for a stream that has run a
// while: the credential still valid, its store still open and theirs, and
// scope still held. It answers the refusal a new request would get.
func (s *Server) streamAccess(r *http.Request, scope string) error {
	p, err := s.identify(r)
	if err != nil {
		return err
	}
	if p, err = s.storeAccess(r, p, storeIDFrom(r.Context())); err != nil {
		return err
	}
	if !p.allows(scope) {
		return errStreamScopeMissing
	}
	return nil
}

var errStreamScopeMissing = newError(http.StatusForbidden, "SCOPE_MISSING",
	"This credential or role lacks the scope catalog:read", "بيانات الاعتماد أو الدور لا يملك الصلاحية catalog:read")

// streamHolder is whom an event stream counts against: the user, for their
// sessions and personal tokens together, or the app token.
func streamHolder(p *principal) string {
	if p.isToken() && p.token.Kind == storage.TokenApp {
		return "token:" + p.token.ID.String()
	}
	return "user:" + p.userID.String()
}

// streamSlots counts the event streams each holder has open on this
// replica, up to a limit.
type streamSlots struct {
	limit int
	mu    sync.Mutex
	open  map[string]int
}

func newStreamSlots(limit int) *streamSlots {
	return &streamSlots{limit: limit, open: map[string]int{}}
}

// take opens a slot for holder if it has fewer than the limit open, and
// answers the func that gives it back (once, when the stream ends).
func (c *streamSlots) take(holder string) (release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open[holder] >= c.limit {
		return nil, false
	}
	c.open[holder]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.open[holder]--; c.open[holder] <= 0 {
				delete(c.open, holder)
			}
		})
	}, true
}

// importStreamsBusy is the refusal of a stream over the cap.
func importStreamsBusy(limit int) *apiError {
	return &apiError{Status: http.StatusTooManyRequests, Code: "RATE_LIMITED",
		Message: fmt.Sprintf("At most %d import event streams may be open at once per user; close one, "+
			"or retry after the time in Retry-After", limit),
		MessageAr: fmt.Sprintf("يمكن فتح %d من بثوث أحداث الاستيراد معًا لكل مستخدم كحد أقصى؛ أغلق أحدها "+
			"أو أعد المحاولة بعد المدة المذكورة في Retry-After", limit),
		Header: http.Header{"Retry-After": {strconv.Itoa(int(importStreamRetry / time.Second))}}}
}
