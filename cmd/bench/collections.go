package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/storage"
)

// Decisions §21's two measures: a smart collection page of 24 products
// through the storefront against the bare read of the same rows, and a
// product write in a store with 500 smart collections against the same
// write in a store with none.

const (
	collectionBenchProducts = 4000
	collectionBenchCats     = 20
	collectionPageClients   = 8
	collectionPageHandle    = "summer-sale"
	// collectionRounds is how many pairs of rounds each measure alternates.
	collectionRounds = 5
)

// collectionStore is a seeded store of the collection bench.
type collectionStore struct {
	id        uuid.UUID
	subdomain string
	token     string // catalog:write
	products  []uuid.UUID
	smart     int
	page      uuid.UUID // the summer-sale collection (store with collections)
	members   int
}

// collectionRun is one measured figure of the collection bench.
type collectionRun struct {
	pageBare, pageReal     result
	writeNone, writeSmart  result
	durNone, durSmart      result
	smart, products        int
	pageMembers, pageTotal int
	seedTime               time.Duration
}

// runCollectionBench measures both in one run on one database.
func runCollectionBench(ctx context.Context, db *database, duration time.Duration) (collectionRun, error) {
	var out collectionRun
	start := time.Now()
	smart, err := seedCollectionStore(ctx, db, "coll-smart", true)
	if err != nil {
		return out, err
	}
	none, err := seedCollectionStore(ctx, db, "coll-none", false)
	if err != nil {
		return out, err
	}
	if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		return out, err
	}
	out.seedTime = time.Since(start)
	out.smart, out.products, out.pageMembers = smart.smart, collectionBenchProducts, smart.members
	fmt.Printf("seeded two stores of %d products, %d smart collections in one (%s)\n", collectionBenchProducts, smart.smart, out.seedTime.Round(time.Second))

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	realURL, stopReal, err := serve(api.NewServer(api.Config{StorefrontRateLimitPerMinute: 1 << 30, RateLimitPerMinute: 1 << 30}, db.DB, nil, nil, quiet))
	if err != nil {
		return out, err
	}
	defer stopReal()
	bareURL, stopBare, err := serve(bareCollectionPageHandler(db, smart.id, smart.page, "EGP"))
	if err != nil {
		return out, err
	}
	defer stopBare()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: collectionPageClients * 2}}

	// The page: bare, real, bare, real.
	realReq := func() (*http.Request, error) {
		return http.NewRequest(http.MethodGet, realURL+"/api/v1/storefront/"+smart.subdomain+"/collections/"+collectionPageHandle+"/products?limit=24", nil)
	}
	bareReq := func() (*http.Request, error) { return http.NewRequest(http.MethodGet, bareURL+"/", nil) }
	if out.pageTotal, err = checkCollectionPage(client, realReq, bareReq); err != nil {
		return out, err
	}
	for _, mk := range []func() (*http.Request, error){bareReq, realReq} {
		if _, err := closedLoop(client, mk, collectionPageClients, time.Second); err != nil {
			return out, err
		}
	}
	for range collectionRounds {
		for _, run := range []struct {
			into *result
			mk   func() (*http.Request, error)
		}{{&out.pageBare, bareReq}, {&out.pageReal, realReq}} {
			r, err := closedLoop(client, run.mk, collectionPageClients, duration/(2*collectionRounds))
			if err != nil {
				return out, err
			}
			*run.into = run.into.merge(r)
		}
	}

	// The write: none, smart, none, smart, one client at a time.
	writeNone, writeSmart := productWrites(realURL, none), productWrites(realURL, smart)
	for _, mk := range []func() (*http.Request, error){writeNone, writeSmart} {
		if _, err := closedLoop(client, mk, 1, time.Second); err != nil {
			return out, err
		}
	}
	writeRounds := func(rounds int, none, smart *result) error {
		for range rounds {
			for _, run := range []struct {
				into *result
				mk   func() (*http.Request, error)
			}{{none, writeNone}, {smart, writeSmart}} {
				r, err := closedLoop(client, run.mk, 1, duration/(2*collectionRounds))
				if err != nil {
					return err
				}
				*run.into = run.into.merge(r)
			}
		}
		return nil
	}
	if err := writeRounds(collectionRounds, &out.writeNone, &out.writeSmart); err != nil {
		return out, err
	}
	// Two more pairs with Postgres durable, as production runs it.
	if err := setDurability(ctx, db, true); err != nil {
		return out, err
	}
	err = writeRounds(2, &out.durNone, &out.durSmart)
	if offErr := setDurability(ctx, db, false); err == nil {
		err = offErr
	}
	return out, err
}

