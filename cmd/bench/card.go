package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	stripewebhook "github.com/stripe/stripe-go/v84/webhook"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/devenv"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/worker"
)

const (
	cardCheckouts   = 200
	cardWebhookHook = "whsec_bench_card"
	cardStripeKey   = "sk_test_benchcard4242"
)

// cardOrder is a card checkout's order and when its success was sent.
type cardOrder struct {
	id     uuid.UUID
	total  int64
	intent string
	sent   time.Time
}

// runCardBench checks out 200 carts by card at once through the API, the
// worker's card-payment workflows and stripe-mock, settles each with a
// signed payment_intent.succeeded sent at once, and times webhook → paid;
// the same 200 checkouts by COD in the same run are the baseline.
func runCardBench(ctx context.Context, dbURL string) (string, error) {
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sealer, err := storage.NewSealer(base64.StdEncoding.EncodeToString(key))
	if err != nil {
		return "", err
	}
	port, err := devenv.FreePort()
	if err != nil {
		return "", err
	}
	bin := os.Getenv("SVC_STRIPE_MOCK_BIN")
	if bin == "" {
		bin = ".bin/stripe-mock-v0.203.0/stripe-mock"
	}
	bin, _ = filepath.Abs(bin)
	mock, err := devenv.StartStripeMock(ctx, bin, port, io.Discard)
	if err != nil {
		return "", err
	}
	defer mock.Stop()

	const queue = "card"
	rig, err := startDeliveryRigWith(ctx, db.DB, queue, temporalSetup{}, func(a *activities.Activities) {
		a.Secrets, a.StripeAPIBase = sealer, mock.URL
	})
	if err != nil {
		return "", err
	}
	defer rig.close()
	dctx, stopDispatcher := context.WithCancel(ctx)
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		_ = (&worker.Dispatcher{DB: db.DB, Temporal: rig.temporal, TaskQueue: queue, Log: slog.New(slog.DiscardHandler)}).Run(dctx)
	}()
	defer func() { stopDispatcher(); <-dispatched }()
	url, stop, err := serve(api.NewServer(api.Config{TaskQueue: queue, Secrets: sealer, StripeAPIBase: mock.URL,
		StorefrontRateLimitPerMinute: 100_000_000, StorefrontOrdersPerPhone: 100_000_000, StorefrontOrdersPerNetwork: 100_000_000},
		db.DB, rig.temporal, nil, slog.New(slog.DiscardHandler)))
	if err != nil {
		return "", err
	}
	defer stop()

	store, err := seedPricingStore(ctx, db, "card-bench", false)
	if err != nil {
		return "", err
	}
	if err := db.InTx(ctx, func(tx *storage.Tx) error {
		return tx.ConnectGateway(ctx, sealer, storage.GatewayAccount{StoreID: store.id, Provider: storage.GatewayStripe,
			SecretKey: cardStripeKey, WebhookSecret: cardWebhookHook})
	}); err != nil {
		return "", err
	}
	httpClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cardCheckouts * 2}}
	var phones atomic.Int64

	// Warm up: connections, workflow caches, the first intents.
	if _, _, err := cardRound(ctx, db, httpClient, url, store, 20, &phones); err != nil {
		return "", err
	}
	codCarts, err := prepareCarts(httpClient, url, store, cardCheckouts, 1, nil, &phones)
	if err != nil {
		return "", err
	}
	cod := checkoutAll(httpClient, url, codCarts, cardCheckouts)
	if cod.statuses[http.StatusCreated] != cod.requests {
		return "", fmt.Errorf("cod checkouts failed: %v %v", cod.statuses, cod.codes)
	}
	// The COD orders' order-placed workflows finish before the card round,
	// which then carries only its own.
	if err := waitWorkflowsDone(ctx, rig.temporal); err != nil {
		return "", err
	}
	// The card round is profiled, to share this process's CPU out by part;
	// SVC_BENCH_PROFILE keeps the profile.
	profilePath := os.Getenv("SVC_BENCH_PROFILE")
	if profilePath == "" {
		f, err := os.CreateTemp("", "card-*.pprof")
		if err != nil {
			return "", err
		}
		f.Close()
		profilePath = f.Name()
		defer os.Remove(profilePath)
	}
	pf, err := os.Create(profilePath)
	if err != nil {
		return "", err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		return "", err
	}
	card, settle, err := cardRound(ctx, db, httpClient, url, store, cardCheckouts, &phones)
	pprof.StopCPUProfile()
	pf.Close()
	if err != nil {
		return "", err
	}
	parts, err := profileParts(profilePath)
	if err != nil {
		return "", err
	}
	codActions, err := temporalActions(ctx, rig.temporal, "order-placed:", 20)
	if err != nil {
		return "", err
	}
	cardActions, err := temporalActions(ctx, rig.temporal, "card-payment:", 20)
	if err != nil {
		return "", err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s). %d storefront checkouts at once over HTTP (one client each), 1-line carts\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), cardCheckouts)
	fmt.Fprintf(&b, "prepared beforehand; the API, the worker (with the dispatcher) and Temporal (SQLite, in this process) share the\n")
	fmt.Fprintf(&b, "machine with Postgres and stripe-mock. A card checkout commits the order, starts `card-payment:<order_id>` and\n")
	fmt.Fprintf(&b, "waits for its PaymentIntent at stripe-mock (the workflow's `payment-ready` update), then answers the client secret.\n")
	fmt.Fprintf(&b, "Then every order's signed `payment_intent.succeeded` is posted at once; webhook → paid runs from the post to the\n")
	fmt.Fprintf(&b, "commit of the payment (the order's `card_payment_succeeded` entry, written with `order.paid`).\n\n")
	fmt.Fprintf(&b, "| %d at once | checkouts/s | p50 | p99 |\n|---|---:|---:|---:|\n", cardCheckouts)
	fmt.Fprintf(&b, "| COD checkout (baseline) | %.0f | %s | %s |\n", cod.rps(), ms(cod.percentile(0.5)), ms(cod.percentile(0.99)))
	fmt.Fprintf(&b, "| card checkout, answered with the client secret | %.0f | %s | %s |\n\n", card.rps(), ms(card.percentile(0.5)), ms(card.percentile(0.99)))
	fmt.Fprintf(&b, "**Card / COD checkouts per second: %.0f%%.** Webhook → `order.paid` committed, %d orders: p50 %s, **p99 %s**;\n",
		100*card.rps()/cod.rps(), settle.requests, ms(settle.percentile(0.5)), ms(settle.percentile(0.99)))
	fmt.Fprintf(&b, "all %d settled in %s.\n\n", settle.requests, settle.elapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "Temporal actions per order (Temporal Cloud's billing unit, counted from 20 recorded histories of each: workflow\n")
	fmt.Fprintf(&b, "starts, signals, updates, activities scheduled, timers, local-activity markers): COD %s; card %s more for the\n",
		codActions, cardActions)
	fmt.Fprintf(&b, "card-payment workflow, on top of the same order-placed workflow.\n\n")
	var total time.Duration
	for _, p := range parts {
		total += p.cpu
	}
	perOrder := func(d time.Duration) string {
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000/float64(cardCheckouts))
	}
	fmt.Fprintf(&b, "Where the card round's CPU goes (this process only: Postgres and stripe-mock are apart), per card order from checkout\n")
	fmt.Fprintf(&b, "to settlement, **%s in all**:\n\n| part | CPU per order |\n|---|---:|\n", perOrder(total))
	for _, p := range parts {
		if p.cpu*50 < total { // under 2%%
			continue
		}
		fmt.Fprintf(&b, "| %s | %s |\n", p.name, perOrder(p.cpu))
	}
	fmt.Fprintf(&b, "\nEvery card order runs two workflows (card-payment and order-placed) where a COD order runs one, and Temporal's\n")
	fmt.Fprintf(&b, "visibility writes for each start and close; on two shared cores that, not the gateway, sets the card rate.\n\n")
	fmt.Fprintf(&b, "Left out: stripe-mock answers in about a millisecond on loopback; Stripe's own PaymentIntent create takes a few\n")
	fmt.Fprintf(&b, "hundred milliseconds, which every card checkout waits for (it adds to the p50 and p99 above, not to the server's\n")
	fmt.Fprintf(&b, "work). The test cluster runs with fsync off on one machine; with fsync on each checkout and each settlement waits\n")
	fmt.Fprintf(&b, "for one more WAL flush (the orders section gives the production-like order figure).\n")
	return b.String(), nil
}

