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
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/worker"
)

// loadRoute is one kind of request of the mixed workload.
type loadRoute struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"` // share of requests, in percent
	Method string `json:"method"`
	Path   string `json:"path"` // below the store's base URL
	Body   []byte `json:"body,omitempty"`
}

// loadClientSpec is what the load tool, a child process, is asked to do.
type loadClientSpec struct {
	Base        string        `json:"base"`
	Tokens      []string      `json:"tokens"`
	Routes      []loadRoute   `json:"routes"`
	Duration    time.Duration `json:"duration"`
	Concurrency int           `json:"concurrency"`
}

// loadRouteResult is what the load tool saw of one route.
type loadRouteResult struct {
	Requests  int             `json:"requests"`
	Errors    int             `json:"errors"`
	Statuses  map[int]int     `json:"statuses"`
	Latencies []time.Duration `json:"latencies"`
}

// runLoadBench drives a mixed workload — catalog reads, order creates (each
// fanning out to webhook subscriptions through outbox, dispatcher, Temporal
// and the worker) and order-list reads — for a fixed time against the real
// API, worker and Temporal in this process, and measures the bare
// baselines (the order transaction alone, SQL + JSON for the list) in the
// same run.
// loadRig is the mixed workload's server side: the API, worker, dispatcher
// and Temporal in this process over a seeded store, and the load tool's spec.
type loadRig struct {
	db         *database
	rec        *deliveryReceiver
	spec       loadClientSpec
	storeID    uuid.UUID
	customerID uuid.UUID
	variants   []uuid.UUID
	closers    []func()
	// temporalPID is the Temporal child process, when it runs apart.
	temporalPID int
}

func (l *loadRig) close() {
	for i := len(l.closers) - 1; i >= 0; i-- {
		l.closers[i]()
	}
}

// startLoadRig seeds the store and starts everything the load mix needs.
func startLoadRig(ctx context.Context, dbURL string, duration time.Duration, concurrency, tokenCount, subscriptions int, temporalApart bool) (*loadRig, error) {
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	l := &loadRig{db: db, closers: []func(){db.Close}}
	const queue = "load"
	rig, err := startDeliveryRigWith(ctx, db.DB, queue, temporalApart)
	if err != nil {
		l.close()
		return nil, err
	}
	l.closers = append(l.closers, rig.close)
	l.rec, l.temporalPID = rig.rec, rig.temporalPID
	c := rig.temporal
	dctx, stopDispatcher := context.WithCancel(ctx)
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		d := &worker.Dispatcher{DB: db.DB, Temporal: c, TaskQueue: queue, Log: slog.New(slog.DiscardHandler)}
		_ = d.Run(dctx)
	}()
	l.closers = append(l.closers, func() { stopDispatcher(); <-dispatched })

	storeID, customerID, variants, secrets, err := seedOrderStore(ctx, db.DB, tokenCount)
	if err != nil {
		l.close()
		return nil, err
	}
	l.storeID, l.customerID, l.variants = storeID, customerID, variants
	if _, err := db.Pool.Exec(ctx, `UPDATE api_tokens SET scopes = '{orders:write,catalog:read}' WHERE store_id = $1`, storeID); err != nil {
		l.close()
		return nil, err
	}
	for i := range subscriptions {
		if _, err := db.Pool.Exec(ctx, `INSERT INTO webhook_subscriptions (id, store_id, url, events, secret, created_at, updated_at)
			VALUES (gen_random_uuid(), $1, $2, '{order.created}', 'svc_whsec_load', now(), now())`,
			storeID, fmt.Sprintf("%s/hooks/%d", l.rec.srv.URL, i)); err != nil {
			l.close()
			return nil, err
		}
	}
	srv := api.NewServer(api.Config{RateLimitPerMinute: 300, TaskQueue: queue}, db.DB, c, nil, slog.New(slog.DiscardHandler))
	sctx, stopSharing := context.WithCancel(ctx)
	l.closers = append(l.closers, stopSharing)
	go srv.SyncRateLimits(sctx, time.Second) // as `svc api` does
	url, stop, err := serve(srv)
	if err != nil {
		l.close()
		return nil, err
	}
	l.closers = append(l.closers, stop)

	lines := make([]map[string]any, len(variants))
	for i, v := range variants {
		lines[i] = map[string]any{"variant_id": v.String(), "quantity": 1}
	}
	orderBody, _ := json.Marshal(map[string]any{"customer_id": customerID.String(), "lines": lines, "payment_method": "cod",
		"shipping_address": map[string]any{"name": "Mona", "phone": "+201001234567", "line1": "12 Tahrir St", "city": "Cairo", "country": "EG"}})
	l.spec = loadClientSpec{Base: url + "/api/v1/stores/" + storeID.String(), Tokens: secrets, Duration: duration, Concurrency: concurrency,
		Routes: []loadRoute{
			{Name: "GET /products?limit=20", Weight: 60, Method: http.MethodGet, Path: "/products?limit=20"},
			{Name: "POST /orders (5 lines)", Weight: 25, Method: http.MethodPost, Path: "/orders", Body: orderBody},
			{Name: "GET /orders?limit=20", Weight: 15, Method: http.MethodGet, Path: "/orders?limit=20"},
		}}
	return l, nil
}