// checkCollectionPage makes sure both paths answer the same 24 products.
func checkCollectionPage(client *http.Client, realReq, bareReq func() (*http.Request, error)) (int, error) {
	read := func(mk func() (*http.Request, error)) ([]string, int, error) {
		req, err := mk()
		if err != nil {
			return nil, 0, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, 0, err
		}
		defer resp.Body.Close()
		var body struct {
			Data struct {
				Items []struct {
					ID string `json:"id"`
				} `json:"items"`
				Pagination struct {
					Total int `json:"total"`
				} `json:"pagination"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			return nil, 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, 0, fmt.Errorf("collection page: status %d", resp.StatusCode)
		}
		ids := make([]string, len(body.Data.Items))
		for i, it := range body.Data.Items {
			ids[i] = it.ID
		}
		return ids, body.Data.Pagination.Total, nil
	}
	real, total, err := read(realReq)
	if err != nil {
		return 0, err
	}
	bare, _, err := read(bareReq)
	if err != nil {
		return 0, err
	}
	if len(real) != 24 || strings.Join(real, ",") != strings.Join(bare, ",") {
		return 0, fmt.Errorf("the storefront and the bare read answer different pages: %d %v, %d %v", len(real), real, len(bare), bare)
	}
	return total, nil
}

// productWrites makes PATCH /products/{id} requests on random products of
// the store, each changing a field rules read: the title, the price or
// the tags, in turn.
func productWrites(url string, s collectionStore) func() (*http.Request, error) {
	var n atomic.Uint64
	return func() (*http.Request, error) {
		i := n.Add(1)
		id := s.products[rand.IntN(len(s.products))]
		var body string
		switch i % 3 {
		case 0:
			body = fmt.Sprintf(`{"name": "Cotton shirt %d"}`, rand.IntN(10000))
		case 1:
			body = fmt.Sprintf(`{"price": %d}`, 1000+rand.IntN(100000))
		default:
			body = fmt.Sprintf(`{"attributes": {"tags": ["tag-%d", "tag-%d"], "colour": "red"}}`, rand.IntN(40), rand.IntN(40))
		}
		req, err := http.NewRequest(http.MethodPatch, url+"/api/v1/stores/"+s.id.String()+"/products/"+id.String(), strings.NewReader(body))
		if err == nil {
			req.Header.Set("Authorization", "Bearer "+s.token)
			req.Header.Set("Content-Type", "application/json")
		}
		return req, err
	}
}

// seedCollectionStore writes a store of 4000 products in 20 categories
// (two levels), each with a default variant, tags, and some out of stock or
// drafts; withSmart adds 500 smart collections of varied rules, one of
// them summer-sale (tag equals sale: about 400 products).
func seedCollectionStore(ctx context.Context, db *database, subdomain string, withSmart bool) (collectionStore, error) {
	s := collectionStore{subdomain: subdomain, token: fmt.Sprintf("svc_pat_%s%032d", strings.ReplaceAll(subdomain, "-", ""), 1)}
	user := storage.User{Email: subdomain + "@example.com", PasswordHash: "x", Name: "Bench"}
	store := storage.Store{Name: subdomain, Subdomain: subdomain, Currency: "EGP", DefaultLanguage: "ar"}
	err := db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		t := storage.Token{Kind: "pat", StoreID: store.ID, UserID: &user.ID, Name: "bench", Hint: "xxxx", Scopes: []string{"catalog:write"}}
		return tx.CreateToken(ctx, &t, s.token)
	})
	if err != nil {
		return s, err
	}
	s.id = store.ID
	// Categories straight into their table, so neither store gets the
	// category's own collection (decisions §22): the store without
	// collections has none at all.
	if _, err := db.Pool.Exec(ctx, `INSERT INTO categories (id, store_id, name, parent_id, position)
		SELECT gen_random_uuid(), $1, 'Category ' || i, NULL, i FROM generate_series(1, 5) AS i`, s.id); err != nil {
		return s, fmt.Errorf("seed categories: %w", err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO categories (id, store_id, name, parent_id, position)
		SELECT gen_random_uuid(), $1, c.name || '.' || i, c.id, i FROM categories c, generate_series(1, 3) AS i WHERE c.store_id = $1`, s.id); err != nil {
		return s, fmt.Errorf("seed categories: %w", err)
	}
	rows, err := db.Pool.Query(ctx, `SELECT id FROM categories WHERE store_id = $1 ORDER BY parent_id NULLS FIRST, position, name`, s.id)
	if err != nil {
		return s, err
	}
	cats, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return s, err
	}
	// Every tenth product carries the tag sale; one in twenty-five is a draft,
	// one in seven out of stock.
	rows, err = db.Pool.Query(ctx, `WITH p AS (
			INSERT INTO products (id, store_id, name, description, sku, price, status, category_id, attributes, created_at, updated_at)
			SELECT gen_random_uuid(), $1, 'منتج ' || i || ' Product ' || i, 'وصف المنتج وصفًا يملأ سطرين على صفحة المجموعة، كما يكتبه التاجر.',
			       'SKU-' || i, 1000 + (i * 37) % 90000, CASE WHEN i % 25 = 0 THEN 'draft' ELSE 'active' END,
			       ($3::uuid[])[1 + i % array_length($3::uuid[], 1)],
			       jsonb_build_object('tags', CASE WHEN i % 10 = 0 THEN jsonb_build_array('sale', 'tag-' || i % 40) ELSE jsonb_build_array('tag-' || i % 40) END,
			                          'colour', 'red'),
			       now() - (i || ' hours')::interval, now()
			FROM generate_series(1, $2) AS i
			RETURNING id, store_id, price, substr(sku, 5)::int AS i)
		INSERT INTO variants (id, store_id, product_id, price, quantity, position, is_default)
		SELECT gen_random_uuid(), store_id, id, price, CASE WHEN i % 7 = 0 THEN 0 ELSE i % 50 + 1 END, 1, true FROM p
		RETURNING product_id`, s.id, collectionBenchProducts, cats)
	if err != nil {
		return s, fmt.Errorf("seed products: %w", err)
	}
	if s.products, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID]); err != nil {
		return s, fmt.Errorf("seed products: %w", err)
	}
	if !withSmart {
		return s, nil
	}
	for i := range storage.MaxSmartCollections {
		c := storage.Collection{StoreID: s.id, Kind: "smart", Published: true, Handle: fmt.Sprintf("smart-%d", i),
			Title: storage.CollectionText{Ar: fmt.Sprintf("مجموعة %d", i), En: fmt.Sprintf("Collection %d", i)}, Rules: benchRules(i, cats)}
		if i == 0 {
			c.Handle = collectionPageHandle
		}
		err := db.InTx(ctx, func(tx *storage.Tx) error { return tx.CreateCollection(ctx, &c) })
		if err != nil {
			return s, fmt.Errorf("seed collection %d: %w", i, err)
		}
		if i == 0 {
			s.page, s.members = c.ID, c.ProductsCount
		}
		s.smart++
	}
	return s, nil
}

