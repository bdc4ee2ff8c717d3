package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/mailsink"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/worker"
	"github.com/merchantsvc/svc/workflows"
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
	// Bases are the store's base URLs, one per API process; client g
	// sends to Bases[g % len(Bases)].
	Bases       []string      `json:"bases"`
	Tokens      []string      `json:"tokens"`
	Routes      []loadRoute   `json:"routes"`
	Duration    time.Duration `json:"duration"`
	Concurrency int           `json:"concurrency"`
	// SeqStart is where the {seq} numbers of a run begin, so that each
	// run's buyers are new ones.
	SeqStart uint64 `json:"seq_start"`
}

// loadRouteResult is what the load tool saw of one route.
type loadRouteResult struct {
	Requests  int             `json:"requests"`
	Errors    int             `json:"errors"`
	Statuses  map[int]int     `json:"statuses"`
	Latencies []time.Duration `json:"latencies"`
}

// seed writes the load's store: its variants and tokens (orders:write,
// catalog:read) and webhook subscriptions on order.created to the rig's
// receiver.
func (l *loadRig) seed(ctx context.Context, tokenCount, subscriptions int) error {
	storeID, customerID, variants, secrets, err := seedOrderStore(ctx, l.db.DB, tokenCount)
	if err != nil {
		return err
	}
	l.storeID, l.customerID, l.variants, l.secrets = storeID, customerID, variants, secrets
	if _, err := l.db.Pool.Exec(ctx, `UPDATE api_tokens SET scopes = '{orders:write,catalog:read}' WHERE store_id = $1`, storeID); err != nil {
		return err
	}
	for i := range subscriptions {
		if _, err := l.db.Pool.Exec(ctx, `INSERT INTO webhook_subscriptions (id, store_id, url, events, secret, created_at, updated_at)
			VALUES (gen_random_uuid(), $1, $2, '{order.created}', 'svc_whsec_load', now(), now())`,
			storeID, fmt.Sprintf("%s/hooks/%d", l.rec.srv.URL, i)); err != nil {
			return err
		}
	}
	return nil
}

// baseURL is the load's store below an API's root URL.
func (l *loadRig) baseURL(root string) string { return root + "/api/v1/stores/" + l.storeID.String() }

// routes are the mix: catalog reads, order creates and order-list reads.
func (l *loadRig) routes() []loadRoute {
	lines := make([]map[string]any, len(l.variants))
	for i, v := range l.variants {
		lines[i] = map[string]any{"variant_id": v.String(), "quantity": 1}
	}
	// Every order is a new buyer with an email address, so each one's
	// confirmation is sent (one contact is mailed once in ten minutes);
	// the load tool numbers them through {seq}.
	orderBody, _ := json.Marshal(map[string]any{"lines": lines, "payment_method": "cod",
		"customer":         map[string]any{"name": "Mona", "email": "buyer{seq}@example.com", "phone": "+2010{seq}"},
		"shipping_address": map[string]any{"name": "Mona", "phone": "+2010{seq}", "line1": "12 Tahrir St", "city": "Cairo", "country": "EG"}})
	return []loadRoute{
		{Name: "GET /products?limit=20", Weight: 60, Method: http.MethodGet, Path: "/products?limit=20"},
		{Name: "POST /orders (5 lines)", Weight: 25, Method: http.MethodPost, Path: "/orders", Body: orderBody},
		{Name: "GET /orders?limit=20", Weight: 15, Method: http.MethodGet, Path: "/orders?limit=20"},
	}
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
	mail       *mailsink.Sink
	spec       loadClientSpec
	storeID    uuid.UUID
	customerID uuid.UUID
	variants   []uuid.UUID
	secrets    []string
	closers    []func()
	dbURL      string
	// temporalHostPort and chatURL are for processes of their own.
	temporalHostPort, chatURL string
	// temporalPID is the Temporal child process, when it runs apart.
	temporalPID int
	temporal    client.Client
	// warmed is set once the mix has run unmeasured and the tables have
	// been analyzed (warmUp).
	warmed bool
}

func (l *loadRig) close() {
	for i := len(l.closers) - 1; i >= 0; i-- {
		l.closers[i]()
	}
}

// startLoadRig seeds the store and starts everything the load mix needs.
func startLoadRig(ctx context.Context, dbURL string, temporal temporalSetup, duration time.Duration, concurrency, tokenCount, subscriptions int) (*loadRig, error) {
	return startLoadRigWith(ctx, dbURL, temporal, duration, concurrency, tokenCount, subscriptions, true)
}

