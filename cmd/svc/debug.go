package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
)

// debugHandler serves Go's profiles (/debug/pprof/...): CPU, heap,
// goroutines, mutex and block contention, execution traces, and metrics
// at /metrics when given. It is mounted only on SVC_DEBUG_ADDR, an address
// of its own that operators keep on loopback or a private network, never
// on the public port.
func debugHandler(metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	if metrics != nil {
		mux.Handle("GET /metrics", metrics)
	}
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// serveDebug serves debugHandler(metrics) on addr until ctx ends when addr
// is set; the returned wait blocks until it has stopped.
func serveDebug(ctx context.Context, addr string, log *slog.Logger, metrics http.Handler) (wait func()) {
	if addr == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := serveHTTP(ctx, addr, debugHandler(metrics), log, io.Discard); err != nil {
			log.Error("debug server", slog.String("addr", addr), slog.Any("error", err))
		}
	}()
	return func() { <-done }
}
