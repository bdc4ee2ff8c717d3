package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/storage"
)

// runOrderBench measures order creation (5 lines) through the real API
// against the same storage transaction run bare, and the order list and
// counts of a store holding a million orders.
func runOrderBench(ctx context.Context, dbURL string, duration time.Duration, concurrency, tokenCount, seedOrders int) (string, error) {
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	storeID, customerID, variants, secrets, err := seedOrderStore(ctx, db.DB, tokenCount)
	if err != nil {
		return "", err
	}
	url, stop, err := serve(api.NewServer(api.Config{RateLimitPerMinute: 300}, db.DB, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return "", err
	}
	defer stop()

	newLines := make([]storage.NewOrderLine, len(variants))
	for i, v := range variants {
		newLines[i] = storage.NewOrderLine{VariantID: v, Quantity: 1 + i%2}
	}
	addressJSON, _ := json.Marshal(benchAddress)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2}}
	var next atomic.Uint64
	realReq := orderPoster(url, storeID, customerID, variants, secrets, "bench")
	bareOrder := func() error {
		return db.InTx(ctx, func(tx *storage.Tx) error {
			_, err := tx.CreateOrder(ctx, storage.NewOrder{StoreID: storeID, CustomerID: &customerID, Lines: newLines,
				ShippingAddress: addressJSON, PaymentMethod: "cod", ShippingFee: 5000})
			return err
		})
	}
	if _, err := closedLoopStatus(client, realReq, concurrency, 2*time.Second, http.StatusCreated); err != nil {
		return "", err
	}
	// One round: the bare path, then the real one.
	round := func() (bareRound, realRound result, err error) {
		if bareRound, err = bareLoop(bareOrder, concurrency, duration/2); err != nil {
			return bareRound, realRound, err
		}
		realRound, err = closedLoopStatus(client, realReq, concurrency, duration/2, http.StatusCreated)
		return bareRound, realRound, err
	}
	var realRun, bareRun result
	for range 2 {
		b, r, err := round()
		if err != nil {
			return "", err
		}
		bareRun, realRun = bareRun.merge(b), realRun.merge(r)
	}
	// One more round with Postgres durable, as production runs it.
	if err := setDurability(ctx, db, true); err != nil {
		return "", err
	}
	durableBare, durableReal, err := round()
	if err != nil {
		return "", err
	}
	if err := setDurability(ctx, db, false); err != nil {
		return "", err
	}

	hot, err := runHotVariant(ctx, db, client, url, storeID, customerID, secrets, addressJSON, duration/2)
	if err != nil {
		return "", err
	}

	seeded, seedTime, err := seedManyOrders(ctx, db, storeID, customerID, seedOrders)
	if err != nil {
		return "", err
	}
	get := func(path string) func() (*http.Request, error) {
		return func() (*http.Request, error) {
			req, err := http.NewRequest(http.MethodGet, url+"/api/v1/stores/"+storeID.String()+path, nil)
			if err == nil {
				req.Header.Set("Authorization", "Bearer "+secrets[next.Add(1)%uint64(len(secrets))])
			}
			return req, err
		}
	}
	list, err := closedLoop(client, get("/orders?limit=20"), 4, duration/2)
	if err != nil {
		return "", err
	}
	counts, err := closedLoop(client, get("/orders/counts"), 4, duration/2)
	if err != nil {
		return "", err
	}
	filtered, err := closedLoop(client, get("/orders?limit=20&status=DELIVERED&page=3"), 4, duration/2)
	if err != nil {
		return "", err
	}

	ratio := realRun.rps() / bareRun.rps()
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s). One store; five variants per order (every order locks the same five\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel())
	fmt.Fprintf(&b, "stock rows and the store's number counter, so orders serialise on them in both paths); %d concurrent\n", concurrency)
	fmt.Fprintf(&b, "clients; bare and real alternate in two rounds of %s; the real path spreads over %d tokens.\n\n", duration/2, tokenCount)
	fmt.Fprintf(&b, "| order create, 5 lines | orders/s | p50 | p99 |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| bare: `storage.CreateOrder` in a transaction (reservation by location and its movements, number, lines, activity, trust check, outbox) | %.0f | %s | %s |\n",
		bareRun.rps(), ms(bareRun.percentile(0.5)), ms(bareRun.percentile(0.99)))
	fmt.Fprintf(&b, "| real: HTTP + token auth + rate limiter + Idempotency-Key (claim, and stored with the order) + validation + the same transaction | %.0f | %s | %s |\n\n",
		realRun.rps(), ms(realRun.percentile(0.5)), ms(realRun.percentile(0.99)))
	fmt.Fprintf(&b, "**Real / bare: %.0f%%** (goal ≥ 40%%: %s).\n\n", 100*ratio, verdict(ratio >= 0.4))
	fmt.Fprintf(&b, "**Durability.** The runs above have Postgres's `fsync`, `synchronous_commit` and `full_page_writes` off; one more round of\n")
	fmt.Fprintf(&b, "%s each with all three on (production's settings):\n\n| order create | fsync off | fsync on | on / off | p99 off | p99 on |\n|---|---:|---:|---:|---:|---:|\n", duration/2)
	for _, r := range []struct {
		name    string
		off, on result
	}{{"bare", bareRun, durableBare}, {"real", realRun, durableReal}} {
		fmt.Fprintf(&b, "| %s, orders/s | %.0f | %.0f | %.0f%% | %s | %s |\n", r.name, r.off.rps(), r.on.rps(), 100*r.on.rps()/r.off.rps(),
			ms(r.off.percentile(0.99)), ms(r.on.percentile(0.99)))
	}
	fmt.Fprintf(&b, "\nWith fsync on, each order's commit waits for its WAL flush to this machine's disk while it holds the five stock rows,\n")
	fmt.Fprintf(&b, "so the serialised orders pay the flush one after another. Real / bare with fsync on: %.0f%%.\n\n", 100*durableReal.rps()/durableBare.rps())
	oversold := max(hot.placed-hot.stock, 0)
	fmt.Fprintf(&b, "Hot variant: %d clients order one unit each of the same variant through the real path (no Idempotency-Key), for %s each:\n\n",
		hotVariantClients, duration/2)
	fmt.Fprintf(&b, "| hot variant, 1 line | orders/s placed | refused/s | p50 | p99 |\n|---|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| stock to spare | %.0f | 0 | %s | %s |\n", hot.throughput.rps(), ms(hot.throughput.percentile(0.5)), ms(hot.throughput.percentile(0.99)))
	elapsed := hot.sellout.elapsed.Seconds()
	fmt.Fprintf(&b, "| %d in stock, selling out | %.0f | %.0f | %s | %s |\n\n", hot.stock, float64(hot.sellout.statuses[http.StatusCreated])/elapsed,
		float64(hot.sellout.statuses[http.StatusConflict])/elapsed, ms(hot.sellout.percentile(0.5)), ms(hot.sellout.percentile(0.99)))
	fmt.Fprintf(&b, "Sell-out: %d orders placed (%d units) for %d in stock, %d refused with 409 `INSUFFICIENT_STOCK`, %d other answers; the level ends at on_hand %d, reserved %d. **Oversold units: %d** (goal 0: %s).\n\n",
		hot.sellout.statuses[http.StatusCreated], hot.placed, hot.stock, hot.sellout.statuses[http.StatusConflict],
		hot.sellout.requests-hot.sellout.statuses[http.StatusCreated]-hot.sellout.statuses[http.StatusConflict], hot.onHand, hot.reserved,
		oversold, verdict(oversold == 0 && hot.reserved == hot.placed))
	fmt.Fprintf(&b, "Then %d more orders were written straight into the store (%s), %d orders in all:\n\n", seeded, seedTime.Round(time.Second), seeded+realRun.requests+bareRun.requests)
	fmt.Fprintf(&b, "| read, 4 concurrent clients | requests/s | p50 | p95 | p99 |\n|---|---:|---:|---:|---:|\n")
	for _, row := range []struct {
		name string
		r    result
	}{{"`GET /orders?limit=20` (newest first, with total)", list}, {"`GET /orders/counts`", counts},
		{"`GET /orders?limit=20&status=DELIVERED&page=3`", filtered}} {
		fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %s |\n", row.name, row.r.rps(), ms(row.r.percentile(0.5)), ms(row.r.percentile(0.95)), ms(row.r.percentile(0.99)))
	}
	worst := max(list.percentile(0.95), counts.percentile(0.95))
	fmt.Fprintf(&b, "\n**List and counts p95: %s** (goal < 50 ms: %s). Indexes: `orders_store_created_idx (store_id, created_at DESC, id DESC)\n", ms(worst), verdict(worst < 50*time.Millisecond))
	fmt.Fprintf(&b, "WHERE status <> 'DRAFT'` serves the newest-first page; `orders_store_status_created_idx (store_id, status, created_at DESC)`\n")
	fmt.Fprintf(&b, "the status filter; totals and counts come from `order_status_counts`, kept in the transaction of every status change.\n")
	return b.String(), nil
}

