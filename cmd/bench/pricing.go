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

const (
	pricingClients    = 32
	pricingCartsRound = 1500
	hotCodeLimit      = 10_000
	hotCodeExtra      = 400
)

// pricingStore is a storefront store with five variants; a priced one also
// has an automatic discount, a code, a hot code limited to 10 000 uses and
// a city-rate zone for Giza with weight bands and a COD fee.
type pricingStore struct {
	id        uuid.UUID
	subdomain string
	variants  []uuid.UUID
}

// cartCheckout is a prepared cart and its checkout request.
type cartCheckout struct {
	subdomain, id, token string
	body                 []byte
}

// runPricingBench checks out 5-line carts with a code, an automatic
// discount and a city-rate zone against the same carts in a store without
// them (issue 22's "today's checkout"), in alternating rounds; then 32
// clients race for a code limited to 10 000 uses.
func runPricingBench(ctx context.Context, dbURL string) (string, error) {
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	plain, err := seedPricingStore(ctx, db, "plain-bench", false)
	if err != nil {
		return "", err
	}
	priced, err := seedPricingStore(ctx, db, "priced-bench", true)
	if err != nil {
		return "", err
	}
	url, stop, err := serve(api.NewServer(api.Config{StorefrontRateLimitPerMinute: 100_000_000, StorefrontOrdersPerPhone: 100_000_000,
		StorefrontOrdersPerNetwork: 100_000_000}, db.DB, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return "", err
	}
	defer stop()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: pricingClients * 2}}
	var phones atomic.Int64

	var plainRun, pricedRun result
	for round := range 2 {
		plainCarts, err := prepareCarts(client, url, plain, pricingCartsRound, 5, nil, &phones)
		if err != nil {
			return "", err
		}
		pricedCarts, err := prepareCarts(client, url, priced, pricingCartsRound, 5, map[string]any{"discount_code": "ramadan10",
			"shipping_address": map[string]any{"country": "EG", "city": "الجيزه"}, "payment_method": "cod"}, &phones)
		if err != nil {
			return "", err
		}
		if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
			return "", err
		}
		first, second := plainCarts, pricedCarts
		if round == 1 {
			first, second = pricedCarts, plainCarts
		}
		a := checkoutAll(client, url, first, pricingClients)
		b := checkoutAll(client, url, second, pricingClients)
		if round == 1 {
			a, b = b, a
		}
		for _, r := range []checkoutRun{a, b} {
			if r.statuses[http.StatusCreated] != r.requests {
				return "", fmt.Errorf("checkouts failed: %v %v", r.statuses, r.codes)
			}
		}
		plainRun, pricedRun = plainRun.merge(a.result), pricedRun.merge(b.result)
	}

	hotCarts, err := prepareCarts(client, url, priced, hotCodeLimit+hotCodeExtra, 1, map[string]any{"discount_code": "HOT",
		"shipping_address": map[string]any{"country": "EG", "city": "Giza"}, "payment_method": "cod"}, &phones)
	if err != nil {
		return "", err
	}
	hot := checkoutAll(client, url, hotCarts, pricingClients)
	var timesUsed, redeemed, hotOrders int
	if err := db.Pool.QueryRow(ctx, `SELECT d.times_used,
			(SELECT count(*) FROM discount_redemptions r WHERE r.discount_id = d.id AND r.status = 'counted'),
			(SELECT count(*) FROM orders o WHERE o.store_id = d.store_id AND o.discounts @> jsonb_build_array(jsonb_build_object('code', 'HOT')))
		FROM discounts d WHERE d.store_id = $1 AND d.code = 'HOT'`, priced.id).Scan(&timesUsed, &redeemed, &hotOrders); err != nil {
		return "", err
	}

	ratio := pricedRun.rps() / plainRun.rps()
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s). Storefront checkouts over HTTP, %d concurrent clients, each buyer a new\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), pricingClients)
	fmt.Fprintf(&b, "customer; carts of 5 lines (one each of five variants) prepared beforehand, %d per store and round, checked out\n", pricingCartsRound)
	fmt.Fprintf(&b, "in two rounds that alternate which store goes first. The priced store has one automatic discount (5%%), the\n")
	fmt.Fprintf(&b, "buyer's code (10%%) and a Giza city zone whose rate has weight bands and a COD fee; each checkout sends the\n")
	fmt.Fprintf(&b, "cart's `expected_total`. The plain store has none of them: today's checkout.\n\n")
	fmt.Fprintf(&b, "| checkout, 5-line cart | checkouts/s | p50 | p99 |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| plain: no discounts, no zones | %.0f | %s | %s |\n", plainRun.rps(), ms(plainRun.percentile(0.5)), ms(plainRun.percentile(0.99)))
	fmt.Fprintf(&b, "| priced: code + automatic + city-rate zone, counted and snapshotted | %.0f | %s | %s |\n\n",
		pricedRun.rps(), ms(pricedRun.percentile(0.5)), ms(pricedRun.percentile(0.99)))
	fmt.Fprintf(&b, "**Priced / plain: %.0f%%** (goal ≥ 70%%: %s).\n\n", 100*ratio, verdict(ratio >= 0.7))
	over := max(timesUsed-hotCodeLimit, 0)
	fmt.Fprintf(&b, "Hot code: %d carts carrying one code limited to %d uses, checked out by %d clients: %d orders placed (%.0f/s),\n",
		len(hotCarts), hotCodeLimit, pricingClients, hot.statuses[http.StatusCreated], float64(hot.statuses[http.StatusCreated])/hot.elapsed.Seconds())
	fmt.Fprintf(&b, "%d refused with 409 (%d `DISCOUNT_USAGE_LIMIT_REACHED` in the order's transaction, %d `DISCOUNT_NOT_APPLICABLE` once the code read exhausted), %d other answers;\n",
		hot.statuses[http.StatusConflict], hot.codes["DISCOUNT_USAGE_LIMIT_REACHED"], hot.codes["DISCOUNT_NOT_APPLICABLE"],
		hot.requests-hot.statuses[http.StatusCreated]-hot.statuses[http.StatusConflict])
	fmt.Fprintf(&b, "`times_used` %d, counted redemptions %d, orders carrying the code %d. **Over the limit: %d** (goal: exactly %d orders, 0 over: %s).\n\n",
		timesUsed, redeemed, hotOrders, over, hotCodeLimit, verdict(hotOrders == hotCodeLimit && over == 0 && redeemed == hotCodeLimit))
	fmt.Fprintf(&b, "Left out: the test cluster runs with fsync off on one machine, clients and server sharing its CPUs. With fsync on,\n")
	fmt.Fprintf(&b, "each checkout waits for one more WAL flush in both stores alike, so the ratio holds while both rates fall\n")
	fmt.Fprintf(&b, "(the orders section above gives the production-like order figure).\n")
	return b.String(), nil
}