// benchRules are the i-th collection's rules: summer-sale first, then a
// mix of what merchants write (a tag, a category, a price band, words of
// the title, stock, newness), one to three conditions each.
func benchRules(i int, cats []uuid.UUID) *storage.CollectionRules {
	value := func(v any) json.RawMessage { raw, _ := json.Marshal(v); return raw }
	cond := func(field, rel string, v any) storage.CollectionCondition {
		c := storage.CollectionCondition{Field: field, Relation: rel}
		if v != nil {
			c.Value = value(v)
		}
		return c
	}
	if i == 0 {
		return &storage.CollectionRules{Match: "all", Conditions: []storage.CollectionCondition{cond("tag", storage.RelEquals, "sale")}}
	}
	r := &storage.CollectionRules{Match: "all"}
	switch i % 6 {
	case 0:
		r.Conditions = append(r.Conditions, cond("tag", storage.RelEquals, fmt.Sprintf("tag-%d", i%40)))
	case 1:
		r.Conditions = append(r.Conditions, cond("category", storage.RelEquals, cats[i%len(cats)].String()),
			cond("available", storage.RelEquals, true))
	case 2:
		low := 1000 + (i*997)%80000
		r.Conditions = append(r.Conditions, cond("price", storage.RelGreaterThan, low), cond("price", storage.RelLessThan, low+5000))
	case 3:
		r.Match = "any"
		r.Conditions = append(r.Conditions, cond("title", storage.RelContains, fmt.Sprintf("product %d", i%100)),
			cond("tag", storage.RelEquals, fmt.Sprintf("tag-%d", (i+7)%40)), cond("sku", storage.RelEquals, fmt.Sprintf("sku-%d", i)))
	case 4:
		r.Conditions = append(r.Conditions, cond("created_days_ago", storage.RelLessThan, 30+i%60), cond("category", storage.RelEquals, cats[(i/6)%len(cats)].String()))
	default:
		r.Conditions = append(r.Conditions, cond("tag", storage.RelContains, fmt.Sprintf("tag-%d", i%4)), cond("price", storage.RelLessThan, 20000+i*50),
			cond("available", storage.RelEquals, true))
	}
	return r
}