// startLoadRigWith is startLoadRig, with the API, the worker and the
// dispatcher in this process when inProcess; without them, the spec has
// no base URL and the rig's worker polls a queue nobody uses, so that
// processes of their own can serve the mix (the scale-out runs).
func startLoadRigWith(ctx context.Context, dbURL string, temporal temporalSetup, duration time.Duration, concurrency, tokenCount, subscriptions int,
	inProcess bool) (*loadRig, error) {
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	l := &loadRig{db: db, closers: []func(){db.Close}, dbURL: dbURL}
	queue := "load"
	if !inProcess {
		queue = "load-unused"
	}
	rig, err := startDeliveryRigWith(ctx, db.DB, queue, temporal)
	if err != nil {
		l.close()
		return nil, err
	}
	l.closers = append(l.closers, rig.close)
	l.rec, l.mail, l.temporalPID = rig.rec, rig.mail, rig.temporalPID
	l.temporalHostPort, l.chatURL = rig.temporalHostPort, rig.chatURL
	c := rig.temporal
	l.temporal = c
	if err := l.seed(ctx, tokenCount, subscriptions); err != nil {
		l.close()
		return nil, err
	}
	l.spec = loadClientSpec{Tokens: l.secrets, Duration: duration, Concurrency: concurrency, Routes: l.routes()}
	if !inProcess {
		return l, nil
	}
	dctx, stopDispatcher := context.WithCancel(ctx)
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		d := &worker.Dispatcher{DB: db.DB, Temporal: c, TaskQueue: queue, Log: slog.New(slog.DiscardHandler)}
		_ = d.Run(dctx)
	}()
	l.closers = append(l.closers, func() { stopDispatcher(); <-dispatched })

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
	l.spec.Bases = []string{l.baseURL(url)}
	return l, nil
}