// prepareCarts opens n carts of lines variants (with the extra cart
// fields) and builds each one's checkout, sending the total it was shown.
func prepareCarts(client *http.Client, url string, s pricingStore, n, lines int, extra map[string]any, phones *atomic.Int64) ([]cartCheckout, error) {
	body := map[string]any{}
	var cartLines []map[string]any
	for i := range lines {
		cartLines = append(cartLines, map[string]any{"variant_id": s.variants[i].String(), "quantity": 1})
	}
	body["lines"] = cartLines
	for k, v := range extra {
		body[k] = v
	}
	payload, _ := json.Marshal(body)
	carts := make([]cartCheckout, n)
	var (
		next     atomic.Int64
		firstErr error
		mu       sync.Mutex
		wg       sync.WaitGroup
	)
	for range pricingClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				c, err := openBenchCart(client, url, s, payload, phones.Add(1))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				carts[i] = c
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return carts, firstErr
}

func openBenchCart(client *http.Client, url string, s pricingStore, payload []byte, phone int64) (cartCheckout, error) {
	resp, err := client.Post(url+"/api/v1/storefront/"+s.subdomain+"/carts", "application/json", bytes.NewReader(payload))
	if err != nil {
		return cartCheckout{}, err
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Cart struct {
				ID    string `json:"id"`
				Total int64  `json:"total"`
			} `json:"cart"`
			Token string `json:"cart_token"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusCreated {
		raw, _ := io.ReadAll(resp.Body)
		return cartCheckout{}, fmt.Errorf("open cart: %d %s", resp.StatusCode, raw)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return cartCheckout{}, err
	}
	p := fmt.Sprintf("+2010%08d", phone)
	body, _ := json.Marshal(map[string]any{"payment_method": "cod", "expected_total": out.Data.Cart.Total,
		"customer":         map[string]any{"name": "منى عادل", "phone": p},
		"shipping_address": map[string]any{"name": "منى عادل", "phone": p, "line1": "12 شارع الهرم", "city": "الجيزة", "country": "EG"}})
	return cartCheckout{subdomain: s.subdomain, id: out.Data.Cart.ID, token: out.Data.Token, body: body}, nil
}

// checkoutRun is a run of checkouts, with the error codes of the refusals.
type checkoutRun struct {
	result
	codes map[string]int
}

// checkoutAll checks out every cart with concurrency clients.
func checkoutAll(client *http.Client, url string, carts []cartCheckout, concurrency int) checkoutRun {
	run := checkoutRun{result: result{statuses: map[int]int{}}, codes: map[string]int{}}
	var (
		next atomic.Int64
		mu   sync.Mutex
		wg   sync.WaitGroup
	)
	start := time.Now()
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(carts); i = int(next.Add(1)) - 1 {
				c := carts[i]
				began := time.Now()
				status, code := postCheckout(client, url, c)
				mu.Lock()
				run.requests++
				run.latencies = append(run.latencies, time.Since(began))
				run.statuses[status]++
				if code != "" {
					run.codes[code]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	run.elapsed = time.Since(start)
	return run
}

// postCheckout checks a cart out and answers the status and, for a
// refusal, its error code.
func postCheckout(client *http.Client, url string, c cartCheckout) (int, string) {
	req, err := http.NewRequest(http.MethodPost, url+"/api/v1/storefront/"+c.subdomain+"/carts/"+c.id+"/checkout", bytes.NewReader(c.body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Cart-Token", c.token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusCreated {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, ""
	}
	var refusal struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&refusal)
	return resp.StatusCode, refusal.Error.Code
}

func seedPricingStore(ctx context.Context, db *database, subdomain string, priced bool) (pricingStore, error) {
	user := storage.User{Email: subdomain + "@example.com", PasswordHash: "x", Name: "Bench"}
	store := storage.Store{Name: subdomain, Subdomain: subdomain, Currency: "EGP", DefaultLanguage: "ar"}
	s := pricingStore{subdomain: subdomain}
	err := db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		p := storage.Product{StoreID: store.ID, Name: "عباية", Price: 45000}
		if err := tx.CreateProduct(ctx, &p); err != nil {
			return err
		}
		for i := range 5 {
			v := storage.Variant{StoreID: store.ID, ProductID: p.ID, Price: int64(10000 * (i + 1)), Quantity: 1_000_000_000}
			if err := tx.CreateVariant(ctx, &v, true, true); err != nil {
				return err
			}
			s.variants = append(s.variants, v.ID)
		}
		if !priced {
			return nil
		}

		five, ten, hundred, limit := int64(5), int64(10), int64(100), hotCodeLimit
		terms := []struct {
			method string
			t      storage.DiscountTerms
		}{
			{storage.DiscountMethodAutomatic, storage.DiscountTerms{Title: "Eid", Type: storage.DiscountPercentage, Value: &five}},
			{storage.DiscountMethodCode, storage.DiscountTerms{Code: ptr("RAMADAN10"), Title: "رمضان", Type: storage.DiscountPercentage, Value: &ten}},
			{storage.DiscountMethodCode, storage.DiscountTerms{Code: ptr("HOT"), Title: "hot", Type: storage.DiscountFixedAmount, Value: &hundred,
				UsageLimit: &limit}},
		}
		for _, d := range terms {
			d.t.Scope, d.t.CombinesWithAutomatic, d.t.Enabled = "order", true, true
			if _, err := tx.CreateDiscount(ctx, store.ID, d.method, d.t); err != nil {
				return err
			}
		}
		zone, err := tx.CreateZone(ctx, store.ID, "الجيزة", []storage.ZoneArea{{Country: "EG", Cities: []string{"الجيزة", "Giza"}}})
		if err != nil {
			return err
		}
		perKg := int64(1000)
		_, err = tx.CreateRate(ctx, store.ID, storage.ShippingRate{ZoneID: zone.ID, Name: "Courier", Price: 3000, CODAvailable: true, CODFee: 1000,
			WeightBands: []storage.WeightBand{{UpToGrams: 1000, Price: 3000}, {UpToGrams: 3000, Price: 4500}}, AdditionalPerKg: &perKg})
		return err
	})
	if err != nil {
		return s, err
	}
	s.id = store.ID
	// 400 g a piece: a 5-line cart weighs 2 kg, the second band.
	_, err = db.Pool.Exec(ctx, `UPDATE products SET weight_grams = 400 WHERE store_id = $1`, store.ID)
	return s, err
}

func ptr[T any](v T) *T { return &v }