// bareCollectionPageHandler reads the page's 24 products, the columns the
// storefront answers of them, in the collection's order, and encodes them:
// no store lookup, no collection lookup, no total.
func bareCollectionPageHandler(db *database, storeID, collectionID uuid.UUID, currency string) http.Handler {
	type item struct {
		ID          uuid.UUID       `json:"id"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Price       int64           `json:"price"`
		Currency    string          `json:"currency"`
		Images      json.RawMessage `json:"images"`
		Available   bool            `json:"available"`
	}
	const pageSQL = `SELECT p.id, p.name, p.description, p.price, p.images,
			(SELECT COALESCE(sum(v.quantity), 0) FROM variants v WHERE v.store_id = p.store_id AND v.product_id = p.id) > 0
		FROM collection_products m JOIN products p ON p.store_id = m.store_id AND p.id = m.product_id
		WHERE m.store_id = $1 AND m.collection_id = $2 AND p.status = 'active'
		ORDER BY (SELECT COALESCE(sum(l.quantity - l.returned_quantity), 0) FROM order_lines l
			WHERE l.store_id = p.store_id AND l.product_id = p.id AND l.sold_at >= $3) DESC, m.position, p.id
		LIMIT 24`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rows, err := db.Pool.Query(r.Context(), pageSQL, storeID, collectionID, time.Now().Add(-30*24*time.Hour))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (item, error) {
			it := item{Currency: currency}
			return it, row.Scan(&it.ID, &it.Name, &it.Description, &it.Price, &it.Images, &it.Available)
		})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"success": true, "data": map[string]any{"items": items}})
	})
}

// loadAverage is the machine's one-minute load average (/proc/loadavg).
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(raw))[0]
}

// writeCollectionReport appends the collection figures to the content
// section.
func writeCollectionReport(b *strings.Builder, c collectionRun, duration time.Duration, loadBefore, loadAfter string) {
	fmt.Fprintf(b, "\n**A smart collection page** (decisions §21). Two stores of %d products in 20 categories (two levels), each product with a\n", c.products)
	fmt.Fprintf(b, "default variant and tags (one in ten tagged `sale`, one in twenty-five a draft, one in seven out of stock); one store has\n")
	fmt.Fprintf(b, "%d smart collections (the limit) of one to three conditions each (a tag, a category and stock, a price band, words of\n", c.smart)
	fmt.Fprintf(b, "the title or a tag or a SKU, newness and a category, a tag pattern with a price cap and stock), the other none.\n")
	fmt.Fprintf(b, "Both seeded and analysed in %s. The page is `summer-sale` {tag equals sale}: %d members, %d of them active, in the smart\n",
		c.seedTime.Round(time.Second), c.pageMembers, c.pageTotal)
	fmt.Fprintf(b, "collection's default sort (best selling over 30 days; the store has no orders, so the tie-break by position decides).\n")
	fmt.Fprintf(b, "%d clients, %d pairs of rounds of %s, bare then real (short rounds, so the machine's changing load falls on both alike); both\n",
		collectionPageClients, collectionRounds, duration/(2*collectionRounds))
	fmt.Fprintf(b, "answered the same 24 products before the rounds.\n\n")
	fmt.Fprintf(b, "| 24 products of a smart collection | requests/s | p50 | p99 |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(b, "| bare: the 24 rows' answered columns (id, name, description, price, images, stock > 0) in the collection's order, one query by the known collection id, pgx + JSON | %.0f | %s | %s |\n",
		c.pageBare.rps(), ms(c.pageBare.percentile(0.5)), ms(c.pageBare.percentile(0.99)))
	fmt.Fprintf(b, "| real: `GET /api/v1/storefront/{subdomain}/collections/summer-sale/products?limit=24` (limiter, store by subdomain, then one query: the published collection by handle, its active members in its sort, their total; envelope) | %.0f | %s | %s |\n\n",
		c.pageReal.rps(), ms(c.pageReal.percentile(0.5)), ms(c.pageReal.percentile(0.99)))
	ratio := c.pageReal.rps() / c.pageBare.rps()
	fmt.Fprintf(b, "**Real / bare: %.2f** (goal ≥ 0.7: %s).\n\n", ratio, verdict(ratio >= 0.7))

	fmt.Fprintf(b, "**A product write with %d smart collections.** `PATCH /api/v1/stores/{store_id}/products/{id}` through the real API\n", c.smart)
	fmt.Fprintf(b, "(token, limiter, validation, the product's transaction with its audit entry and `product.updated` outbox row), on a random\n")
	fmt.Fprintf(b, "product, changing in turn its title, its price or its tags, which the rules read; in the store with collections the\n")
	fmt.Fprintf(b, "transaction also evaluates the %d collections' rules against the product and writes the membership that changed.\n", c.smart)
	fmt.Fprintf(b, "One client, one write at a time, %d pairs of rounds of %s, the store without collections then the one with %d.\n\n",
		collectionRounds, duration/(2*collectionRounds), c.smart)
	fmt.Fprintf(b, "| product write | writes | p50 | p95 | p99 |\n|---|---:|---:|---:|---:|\n")
	row := func(name string, r result) {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s |\n", name, r.requests, ms(r.percentile(0.5)), ms(r.percentile(0.95)), ms(r.percentile(0.99)))
	}
	row("store with no smart collections", c.writeNone)
	row(fmt.Sprintf("store with %d smart collections", c.smart), c.writeSmart)
	diff := func(p float64, a, b result) time.Duration { return b.percentile(p) - a.percentile(p) }
	fmt.Fprintf(b, "| difference | | %s | %s | %s |\n\n", ms(diff(0.5, c.writeNone, c.writeSmart)), ms(diff(0.95, c.writeNone, c.writeSmart)),
		ms(diff(0.99, c.writeNone, c.writeSmart)))
	added := diff(0.95, c.writeNone, c.writeSmart)
	fmt.Fprintf(b, "**p95 added by %d smart collections: %s** (goal ≤ 5 ms: %s).\n\n", c.smart, ms(added), verdict(added <= 5*time.Millisecond))

	fmt.Fprintf(b, "Left out: one machine of %d cores, clients, server and Postgres sharing them (load average %s before the suite, %s after\n",
		runtime.NumCPU(), loadBefore, loadAfter)
	fmt.Fprintf(b, "it: other work ran beside it, felt by both arms of each pair alike in the alternating rounds), and Postgres with fsync off.\n")
	fmt.Fprintf(b, "The page is a read, which fsync does not touch; a production database adds a network round trip per query to both paths\n")
	fmt.Fprintf(b, "(the real path makes two, the bare one). The write commits, so two more pairs of rounds ran with `fsync`, `synchronous_commit`\n")
	fmt.Fprintf(b, "and `full_page_writes` on (production's settings):\n\n")
	fmt.Fprintf(b, "| product write, fsync on | writes | p50 | p95 | p99 |\n|---|---:|---:|---:|---:|\n")
	row("store with no smart collections", c.durNone)
	row(fmt.Sprintf("store with %d smart collections", c.smart), c.durSmart)
	fmt.Fprintf(b, "| difference | | %s | %s | %s |\n\n", ms(diff(0.5, c.durNone, c.durSmart)), ms(diff(0.95, c.durNone, c.durSmart)),
		ms(diff(0.99, c.durNone, c.durSmart)))
	fmt.Fprintf(b, "With fsync on, each write also waits for its commit's WAL flush to this machine's disk, in both stores alike; the rules are\n")
	fmt.Fprintf(b, "evaluated before the commit and wait on no disk, so the collections' share is the difference row, on top of a slower write\n")
	fmt.Fprintf(b, "(two rounds each, so its p99 rests on few writes).\n")
}