// benchAddress is the shipping address of the benchmarks' orders.
var benchAddress = map[string]any{"name": "Mona Adel", "phone": "+201001234567", "line1": "12 Tahrir St", "city": "Cairo", "country": "EG"}

// orderPoster makes POST /orders requests for one line of each variant (1
// or 2 pieces), COD, spread over the tokens, each with its own
// Idempotency-Key under keyPrefix.
func orderPoster(url string, storeID, customerID uuid.UUID, variants []uuid.UUID, secrets []string, keyPrefix string) func() (*http.Request, error) {
	lines := make([]map[string]any, len(variants))
	for i, v := range variants {
		lines[i] = map[string]any{"variant_id": v.String(), "quantity": 1 + i%2}
	}
	body, _ := json.Marshal(map[string]any{"customer_id": customerID.String(), "lines": lines, "shipping_address": benchAddress,
		"payment_method": "cod", "shipping_fee": 5000})
	var next atomic.Uint64
	return func() (*http.Request, error) {
		n := next.Add(1)
		req, err := http.NewRequest(http.MethodPost, url+"/api/v1/stores/"+storeID.String()+"/orders", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+secrets[n%uint64(len(secrets))])
			req.Header.Set("Idempotency-Key", fmt.Sprintf("%s-%d", keyPrefix, n))
		}
		return req, err
	}
}

