package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/worker"
)

// loadRoute is one kind of request of the mixed workload.
type loadRoute struct {
	name   string
	weight int
	make   func(token string) (*http.Request, error)
}

// runLoadBench drives a mixed workload — catalog reads, order creates (each
// fanning out to webhook subscriptions through outbox, dispatcher, Temporal
// and the worker) and order-list reads — for a fixed time against the real
// API, worker and Temporal in this process, and measures the bare
// baselines (the order transaction alone, SQL + JSON for the list) in the
// same run.
func runLoadBench(ctx context.Context, dbURL string, duration time.Duration, concurrency, tokenCount, subscriptions int) (string, error) {
	db, err := storage.Open(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	const queue = "load"
	rig, err := startDeliveryRig(ctx, db, queue)
	if err != nil {
		return "", err
	}
	defer rig.close()
	rec, c := rig.rec, rig.temporal
	dctx, stopDispatcher := context.WithCancel(ctx)
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		d := &worker.Dispatcher{DB: db, Temporal: c, TaskQueue: queue, Log: slog.New(slog.DiscardHandler)}
		_ = d.Run(dctx)
	}()
	defer func() { stopDispatcher(); <-dispatched }()

	storeID, customerID, variants, secrets, err := seedOrderStore(ctx, db, tokenCount)
	if err != nil {
		return "", err
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE api_tokens SET scopes = '{orders:write,catalog:read}' WHERE store_id = $1`, storeID); err != nil {
		return "", err
	}
	for i := range subscriptions {
		if _, err := db.Pool.Exec(ctx, `INSERT INTO webhook_subscriptions (id, store_id, url, events, secret, created_at, updated_at)
			VALUES (gen_random_uuid(), $1, $2, '{order.created}', 'svc_whsec_load', now(), now())`,
			storeID, fmt.Sprintf("%s/hooks/%d", rec.srv.URL, i)); err != nil {
			return "", err
		}
	}
	srv := api.NewServer(api.Config{RateLimitPerMinute: 300, TaskQueue: queue}, db, c, nil, slog.New(slog.DiscardHandler))
	sctx, stopSharing := context.WithCancel(ctx)
	defer stopSharing()
	go srv.SyncRateLimits(sctx, time.Second) // as `svc api` does
	url, stop, err := serve(srv)
	if err != nil {
		return "", err
	}
	defer stop()

	lines := make([]map[string]any, len(variants))
	for i, v := range variants {
		lines[i] = map[string]any{"variant_id": v.String(), "quantity": 1}
	}
	orderBody, _ := json.Marshal(map[string]any{"customer_id": customerID.String(), "lines": lines, "payment_method": "cod",
		"shipping_address": map[string]any{"name": "Mona", "phone": "+201001234567", "line1": "12 Tahrir St", "city": "Cairo", "country": "EG"}})
	base := url + "/api/v1/stores/" + storeID.String()
	get := func(path string) func(string) (*http.Request, error) {
		return func(token string) (*http.Request, error) {
			req, err := http.NewRequest(http.MethodGet, base+path, nil)
			if err == nil {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			return req, err
		}
	}
	routes := []loadRoute{
		{"GET /products?limit=20", 60, get("/products?limit=20")},
		{"POST /orders (5 lines)", 25, func(token string) (*http.Request, error) {
			req, err := http.NewRequest(http.MethodPost, base+"/orders", bytes.NewReader(orderBody))
			if err == nil {
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
			}
			return req, err
		}},
		{"GET /orders?limit=20", 15, get("/orders?limit=20")},
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2}}
	var (
		mu       sync.Mutex
		perRoute = map[string]*result{}
		wg       sync.WaitGroup
		next     int
	)
	for _, r := range routes {
		perRoute[r.name] = &result{statuses: map[int]int{}}
	}
	pick := func(rng *rand.Rand) loadRoute {
		n := rng.IntN(100)
		for _, r := range routes {
			if n < r.weight {
				return r
			}
			n -= r.weight
		}
		return routes[0]
	}
	// An order's order-placed workflow ends with its rollup step.
	placed := func() int {
		var n int
		_ = db.Pool.QueryRow(ctx, `SELECT count(*) FROM order_side_effects WHERE store_id = $1 AND kind = 'rollup'`, storeID).Scan(&n)
		return n
	}
	deliveredBefore, placedBefore := rec.totalCount(), placed()
	usageBefore, wallStart := rusage(), time.Now()
	deadline := wallStart.Add(duration)
	for g := range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for time.Now().Before(deadline) {
				r := pick(rng)
				mu.Lock()
				next++
				token := secrets[next%len(secrets)]
				mu.Unlock()
				req, err := r.make(token)
				if err != nil {
					continue
				}
				start := time.Now()
				resp, err := client.Do(req)
				status := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				mu.Lock()
				res := perRoute[r.name]
				res.requests++
				res.latencies = append(res.latencies, time.Since(start))
				res.statuses[status]++
				if status >= 400 || status == 0 {
					res.errors++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(wallStart)
	usageAfter := rusage()
	orders := perRoute["POST /orders (5 lines)"].statuses[http.StatusCreated]
	want := deliveredBefore + orders*subscriptions
	drainStart := time.Now()
	for rec.totalCount() < want && time.Since(drainStart) < 60*time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	drain := time.Since(drainStart)
	delivered := rec.totalCount() - deliveredBefore
	for placed()-placedBefore < orders && time.Since(drainStart) < 3*time.Minute {
		time.Sleep(100 * time.Millisecond)
	}
	placedDrain := time.Since(drainStart)
	placedCount := placed() - placedBefore

	// The bare baselines, right after, on the same database.
	addressJSON, _ := json.Marshal(map[string]any{"name": "Mona", "phone": "+201001234567", "line1": "12 Tahrir St", "city": "Cairo", "country": "EG"})
	newLines := make([]storage.NewOrderLine, len(variants))
	for i, v := range variants {
		newLines[i] = storage.NewOrderLine{VariantID: v, Quantity: 1}
	}
	bareOrders, err := bareLoop(func() error {
		return db.InTx(ctx, func(tx *storage.Tx) error {
			_, err := tx.CreateOrder(ctx, storage.NewOrder{StoreID: storeID, CustomerID: &customerID, Lines: newLines,
				ShippingAddress: addressJSON, PaymentMethod: "cod"})
			return err
		})
	}, concurrency, 5*time.Second)
	if err != nil {
		return "", err
	}
	bareURL, stopBare, err := serve(bareHandler(db, storeID))
	if err != nil {
		return "", err
	}
	defer stopBare()
	bareList, err := closedLoop(client, func() (*http.Request, error) { return http.NewRequest(http.MethodGet, bareURL+"/products", nil) },
		concurrency, 5*time.Second)
	if err != nil {
		return "", err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s): %d closed-loop clients for %s over %d tokens; %d webhook subscriptions on\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), concurrency, duration, tokenCount, subscriptions)
	fmt.Fprintf(&b, "order.created (loopback TLS receiver); API, worker, dispatcher and Temporal (SQLite) in one process with the load\n")
	fmt.Fprintf(&b, "generator, Postgres beside it.\n\n")
	fmt.Fprintf(&b, "| route (share) | requests | requests/s | p50 | p99 | errors |\n|---|---:|---:|---:|---:|---:|\n")
	names := make([]string, 0, len(perRoute))
	for n := range perRoute {
		names = append(names, n)
	}
	sort.Strings(names)
	var total, totalErrors int
	for _, n := range names {
		r := *perRoute[n]
		r.elapsed = wall
		total += r.requests
		totalErrors += r.errors
		fmt.Fprintf(&b, "| %s | %d | %.0f | %s | %s | %d |\n", n, r.requests, r.rps(), ms(r.percentile(0.5)), ms(r.percentile(0.99)), r.errors)
	}
	cpu := (usageAfter.cpu - usageBefore.cpu).Seconds() / wall.Seconds()
	fmt.Fprintf(&b, "\n**%d requests in %s: %.0f requests/s, %d errors.** Process CPU %.2f cores of %d (load generator included);\n",
		total, wall.Round(time.Millisecond), float64(total)/wall.Seconds(), totalErrors, cpu, runtime.NumCPU())
	fmt.Fprintf(&b, "peak RSS %d MB.\n\n", usageAfter.maxRSSKB/1024)
	fmt.Fprintf(&b, "Webhooks: %d orders × %d subscriptions = %d deliveries; %d arrived, the last %s after the load stopped\n",
		orders, subscriptions, orders*subscriptions, delivered, drain.Round(time.Millisecond))
	fmt.Fprintf(&b, "(%.0f deliveries/s over the run and its drain).\n\n", float64(delivered)/(wall+drain).Seconds())
	fmt.Fprintf(&b, "Order-placed workflows (email over SMTP, chat, shipment, rollup: four activities each): %d of %d finished,\n",
		placedCount, orders)
	fmt.Fprintf(&b, "the last %s after the load stopped (%.0f orders/s over the run and its drain).\n\n",
		placedDrain.Round(time.Millisecond), float64(placedCount)/(wall+placedDrain).Seconds())
	ordersRate := float64(orders) / wall.Seconds()
	listRate := perRoute["GET /products?limit=20"]
	lr := *listRate
	lr.elapsed = wall
	fmt.Fprintf(&b, "| physical-limit baseline, same run | alone | under the mix | mix / alone |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| order transaction (`storage.CreateOrder`, bare) | %.0f orders/s | %.0f orders/s (25%% of the mix) | %.0f%% |\n",
		bareOrders.rps(), ordersRate, 100*ordersRate/bareOrders.rps())
	fmt.Fprintf(&b, "| product list (SQL + JSON, bare handler) | %.0f requests/s | %.0f requests/s (60%% of the mix) | %.0f%% |\n",
		bareList.rps(), lr.rps(), 100*lr.rps()/bareList.rps())
	return b.String(), nil
}

// usage is this process's CPU time and peak resident memory.
type usage struct {
	cpu      time.Duration
	maxRSSKB int64
}

func rusage() usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return usage{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), maxRSSKB: ru.Maxrss}
}

func (rec *deliveryReceiver) totalCount() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.total
}
