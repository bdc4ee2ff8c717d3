package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	waybillpdf "github.com/merchantsvc/svc/activities/waybill"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/waybill"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
)

// A shipment's life as its carrier reports it, one event each.
var carrierLife = []storage.ShipmentStatus{storage.ShipmentInTransit, storage.ShipmentOutForDelivery, storage.ShipmentFailedAttempt,
	storage.ShipmentOutForDelivery, storage.ShipmentDelivered}

const (
	callbackBatch = 500
	waybillRuns   = 100
)

// runFulfillmentBench sends events carrier events in signed batches of 500
// through POST /api/v1/carrier-callbacks/{id} (every report applied: order
// status, stock, COD reconciliation, activity), against the same status
// updates and event rows written bare in SQL, on two sets of shipments that
// start alike; then renders 100 waybills.
func runFulfillmentBench(ctx context.Context, dbURL string, events int) (string, error) {
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	shipments := max(events/len(carrierLife), 1)
	storeID, customerID, variants, _, err := seedOrderStore(ctx, db.DB, 1)
	if err != nil {
		return "", err
	}
	var account storage.CarrierAccount
	if err := db.InTx(ctx, func(tx *storage.Tx) error {
		account, err = tx.CreateCarrierAccount(ctx, storeID, "aramex", "bench")
		return err
	}); err != nil {
		return "", err
	}
	seed := func(prefix string) ([]string, error) {
		tracking := make([]string, 0, shipments)
		address, _ := json.Marshal(map[string]any{"name": "منى عادل", "phone": "+201001234567", "line1": "12 شارع التحرير", "city": "القاهرة", "country": "EG"})
		for i := range shipments {
			t := fmt.Sprintf("%s-%06d", prefix, i)
			err := db.InTx(ctx, func(tx *storage.Tx) error {
				o, err := tx.CreateOrder(ctx, storage.NewOrder{StoreID: storeID, CustomerID: &customerID, ShippingAddress: address,
					Lines: []storage.NewOrderLine{{VariantID: variants[i%len(variants)], Quantity: 1}}, PaymentMethod: "cod"})
				if err != nil {
					return err
				}
				_, err = tx.CreateShipment(ctx, storeID, o.ID, storage.NewShipment{CarrierAccountID: &account.ID, TrackingNumber: &t}, nil)
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("seed shipment: %w", err)
			}
			tracking = append(tracking, t)
		}
		return tracking, nil
	}
	realTracking, err := seed("REAL")
	if err != nil {
		return "", err
	}
	bareTracking, err := seed("BARE")
	if err != nil {
		return "", err
	}
	// The waybills the seed asked for are not rendered here.
	if _, err := db.Pool.Exec(ctx, `UPDATE shipments SET waybill_started = waybill_wanted WHERE store_id = $1`, storeID); err != nil {
		return "", err
	}
	if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		return "", err
	}
	start := time.Now().UTC().Add(-48 * time.Hour)
	// batches lists the events of consecutive shipments, each shipment's
	// life in order, 500 to a batch.
	batches := func(tracking []string) [][]map[string]any {
		var all []map[string]any
		for i, t := range tracking {
			for j, status := range carrierLife {
				e := map[string]any{"event_id": fmt.Sprintf("%s-%d", t, j), "tracking_number": t, "status": status,
					"occurred_at": start.Add(time.Duration(i)*time.Second + time.Duration(j)*time.Hour).Format(time.RFC3339)}
				if status == storage.ShipmentDelivered {
					e["cod_collected"] = 10000 * (1 + i%len(variants))
				}
				all = append(all, e)
			}
		}
		var out [][]map[string]any
		for len(all) > 0 {
			n := min(callbackBatch, len(all))
			out = append(out, all[:n])
			all = all[n:]
		}
		return out
	}

	url, stop, err := serve(api.NewServer(api.Config{}, db.DB, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return "", err
	}
	defer stop()
	client := &http.Client{Timeout: time.Minute}
	var real result
	applied := 0
	if path := os.Getenv("BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return "", err
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	realStart := time.Now()
	for _, batch := range batches(realTracking) {
		body, _ := json.Marshal(map[string]any{"events": batch})
		v1, _ := webhook.Sign(account.Secret, body, time.Now())
		req, _ := http.NewRequest(http.MethodPost, url+"/api/v1/carrier-callbacks/"+account.ID.String(), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-SVC-Carrier-Signature", v1)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		var answer struct {
			Data struct {
				Applied int `json:"applied"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&answer)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("callback answered %d: %v", resp.StatusCode, err)
		}
		real.latencies = append(real.latencies, time.Since(t0))
		real.requests += len(batch)
		applied += answer.Data.Applied
	}
	real.elapsed = time.Since(realStart)
	if applied != real.requests {
		return "", fmt.Errorf("the callbacks applied %d of %d events", applied, real.requests)
	}

	// Bare: per event, the shipment's status and its event row, a
	// transaction per batch of 500, one statement after another.
	var bare result
	bareStart := time.Now()
	for _, batch := range batches(bareTracking) {
		t0 := time.Now()
		tx, err := db.Pool.Begin(ctx)
		if err != nil {
			return "", err
		}
		for _, e := range batch {
			var shipmentID uuid.UUID
			if err := tx.QueryRow(ctx, `UPDATE shipments SET status = $3, updated_at = now() WHERE store_id = $1 AND tracking_number = $2 RETURNING id`,
				storeID, e["tracking_number"], e["status"]).Scan(&shipmentID); err != nil {
				_ = tx.Rollback(ctx)
				return "", err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO shipment_events (store_id, shipment_id, status, occurred_at, source, event_id, applied, created_at)
				VALUES ($1, $2, $3, $4, 'carrier', $5, true, now())`, storeID, shipmentID, e["status"], e["occurred_at"], e["event_id"]); err != nil {
				_ = tx.Rollback(ctx)
				return "", err
			}
		}
		if err := tx.Commit(ctx); err != nil {
			return "", err
		}
		bare.latencies = append(bare.latencies, time.Since(t0))
		bare.requests += len(batch)
	}
	bare.elapsed = time.Since(bareStart)

	var delivered, paid int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'DELIVERED'), count(*) FILTER (WHERE payment_status = 'paid')
		FROM orders o WHERE store_id = $1 AND EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id AND s.tracking_number LIKE 'REAL-%')`,
		storeID).Scan(&delivered, &paid); err != nil {
		return "", err
	}

	renders, peak, err := runWaybillRenders(ctx, db.DB, storeID)
	if err != nil {
		return "", err
	}

	ratio := real.rps() / bare.rps()
	p99 := real.percentile(0.99)
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s), one machine, Postgres with fsync off (the test cluster): a production\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel())
	fmt.Fprintf(&b, "database with fsync on and a network hop pays about one commit and one round trip more per batch, the same for both paths.\n")
	fmt.Fprintf(&b, "%d shipments per path, each reported in_transit, out_for_delivery, failed_attempt, out_for_delivery, delivered (with the\n", shipments)
	fmt.Fprintf(&b, "cash collected): %d events in %d batches of %d, one batch at a time.\n\n", real.requests, len(real.latencies), callbackBatch)
	fmt.Fprintf(&b, "| carrier events | events/s | batch p50 | batch p99 |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| bare: per event `UPDATE shipments SET status` and `INSERT shipment_events`, a transaction per batch | %.0f | %s | %s |\n",
		bare.rps(), ms(bare.percentile(0.5)), ms(bare.percentile(0.99)))
	fmt.Fprintf(&b, "| real: signed `POST /api/v1/carrier-callbacks/{id}` (signature, per-event answers, dedupe, staleness, the status machine, order_ship movements, the order's SHIPPED and DELIVERED through the transition routine with order.status_changed, delivery_failed exceptions, COD reconciled and paid, activities) | %.0f | %s | %s |\n\n",
		real.rps(), ms(real.percentile(0.5)), ms(p99))
	fmt.Fprintf(&b, "**Real / bare: %.0f%%** (goal ≥ 30%%: %s). **Batch p99: %s** (goal < 500 ms: %s). With %d batches, p99 is the slowest batch.\n",
		100*ratio, verdict(ratio >= 0.3), ms(p99), verdict(p99 < 500*time.Millisecond), len(real.latencies))
	fmt.Fprintf(&b, "Afterwards %d of %d orders are DELIVERED and %d paid from the couriers' cash.\n\n", delivered, shipments, paid)
	fmt.Fprintf(&b, "Waybills: %d A6 waybills rendered one after another by one headless Chromium (`internal/waybill`'s HTML with a Code 128\n", waybillRuns)
	fmt.Fprintf(&b, "PNG, printed to PDF by `activities/waybill` in a new tab each), from the shipment's row to the PDF bytes, without the object-store put:\n\n")
	fmt.Fprintf(&b, "| waybill render | p50 | p99 | peak memory |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| first (starts Chromium) | %s | — | — |\n", ms(renders.latencies[0]))
	rest := result{latencies: renders.latencies[1:]}
	fmt.Fprintf(&b, "| the other %d | %s | %s | %s Chromium (PSS summed over its processes, sampled every 50 ms) + %s Go heap |\n",
		len(rest.latencies), ms(rest.percentile(0.5)), ms(rest.percentile(0.99)), mib(peak.chromium), mib(peak.goHeap))
	return b.String(), nil
}

// memoryPeak is the most memory a run held.
type memoryPeak struct {
	chromium, goHeap uint64
}

func mib(bytes uint64) string { return fmt.Sprintf("%.0f MiB", float64(bytes)/(1<<20)) }

// runWaybillRenders renders one shipment's waybill waybillRuns times and
// samples Chromium's memory meanwhile.
func runWaybillRenders(ctx context.Context, db *storage.DB, storeID uuid.UUID) (result, memoryPeak, error) {
	var shipmentID uuid.UUID
	shipments, _, err := db.FindShipments(ctx, storeID, storage.ShipmentFilter{Page: storage.Page{Page: 1, Limit: 1}})
	if err != nil || len(shipments) == 0 {
		return result{}, memoryPeak{}, fmt.Errorf("find a shipment to render: %v", err)
	}
	shipmentID = shipments[0].ID
	printer := &waybillpdf.Printer{}
	defer printer.Close()
	var (
		peak memoryPeak
		mu   sync.Mutex
		done atomic.Bool
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			pss := chromiumPSS()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			mu.Lock()
			peak.chromium, peak.goHeap = max(peak.chromium, pss), max(peak.goHeap, m.HeapAlloc)
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
	}()
	var r result
	for range waybillRuns {
		t0 := time.Now()
		doc, err := db.FindWaybillDocument(ctx, storeID, shipmentID)
		if err != nil {
			return result{}, memoryPeak{}, err
		}
		html, err := waybill.HTML(doc)
		if err != nil {
			return result{}, memoryPeak{}, err
		}
		if _, err := printer.PDF(ctx, html); err != nil {
			return result{}, memoryPeak{}, err
		}
		r.latencies = append(r.latencies, time.Since(t0))
	}
	done.Store(true)
	wg.Wait()
	return r, peak, nil
}

// chromiumPSS sums the proportional set size of this process's Chromium
// processes (its descendants named chrom*).
func chromiumPSS() uint64 {
	self := os.Getpid()
	parents := map[int]int{}
	names := map[int]string{}
	entries, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, e := range entries {
		raw, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		s := string(raw)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
		fields := strings.Fields(s[closing+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		parents[pid], names[pid] = ppid, s[open+1:closing]
	}
	descends := func(pid int) bool {
		for i := 0; i < 64 && pid > 1; i++ {
			if pid = parents[pid]; pid == self {
				return true
			}
		}
		return false
	}
	var total uint64
	for pid, name := range names {
		if !strings.HasPrefix(name, "chrom") || !descends(pid) {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "Pss:") {
				kb, _ := strconv.ParseUint(strings.Fields(line)[1], 10, 64)
				total += kb * 1024
			}
		}
	}
	return total
}