// closedLoopStatus keeps concurrency requests in flight for d; answers
// other than want are errors, and more than 1% of them fail the run.
func closedLoopStatus(client *http.Client, mk func() (*http.Request, error), concurrency int, d time.Duration, want int) (result, error) {
	r := closedLoopAny(client, mk, concurrency, d)
	if bad := r.requests - r.statuses[want]; bad > r.requests/100 {
		return r, fmt.Errorf("%d of %d requests failed: %v", bad, r.requests, r.statuses)
	}
	r.errors = r.requests - r.statuses[want]
	return r, nil
}

// closedLoopAny runs concurrency clients for d and records every answer.
func closedLoopAny(client *http.Client, mk func() (*http.Request, error), concurrency int, d time.Duration) result {
	rec := &recorder{result: result{statuses: map[int]int{}}}
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				once(client, mk, rec)
			}
		}()
	}
	wg.Wait()
	rec.elapsed = time.Since(start)
	return rec.result
}

// hotVariantClients order one variant at once in the hot-variant run.
const hotVariantClients = 32

// hotVariant is the hot-variant run: every client orders one unit of the
// same variant, first with stock to spare (throughput), then with little
// stock until it sells out (no oversell).
type hotVariant struct {
	throughput       result
	sellout          result
	stock, placed    int
	onHand, reserved int
}

func runHotVariant(ctx context.Context, db *database, client *http.Client, url string, storeID, customerID uuid.UUID, secrets []string,
	address json.RawMessage, d time.Duration) (hotVariant, error) {
	var out hotVariant
	order := func(variant uuid.UUID) func() (*http.Request, error) {
		body, _ := json.Marshal(map[string]any{"customer_id": customerID.String(), "shipping_address": address, "payment_method": "cod",
			"lines": []any{map[string]any{"variant_id": variant.String(), "quantity": 1}}})
		var n atomic.Uint64
		return func() (*http.Request, error) {
			i := n.Add(1)
			req, err := http.NewRequest(http.MethodPost, url+"/api/v1/stores/"+storeID.String()+"/orders", bytes.NewReader(body))
			if err == nil {
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+secrets[i%uint64(len(secrets))])
			}
			return req, err
		}
	}
	newVariant := func(stock int) (uuid.UUID, error) {
		p := storage.Product{StoreID: storeID, Name: "Hot item", Price: 9900, Quantity: stock}
		if err := db.InTx(ctx, func(tx *storage.Tx) error { return tx.CreateProduct(ctx, &p) }); err != nil {
			return uuid.Nil, err
		}
		variants, err := db.FindVariants(ctx, storeID, p.ID)
		if err != nil {
			return uuid.Nil, err
		}
		return variants[0].ID, nil // its default variant
	}
	plenty, err := newVariant(1_000_000_000)
	if err != nil {
		return out, err
	}
	if out.throughput, err = closedLoopStatus(client, order(plenty), hotVariantClients, d, http.StatusCreated); err != nil {
		return out, err
	}
	out.stock = 500
	scarce, err := newVariant(out.stock)
	if err != nil {
		return out, err
	}
	out.sellout = closedLoopAny(client, order(scarce), hotVariantClients, d)
	err = db.Pool.QueryRow(ctx, `SELECT COALESCE((SELECT sum(quantity) FROM order_lines WHERE store_id = $1 AND variant_id = $2), 0),
			(SELECT on_hand FROM inventory_levels WHERE store_id = $1 AND variant_id = $2),
			(SELECT reserved FROM inventory_levels WHERE store_id = $1 AND variant_id = $2)`, storeID, scarce).
		Scan(&out.placed, &out.onHand, &out.reserved)
	return out, err
}

