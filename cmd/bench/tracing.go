package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/tracing"
	"github.com/merchantsvc/svc/storage"
)

// runTracingBench measures what tracing costs a request: the catalog list
// through the real API with tracing off, and with it on (every request
// sampled, its server span and SQL spans exported over OTLP/HTTP to a
// loopback collector that reads and drops them), alternating in rounds.
func runTracingBench(ctx context.Context, dbURL string, duration time.Duration, concurrency, tokenCount, productCount int) (string, error) {
	var exported atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		exported.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	tr, err := tracing.New(ctx, collector.URL, "svc-bench", 1)
	if err != nil {
		return "", err
	}
	defer func() { _ = tr.Shutdown(context.WithoutCancel(ctx)) }()

	plain, err := openDatabase(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer plain.Close()
	seeded, err := seed(ctx, plain, productCount, tokenCount)
	if err != nil {
		return "", err
	}
	storeID, secrets := seeded.storeID, seeded.tokens
	traced, err := storage.OpenTraced(ctx, dbURL, tr.QueryTracer())
	if err != nil {
		return "", err
	}
	defer traced.Close()
	quiet := slog.New(slog.DiscardHandler)
	offURL, stopOff, err := serve(api.NewServer(api.Config{RateLimitPerMinute: 300}, plain.DB, nil, nil, quiet))
	if err != nil {
		return "", err
	}
	defer stopOff()
	onURL, stopOn, err := serve(api.NewServer(api.Config{RateLimitPerMinute: 300, Tracing: tr}, traced, nil, nil, quiet))
	if err != nil {
		return "", err
	}
	defer stopOn()

	path := "/api/v1/stores/" + storeID.String() + "/products?limit=20&page=1"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2, MaxIdleConns: concurrency * 4}}
	var next atomic.Uint64
	request := func(base string) func() (*http.Request, error) {
		return func() (*http.Request, error) {
			req, err := http.NewRequest(http.MethodGet, base+path, nil)
			if err == nil {
				req.Header.Set("Authorization", "Bearer "+secrets[next.Add(1)%uint64(len(secrets))])
			}
			return req, err
		}
	}
	for _, base := range []string{offURL, onURL} {
		if _, err := closedLoop(client, request(base), concurrency, 2*time.Second); err != nil {
			return "", err
		}
	}
	var off, on result
	for range 2 {
		o, err := closedLoop(client, request(offURL), concurrency, duration/2)
		if err != nil {
			return "", err
		}
		t, err := closedLoop(client, request(onURL), concurrency, duration/2)
		if err != nil {
			return "", err
		}
		off, on = off.merge(o), on.merge(t)
	}
	if err := tr.Shutdown(ctx); err != nil {
		return "", err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s): `GET /products?limit=20` over %d products, %d closed-loop clients, %s per side\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), productCount, concurrency, duration)
	fmt.Fprintf(&b, "in two alternating rounds; tracing on samples every request and exports over OTLP/HTTP to a loopback collector.\n\n")
	fmt.Fprintf(&b, "| API | requests/s | p50 | p99 | errors |\n|---|---:|---:|---:|---:|\n")
	for _, row := range []struct {
		name string
		r    result
	}{{"tracing off (baseline)", off}, {"tracing on", on}} {
		fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %d |\n", row.name, row.r.rps(), ms(row.r.percentile(0.5)), ms(row.r.percentile(0.99)), row.r.errors)
	}
	fmt.Fprintf(&b, "\n**Tracing on serves %.0f%% of the untraced rate**; p50 %+.2f ms. %.1f MB of spans reached the collector.\n",
		100*on.rps()/off.rps(), float64(on.percentile(0.5)-off.percentile(0.5))/float64(time.Millisecond), float64(exported.Load())/1e6)
	return b.String(), nil
}