func runLoadBench(ctx context.Context, dbURL string, temporal temporalSetup, duration time.Duration, concurrency, tokenCount, subscriptions int) (string, mixRun, error) {
	l, err := startLoadRig(ctx, dbURL, temporal, duration, concurrency, tokenCount, subscriptions)
	if err != nil {
		return "", mixRun{}, err
	}
	defer l.close()
	db, storeID, customerID, variants := l.db, l.storeID, l.customerID, l.variants
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2}}
	// The warm-up's rows stay out of the rows counted per order.
	if err := l.warmUp(ctx, subscriptions); err != nil {
		return "", mixRun{}, err
	}
	rowsBefore, err := rowWrites(ctx, db)
	if err != nil {
		return "", mixRun{}, err
	}
	if err := countStatements(ctx, db, true); err != nil {
		return "", mixRun{}, err
	}
	run, err := l.runMix(ctx, subscriptions, true)
	if err != nil {
		return "", mixRun{}, err
	}
	time.Sleep(2 * time.Second) // backends flush their table statistics within a second
	rowsAfter, err := rowWrites(ctx, db)
	if err != nil {
		return "", mixRun{}, err
	}
	statements, err := topStatements(ctx, db, 12)
	if err != nil {
		return "", mixRun{}, err
	}
	if err := countStatements(ctx, db, false); err != nil {
		return "", mixRun{}, err
	}
	perRoute, wall, orders, mailed := run.perRoute, run.wall, run.orders, run.mailed

	// The bare baselines, right after, on the same database.
	addressJSON, _ := json.Marshal(map[string]any{"name": "Mona", "phone": "+201001234567", "line1": "12 Tahrir St", "city": "Cairo", "country": "EG"})
	newLines := make([]storage.NewOrderLine, len(variants))
	for i, v := range variants {
		newLines[i] = storage.NewOrderLine{VariantID: v, Quantity: 1}
	}
	bareOrderLoop := func() (result, error) {
		return bareLoop(func() error {
			return db.InTx(ctx, func(tx *storage.Tx) error {
				_, err := tx.CreateOrder(ctx, storage.NewOrder{StoreID: storeID, CustomerID: &customerID, Lines: newLines,
					ShippingAddress: addressJSON, PaymentMethod: "cod"})
				return err
			})
		}, concurrency, 5*time.Second)
	}
	bareOrders, err := bareOrderLoop()
	if err != nil {
		return "", mixRun{}, err
	}
	bareURL, stopBare, err := serve(bareHandler(db, storeID))
	if err != nil {
		return "", mixRun{}, err
	}
	defer stopBare()
	bareList, err := closedLoop(client, func() (*http.Request, error) { return http.NewRequest(http.MethodGet, bareURL+"/products", nil) },
		concurrency, 5*time.Second)
	if err != nil {
		return "", mixRun{}, err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s): %d closed-loop clients for %s over %d tokens; %d webhook subscriptions on\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), concurrency, duration, tokenCount, subscriptions)
	fmt.Fprintf(&b, "order.created (loopback TLS receiver); API, worker, dispatcher and Temporal (%s) in one server process, the\n", temporal.name())
	fmt.Fprintf(&b, "load tool in a process of its own, Postgres beside them.\n\n")
	fmt.Fprintf(&b, "| route (share) | requests | requests/s | p50 | p99 | errors |\n|---|---:|---:|---:|---:|---:|\n")
	names := make([]string, 0, len(perRoute))
	for n := range perRoute {
		names = append(names, n)
	}
	sort.Strings(names)
	var total, totalErrors int
	var worstP99 time.Duration
	for _, n := range names {
		got := perRoute[n]
		r := result{requests: got.Requests, errors: got.Errors, statuses: got.Statuses, latencies: got.Latencies, elapsed: wall}
		total += r.requests
		totalErrors += r.errors
		worstP99 = max(worstP99, r.percentile(0.99))
		fmt.Fprintf(&b, "| %s | %d | %.0f | %s | %s | %d |\n", n, r.requests, r.rps(), ms(r.percentile(0.5)), ms(r.percentile(0.99)), r.errors)
	}
	cpu := (run.usageAfter.cpu - run.usageBefore.cpu).Seconds() / run.window.Seconds()
	toolCPU := (run.usageAfter.childrenCPU - run.usageBefore.childrenCPU).Seconds() / run.window.Seconds()
	fmt.Fprintf(&b, "\n**%d requests in %s: %.0f requests/s, %d errors.** Server CPU %.2f cores of %d (the load tool used %.2f more);\n",
		total, wall.Round(time.Millisecond), float64(total)/wall.Seconds(), totalErrors, cpu, runtime.NumCPU(), toolCPU)
	fmt.Fprintf(&b, "server peak RSS %d MB. Goal ≥ 500 requests/s with every route's p99 < 100 ms: %s (worst p99 %s).\n\n",
		run.usageAfter.maxRSSKB/1024, verdict(float64(total)/wall.Seconds() >= 500 && worstP99 < 100*time.Millisecond), ms(worstP99))
	fmt.Fprintf(&b, "Webhooks: %d orders × %d subscriptions = %d deliveries; %d arrived, the last %s after the load stopped\n",
		orders, subscriptions, orders*subscriptions, run.delivered, run.drain.Round(time.Millisecond))
	fmt.Fprintf(&b, "(%.0f deliveries/s over the run and its drain).\n\n", float64(run.delivered)/(wall+run.drain).Seconds())
	fmt.Fprintf(&b, "Order-placed workflows (email over SMTP, chat, shipment: one local activity each runs the three): %d of %d finished,\n",
		run.placedCount, orders)
	fmt.Fprintf(&b, "the last %s after the load stopped (%.0f orders/s over the run and its drain; goal within 5 s: %s).\n",
		run.placedDrain.Round(time.Millisecond), float64(run.placedCount)/(wall+run.placedDrain).Seconds(), verdict(run.placedCount == orders && run.placedDrain <= 5*time.Second))
	fmt.Fprintf(&b, "Confirmation emails: %d of %d orders' accepted by the SMTP sink; from the order's `created_at` (its transaction's\n", mailed.requests, orders)
	fmt.Fprintf(&b, "clock, a few ms before its commit) to the sink: p50 %s, p99 %s, max %s (goal p99 < 5 s: %s).\n",
		ms(mailed.percentile(0.5)), ms(mailed.percentile(0.99)), ms(mailed.percentile(1)), verdict(mailed.requests == orders && mailed.percentile(0.99) < 5*time.Second))
	fmt.Fprintf(&b, "Of that, order `created_at` → its workflow started by the dispatcher: p50 %s, p99 %s", ms(run.started.percentile(0.5)), ms(run.started.percentile(0.99)))
	steps, err := l.stepLatencies(ctx)
	if err != nil {
		return "", mixRun{}, err
	}
	for _, kind := range []string{"email", "chat", "shipment"} {
		fmt.Fprintf(&b, "; start → %s recorded: p50 %s, p99 %s", kind, ms(steps[kind].percentile(0.5)), ms(steps[kind].percentile(0.99)))
	}
	fmt.Fprintf(&b, ".\n")
	slow, rest, err := l.firstTaskWaits(ctx, run.from, run.from.Add(run.wall))
	if err != nil {
		return "", mixRun{}, err
	}
	fmt.Fprintf(&b, "Workflow start → its first workflow task (from the histories): for the %d orders whose email step was slowest\n", slow.requests)
	fmt.Fprintf(&b, "(the top 1%%) p50 %s, max %s; for %d others p50 %s, max %s.\n\n", ms(slow.percentile(0.5)), ms(slow.percentile(1)),
		rest.requests, ms(rest.percentile(0.5)), ms(rest.percentile(1)))
	writeRowsPerOrder(&b, rowsBefore, rowsAfter, orders, run.requests()-orders)
	fmt.Fprintf(&b, "Where the server's CPU went during the mix (API, worker, dispatcher and Temporal share the process; `go tool pprof -top`,\n")
	fmt.Fprintf(&b, "the entries with the most time of their own):\n\n```\n%s```\n\n", run.profileTop)
	writeCPUBudget(&b, run)
	writeTopStatements(&b, statements, run.requests(), wall)
	ordersRate := float64(orders) / wall.Seconds()
	lr := result{requests: perRoute["GET /products?limit=20"].Requests, elapsed: wall}
	fmt.Fprintf(&b, "| physical-limit baseline, same run | alone | under the mix | mix / alone |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| order transaction (`storage.CreateOrder`, bare) | %.0f orders/s | %.0f orders/s (25%% of the mix) | %.0f%% |\n",
		bareOrders.rps(), ordersRate, 100*ordersRate/bareOrders.rps())
	fmt.Fprintf(&b, "| product list (SQL + JSON, bare handler) | %.0f requests/s | %.0f requests/s (60%% of the mix) | %.0f%% |\n",
		bareList.rps(), lr.rps(), 100*lr.rps()/bareList.rps())

	// The same mix and order baseline with Postgres as production runs it.
	if err := setDurability(ctx, db, true); err != nil {
		return "", mixRun{}, err
	}
	defer func() { _ = setDurability(context.WithoutCancel(ctx), db, false) }()
	durable, err := l.runMix(ctx, subscriptions, false)
	if err != nil {
		return "", mixRun{}, err
	}
	durableBare, err := bareOrderLoop()
	if err != nil {
		return "", mixRun{}, err
	}
	orderP99 := func(m mixRun) time.Duration {
		return result{latencies: m.perRoute["POST /orders (5 lines)"].Latencies}.percentile(0.99)
	}
	fmt.Fprintf(&b, "\n**Durability.** The runs above have Postgres with `fsync`, `synchronous_commit` and `full_page_writes` off, as the test\n")
	fmt.Fprintf(&b, "cluster runs. The same mix again with all three on (production's settings, `ALTER SYSTEM` and a reload), on this machine's disk:\n\n")
	fmt.Fprintf(&b, "| figure | fsync off | fsync on | on / off |\n|---|---:|---:|---:|\n")
	row := func(name string, off, on float64) {
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.0f%% |\n", name, off, on, 100*on/off)
	}
	row("mix, requests/s", float64(run.requests())/wall.Seconds(), float64(durable.requests())/durable.wall.Seconds())
	row("order create in the mix, orders/s", float64(orders)/wall.Seconds(), float64(durable.orders)/durable.wall.Seconds())
	fmt.Fprintf(&b, "| order create in the mix, p99 | %s | %s | |\n", ms(orderP99(run)), ms(orderP99(durable)))
	row("order transaction alone (bare), orders/s", bareOrders.rps(), durableBare.rps())
	fmt.Fprintf(&b, "| webhook deliveries: the last after the load stopped | %s | %s | |\n", run.drain.Round(time.Millisecond), durable.drain.Round(time.Millisecond))
	fmt.Fprintf(&b, "| order-placed workflows: the last after the load stopped | %s | %s | |\n", run.placedDrain.Round(time.Millisecond), durable.placedDrain.Round(time.Millisecond))
	fmt.Fprintf(&b, "| confirmation email p99 from the order | %s | %s | |\n\n", ms(mailed.percentile(0.99)), ms(durable.mailed.percentile(0.99)))
	fmt.Fprintf(&b, "With fsync on, every commit waits for its WAL flush to the disk. Temporal on SQLite (in memory here) is not affected by the setting.\n")
	return b.String(), run, nil
}