// bareLoop runs fn from concurrency goroutines for d.
func bareLoop(fn func() error, concurrency int, d time.Duration) (result, error) {
	rec := &recorder{result: result{statuses: map[int]int{}}}
	deadline := time.Now().Add(d)
	start := time.Now()
	var (
		wg       sync.WaitGroup
		firstErr atomic.Value
	)
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t := time.Now()
				err := fn()
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
				rec.add(time.Since(t), http.StatusOK, err)
			}
		}()
	}
	wg.Wait()
	rec.elapsed = time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		return rec.result, err
	}
	return rec.result, nil
}

func seedOrderStore(ctx context.Context, db *storage.DB, tokenCount int) (uuid.UUID, uuid.UUID, []uuid.UUID, []string, error) {
	user := storage.User{Email: "orders@example.com", PasswordHash: "x", Name: "Bench"}
	store := storage.Store{Name: "Orders", Subdomain: "orders-bench", Currency: "EGP", DefaultLanguage: "ar"}
	var (
		variants []uuid.UUID
		secrets  = make([]string, tokenCount)
		customer = storage.Customer{Name: "Mona Adel"}
	)
	err := db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		p := storage.Product{StoreID: store.ID, Name: "Abaya", Price: 45000}
		if err := tx.CreateProduct(ctx, &p); err != nil {
			return err
		}
		for i := range 5 {
			v := storage.Variant{StoreID: store.ID, ProductID: p.ID, Price: int64(10000 * (i + 1)), Quantity: 1_000_000_000}
			if err := tx.CreateVariant(ctx, &v, true, true); err != nil {
				return err
			}
			variants = append(variants, v.ID)
		}
		phone := "+201001234567"
		customer.StoreID, customer.Phone = store.ID, &phone
		if err := tx.CreateCustomer(ctx, &customer); err != nil {
			return err
		}
		for i := range secrets {
			secrets[i] = fmt.Sprintf("svc_pat_orders%040d", i)
			t := storage.Token{Kind: "pat", StoreID: store.ID, UserID: &user.ID, Name: "bench", Hint: "xxxx", Scopes: []string{"orders:write"}}
			if err := tx.CreateToken(ctx, &t, secrets[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return store.ID, customer.ID, variants, secrets, err
}

// seedManyOrders writes n orders straight into the store with SQL (spread
// over a year and every status but DRAFT) and rebuilds the counters.
func seedManyOrders(ctx context.Context, db *database, storeID, customerID uuid.UUID, n int) (int, time.Duration, error) {
	start := time.Now()
	_, err := db.Pool.Exec(ctx, `INSERT INTO orders (id, store_id, order_number, status, payment_method, currency, customer_id, customer,
			shipping_address, subtotal, total, collectible_total, search_text, customer_phone, created_at, updated_at, placed_started_at)
		SELECT gen_random_uuid(), $1, 'ORD-' || (10000000 + i), (ARRAY['PENDING','CONFIRMED','PROCESSING','READY_TO_SHIP','SHIPPED','DELIVERED','RETURNED','CANCELLED'])[1 + i % 8],
			'cod', 'EGP', $2, '{"name":"Mona Adel"}', '{}', 50000, 55000, 55000, 'ord-' || (10000000 + i) || ' mona adel', '+201001234567',
			now() - (i || ' seconds')::interval * 30, now(), now()
		FROM generate_series(1, $3) AS i`, storeID, customerID, n)
	if err != nil {
		return 0, 0, fmt.Errorf("seed orders: %w", err)
	}
	_, err = db.Pool.Exec(ctx, `INSERT INTO order_status_counts (store_id, status, n)
		SELECT store_id, status, count(*) FROM orders WHERE store_id = $1 AND status <> 'DRAFT' GROUP BY store_id, status
		ON CONFLICT (store_id, status) DO UPDATE SET n = excluded.n`, storeID)
	if err != nil {
		return 0, 0, fmt.Errorf("rebuild counters: %w", err)
	}
	if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE orders`); err != nil {
		return 0, 0, err
	}
	return n, time.Since(start), nil
}