func runLoadBench(ctx context.Context, dbURL string, duration time.Duration, concurrency, tokenCount, subscriptions int) (string, error) {
	l, err := startLoadRig(ctx, dbURL, duration, concurrency, tokenCount, subscriptions, false)
	if err != nil {
		return "", err
	}
	defer l.close()
	db, rec, spec, storeID, customerID, variants := l.db, l.rec, l.spec, l.storeID, l.customerID, l.variants
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2}}
	// An order's order-placed workflow is done when its three side effects
	// (email, chat, shipment) are recorded.
	placed := func() int {
		var n int
		_ = db.Pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT order_id FROM order_side_effects WHERE store_id = $1
			GROUP BY order_id HAVING count(*) = 3) done`, storeID).Scan(&n)
		return n
	}
	deliveredBefore, placedBefore := rec.totalCount(), placed()
	usageBefore, wallStart := rusage(), time.Now()
	perRoute, err := runLoadClient(spec)
	if err != nil {
		return "", err
	}
	wall := time.Since(wallStart)
	usageAfter := rusage()
	orders := perRoute["POST /orders (5 lines)"].Statuses[http.StatusCreated]
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
	fmt.Fprintf(&b, "order.created (loopback TLS receiver); API, worker, dispatcher and Temporal (SQLite) in one server process, the\n")
	fmt.Fprintf(&b, "load tool in a process of its own, Postgres beside them.\n\n")
	fmt.Fprintf(&b, "| route (share) | requests | requests/s | p50 | p99 | errors |\n|---|---:|---:|---:|---:|---:|\n")
	names := make([]string, 0, len(perRoute))
	for n := range perRoute {
		names = append(names, n)
	}
	sort.Strings(names)
	var total, totalErrors int
	for _, n := range names {
		got := perRoute[n]
		r := result{requests: got.Requests, errors: got.Errors, statuses: got.Statuses, latencies: got.Latencies, elapsed: wall}
		total += r.requests
		totalErrors += r.errors
		fmt.Fprintf(&b, "| %s | %d | %.0f | %s | %s | %d |\n", n, r.requests, r.rps(), ms(r.percentile(0.5)), ms(r.percentile(0.99)), r.errors)
	}
	cpu := (usageAfter.cpu - usageBefore.cpu).Seconds() / wall.Seconds()
	toolCPU := (usageAfter.childrenCPU - usageBefore.childrenCPU).Seconds() / wall.Seconds()
	fmt.Fprintf(&b, "\n**%d requests in %s: %.0f requests/s, %d errors.** Server CPU %.2f cores of %d (the load tool used %.2f more);\n",
		total, wall.Round(time.Millisecond), float64(total)/wall.Seconds(), totalErrors, cpu, runtime.NumCPU(), toolCPU)
	fmt.Fprintf(&b, "server peak RSS %d MB.\n\n", usageAfter.maxRSSKB/1024)
	fmt.Fprintf(&b, "Webhooks: %d orders × %d subscriptions = %d deliveries; %d arrived, the last %s after the load stopped\n",
		orders, subscriptions, orders*subscriptions, delivered, drain.Round(time.Millisecond))
	fmt.Fprintf(&b, "(%.0f deliveries/s over the run and its drain).\n\n", float64(delivered)/(wall+drain).Seconds())
	fmt.Fprintf(&b, "Order-placed workflows (email over SMTP, chat, shipment, rollup: four activities each): %d of %d finished,\n",
		placedCount, orders)
	fmt.Fprintf(&b, "the last %s after the load stopped (%.0f orders/s over the run and its drain).\n\n",
		placedDrain.Round(time.Millisecond), float64(placedCount)/(wall+placedDrain).Seconds())
	ordersRate := float64(orders) / wall.Seconds()
	lr := result{requests: perRoute["GET /products?limit=20"].Requests, elapsed: wall}
	fmt.Fprintf(&b, "| physical-limit baseline, same run | alone | under the mix | mix / alone |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| order transaction (`storage.CreateOrder`, bare) | %.0f orders/s | %.0f orders/s (25%% of the mix) | %.0f%% |\n",
		bareOrders.rps(), ordersRate, 100*ordersRate/bareOrders.rps())
	fmt.Fprintf(&b, "| product list (SQL + JSON, bare handler) | %.0f requests/s | %.0f requests/s (60%% of the mix) | %.0f%% |\n",
		bareList.rps(), lr.rps(), 100*lr.rps()/bareList.rps())
	return b.String(), nil
}

// usage is this process's CPU time and peak resident memory, and the CPU
// time of its finished children (the load tool).
type usage struct {
	cpu, childrenCPU time.Duration
	maxRSSKB         int64
}

func rusage() usage {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return usage{cpu: time.Duration(self.Utime.Nano() + self.Stime.Nano()),
		childrenCPU: time.Duration(children.Utime.Nano() + children.Stime.Nano()), maxRSSKB: self.Maxrss}
}

func (rec *deliveryReceiver) totalCount() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.total
}

// runLoadClient runs the load tool as a child process (this binary with
// -load-client), so the server's CPU and memory are measured without it.
func runLoadClient(spec loadClientSpec) (map[string]loadRouteResult, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-load-client", "-")
	cmd.Stdin, cmd.Stderr = bytes.NewReader(raw), os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("load tool: %w", err)
	}
	var results map[string]loadRouteResult
	return results, json.Unmarshal(out, &results)
}

// loadClient is the load tool: closed-loop clients picking routes by weight
// for the spec's duration; it prints what each route saw as JSON.
func loadClient(in io.Reader, out io.Writer) error {
	var spec loadClientSpec
	if err := json.NewDecoder(in).Decode(&spec); err != nil {
		return fmt.Errorf("read the load spec: %w", err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: spec.Concurrency * 2}}
	recorders := map[string]*recorder{}
	for _, r := range spec.Routes {
		recorders[r.Name] = &recorder{result: result{statuses: map[int]int{}}}
	}
	pick := func(rng *rand.Rand) loadRoute {
		n := rng.IntN(100)
		for _, r := range spec.Routes {
			if n < r.Weight {
				return r
			}
			n -= r.Weight
		}
		return spec.Routes[0]
	}
	var (
		next atomic.Uint64
		wg   sync.WaitGroup
	)
	deadline := time.Now().Add(spec.Duration)
	for g := range spec.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for time.Now().Before(deadline) {
				r := pick(rng)
				token := spec.Tokens[next.Add(1)%uint64(len(spec.Tokens))]
				once(client, func() (*http.Request, error) {
					req, err := http.NewRequest(r.Method, spec.Base+r.Path, bytes.NewReader(r.Body))
					if err == nil {
						req.Header.Set("Authorization", "Bearer "+token)
						if r.Body != nil {
							req.Header.Set("Content-Type", "application/json")
						}
					}
					return req, err
				}, recorders[r.Name])
			}
		}()
	}
	wg.Wait()
	results := map[string]loadRouteResult{}
	for name, rec := range recorders {
		// A route's errors are refused connections and 4xx/5xx answers (201 is a created order).
		errors := 0
		for status, n := range rec.statuses {
			if status == 0 || status >= 400 {
				errors += n
			}
		}
		results[name] = loadRouteResult{Requests: rec.requests, Errors: errors, Statuses: rec.statuses, Latencies: rec.latencies}
	}
	return json.NewEncoder(out).Encode(results)
}
