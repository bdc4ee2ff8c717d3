package api

import (
	"encoding/json"
	"fmt"
	"net/http"
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
const (
	importStreamFor      = 5 * time.Minute
	importStreamKeepOpen = 15 * time.Second // a comment line, so proxies keep the connection
	importStreamWrite    = 30 * time.Second // per event, beyond the server's write timeout
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