// cardRound checks n carts out by card at once, then sends every order's
// success at once and waits until all are paid.
func cardRound(ctx context.Context, db *database, httpClient *http.Client, url string, store pricingStore, n int,
	phones *atomic.Int64) (result, result, error) {
	carts, err := prepareCarts(httpClient, url, store, n, 1, nil, phones)
	if err != nil {
		return result{}, result{}, err
	}
	for i := range carts {
		var body map[string]any
		_ = json.Unmarshal(carts[i].body, &body)
		body["payment_method"] = "card"
		carts[i].body, _ = json.Marshal(body)
	}
	orders := make([]cardOrder, n)
	checkouts := result{statuses: map[int]int{}}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
	)
	start := time.Now()
	for i, c := range carts {
		wg.Go(func() {
			began := time.Now()
			o, err := postCardCheckout(httpClient, url, c)
			mu.Lock()
			defer mu.Unlock()
			checkouts.requests++
			checkouts.latencies = append(checkouts.latencies, time.Since(began))
			if err != nil && firstErr == nil {
				firstErr = err
			}
			orders[i] = o
		})
	}
	wg.Wait()
	checkouts.elapsed = time.Since(start)
	if firstErr != nil {
		return result{}, result{}, firstErr
	}
	for i := range orders {
		if err := db.Pool.QueryRow(ctx, `SELECT intent_id FROM card_payments WHERE store_id = $1 AND order_id = $2`, store.id,
			orders[i].id).Scan(&orders[i].intent); err != nil {
			return result{}, result{}, err
		}
	}

	start = time.Now()
	for i := range orders {
		wg.Go(func() {
			o := &orders[i]
			payload := fmt.Appendf(nil, `{"id":"evt_%s","object":"event","type":"payment_intent.succeeded","created":%d,"api_version":"2024-06-20",
				"data":{"object":{"id":%q,"object":"payment_intent","amount":%d,"amount_received":%d,"currency":"egp","status":"succeeded",
				"metadata":{"store_id":%q,"order_id":%q}}}}`, o.id, time.Now().Unix(), o.intent, o.total, o.total, store.id, o.id)
			signed := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: payload, Secret: cardWebhookHook})
			req, _ := http.NewRequest(http.MethodPost, url+"/api/v1/gateway-webhooks/stripe/"+store.id.String(), bytes.NewReader(payload))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Stripe-Signature", signed.Header)
			o.sent = time.Now()
			resp, err := httpClient.Do(req)
			mu.Lock()
			defer mu.Unlock()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("webhook answered %d", resp.StatusCode)
			}
			if resp != nil {
				resp.Body.Close()
			}
			if err != nil && firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return result{}, result{}, firstErr
	}
	ids := make([]uuid.UUID, n)
	for i, o := range orders {
		ids[i] = o.id
	}
	paidAt := map[uuid.UUID]time.Time{}
	for deadline := time.Now().Add(2 * time.Minute); len(paidAt) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return result{}, result{}, fmt.Errorf("%d of %d card orders paid after 2 minutes", len(paidAt), n)
		}
		rows, err := db.Pool.Query(ctx, `SELECT order_id, created_at FROM order_activities WHERE store_id = $1 AND order_id = ANY ($2)
			AND kind = 'card_payment_succeeded'`, store.id, ids)
		if err != nil {
			return result{}, result{}, err
		}
		for rows.Next() {
			var id uuid.UUID
			var at time.Time
			if err := rows.Scan(&id, &at); err != nil {
				rows.Close()
				return result{}, result{}, err
			}
			paidAt[id] = at
		}
		rows.Close()
	}
	settle := result{requests: n}
	var last time.Time
	for _, o := range orders {
		at := paidAt[o.id]
		settle.latencies = append(settle.latencies, at.Sub(o.sent))
		if at.After(last) {
			last = at
		}
	}
	settle.elapsed = last.Sub(start)
	return checkouts, settle, nil
}

