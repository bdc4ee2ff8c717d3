package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// addrWriter catches the address serveHTTP announces.
type addrWriter struct{ addr chan string }

func (a addrWriter) Write(p []byte) (int, error) {
	if s := string(p); strings.Contains(s, "http://") {
		a.addr <- strings.TrimSpace(s[strings.Index(s, "http://"):])
	}
	return len(p), nil
}

// SIGTERM (the context ending) drains HTTP: requests in flight finish with
// their own context intact, new connections are refused.
func TestServeHTTPDrainsInFlightRequests(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(400 * time.Millisecond)
		if r.Context().Err() != nil {
			http.Error(w, "request context cancelled", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "done")
	})
	ctx, stop := context.WithCancel(context.Background())
	out := addrWriter{addr: make(chan string, 1)}
	served := make(chan error, 1)
	go func() { served <- serveHTTP(ctx, "127.0.0.1:0", slow, slog.New(slog.DiscardHandler), out) }()
	base := <-out.addr

	var wg sync.WaitGroup
	results := make([]string, 5)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(base + "/")
			if err != nil {
				results[i] = err.Error()
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			results[i] = resp.Status + " " + string(body)
		}()
	}
	time.Sleep(100 * time.Millisecond) // all five are in flight
	stop()
	wg.Wait()
	for _, r := range results {
		require.Equal(t, "200 OK done", r)
	}
	require.NoError(t, <-served)
	_, err := http.Get(base + "/")
	require.Error(t, err, "after the drain, connections are refused")
}
