package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/storage"
)

// growthStore is one store of the growth suite: its history, and the
// customer, variants and tokens the measured orders use.
type growthStore struct {
	name       string
	history    int  // orders written into it before the measure
	ownHistory bool // the history is the measured customer's own
	storeID    uuid.UUID
	customerID uuid.UUID
	phone      string
	variants   []uuid.UUID
	secrets    []string
	run        result
	durable    result // one round with fsync on
	stats      map[int64]*statementGrowth
}

// statementGrowth is one normalised statement's work in one store's
// measured rounds (pg_stat_statements, nested statements included).
type statementGrowth struct {
	query  string
	calls  int64
	ms     float64
	blocks int64 // shared buffers hit or read
}

// runGrowthBench measures order creation through the real HTTP path in
// stores that differ only in their history: none, 10 000, 100 000 and
// 1 000 000 orders of other customers, and 10 000 orders of the measured
// customer itself. The stores share the database and the run: their
// rounds interleave, each round starting with the next store, so the
// machine's drift falls on none of them. pg_stat_statements counts each
// store's statements apart; the report names those whose buffers per call
// grow with the history, and EXPLAINs the order path's history reads.
func runGrowthBench(ctx context.Context, dbURL string, duration time.Duration) (string, error) {
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	loadBefore := loadAverage()
	stores := []*growthStore{
		{name: "empty store"},
		{name: "10 000 orders", history: 10_000},
		{name: "100 000 orders", history: 100_000},
		{name: "1 000 000 orders", history: 1_000_000},
		{name: "10 000 orders of the customer", history: 10_000, ownHistory: true},
	}
	seedStart := time.Now()
	for i, s := range stores {
		if err := seedGrowthStore(ctx, db, i, s); err != nil {
			return "", fmt.Errorf("seed %s: %w", s.name, err)
		}
	}
	for _, table := range []string{"customers", "orders", "order_lines", "order_rollups", "order_status_counts", "order_counters"} {
		if _, err := db.Pool.Exec(ctx, "VACUUM ANALYZE "+table); err != nil {
			return "", err
		}
	}
	seedTime := time.Since(seedStart)
	fmt.Printf("growth: seeded %d stores in %s\n", len(stores), seedTime.Round(time.Second))

	url, stop, err := serve(api.NewServer(api.Config{RateLimitPerMinute: 300}, db.DB, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return "", err
	}
	defer stop()
	const concurrency = 16
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2}}
	posters := make([]func() (*http.Request, error), len(stores))
	for i, s := range stores {
		posters[i] = orderPoster(url, s.storeID, s.customerID, s.variants, s.secrets, "growth")
		if _, err := closedLoopStatus(client, posters[i], concurrency, time.Second, http.StatusCreated); err != nil {
			return "", fmt.Errorf("warm %s: %w", s.name, err)
		}
	}
	if err := countAllStatements(ctx, db); err != nil {
		return "", err
	}
	defer func() { _ = countStatements(ctx, db, false) }()
	const rounds = 4
	var loads []string
	for round := range rounds {
		loads = append(loads, loadAverage())
		for k := range stores {
			i := (round + k) % len(stores)
			if _, err := db.Pool.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
				return "", err
			}
			r, err := closedLoopStatus(client, posters[i], concurrency, duration/rounds, http.StatusCreated)
			if err != nil {
				return "", fmt.Errorf("%s: %w", stores[i].name, err)
			}
			stores[i].run = stores[i].run.merge(r)
			if err := addStatementGrowth(ctx, db, stores[i]); err != nil {
				return "", err
			}
		}
	}
	loads = append(loads, loadAverage())
	// One more round with Postgres durable, as production runs it.
	if err := setDurability(ctx, db, true); err != nil {
		return "", err
	}
	for _, s := range stores {
		r, err := closedLoopStatus(client, posters[slices.Index(stores, s)], concurrency, duration/rounds, http.StatusCreated)
		if err != nil {
			_ = setDurability(ctx, db, false)
			return "", fmt.Errorf("%s, fsync on: %w", s.name, err)
		}
		s.durable = r
	}
	if err := setDurability(ctx, db, false); err != nil {
		return "", err
	}
	loads = append(loads, loadAverage())
	var drift int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM (
			(SELECT * FROM cod_phone_outcomes WHERE completed > 0 EXCEPT SELECT * FROM recount_cod_phone_outcomes(NULL))
			UNION ALL
			(SELECT * FROM recount_cod_phone_outcomes(NULL) EXCEPT SELECT * FROM cod_phone_outcomes)) d`).Scan(&drift); err != nil {
		return "", err
	}
	if drift != 0 {
		return "", fmt.Errorf("%d COD outcome counts differ from a recount", drift)
	}
	explains, err := explainGrowth(ctx, db, stores)
	if err != nil {
		return "", err
	}
	report := formatGrowth(stores, seedTime, duration, concurrency, loadBefore, loads, explains)
	catalog, err := runGrowthCatalog(ctx, duration)
	if err != nil {
		return "", err
	}
	return report + catalog, nil
}

// seedGrowthStore makes store i with its tokens, five variants and the
// measured customer, then writes its history straight into the tables
// (set-based SQL, the rollup triggers off and the rollups rebuilt after,
// as the analytics migration's backfill does).
func seedGrowthStore(ctx context.Context, db *database, i int, s *growthStore) error {
	user := storage.User{Email: fmt.Sprintf("growth-%d@example.com", i), PasswordHash: "x", Name: "Bench"}
	store := storage.Store{Name: "Growth " + s.name, Subdomain: fmt.Sprintf("growth-%d", i), Currency: "EGP", DefaultLanguage: "ar"}
	s.phone = fmt.Sprintf("+2010%08d", 90000000+i)
	customer := storage.Customer{Name: "Mona Adel", Phone: &s.phone}
	s.secrets = make([]string, 200) // 300 requests a minute each
	var productID uuid.UUID
	err := db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		p := storage.Product{StoreID: store.ID, Name: "Abaya", Price: 45000}
		if err := tx.CreateProduct(ctx, &p); err != nil {
			return err
		}
		productID = p.ID
		for k := range 5 {
			v := storage.Variant{StoreID: store.ID, ProductID: p.ID, Price: int64(10000 * (k + 1)), Quantity: 1_000_000_000}
			if err := tx.CreateVariant(ctx, &v, true, true); err != nil {
				return err
			}
			s.variants = append(s.variants, v.ID)
		}
		customer.StoreID = store.ID
		if err := tx.CreateCustomer(ctx, &customer); err != nil {
			return err
		}
		for k := range s.secrets {
			s.secrets[k] = fmt.Sprintf("svc_pat_growth%d%039d", i, k)
			t := storage.Token{Kind: "pat", StoreID: store.ID, UserID: &user.ID, Name: "bench", Hint: "xxxx", Scopes: []string{"orders:write"}}
			if err := tx.CreateToken(ctx, &t, s.secrets[k]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.storeID, s.customerID = store.ID, customer.ID
	if s.history == 0 {
		return nil
	}
	if err := setSeedTriggers(ctx, db, false); err != nil {
		return err
	}
	// Other customers: one for every ten orders, each with a phone. The
	// history spans two years, every status; three in four are COD, and
	// of those that reached the door one in twelve came back.
	customers := max(s.history/10, 1)
	statements := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO customers (id, store_id, name, phone, created_at, updated_at)
			SELECT md5($1::uuid::text || c)::uuid, $1::uuid, 'Customer ' || c, '+2011' || lpad(($3::int * 10000000 + c)::text, 8, '0'), now(), now()
			FROM generate_series(1, $2) AS c`, []any{store.ID, customers, i}},
		{`INSERT INTO orders (id, store_id, order_number, status, payment_method, currency, customer_id, customer, shipping_address,
				subtotal, shipping_fee, discount, total, collectible_total, collected_total, search_text, customer_phone,
				created_at, updated_at, placed_started_at, placed_at, carrier_confirmed_at)
			SELECT gen_random_uuid(), $1::uuid, 'ORD-' || (1000 + k), status, method, 'EGP', customer_id, jsonb_build_object('name', 'Customer'), '{}',
				90000, 5000, 1000, 94000, 94000, CASE WHEN status = 'DELIVERED' AND method = 'cod' THEN 94000 ELSE 0 END,
				'ord-' || (1000 + k) || ' customer ' || phone, phone, placed, placed, placed, placed,
				CASE WHEN status IN ('DELIVERED', 'RETURNED') AND k % 2 = 0 THEN placed + interval '3 days' END
			FROM (SELECT k, now() - make_interval(secs => k * (730 * 86400.0 / $2)) AS placed,
			             CASE WHEN k % 12 = 0 THEN 'RETURNED'
			                  ELSE (ARRAY['DELIVERED','DELIVERED','DELIVERED','DELIVERED','DELIVERED','DELIVERED','CANCELLED','SHIPPED','CONFIRMED','PENDING'])[1 + k % 10] END AS status,
			             CASE WHEN k % 4 = 0 THEN 'bank_transfer' ELSE 'cod' END AS method,
			             CASE WHEN $4 THEN $5 ELSE md5($1::uuid::text || (1 + k % $3))::uuid END AS customer_id,
			             CASE WHEN $4 THEN $6 ELSE '+2011' || lpad(($7::int * 10000000 + 1 + k % $3)::text, 8, '0') END AS phone
			      FROM generate_series(1, $2) AS k) x`,
			[]any{store.ID, s.history, customers, s.ownHistory, customer.ID, s.phone, i}},
		{`INSERT INTO order_lines (id, store_id, order_id, variant_id, product_id, name, quantity, unit_price, total, discount, returned_quantity,
				position, sold_at, first_of_product)
			SELECT gen_random_uuid(), o.store_id, o.id, CASE WHEN p = 1 THEN $2::uuid ELSE $3::uuid END, $4, 'Abaya', 1, 45000, 45000, 500,
				CASE WHEN o.status = 'RETURNED' THEN 1 ELSE 0 END, p, CASE WHEN o.status <> 'CANCELLED' THEN o.placed_at END, p = 1
			FROM orders o CROSS JOIN generate_series(1, 2) AS p
			WHERE o.store_id = $1`, []any{store.ID, s.variants[0], s.variants[1], productID}},
		{`INSERT INTO order_status_counts (store_id, status, n)
			SELECT store_id, status, count(*) FROM orders WHERE store_id = $1 AND status <> 'DRAFT' GROUP BY store_id, status
			ON CONFLICT (store_id, status) DO UPDATE SET n = excluded.n`, []any{store.ID}},
		{`INSERT INTO order_counters (store_id, last_number) VALUES ($1, 1000 + $2)
			ON CONFLICT (store_id) DO UPDATE SET last_number = excluded.last_number`, []any{store.ID, s.history}},
	}
	for _, stmt := range statements {
		if _, err := db.Pool.Exec(ctx, stmt.sql, stmt.args...); err != nil {
			return err
		}
	}
	if err := setSeedTriggers(ctx, db, true); err != nil {
		return err
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO cod_phone_outcomes SELECT * FROM recount_cod_phone_outcomes($1)`, store.ID); err != nil {
		return err
	}
	if _, err := db.Pool.Exec(ctx, `DELETE FROM order_rollups WHERE store_id = $1`, store.ID); err != nil {
		return err
	}
	_, err = db.Pool.Exec(ctx, `INSERT INTO order_rollups SELECT * FROM recompute_order_rollups($1, '-infinity', 'infinity')`, store.ID)
	return err
}

// setSeedTriggers turns off (or back on) the triggers that keep counts of
// the orders, the rollups' and the COD outcomes': the seed rebuilds both
// with their migrations' own recounts, in one statement each.
func setSeedTriggers(ctx context.Context, db *database, enabled bool) error {
	if err := setRollupTriggers(ctx, db, enabled); err != nil {
		return err
	}
	verb := "DISABLE"
	if enabled {
		verb = "ENABLE"
	}
	_, err := db.Pool.Exec(ctx, "ALTER TABLE orders "+verb+" TRIGGER orders_count_cod_outcome_insert")
	return err
}

// countAllStatements turns pg_stat_statements on for every statement,
// nested ones too (the rollup triggers' and the functions').
func countAllStatements(ctx context.Context, db *database) error {
	if err := countStatements(ctx, db, true); err != nil {
		return err
	}
	if _, err := db.Pool.Exec(ctx, "ALTER SYSTEM SET pg_stat_statements.track = 'all'"); err != nil {
		return err
	}
	if _, err := db.Pool.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	_, err := db.Pool.Exec(ctx, `SELECT pg_stat_statements_reset()`)
	return err
}

// addStatementGrowth adds what pg_stat_statements counted since its reset
// to the store's figures.
func addStatementGrowth(ctx context.Context, db *database, s *growthStore) error {
	if s.stats == nil {
		s.stats = map[int64]*statementGrowth{}
	}
	rows, err := db.Pool.Query(ctx, `SELECT queryid, query, calls, total_exec_time, shared_blks_hit + shared_blks_read
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND queryid IS NOT NULL`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id  int64
			row statementGrowth
		)
		if err := rows.Scan(&id, &row.query, &row.calls, &row.ms, &row.blocks); err != nil {
			return err
		}
		g := s.stats[id]
		if g == nil {
			g = &statementGrowth{query: row.query}
			s.stats[id] = g
		}
		g.calls += row.calls
		g.ms += row.ms
		g.blocks += row.blocks
	}
	return rows.Err()
}

// growingStatement is a statement whose buffers per order grow between
// the empty store and another.
type growingStatement struct {
	query     string
	perOrder  []float64 // buffers per order, by store
	msPerCall []float64
}

// growingStatements are the statements run per order whose buffers per
// order in some store exceed the empty store's by more than 8 (an index
// level or two is not growth; a scan of the history is).
func growingStatements(stores []*growthStore) []growingStatement {
	base := stores[0]
	var out []growingStatement
	ids := map[int64]bool{}
	for _, s := range stores {
		for id := range s.stats {
			ids[id] = true
		}
	}
	for id := range ids {
		g := growingStatement{perOrder: make([]float64, len(stores)), msPerCall: make([]float64, len(stores))}
		grows := false
		for i, s := range stores {
			st := s.stats[id]
			if st == nil || s.run.requests == 0 {
				continue
			}
			g.query = st.query
			g.perOrder[i] = float64(st.blocks) / float64(s.run.requests)
			if st.calls > 0 {
				g.msPerCall[i] = st.ms / float64(st.calls)
			}
			if i > 0 && g.perOrder[i] > g.perOrder[0]+8 {
				grows = true
			}
		}
		if grows && base.stats[id] != nil {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b growingStatement) int {
		return int(slices.Max(b.perOrder) - slices.Max(a.perOrder))
	})
	return out
}

// growthExplain is one statement's plan in one store.
type growthExplain struct {
	statement, store, plan string
}

// explainGrowth runs EXPLAIN (ANALYZE, BUFFERS) of the order path's reads
// of a customer's history in the empty store, the million-order store and
// the store whose customer has 10 000 orders, inside a transaction rolled
// back.
func explainGrowth(ctx context.Context, db *database, stores []*growthStore) ([]growthExplain, error) {
	var out []growthExplain
	for _, s := range []*growthStore{stores[0], stores[3], stores[4]} {
		for _, st := range storage.OrderHistoryStatements(s.storeID, s.customerID, s.phone) {
			tx, err := db.Pool.Begin(ctx)
			if err != nil {
				return nil, err
			}
			rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) "+st.SQL, st.Args...)
			if err != nil {
				_ = tx.Rollback(ctx)
				return nil, fmt.Errorf("explain %s: %w", st.Name, err)
			}
			var lines []string
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					rows.Close()
					_ = tx.Rollback(ctx)
					return nil, err
				}
				lines = append(lines, line)
			}
			rows.Close()
			_ = tx.Rollback(ctx)
			out = append(out, growthExplain{statement: st.Name, store: s.name, plan: strings.Join(lines, "\n")})
		}
	}
	return out, nil
}

func formatGrowth(stores []*growthStore, seedTime, duration time.Duration, concurrency int, loadBefore string, loads []string, explains []growthExplain) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s), shared with other work (load average %s before seeding; at each round's start, after the rounds and after the fsync-on round: %s).\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), loadBefore, strings.Join(loads, ", "))
	fmt.Fprintf(&b, "The test cluster (fsync, synchronous_commit and full_page_writes off), one machine for clients, server and Postgres.\n\n")
	fmt.Fprintf(&b, "Five stores in one database, alike but for their history, written with set-based SQL in %s: none; 10 000, 100 000 and\n", seedTime.Round(time.Second))
	fmt.Fprintf(&b, "1 000 000 orders of other customers (one customer per ten orders, two lines each, over two years, every status, three in four\n")
	fmt.Fprintf(&b, "COD, half the outcomes carrier-confirmed), their rollups, status counts and number counter rebuilt; and 10 000 orders of the measured\n")
	fmt.Fprintf(&b, "customer itself (same phone). The measure: the real order path (HTTP, token, limiter, Idempotency-Key, five lines, COD, the\n")
	fmt.Fprintf(&b, "customer by id), %d clients, four rounds of %s per store, each round starting with the next store.\n\n", concurrency, duration/4)
	fmt.Fprintf(&b, "The last column is one more round of %s per store with fsync, synchronous_commit and full_page_writes on (production's settings).\n\n", duration/4)
	fmt.Fprintf(&b, "| store | orders/s | p50 | p99 | ratio to the empty store | fsync on: orders/s | ratio |\n|---|---:|---:|---:|---:|---:|---:|\n")
	base, durableBase := stores[0].run.rps(), stores[0].durable.rps()
	for _, s := range stores {
		fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %.2f | %.0f | %.2f |\n", s.name, s.run.rps(), ms(s.run.percentile(0.5)), ms(s.run.percentile(0.99)),
			s.run.rps()/base, s.durable.rps(), s.durable.rps()/durableBase)
	}
	store1m, customer10k := stores[3].run.rps()/base, stores[4].run.rps()/base
	fmt.Fprintf(&b, "\n**1 000 000 orders: %.2f of the empty store** (goal ≥ 0.90: %s). **10 000 orders of the customer: %.2f** (goal ≥ 0.90: %s).\n",
		store1m, verdict(store1m >= 0.9), customer10k, verdict(customer10k >= 0.9))
	fmt.Fprintf(&b, "The empty store held %d orders by the end (the measured ones, besides a second of warm-up). The kept COD outcome counts matched a recount from the orders.\n\n",
		stores[0].run.requests+stores[0].durable.requests)
	growing := growingStatements(stores)
	if len(growing) == 0 {
		fmt.Fprintf(&b, "No statement of the order path touched more than 8 shared buffers per order more in any store than in the empty one\n")
		fmt.Fprintf(&b, "(`pg_stat_statements`, every statement nested ones included, counted per store).\n")
	} else {
		fmt.Fprintf(&b, "Statements whose shared buffers per order grow with the history (`pg_stat_statements`, nested ones included, counted per store):\n\n")
		fmt.Fprintf(&b, "| statement | buffers per order: %s | ms per call, same order |\n|---|---|---|\n", storeNames(stores))
		for _, g := range growing {
			q := strings.Join(strings.Fields(g.query), " ")
			if len(q) > 160 {
				q = q[:160] + "…"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", strings.ReplaceAll(q, "|", "\\|"), joinFloats(g.perOrder, "%.0f"), joinFloats(g.msPerCall, "%.3f"))
		}
	}
	fmt.Fprintf(&b, "\nThe order path's reads of a customer's history, `EXPLAIN (ANALYZE, BUFFERS)` in three of the stores:\n")
	for _, e := range explains {
		fmt.Fprintf(&b, "\n%s, %s:\n\n```\n%s\n```\n", e.statement, e.store, e.plan)
	}
	return b.String()
}

func storeNames(stores []*growthStore) string {
	names := make([]string, len(stores))
	for i, s := range stores {
		names[i] = s.name
	}
	return strings.Join(names, " / ")
}

func joinFloats(xs []float64, format string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(parts, " / ")
}

// catalogGrowthRun is one read of the storefront in one database.
type catalogGrowthRun struct {
	name   string
	db     *database
	mk     func() (*http.Request, error)
	r      result
	blocks int64 // shared buffers its statements touched
}

// runGrowthCatalog measures the storefront's product page and catalog
// list of a store of 10 000 products in two databases alike but for the
// other stores: none, and 99 more of 10 000 products each (1 000 000
// products in the tables). Their rounds interleave in one run.
func runGrowthCatalog(ctx context.Context, duration time.Duration) (string, error) {
	admin, template := os.Getenv("SVC_TEST_DATABASE_URL"), os.Getenv("SVC_TEST_TEMPLATE_DATABASE")
	type side struct {
		name    string
		others  int // other stores of 10 000 products
		db      *database
		storeID uuid.UUID
		url     string
		ids     []uuid.UUID
	}
	sides := []*side{{name: "10 000 products"}, {name: "1 000 000 products", others: 99}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	seedStart := time.Now()
	for i, sd := range sides {
		dbURL, err := createDatabase(ctx, admin, template, fmt.Sprintf("bench_growth_catalog_%d", i))
		if err != nil {
			return "", err
		}
		if sd.db, err = openDatabase(ctx, dbURL); err != nil {
			return "", err
		}
		defer sd.db.Close()
		seeded, err := seed(ctx, sd.db, 10_000, 1)
		if err != nil {
			return "", err
		}
		sd.storeID = seeded.storeID
		if err := seedOtherCatalogs(ctx, sd.db, sd.others); err != nil {
			return "", err
		}
		rows, err := sd.db.Pool.Query(ctx, `SELECT id FROM products WHERE store_id = $1 ORDER BY id LIMIT 2000`, sd.storeID)
		if err != nil {
			return "", err
		}
		for rows.Next() {
			var id uuid.UUID
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return "", err
			}
			sd.ids = append(sd.ids, id)
		}
		rows.Close()
		url, stop, err := serve(api.NewServer(api.Config{RateLimitPerMinute: 300, StorefrontRateLimitPerMinute: 1 << 30}, sd.db.DB, nil, nil, quiet))
		if err != nil {
			return "", err
		}
		defer stop()
		sd.url = url
	}
	seedTime := time.Since(seedStart)
	var runs []*catalogGrowthRun
	for _, sd := range sides {
		base := sd.url + "/api/v1/storefront/bench"
		var n atomic.Uint64
		ids := sd.ids
		runs = append(runs, &catalogGrowthRun{name: "product page, " + sd.name, db: sd.db, mk: func() (*http.Request, error) {
			return http.NewRequest(http.MethodGet, base+"/products/"+ids[n.Add(1)%uint64(len(ids))].String(), nil)
		}})
	}
	for _, sd := range sides {
		base := sd.url + "/api/v1/storefront/bench"
		var n atomic.Uint64
		runs = append(runs, &catalogGrowthRun{name: "catalog list, " + sd.name, db: sd.db, mk: func() (*http.Request, error) {
			return http.NewRequest(http.MethodGet, fmt.Sprintf("%s/products?limit=20&page=%d", base, 1+n.Add(1)%50), nil)
		}})
	}
	const concurrency = 16
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2}}
	for _, run := range runs {
		if _, err := closedLoop(client, run.mk, concurrency, time.Second); err != nil {
			return "", fmt.Errorf("warm %s: %w", run.name, err)
		}
	}
	for _, sd := range sides {
		if err := countAllStatements(ctx, sd.db); err != nil {
			return "", err
		}
	}
	defer func() { _ = countStatements(ctx, sides[0].db, false) }()
	loads := []string{loadAverage()}
	const rounds = 4
	for round := range rounds {
		for k := range runs {
			run := runs[(round+k)%len(runs)]
			if _, err := run.db.Pool.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
				return "", err
			}
			r, err := closedLoop(client, run.mk, concurrency, duration/rounds)
			if err != nil {
				return "", fmt.Errorf("%s: %w", run.name, err)
			}
			run.r = run.r.merge(r)
			var blocks int64
			if err := run.db.Pool.QueryRow(ctx, `SELECT coalesce(sum(shared_blks_hit + shared_blks_read), 0)::bigint FROM pg_stat_statements
				WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'`).Scan(&blocks); err != nil {
				return "", err
			}
			run.blocks += blocks
		}
		loads = append(loads, loadAverage())
	}
	var explains []growthExplain
	for _, sd := range sides {
		active := "active"
		page, count := storage.ProductListQuery(sd.storeID, storage.ProductFilter{Status: &active, Page: storage.Page{Page: 3, Limit: 20}})
		for _, q := range []struct {
			name string
			b    interface {
				ToSql() (string, []any, error)
			}
		}{{"The catalog list's page 3", page}, {"The catalog list's total as counted before migration 0071 (the storefront's list no longer runs it)", count},
			{"The catalog list's kept total", rawStatement(storage.ProductTotalStatement(sd.storeID, &active))}} {
			sql, args, err := q.b.ToSql()
			if err != nil {
				return "", err
			}
			var lines []string
			rows, err := sd.db.Pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) "+sql, args...)
			if err != nil {
				return "", err
			}
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					rows.Close()
					return "", err
				}
				lines = append(lines, line)
			}
			rows.Close()
			explains = append(explains, growthExplain{statement: q.name, store: sd.name + " in the tables", plan: strings.Join(lines, "\n")})
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n**The storefront as the tables grow.** A store of 10 000 active products (a default variant each) in two databases,\n")
	fmt.Fprintf(&b, "alike but for the other stores: none, and 99 more stores of 10 000 products (1 000 000 products and as many variants in\n")
	fmt.Fprintf(&b, "the tables), seeded in %s. `GET /api/v1/storefront/bench/products/{id}` over 2 000 of the store's products, and\n", seedTime.Round(time.Second))
	fmt.Fprintf(&b, "`GET /api/v1/storefront/bench/products?limit=20&page=1…50`; %d clients, four rounds of %s per run, each round starting\n", concurrency, duration/rounds)
	fmt.Fprintf(&b, "with the next run (load average at the start and after each round: %s).\n\n", strings.Join(loads, ", "))
	fmt.Fprintf(&b, "| read | requests/s | p50 | p99 | ratio to 10 000 | shared buffers per request |\n|---|---:|---:|---:|---:|---:|\n")
	for i, run := range runs {
		base := runs[i-i%2].r.rps()
		fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %.2f | %.1f |\n", run.name, run.r.rps(), ms(run.r.percentile(0.5)), ms(run.r.percentile(0.99)),
			run.r.rps()/base, float64(run.blocks)/float64(run.r.requests))
	}
	pageRatio, listRatio := runs[1].r.rps()/runs[0].r.rps(), runs[3].r.rps()/runs[2].r.rps()
	fmt.Fprintf(&b, "\n**Product page at 1 000 000 products: %.2f of 10 000** (goal ≥ 0.90: %s). **Catalog list: %.2f** (goal ≥ 0.90: %s).\n",
		pageRatio, verdict(pageRatio >= 0.9), listRatio, verdict(listRatio >= 0.9))
	for _, e := range explains {
		fmt.Fprintf(&b, "\n%s, %s:\n\n```\n%s\n```\n", e.statement, e.store, e.plan)
	}
	return b.String(), nil
}