// postCardCheckout checks a card cart out and reads its order.
func postCardCheckout(httpClient *http.Client, url string, c cartCheckout) (cardOrder, error) {
	req, _ := http.NewRequest(http.MethodPost, url+"/api/v1/storefront/"+c.subdomain+"/carts/"+c.id+"/checkout", bytes.NewReader(c.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Cart-Token", c.token)
	resp, err := httpClient.Do(req)
	if err != nil {
		return cardOrder{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return cardOrder{}, fmt.Errorf("card checkout: %d %s", resp.StatusCode, raw)
	}
	var out struct {
		Data struct {
			Order struct {
				ID    uuid.UUID `json:"id"`
				Total int64     `json:"total"`
			} `json:"order"`
			Payment struct {
				ClientSecret *string `json:"client_secret"`
			} `json:"payment"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return cardOrder{}, err
	}
	if out.Data.Payment.ClientSecret == nil {
		return cardOrder{}, errors.New("a card checkout answered without its client secret")
	}
	return cardOrder{id: out.Data.Order.ID, total: out.Data.Order.Total}, nil
}

// temporalActions counts the billable actions in up to n completed
// histories of workflows whose id starts with prefix, and answers their
// median per workflow.
func temporalActions(ctx context.Context, c client.Client, prefix string, n int) (string, error) {
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowId STARTS_WITH '" + prefix + "' AND ExecutionStatus = 'Completed'", PageSize: int32(n)})
	if err != nil {
		return "", err
	}
	var counts []int
	for _, e := range resp.Executions {
		iter := c.GetWorkflowHistory(ctx, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		actions := 0
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				return "", err
			}
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
				enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
				enumspb.EVENT_TYPE_TIMER_STARTED, enumspb.EVENT_TYPE_MARKER_RECORDED:
				actions++
			}
		}
		counts = append(counts, actions)
	}
	if len(counts) == 0 {
		return "", fmt.Errorf("no completed %s workflows", strings.TrimSuffix(prefix, ":"))
	}
	slices.Sort(counts)
	return fmt.Sprintf("%d (over %d histories)", counts[len(counts)/2], len(counts)), nil
}

// waitWorkflowsDone waits until no workflow runs (the schedules aside).
func waitWorkflowsDone(ctx context.Context, c client.Client) error {
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		resp, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: "ExecutionStatus = 'Running'"})
		if err != nil {
			return err
		}
		if resp.GetCount() == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d workflows still running after 2 minutes", resp.GetCount())
		}
	}
}