// requests is how many requests the run's load tool made, every route.
func (m mixRun) requests() int {
	n := 0
	for _, got := range m.perRoute {
		n += got.Requests
	}
	return n
}

// placedOrders counts the store's orders whose order-placed workflow is
// done: its three side effects (email, chat, shipment) are recorded.
func (l *loadRig) placedOrders(ctx context.Context) int {
	var n int
	_ = l.db.Pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT order_id FROM order_side_effects WHERE store_id = $1
		GROUP BY order_id HAVING count(*) = 3) done`, l.storeID).Scan(&n)
	return n
}

// setDurability turns Postgres's fsync, synchronous_commit and
// full_page_writes on (production's settings) or back off (the test
// cluster's), cluster-wide, with a reload: no restart is needed for any.
func setDurability(ctx context.Context, db *database, on bool) error {
	value := "off"
	if on {
		value = "on"
	}
	for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes"} {
		if _, err := db.Pool.Exec(ctx, "ALTER SYSTEM SET "+name+" = "+value); err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	if _, err := db.Pool.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return err
	}
	// The reload is asynchronous: wait until new sessions see it.
	for range 50 {
		var fsync string
		conn, err := db.Pool.Acquire(ctx)
		if err != nil {
			return err
		}
		err = conn.QueryRow(ctx, "SHOW fsync").Scan(&fsync)
		conn.Release()
		if err != nil {
			return err
		}
		if fsync == value {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("postgres did not take the durability settings")
}

// countStatements turns pg_stat_statements' counting on (from nothing,
// the test cluster's setting, to top-level statements) or back off,
// cluster-wide with a reload; turning it on starts its counts afresh (the
// cluster preloads the module; the extension's view is per database).
func countStatements(ctx context.Context, db *database, on bool) error {
	set := "ALTER SYSTEM RESET pg_stat_statements.track"
	if on {
		set = "ALTER SYSTEM SET pg_stat_statements.track = 'top'"
		if _, err := db.Pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
			return err
		}
	}
	if _, err := db.Pool.Exec(ctx, set); err != nil {
		return err
	}
	if _, err := db.Pool.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond) // the reload reaches the backends between their statements
	if !on {
		return nil
	}
	_, err := db.Pool.Exec(ctx, `SELECT pg_stat_statements_reset()`)
	return err
}

// statementStat is one normalised statement's calls and time in Postgres.
type statementStat struct {
	query string
	calls int64
	total time.Duration // executing (planning is off by default)
}

// topStatements are the statements with the most execution time since
// resetStatementStats, and the total over all of them (first, query "").
func topStatements(ctx context.Context, db *database, n int) ([]statementStat, error) {
	rows, err := db.Pool.Query(ctx, `
		(SELECT '' AS query, coalesce(sum(calls), 0)::bigint, coalesce(sum(total_exec_time), 0) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()))
		UNION ALL
		(SELECT query, calls, total_exec_time FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		 ORDER BY total_exec_time DESC LIMIT $1)`, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []statementStat
	for rows.Next() {
		var s statementStat
		var ms float64
		if err := rows.Scan(&s.query, &s.calls, &ms); err != nil {
			return nil, err
		}
		s.total = time.Duration(ms * float64(time.Millisecond))
		out = append(out, s)
	}
	return out, rows.Err()
}

// writeTopStatements reports where Postgres's time went during the mix,
// per request of the mix.
func writeTopStatements(b *strings.Builder, stats []statementStat, requests int, wall time.Duration) {
	if len(stats) == 0 || requests == 0 {
		return
	}
	all := stats[0]
	per := func(d time.Duration) string {
		return fmt.Sprintf("%.3f ms", float64(d.Microseconds())/1000/float64(requests))
	}
	fmt.Fprintf(b, "Where Postgres's time went during the mix and its drain (`pg_stat_statements`, execution time, which holds lock waits\n")
	fmt.Fprintf(b, "as well as CPU): %d statements, %.1f per request, %s per request in all (%.2f connections busy on average).\n\n",
		all.calls, float64(all.calls)/float64(requests), per(all.total), all.total.Seconds()/wall.Seconds())
	fmt.Fprintf(b, "| statement | calls per request | mean | per request | share |\n|---|---:|---:|---:|---:|\n")
	for _, s := range stats[1:] {
		q := strings.Join(strings.Fields(s.query), " ")
		if len(q) > 90 {
			q = q[:90] + "…"
		}
		q = strings.ReplaceAll(q, "|", "\\|")
		fmt.Fprintf(b, "| `%s` | %.2f | %.3f ms | %s | %.0f%% |\n", q, float64(s.calls)/float64(requests),
			float64(s.total.Microseconds())/1000/float64(max(s.calls, 1)), per(s.total), 100*s.total.Seconds()/all.total.Seconds())
	}
	fmt.Fprintf(b, "\n")
}

// rowWrites is every table's rows inserted, updated (and of those, updated
// in place: HOT) and deleted so far (pg_stat_user_tables), by table.
func rowWrites(ctx context.Context, db *database) (map[string]tableRowWrites, error) {
	rows, err := db.Pool.Query(ctx, `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables`)
	if err != nil {
		return nil, err
	}
	out := map[string]tableRowWrites{}
	for rows.Next() {
		var name string
		var w tableRowWrites
		if err := rows.Scan(&name, &w.inserted, &w.updated, &w.hot, &w.deleted); err != nil {
			return nil, err
		}
		out[name] = w
	}
	return out, rows.Err()
}

// tableRowWrites is one table's rows written; hot counts the updates that
// stayed on their page and wrote no index entry.
type tableRowWrites struct{ inserted, updated, hot, deleted int64 }

func (w tableRowWrites) minus(o tableRowWrites) tableRowWrites {
	return tableRowWrites{w.inserted - o.inserted, w.updated - o.updated, w.hot - o.hot, w.deleted - o.deleted}
}

func (w tableRowWrites) plus(o tableRowWrites) tableRowWrites {
	return tableRowWrites{w.inserted + o.inserted, w.updated + o.updated, w.hot + o.hot, w.deleted + o.deleted}
}

func (w tableRowWrites) rows() int64 { return w.inserted + w.updated + w.deleted }

// writeRowsPerOrder reports the rows the run wrote per order placed, by
// table, for the capacity arithmetic of docs/operations.md. The mix's
// reads write too (rate-limit counters, tokens' last use); the report names
// how many reads ran beside the orders.
func writeRowsPerOrder(b *strings.Builder, before, after map[string]tableRowWrites, orders, reads int) {
	type tableWrites struct {
		name string
		w    tableRowWrites
	}
	var tables []tableWrites
	var total tableRowWrites
	for name, a := range after {
		d := a.minus(before[name])
		total = total.plus(d)
		// Tables written less than once in 200 orders are left out of the
		// rows (not of the total).
		if 200*d.rows() < int64(orders) {
			continue
		}
		tables = append(tables, tableWrites{name, d})
	}
	sort.Slice(tables, func(i, j int) bool {
		si, sj := tables[i].w.rows(), tables[j].w.rows()
		return si > sj || si == sj && tables[i].name < tables[j].name
	})
	per := func(n int64) string { return fmt.Sprintf("%.2f", float64(n)/float64(orders)) }
	fmt.Fprintf(b, "Postgres rows written during the run and its drain, per order placed (%d orders, %d reads beside them; `pg_stat_user_tables`),\n", orders, reads)
	fmt.Fprintf(b, "for docs/operations.md; an update in place (HOT) stays on its page and writes no index entry:\n\n")
	fmt.Fprintf(b, "| table | inserted | updated | of which in place | deleted |\n|---|---:|---:|---:|---:|\n")
	for _, t := range tables {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", t.name, per(t.w.inserted), per(t.w.updated), per(t.w.hot), per(t.w.deleted))
	}
	fmt.Fprintf(b, "| **all tables** | **%s** | **%s** | **%s** | **%s** |\n\n", per(total.inserted), per(total.updated), per(total.hot), per(total.deleted))
}

// mixRun is what one run of the mixed workload measured.
type mixRun struct {
	perRoute map[string]loadRouteResult
	// wall is how long the load tool's clients were sending: from their
	// first request to the last answer, the span every rate is over.
	wall time.Duration
	// window is the span the CPU figures cover: the load tool's process
	// from its start to its exit (a little longer than wall).
	window                  time.Duration
	usageBefore, usageAfter usage
	profileTop              string
	profileParts            []cpuPart
	// machineCores is the machine's CPU in use over the run, in cores (all
	// processes: the server, Postgres, the load tool).
	machineCores                   float64
	orders, delivered, placedCount int
	drain, placedDrain             time.Duration
	mailed, started                result
	// from is when the run began.
	from time.Time
}

// runMix runs the load tool once and waits for the run's webhooks and
// order side effects; profile keeps a CPU profile of the server side.
func (l *loadRig) runMix(ctx context.Context, subscriptions int, profile bool) (mixRun, error) {
	var run mixRun
	if err := l.warmUp(ctx, subscriptions); err != nil {
		return run, err
	}
	deliveredBefore, placedBefore, mailedBefore := l.rec.totalCount(), l.placedOrders(ctx), len(l.mail.Messages())
	run.usageBefore = rusage()
	busyBefore, totalBefore := machineBusy()
	wallStart := time.Now()
	run.from = wallStart
	stopProfile := func() (string, []cpuPart) { return "", nil }
	if profile {
		var err error
		if stopProfile, err = startCPUProfile(); err != nil {
			return run, err
		}
	}
	out, err := runLoadClient(l.spec)
	// The CPU figures end with the load tool, before the profile is
	// read (go tool pprof is a child process too).
	busyAfter, totalAfter := machineBusy()
	run.window, run.usageAfter = time.Since(wallStart), rusage()
	run.machineCores = float64(busyAfter-busyBefore) / float64(totalAfter-totalBefore) * float64(runtime.NumCPU())
	l.spec.SeqStart += 10_000_000
	run.profileTop, run.profileParts = stopProfile()
	if err != nil {
		return run, err
	}
	perRoute := out.Routes
	run.perRoute, run.wall = perRoute, out.Span
	run.orders = perRoute["POST /orders (5 lines)"].Statuses[http.StatusCreated]
	want := deliveredBefore + run.orders*subscriptions
	drainStart := time.Now()
	for l.rec.totalCount() < want && time.Since(drainStart) < 60*time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	run.drain = time.Since(drainStart)
	run.delivered = l.rec.totalCount() - deliveredBefore
	for l.placedOrders(ctx)-placedBefore < run.orders && time.Since(drainStart) < 3*time.Minute {
		time.Sleep(100 * time.Millisecond)
	}
	run.placedDrain = time.Since(drainStart)
	run.placedCount = l.placedOrders(ctx) - placedBefore
	run.mailed, run.started, err = l.mailLatencies(ctx, mailedBefore)
	return run, err
}

// warmUpOrders is how many orders the mix places, unmeasured, before the
// first measured run on a rig, in rounds of warmUpRound (for at most
// warmUpLimit).
const (
	warmUpOrders = 1000
	warmUpRound  = 3 * time.Second
	warmUpLimit  = time.Minute
)

// warmUp runs the mix, unmeasured, once per rig until it has placed
// warmUpOrders orders, waits for their side effects, and has Postgres
// analyze every table. A freshly cloned database has no statistics for the
// tables the mix fills, and Postgres keeps the plans it made for the
// service's prepared statements while a table was nearly empty (sequential
// scans) until the table is analyzed; autovacuum visits a new database
// within a minute, so without the analyze a run measured those plans or not
// by chance (runs here swung between about 270 and 380 requests/s on that
// alone). A running store's tables have statistics, and rows.
//
// The warm-up counts orders, not seconds: a fixed 3 s placed about 200
// orders on a slow day, and with about 200 customers analyzed the lookup of
// a buyer by email (a citext column under a unique partial index) is
// planned as a sequential scan, which some runs' connections kept for the
// whole run as the table grew tenfold (3,800 scans reading 2.7 million
// rows, 1.0 s of Postgres time in a 30 s run, where the index takes
// 0.06 s); other runs' plans came out the other way.
func (l *loadRig) warmUp(ctx context.Context, subscriptions int) error {
	if l.warmed {
		return nil
	}
	l.warmed = true
	measured := l.spec.Duration
	l.spec.Duration = warmUpRound
	defer func() { l.spec.Duration = measured }()
	deadline := time.Now().Add(warmUpLimit)
	for placed := 0; placed < warmUpOrders && time.Now().Before(deadline); {
		run, err := l.runMix(ctx, subscriptions, false)
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		placed += run.orders
	}
	if _, err := l.db.Pool.Exec(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("warm-up: analyze: %w", err)
	}
	return nil
}

// mailLatencies times each order's confirmation, from the order's
// created_at to the SMTP sink's acceptance, for the mails after the first
// skip (each buyer of the load has an address of their own), and the first
// part of that: from created_at to the dispatcher's start of the order's
// workflow.
func (l *loadRig) mailLatencies(ctx context.Context, skip int) (mailed, started result, err error) {
	rows, err := l.db.Pool.Query(ctx, `SELECT customer->>'email', created_at, placed_started_at FROM orders
		WHERE store_id = $1 AND customer->>'email' IS NOT NULL`, l.storeID)
	if err != nil {
		return result{}, result{}, err
	}
	created := map[string]time.Time{}
	for rows.Next() {
		var email string
		var at time.Time
		var startedAt *time.Time
		if err := rows.Scan(&email, &at, &startedAt); err != nil {
			return result{}, result{}, err
		}
		created[email] = at
		if startedAt != nil {
			started.requests++
			started.latencies = append(started.latencies, startedAt.Sub(at))
		}
	}
	if err := rows.Err(); err != nil {
		return result{}, result{}, err
	}
	for _, m := range l.mail.Messages()[skip:] {
		if len(m.To) != 1 {
			continue
		}
		if at, ok := created[m.To[0]]; ok {
			mailed.requests++
			mailed.latencies = append(mailed.latencies, m.Received.Sub(at))
		}
	}
	return mailed, started, nil
}

// firstTaskWaits reads, from the order-placed histories, how long each
// workflow waited between its start and its first workflow task: for the
// orders placed from from to to (one run) whose email step was slowest
// (the top 1%), and for as many others; it tells a wait in Temporal's
// task dispatch from a slow step.
func (l *loadRig) firstTaskWaits(ctx context.Context, from, to time.Time) (slow, rest result, err error) {
	rows, err := l.db.Pool.Query(ctx, `SELECT o.id FROM order_side_effects e JOIN orders o ON o.store_id = e.store_id AND o.id = e.order_id
		WHERE o.store_id = $1 AND e.kind = 'email' AND o.placed_started_at IS NOT NULL AND o.created_at BETWEEN $2 AND $3
		ORDER BY e.created_at - o.placed_started_at DESC`, l.storeID, from, to)
	if err != nil {
		return result{}, result{}, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return result{}, result{}, err
	}
	n := max(len(ids)/100, 1)
	if len(ids) < 2*n {
		return result{}, result{}, nil
	}
	wait := func(id uuid.UUID) (time.Duration, error) {
		iter := l.temporal.GetWorkflowHistory(ctx, workflows.OrderPlacedWorkflowID(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var started time.Time
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				return 0, err
			}
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
				started = ev.GetEventTime().AsTime()
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
				return ev.GetEventTime().AsTime().Sub(started), nil
			}
		}
		return 0, fmt.Errorf("order-placed:%s has no workflow task", id)
	}
	step := (len(ids) - n) / n
	for i := range n {
		for _, pick := range []struct {
			id  uuid.UUID
			out *result
		}{{ids[i], &slow}, {ids[n+i*step], &rest}} {
			d, err := wait(pick.id)
			if err != nil {
				return result{}, result{}, err
			}
			pick.out.requests++
			pick.out.latencies = append(pick.out.latencies, d)
		}
	}
	return slow, rest, nil
}

// stepLatencies times each side effect of the load's orders from the
// order's workflow start to the side effect's record, by kind.
func (l *loadRig) stepLatencies(ctx context.Context) (map[string]result, error) {
	rows, err := l.db.Pool.Query(ctx, `SELECT e.kind, e.created_at - o.placed_started_at FROM order_side_effects e
		JOIN orders o ON o.store_id = e.store_id AND o.id = e.order_id
		WHERE o.store_id = $1 AND o.placed_started_at IS NOT NULL AND o.customer->>'email' IS NOT NULL`, l.storeID)
	if err != nil {
		return nil, err
	}
	out := map[string]result{}
	for rows.Next() {
		var kind string
		var d time.Duration
		if err := rows.Scan(&kind, &d); err != nil {
			return nil, err
		}
		r := out[kind]
		r.requests++
		r.latencies = append(r.latencies, d)
		out[kind] = r
	}
	return out, rows.Err()
}

// startCPUProfile profiles this process (the server side of the mix) until
// the returned function is called, which answers the profile's top entries
// by their own time, as `go tool pprof -top` prints them, and the profile's
// samples shared out by the part of the server they ran in.
func startCPUProfile() (stop func() (top string, parts []cpuPart), err error) {
	f, err := os.CreateTemp("", "svc-load-*.pprof")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return func() (string, []cpuPart) {
		pprof.StopCPUProfile()
		f.Close()
		// SVC_BENCH_PROFILE keeps the whole profile for a closer look.
		if keep := os.Getenv("SVC_BENCH_PROFILE"); keep != "" {
			_ = os.Rename(f.Name(), keep)
		} else {
			defer os.Remove(f.Name())
		}
		name := cmp.Or(os.Getenv("SVC_BENCH_PROFILE"), f.Name())
		parts, err := profileParts(name)
		if err != nil {
			return fmt.Sprintf("(read the profile: %v)\n", err), nil
		}
		out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=15", name).Output()
		if err != nil {
			return fmt.Sprintf("(go tool pprof: %v)\n", err), parts
		}
		// The first lines name the temporary file and the build; the
		// totals start at "Duration".
		text := string(out)
		if i := strings.Index(text, "Duration:"); i >= 0 {
			text = text[i:]
		}
		return text, parts
	}, nil
}

// cpuPart is the CPU time of the profile's samples that ran in one part of
// the server.
type cpuPart struct {
	name string
	cpu  time.Duration
}

// serverParts name a sample's part by the first of these its stack holds
// (leaf to root, first rule first): the Temporal server before its SQLite
// and the SDK, the service's code before the libraries it calls.
var serverParts = []struct{ name, prefix string }{
	{"Temporal server (its SQLite included)", "go.temporal.io/server/"},
	{"API handlers (HTTP, auth, SQL, JSON)", "github.com/merchantsvc/svc/api."},
	{"dispatcher (outbox, workflow starts)", "github.com/merchantsvc/svc/worker.(*Dispatcher)"},
	{"activities (webhook sends, email, chat, shipment)", "github.com/merchantsvc/svc/activities."},
	{"worker: Temporal SDK (polls, workflow tasks)", "go.temporal.io/sdk/"},
	{"benchmark rig (webhook receiver, SMTP sink, chat API)", "main."},
	{"Temporal SDK client, gRPC", "google.golang.org/grpc"},
	{"garbage collector", "runtime.gcBgMarkWorker"},
	{"HTTP server, connections", "net/http."},
}

// profileParts shares a CPU profile's samples out by serverParts.
func profileParts(file string) ([]cpuPart, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, err
	}
	cpuIndex := len(p.SampleType) - 1 // cpu nanoseconds
	byPart := map[string]time.Duration{}
	for _, sample := range p.Sample {
		part := "other (runtime, syscalls, libraries)"
	find:
		for _, rule := range serverParts {
			for _, loc := range sample.Location {
				for _, line := range loc.Line {
					if line.Function != nil && strings.HasPrefix(line.Function.Name, rule.prefix) {
						part = rule.name
						break find
					}
				}
			}
		}
		byPart[part] += time.Duration(sample.Value[cpuIndex])
	}
	parts := make([]cpuPart, 0, len(byPart))
	for name, cpu := range byPart {
		parts = append(parts, cpuPart{name, cpu})
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].cpu > parts[j].cpu })
	return parts, nil
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
func runLoadClient(spec loadClientSpec) (loadClientResult, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return loadClientResult{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return loadClientResult{}, err
	}
	cmd := exec.Command(self, "-load-client", "-")
	cmd.Stdin, cmd.Stderr = bytes.NewReader(raw), os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return loadClientResult{}, fmt.Errorf("load tool: %w", err)
	}
	var results loadClientResult
	return results, json.Unmarshal(out, &results)
}

// loadClientResult is what the load tool saw: each route's requests, and
// how long its clients were sending (the process's start and its report
// are outside it).
type loadClientResult struct {
	Routes map[string]loadRouteResult `json:"routes"`
	Span   time.Duration              `json:"span"`
}

// seqMark in a route's body is replaced with a number unique to the request.
var seqMark = []byte("{seq}")

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
		next, seq atomic.Uint64
		wg        sync.WaitGroup
	)
	seq.Store(spec.SeqStart)
	started := time.Now()
	deadline := started.Add(spec.Duration)
	for g := range spec.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			base := spec.Bases[g%len(spec.Bases)]
			for time.Now().Before(deadline) {
				r := pick(rng)
				token := spec.Tokens[next.Add(1)%uint64(len(spec.Tokens))]
				body := r.Body
				if bytes.Contains(body, seqMark) {
					body = bytes.ReplaceAll(body, seqMark, fmt.Appendf(nil, "%08d", seq.Add(1)))
				}
				once(client, func() (*http.Request, error) {
					req, err := http.NewRequest(r.Method, base+r.Path, bytes.NewReader(body))
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
	span := time.Since(started)
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
	return json.NewEncoder(out).Encode(loadClientResult{Routes: results, Span: span})
}

// writeCPUBudget shares the mix's CPU out per request: the machine's (every
// process) and the server's, by part, against what 500 requests/s on this
// machine's cores would allow.
func writeCPUBudget(b *strings.Builder, run mixRun) {
	requests := float64(run.requests())
	perRequest := func(cores float64) time.Duration {
		return time.Duration(cores * run.window.Seconds() / requests * float64(time.Second))
	}
	var profiled time.Duration
	for _, p := range run.profileParts {
		profiled += p.cpu
	}
	server := (run.usageAfter.cpu - run.usageBefore.cpu).Seconds() / run.window.Seconds()
	budget := time.Duration(float64(runtime.NumCPU()) / 500 * float64(time.Second))
	fmt.Fprintf(b, "CPU per request of the mix: the machine was %.2f cores busy over the run (every process: the server, Postgres, the load\n", run.machineCores)
	fmt.Fprintf(b, "tool), **%s of CPU per request**; 500 requests/s on %d cores allow %s. The server's share, %s per request, by part\n",
		ms(perRequest(run.machineCores)), runtime.NumCPU(), ms(budget), ms(perRequest(server)))
	fmt.Fprintf(b, "(the profile's samples, each given to the first of these parts its stack holds):\n\n| part | share of the server's CPU | per request |\n|---|---:|---:|\n")
	for _, p := range run.profileParts {
		share := float64(p.cpu) / float64(profiled)
		fmt.Fprintf(b, "| %s | %.0f%% | %s |\n", p.name, 100*share, ms(time.Duration(share*float64(perRequest(server)))))
	}
	fmt.Fprintf(b, "| Postgres and the load tool (the machine less the server) | | %s |\n\n", ms(perRequest(run.machineCores-server)))
}