// seedOtherCatalogs adds n stores of 10 000 active products each, with
// their default variants, in two set-based statements.
func seedOtherCatalogs(ctx context.Context, db *database, n int) error {
	if n == 0 {
		return nil
	}
	stores := make([]uuid.UUID, n)
	for i := range stores {
		user := storage.User{Email: fmt.Sprintf("other-%d@example.com", i), PasswordHash: "x", Name: "Other"}
		store := storage.Store{Name: fmt.Sprintf("Other %d", i), Subdomain: fmt.Sprintf("other-%d", i), Currency: "EGP", DefaultLanguage: "ar"}
		if err := db.InTx(ctx, func(tx *storage.Tx) error { return tx.CreateUserAndStore(ctx, &user, &store) }); err != nil {
			return err
		}
		stores[i] = store.ID
	}
	_, err := db.Pool.Exec(ctx, `WITH p AS (
			INSERT INTO products (id, store_id, name, description, sku, price, cost_price, status, attributes, created_at, updated_at)
			SELECT gen_random_uuid(), s.id, 'Product ' || i, 'A product of another store', 'SKU-' || i, 1000 + i, NULLIF(i % 3, 0) * 500,
			       'active', jsonb_build_object('colour', 'red', 'size', 'M'), now() - (i || ' seconds')::interval, now()
			FROM unnest($1::uuid[]) AS s(id) CROSS JOIN generate_series(1, 10000) AS i
			RETURNING id, store_id, price, cost_price, substr(sku, 5)::int AS i)
		INSERT INTO variants (id, store_id, product_id, price, cost_price, quantity, position, is_default)
		SELECT gen_random_uuid(), store_id, id, price, cost_price, i % 50, 1, true FROM p`, stores)
	if err != nil {
		return fmt.Errorf("seed other catalogs: %w", err)
	}
	// The stores too: unanalysed, its hundred rows were scanned for the
	// storefront's store by subdomain (autovacuum analyses it in time).
	_, err = db.Pool.Exec(ctx, `VACUUM ANALYZE products, variants, stores`)
	return err
}

// rawStatement is a statement as the query builders' ToSql answers it.
type rawStatement storage.Statement

func (s rawStatement) ToSql() (string, []any, error) { return s.SQL, s.Args, nil }
