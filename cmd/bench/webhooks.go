package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/internal/mailsink"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/worker"
)

// deliveryReceiver is the loopback HTTPS endpoint every subscription points at.
type deliveryReceiver struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	// arrivals maps "<product id>/<subscription path>" to the first arrival.
	arrivals map[string]time.Time
	total    int
}

func newDeliveryReceiver(dir string) (*deliveryReceiver, error) {
	rec := &deliveryReceiver{arrivals: map[string]time.Time{}}
	rec.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		var body struct {
			Data struct {
				ProductID string `json:"product_id"`
			} `json:"data"`
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		key := body.Data.ProductID + r.URL.Path
		rec.mu.Lock()
		if _, seen := rec.arrivals[key]; !seen {
			rec.arrivals[key] = now
		}
		rec.total++
		rec.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	rec.srv.EnableHTTP2 = true
	rec.srv.StartTLS()
	rec.caFile = filepath.Join(dir, "receiver-ca.pem")
	err := os.WriteFile(rec.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rec.srv.Certificate().Raw}), 0o600)
	return rec, err
}

func (rec *deliveryReceiver) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.arrivals)
}

func (rec *deliveryReceiver) reset() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.arrivals, rec.total = map[string]time.Time{}, 0
}

// webhookRun is one measured run of the durable pipeline.
type webhookRun struct {
	name       string
	deliveries int
	elapsed    time.Duration // first commit to last first-arrival
	latencies  []time.Duration
	duplicates int
	// machineBusy is the share of the machine's CPU time in use during
	// the run (all processes, /proc/stat).
	machineBusy float64
}

func (r webhookRun) rate() float64 { return float64(r.deliveries) / r.elapsed.Seconds() }

func (r webhookRun) percentile(p float64) time.Duration {
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// deliveryRig is what a delivery benchmark runs on: a loopback TLS
// receiver, an in-process Temporal and a worker whose HTTP client trusts the
// receiver.
type deliveryRig struct {
	rec        *deliveryReceiver
	temporal   client.Client
	httpClient *http.Client
	mail       *mailsink.Sink
	close      func()
	// temporalPID is the Temporal child process, when it runs apart.
	temporalPID      int
	temporalHostPort string
	// chatURL is the loopback chat provider's API.
	chatURL string
}

func startDeliveryRig(ctx context.Context, db *storage.DB, queue string) (*deliveryRig, error) {
	return startDeliveryRigWith(ctx, db, queue, temporalSetup{})
}

// startDeliveryRigWith is startDeliveryRig with Temporal set up as asked:
// in a child process of its own for the soak (in this process, the
// server's histories and caches would be measured as the service's
// memory), on Postgres or SQLite.
func startDeliveryRigWith(ctx context.Context, db *storage.DB, queue string, temporal temporalSetup, configure ...func(*activities.Activities)) (*deliveryRig, error) {
	dir, err := os.MkdirTemp("", "svc-bench-")
	if err != nil {
		return nil, err
	}
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	closers = append(closers, func() { os.RemoveAll(dir) })
	rig := &deliveryRig{close: closeAll}
	fail := func(err error) (*deliveryRig, error) { closeAll(); return nil, err }
	if rig.rec, err = newDeliveryReceiver(dir); err != nil {
		return fail(err)
	}
	closers = append(closers, rig.rec.srv.Close)
	tmp, err := temporal.start(ctx, dir)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, tmp.stop)
	rig.temporal, rig.temporalPID, rig.temporalHostPort = tmp.client, tmp.pid, tmp.hostPort
	closers = append(closers, rig.temporal.Close)
	if rig.httpClient, err = (webhook.Guard{AllowPrivate: true}).NewClient(rig.rec.caFile); err != nil {
		return fail(err)
	}
	// A real SMTP sink, so order-placed emails are sent rather than retried.
	sink, err := mailsink.Start("")
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { _ = sink.Stop() })
	rig.mail = sink
	host, port, _ := net.SplitHostPort(sink.Addr)
	portNumber, _ := strconv.Atoi(port)
	mailer := &activities.SMTPMailer{Host: host, Port: portNumber, From: "shop@example.com", PlainText: true}
	// A chat provider that accepts every message, so order confirmations
	// make their HTTP round trip rather than fail on a missing provider.
	var chats atomic.Int64
	chatAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"messages":[{"id":"wamid.%d"}]}`, chats.Add(1))
	}))
	closers = append(closers, chatAPI.Close)
	rig.chatURL = chatAPI.URL
	chat := activities.HTTPChatProvider{BaseURL: chatAPI.URL, Token: "bench"}
	acts := &activities.Activities{DB: db, HTTPClient: rig.httpClient, Mailer: mailer, Chat: chat}
	for _, c := range configure {
		c(acts)
	}
	w := worker.New(rig.temporal, queue, acts, worker.Options{})
	if err := w.Start(); err != nil {
		return fail(err)
	}
	closers = append(closers, w.Stop)
	return rig, nil
}

// runWebhookBench measures commit → first attempt and deliveries per second
// through outbox, dispatcher, Temporal and the worker, beside the same
// fan-out by a bare goroutine pool with the same HTTP client and signing.
func runWebhookBench(ctx context.Context, dbURL string, events, subscriptions int, pacedRate int) (string, [2]webhookFigures, error) {
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return "", [2]webhookFigures{}, err
	}
	defer db.Close()
	const queue = "bench"
	rig, err := startDeliveryRig(ctx, db.DB, queue)
	if err != nil {
		return "", [2]webhookFigures{}, err
	}
	defer rig.close()
	rec, c, httpClient := rig.rec, rig.temporal, rig.httpClient
	dispatcher := &worker.Dispatcher{DB: db.DB, Temporal: c, TaskQueue: queue, Schedule: []time.Duration{10 * time.Second},
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	startDispatcher := func() func() {
		dctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = dispatcher.Run(dctx) }()
		return func() { cancel(); <-done }
	}

	storeID, err := seedWebhookStore(ctx, db.DB, rec.srv.URL, subscriptions)
	if err != nil {
		return "", [2]webhookFigures{}, err
	}
	stop := startDispatcher()
	// Warm up: connections, workflow caches.
	if _, err := driveEvents(ctx, db.DB, rec, storeID, 50, subscriptions, 0, "warm"); err != nil {
		return "", [2]webhookFigures{}, err
	}
	var durabilities [2]webhookFigures
	for i, durable := range []bool{false, true} {
		if err := setDurability(ctx, db, durable); err != nil {
			return "", [2]webhookFigures{}, err
		}
		f := &durabilities[i]
		if f.paced, err = driveEvents(ctx, db.DB, rec, storeID, events, subscriptions, pacedRate, "paced"); err != nil {
			return "", [2]webhookFigures{}, err
		}
		stop()
		// Statistics for the tables the paced run filled, as a running
		// store has them: the fan-out's statements are planned on them, not
		// on a fresh clone's empty tables (see warmUp in load.go).
		if _, err := db.Pool.Exec(ctx, "ANALYZE"); err != nil {
			return "", [2]webhookFigures{}, err
		}
		// Fan-out throughput: the events are committed first, then the
		// dispatcher starts and the clock runs until every first attempt
		// arrived, which is what the bare pool is timed on too. A run is a
		// few hundred milliseconds, so the rounds alternate and the medians
		// are compared.
		for range fanOutRounds {
			backlog, err := deliverBacklog(ctx, db.DB, rec, storeID, events, subscriptions, startDispatcher)
			if err != nil {
				return "", [2]webhookFigures{}, err
			}
			bare, err := barePool(ctx, httpClient, rec, events*subscriptions)
			if err != nil {
				return "", [2]webhookFigures{}, err
			}
			f.backlogs, f.bares = append(f.backlogs, backlog), append(f.bares, bare)
		}
		stop = startDispatcher()
	}
	stop()
	if err := setDurability(ctx, db, false); err != nil {
		return "", [2]webhookFigures{}, err
	}
	return formatWebhookReport(events, subscriptions, pacedRate, durabilities), durabilities, nil
}

// fanOutRounds is how many backlog and bare-pool runs alternate.
const fanOutRounds = 7

// webhookFigures is one durability setting's runs.
type webhookFigures struct {
	paced           webhookRun
	backlogs, bares []webhookRun
}

// ratio is the durable fan-out's median over the bare pool's.
func (f webhookFigures) ratio() float64 { return medianRate(f.backlogs) / medianRate(f.bares) }

// medianRate is the median deliveries/s of runs.
func medianRate(runs []webhookRun) float64 {
	rates := make([]float64, len(runs))
	for i, r := range runs {
		rates[i] = r.rate()
	}
	slices.Sort(rates)
	return rates[len(rates)/2]
}

func seedWebhookStore(ctx context.Context, db *storage.DB, base string, subscriptions int) (uuid.UUID, error) {
	user := storage.User{Email: "hooks@example.com", PasswordHash: "x", Name: "Bench"}
	store := storage.Store{Name: "Hooks", Subdomain: "hooks", Currency: "EGP", DefaultLanguage: "ar"}
	err := db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		for i := range subscriptions {
			sub := storage.Subscription{StoreID: store.ID, URL: fmt.Sprintf("%s/sub%d", base, i),
				Events: []string{storage.EventProductCreated}, IsActive: true, Secret: fmt.Sprintf("svc_whsec_bench%d", i)}
			if err := tx.CreateSubscription(ctx, &sub); err != nil {
				return err
			}
		}
		return nil
	})
	return store.ID, err
}

// driveEvents commits n product.created events (paced at rate per second,
// or as fast as 8 writers can when rate is 0) and waits for every first attempt.
func driveEvents(ctx context.Context, db *storage.DB, rec *deliveryReceiver, storeID uuid.UUID, n, subscriptions, rate int, name string) (webhookRun, error) {
	rec.reset()
	var (
		mu        sync.Mutex
		committed = map[string]time.Time{}
		wg        sync.WaitGroup
		firstErr  error
		jobs      = make(chan int)
	)
	start := time.Now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				p := storage.Product{StoreID: storeID, Name: fmt.Sprintf("%s %d", name, i), Price: 100}
				err := db.InTx(ctx, func(tx *storage.Tx) error { return tx.CreateProduct(ctx, &p) })
				at := time.Now()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				committed[p.ID.String()] = at
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		if rate > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return webhookRun{}, firstErr
	}
	want := n * subscriptions
	deadline := time.Now().Add(5 * time.Minute)
	for rec.count() < want {
		if time.Now().After(deadline) {
			return webhookRun{}, fmt.Errorf("%s: only %d of %d deliveries arrived", name, rec.count(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	run := webhookRun{name: name, deliveries: want, duplicates: rec.total - len(rec.arrivals)}
	var first, last time.Time
	for key, arrived := range rec.arrivals {
		productID, _, _ := strings.Cut(key, "/")
		at := committed[productID]
		run.latencies = append(run.latencies, arrived.Sub(at))
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if arrived.After(last) {
			last = arrived
		}
	}
	run.elapsed = last.Sub(first)
	return run, nil
}

// deliverBacklog commits n events with no dispatcher running, then starts
// one and times the fan-out until every first attempt has arrived.
func deliverBacklog(ctx context.Context, db *storage.DB, rec *deliveryReceiver, storeID uuid.UUID, n, subscriptions int,
	startDispatcher func() func()) (webhookRun, error) {
	rec.reset()
	for i := range n {
		p := storage.Product{StoreID: storeID, Name: fmt.Sprintf("backlog %d", i), Price: 100}
		if err := db.InTx(ctx, func(tx *storage.Tx) error { return tx.CreateProduct(ctx, &p) }); err != nil {
			return webhookRun{}, err
		}
	}
	busyBefore, totalBefore := machineBusy()
	start := time.Now()
	stop := startDispatcher()
	defer stop()
	want := n * subscriptions
	deadline := time.Now().Add(5 * time.Minute)
	for rec.count() < want {
		if time.Now().After(deadline) {
			return webhookRun{}, fmt.Errorf("backlog: only %d of %d deliveries arrived", rec.count(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var last time.Time
	for _, at := range rec.arrivals {
		if at.After(last) {
			last = at
		}
	}
	busy, total := machineBusy()
	return webhookRun{name: "backlog", deliveries: want, elapsed: last.Sub(start), duplicates: rec.total - len(rec.arrivals),
		machineBusy: float64(busy-busyBefore) / float64(total-totalBefore)}, nil
}

// barePool sends the same number of signed deliveries from a goroutine pool
// with the same client: the fan-out without durability.
func barePool(ctx context.Context, client *http.Client, rec *deliveryReceiver, n int) (webhookRun, error) {
	rec.reset()
	body := []byte(`{"event":"product.created","timestamp":"2026-01-01T00:00:00Z","data":{"product_id":"%s"}}`)
	jobs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				b := []byte(fmt.Sprintf(string(body), fmt.Sprint(i)))
				webhook.Send(ctx, client, webhook.Request{URL: rec.srv.URL + "/bare", Secret: "svc_whsec_bare",
					DeliveryID: uuid.NewString(), Event: "product.created", Body: b}, time.Now())
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	run := webhookRun{name: "bare", deliveries: n, elapsed: time.Since(start)}
	if got := rec.count(); got != n {
		return run, fmt.Errorf("bare pool: %d of %d arrived", got, n)
	}
	return run, nil
}

func formatWebhookReport(events, subscriptions, rate int, figures [2]webhookFigures) string {
	var b strings.Builder
	off, on := figures[0], figures[1]
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s), Go %s. Postgres (local cluster, fsync off unless said), the in-process Temporal\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), runtime.Version())
	fmt.Fprintf(&b, "server (SQLite in memory, one history shard), the worker, the dispatcher, the HTTPS receiver (HTTP/2, loopback)\n")
	fmt.Fprintf(&b, "and the driver share the machine. %d events × %d subscriptions = %d deliveries per run; the fan-out and the bare\n", events, subscriptions, events*subscriptions)
	fmt.Fprintf(&b, "pool alternate for %d rounds each, and their medians are compared.\n\n", fanOutRounds)
	fmt.Fprintf(&b, "| run | deliveries/s | commit → first attempt p50 | p99 | duplicates |\n|---|---:|---:|---:|---:|\n")
	paced, backlogRate, bareRate := off.paced, medianRate(off.backlogs), medianRate(off.bares)
	duplicates := 0
	for _, r := range off.backlogs {
		duplicates += r.duplicates
	}
	fmt.Fprintf(&b, "| durable, events paced at %d/s (%d deliveries/s offered) | %.0f | %s | %s | %d |\n", rate, rate*subscriptions, paced.rate(), ms(paced.percentile(0.5)), ms(paced.percentile(0.99)), paced.duplicates)
	fmt.Fprintf(&b, "| durable fan-out of a committed backlog (outbox → deliveries → Dispatch workflows → signed sends, recorded), median | %.0f | | | %d |\n", backlogRate, duplicates)
	fmt.Fprintf(&b, "| bare goroutine pool (64), same client and signing, no durability, median | %.0f | | | |\n\n", bareRate)
	fmt.Fprintf(&b, "Rounds, durable / bare deliveries/s:")
	for i := range off.backlogs {
		fmt.Fprintf(&b, " %.0f / %.0f;", off.backlogs[i].rate(), off.bares[i].rate())
	}
	busy := make([]float64, len(off.backlogs))
	for i, r := range off.backlogs {
		busy[i] = r.machineBusy
	}
	slices.Sort(busy)
	fmt.Fprintf(&b, "\n\nThe machine's CPU was %.0f%% busy during the median fan-out (all processes): the fan-out is bound by CPU, and what it\n", 100*busy[len(busy)/2])
	fmt.Fprintf(&b, "spends beyond the bare pool's sends is the rows (one delivery written, read and updated, one attempt written, per\n")
	fmt.Fprintf(&b, "delivery) and Postgres's share of the two cores.")
	ratio := backlogRate / bareRate
	fmt.Fprintf(&b, "\n\n**Durable / bare: %.0f%%** (goal ≥ 60%%: %s). **Sustained: %.0f deliveries/s** (goal ≥ 300: %s). ",
		100*ratio, verdict(ratio >= 0.60), backlogRate, verdict(backlogRate >= 300))
	fmt.Fprintf(&b, "**Paced first attempt p50 %s, p99 %s** (goals < 300 ms and < 1 s: %s).\n\n",
		ms(paced.percentile(0.5)), ms(paced.percentile(0.99)),
		verdict(paced.percentile(0.5) < 300*time.Millisecond && paced.percentile(0.99) < time.Second))
	fmt.Fprintf(&b, "**Durability.** The same runs with Postgres's `fsync`, `synchronous_commit` and `full_page_writes` on (production's settings):\n\n")
	fmt.Fprintf(&b, "| figure | fsync off | fsync on | on / off |\n|---|---:|---:|---:|\n")
	onBacklog, onBare := medianRate(on.backlogs), medianRate(on.bares)
	fmt.Fprintf(&b, "| durable fan-out, deliveries/s (median) | %.0f | %.0f | %.0f%% |\n", backlogRate, onBacklog, 100*onBacklog/backlogRate)
	fmt.Fprintf(&b, "| bare pool, deliveries/s (median; it writes nothing) | %.0f | %.0f | |\n", bareRate, onBare)
	fmt.Fprintf(&b, "| durable / bare | %.0f%% | %.0f%% | |\n", 100*ratio, 100*onBacklog/onBare)
	fmt.Fprintf(&b, "| paced, commit → first attempt p50 | %s | %s | |\n", ms(paced.percentile(0.5)), ms(on.paced.percentile(0.5)))
	fmt.Fprintf(&b, "| paced, commit → first attempt p99 | %s | %s | |\n\n", ms(paced.percentile(0.99)), ms(on.paced.percentile(0.99)))
	fmt.Fprintf(&b, "With fsync on, each of the fan-out's transactions (claiming a round of the outbox, recording a chunk of attempts) waits for\n")
	fmt.Fprintf(&b, "its WAL flush; there are a few per thousand deliveries, so the fan-out loses little. The bare pool writes nothing.\n")
	return b.String()
}

// machineBusy is the machine's CPU time so far, busy and in all, in
// clock ticks (/proc/stat; idle and iowait count as not busy).
func machineBusy() (busy, total int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	for i, field := range strings.Fields(line)[1:] {
		n, _ := strconv.ParseInt(field, 10, 64)
		total += n
		if i != 3 && i != 4 {
			busy += n
		}
	}
	return busy, total
}
