package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"image/png"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/worker"
)

func (h *harness) importCSV(token, storeID, body string, extra map[string]string) response {
	h.t.Helper()
	return h.uploadFile(token, storePath(storeID, "/products/import"), "file", []byte(body), extra)
}

func (h *harness) productBySKU(token, storeID, sku string) map[string]any {
	h.t.Helper()
	resp := h.do(request{method: "GET", path: storePath(storeID, "/products?sku="+sku), auth: bearer(token)})
	for _, it := range resp.data()["items"].([]any) {
		if p := it.(map[string]any); p["sku"] == sku {
			return p
		}
	}
	return nil
}

func (h *harness) outboxCount(storeID string) int {
	var n int
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM outbox WHERE store_id = $1`, storeID).Scan(&n))
	return n
}

func TestCSVTemplate(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("template")
	token := h.pat(m, "catalog:read")
	resp := h.do(request{method: "GET", path: storePath(m.storeID, "/products/template"), auth: bearer(token)})
	require.Equal(t, http.StatusOK, resp.Status)
	require.Equal(t, "text/csv; charset=utf-8", resp.Header.Get("Content-Type"))
	require.Equal(t, "\ufeffsku,name,description,status,price,cost_price,quantity,category_id\n", string(resp.Raw))
}

func TestCSVImportCreatesAndUpdatesBySKU(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("csvimport")
	token := h.pat(m, "catalog:write")
	h.createProduct(token, m.storeID, map[string]any{"name": "Old mug", "price": 500, "sku": "MUG-1", "quantity": 3})

	// BOM, `;` separators, quoted fields with separators, quotes and newlines,
	// Arabic text and Arabic-Indic digits.
	file := "\ufeffsku;name;description;price;quantity\n" +
		"MUG-1;Mug;\"Holds 300 ml; \"\"dishwasher\"\" safe\";7.50;4\n" +
		"TEA-1;شاي أخضر;\"سطر أول\nسطر ثانٍ\";١٤٩٫٩٩;10\n" +
		"POT-1;Teapot;;120;\n"
	resp := h.importCSV(token, m.storeID, file, nil)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	d := resp.data()
	require.Equal(t, "succeeded", d["status"])
	require.EqualValues(t, 3, d["total_rows"])
	require.EqualValues(t, 3, d["processed_rows"])
	require.EqualValues(t, 2, d["created"])
	require.EqualValues(t, 1, d["updated"])
	require.EqualValues(t, 0, d["failed"])
	require.Empty(t, d["errors"])

	mug := h.productBySKU(token, m.storeID, "MUG-1")
	require.Equal(t, "Mug", mug["name"])
	require.Equal(t, `Holds 300 ml; "dishwasher" safe`, mug["description"])
	require.EqualValues(t, 750, mug["price"])
	require.EqualValues(t, 4, mug["quantity"])
	tea := h.productBySKU(token, m.storeID, "TEA-1")
	require.Equal(t, "شاي أخضر", tea["name"])
	require.Equal(t, "سطر أول\nسطر ثانٍ", tea["description"])
	require.EqualValues(t, 14999, tea["price"])
	require.Equal(t, "active", tea["status"])
	require.Equal(t, "شاي-أخضر", tea["handle"], "an imported product's handle is made from its name")
	require.Equal(t, "old-mug", mug["handle"], "an update keeps the handle")
	require.EqualValues(t, 1+2+1, h.outboxCount(m.storeID), "one event per created or updated product")
}

func TestCSVRowErrorsNeverAbortTheRest(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("csverrors")
	token := h.pat(m, "catalog:write")
	p := h.createProduct(token, m.storeID, map[string]any{"name": "Tee", "price": 1})
	v := h.do(request{method: "POST", path: storePath(m.storeID, "/products/"+p["id"].(string)+"/variants"), auth: bearer(token), body: map[string]any{"sku": "VAR-1"}})
	require.Equal(t, http.StatusCreated, v.Status)

	rows := [][]string{
		{"sku", "name", "description", "status", "price", "cost_price", "quantity", "category_id"},
		{"OK-1", "Fine", "", "active", "10", "", "1", ""},                          // 2
		{"", "No sku", "", "", "10", "", "", ""},                                   // 3
		{"NO-NAME", "", "", "", "10", "", "", ""},                                  // 4
		{"NO-PRICE", "x", "", "", "", "", "", ""},                                  // 5
		{"BAD-PRICE", "x", "", "", "ten", "", "", ""},                              // 6
		{"TOO-PRECISE", "x", "", "", "1.999", "", "", ""},                          // 7
		{"BAD-COST", "x", "", "", "1", "-2", "", ""},                               // 8
		{"BAD-QTY", "x", "", "", "1", "", "2.5", ""},                               // 9
		{"HUGE-QTY", "x", "", "", "1", "", "9999999999", ""},                       // 10
		{"BAD-STATUS", "x", "", "sold", "1", "", "", ""},                           // 11
		{"BAD-CAT", "x", "", "", "1", "", "", "cat-1"},                             // 12
		{"GONE-CAT", "x", "", "", "1", "", "", uuid.NewString()},                   // 13
		{"OK-1", "Again", "", "", "1", "", "", ""},                                 // 14
		{"VAR-1", "Variant's", "", "", "1", "", "", ""},                            // 15
		{"LONG", strings.Repeat("n", 256), "", "", "1", "", "", ""},                // 16
		{"OK-2", "Also fine", "=HYPERLINK(\"x\")", "draft", "0.5", "0.25", "", ""}, // 17
	}
	var buf bytes.Buffer
	require.NoError(t, csv.NewWriter(&buf).WriteAll(rows))
	resp := h.importCSV(token, m.storeID, buf.String(), nil)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	d := resp.data()
	require.EqualValues(t, 16, d["total_rows"])
	require.EqualValues(t, 2, d["created"])
	require.EqualValues(t, 14, d["failed"])
	type key struct {
		Row    float64
		Column string
		Code   string
	}
	var got []key
	for _, e := range d["errors"].([]any) {
		m := e.(map[string]any)
		got = append(got, key{m["row"].(float64), m["column"].(string), m["code"].(string)})
		require.NotEmpty(t, m["message"])
	}
	require.ElementsMatch(t, []key{
		{3, "sku", "required"}, {4, "name", "required"}, {5, "price", "required"}, {6, "price", "invalid_number"},
		{7, "price", "invalid_number"}, {8, "cost_price", "invalid_number"}, {9, "quantity", "invalid_number"},
		{10, "quantity", "out_of_range"}, {11, "status", "one_of"}, {12, "category_id", "invalid_uuid"},
		{13, "category_id", "not_found"}, {14, "sku", "duplicate_in_file"}, {15, "sku", "sku_in_use"}, {16, "name", "too_long"},
	}, got)
	ok2 := h.productBySKU(token, m.storeID, "OK-2")
	require.Equal(t, `=HYPERLINK("x")`, ok2["description"])
	require.EqualValues(t, 50, ok2["price"])
	require.EqualValues(t, 25, ok2["cost_price"])
	require.Equal(t, "draft", ok2["status"])
}

func TestCSVExportRoundTripChangesNothing(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("roundtrip")
	token := h.pat(m, "catalog:write")
	cat := h.do(request{method: "POST", path: storePath(m.storeID, "/categories"), auth: bearer(token), body: map[string]any{"name": "Cups"}})
	h.createProduct(token, m.storeID, map[string]any{"name": "=cmd|' /C calc'!A0", "price": 14999, "sku": "-SKU-1",
		"description": "line one\nline \"two\", with comma", "cost_price": 9000, "quantity": 7, "category_id": cat.data()["id"], "status": "archived"})
	h.createProduct(token, m.storeID, map[string]any{"name": "فنجان قهوة", "price": 0, "sku": "@cup"})
	h.createProduct(token, m.storeID, map[string]any{"name": "No SKU", "price": 100})

	export := h.do(request{method: "GET", path: storePath(m.storeID, "/products/export"), auth: bearer(token)})
	require.Equal(t, http.StatusOK, export.Status)
	require.True(t, bytes.HasPrefix(export.Raw, []byte("\ufeff")), "UTF-8 BOM")
	records, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(export.Raw, []byte("\ufeff")))).ReadAll()
	require.NoError(t, err)
	require.Len(t, records, 4)
	require.Equal(t, []string{"'-SKU-1", "'=cmd|' /C calc'!A0", "line one\nline \"two\", with comma", "archived", "149.99", "90.00", "7", cat.data()["id"].(string)}, records[1])
	require.Equal(t, "'@cup", records[2][0], "cells a spreadsheet would run as formulas are neutralised")

	before := h.do(request{method: "GET", path: storePath(m.storeID, "/products?limit=100"), auth: bearer(token)}).data()["items"]
	events := h.outboxCount(m.storeID)
	resp := h.importCSV(token, m.storeID, string(export.Raw), nil)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	d := resp.data()
	require.EqualValues(t, 0, d["created"])
	require.EqualValues(t, 0, d["updated"])
	require.EqualValues(t, 2, d["unchanged"])
	require.EqualValues(t, 1, d["failed"], "the product without a SKU cannot be matched")
	after := h.do(request{method: "GET", path: storePath(m.storeID, "/products?limit=100"), auth: bearer(token)}).data()["items"]
	require.Equal(t, before, after, "importing an export changes nothing")
	require.Equal(t, events, h.outboxCount(m.storeID))
}

func TestCSVDryRunAndCrossStore(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	a, b := h.signup("dry-a"), h.signup("dry-b")
	ta, tb := h.pat(a, "catalog:write"), h.pat(b, "catalog:write")
	h.createProduct(tb, b.storeID, map[string]any{"name": "B's", "price": 100, "sku": "SHARED"})
	h.createProduct(ta, a.storeID, map[string]any{"name": "A's own", "price": 100, "sku": "MINE"})
	file := "sku,name,price\nSHARED,From A,5\nMINE,Renamed,100\nNEW,New,1\n"

	dry := h.importCSV(ta, a.storeID, file, map[string]string{"dry_run": "true"})
	require.Equal(t, http.StatusOK, dry.Status, string(dry.Raw))
	require.Equal(t, true, dry.data()["dry_run"])
	require.EqualValues(t, 2, dry.data()["created"], "B's SKU does not match in A")
	require.EqualValues(t, 1, dry.data()["updated"])
	require.Nil(t, h.productBySKU(ta, a.storeID, "NEW"), "a dry run writes nothing")
	require.Equal(t, "A's own", h.productBySKU(ta, a.storeID, "MINE")["name"])

	real := h.importCSV(ta, a.storeID, file, nil)
	require.EqualValues(t, 2, real.data()["created"])
	require.Equal(t, "From A", h.productBySKU(ta, a.storeID, "SHARED")["name"])
	require.Equal(t, "B's", h.productBySKU(tb, b.storeID, "SHARED")["name"], "store B is untouched")
}

func TestCSVImportRefusals(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("csvrefuse")
	token := h.pat(m, "catalog:write")
	var pngBuf bytes.Buffer
	require.NoError(t, png.Encode(&pngBuf, picture(10, 10)))
	for name, tc := range map[string]struct {
		body   []byte
		status int
	}{
		"png":          {pngBuf.Bytes(), 415},
		"binary":       {[]byte("sku,name\x00,price\n"), 415},
		"latin-1":      {[]byte("sku,name,price\nA,caf\xe9,1\n"), 415},
		"wrong header": {[]byte("id,title,cost\n1,x,2\n"), 422},
		"bad quoting":  {[]byte("sku,name,price\nA,\"unterminated,1\n"), 422},
		"over 5 MB":    {append([]byte("sku,name,price\n"), bytes.Repeat([]byte("A,b,1\n"), 1<<20)...), 413},
	} {
		resp := h.uploadFile(token, storePath(m.storeID, "/products/import"), "file", tc.body, nil)
		require.Equal(t, tc.status, resp.Status, "%s: %s", name, resp.Raw)
		require.NotEmpty(t, resp.errorField("message_ar"), name)
	}
	var imports int
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM product_imports`).Scan(&imports))
	require.Zero(t, imports, "refused files start nothing")
}

// A worker stopped in the middle of an import hands it to another, which
// finishes it with every row applied exactly once.
func TestCSVImportSurvivesWorkerRestart(t *testing.T) {
	h := newHarness(t, api.Config{ImportWait: time.Millisecond})
	m := h.signup("restart")
	token := h.pat(m, "catalog:write")
	slow := worker.New(testenv.Temporal(t), h.queue, &activities.Activities{DB: h.db, Blob: h.blob, ImportBatchSize: 50},
		worker.Options{Interceptors: []interceptor.WorkerInterceptor{slowHeartbeats(150 * time.Millisecond)}})
	require.NoError(t, slow.Start())

	var file strings.Builder
	file.WriteString("sku,name,price\n")
	for i := range 600 {
		file.WriteString("R-" + strings.Repeat("0", 4-len(itoa(i))) + itoa(i) + ",Row " + itoa(i) + ",1.00\n")
	}
	resp := h.importCSV(token, m.storeID, file.String(), nil)
	require.Equal(t, http.StatusAccepted, resp.Status, string(resp.Raw))
	location := resp.Header.Get("Location")
	require.Contains(t, location, "/products/imports/")
	progress := func() map[string]any {
		return h.do(request{method: "GET", path: location, auth: bearer(token)}).data()
	}
	waitFor(t, "the import to be under way", func() bool { return progress()["processed_rows"].(float64) >= 100 })
	slow.Stop() // the running activity is cancelled between batches
	stoppedAt := progress()["processed_rows"].(float64)
	require.Less(t, stoppedAt, 600.0, "stopped in the middle")

	h.startWorker(nil)
	deadline := time.Now().Add(60 * time.Second)
	for progress()["status"] == "running" {
		require.True(t, time.Now().Before(deadline), "import did not finish")
		time.Sleep(100 * time.Millisecond)
	}
	d := progress()
	require.Equal(t, "succeeded", d["status"])
	require.EqualValues(t, 600, d["created"])
	require.EqualValues(t, 600, d["processed_rows"])
	var products, distinct, events int
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*), count(DISTINCT sku) FROM products WHERE store_id = $1`, m.storeID).Scan(&products, &distinct))
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM outbox WHERE store_id = $1 AND event = 'product.created'`, m.storeID).Scan(&events))
	require.Equal(t, 600, products)
	require.Equal(t, 600, distinct)
	require.Equal(t, 600, events, "one event per row, none repeated")
}

func itoa(i int) string { return strconv.Itoa(i) }

// slowHeartbeats is a worker interceptor that pauses after every activity
// heartbeat (an import heartbeats once per batch) until the pause is over or
// the worker stops, so a test can stop a worker in the middle of an import.
func slowHeartbeats(pause time.Duration) interceptor.WorkerInterceptor {
	return &slowWorker{pause: pause}
}

type slowWorker struct {
	interceptor.WorkerInterceptorBase
	pause time.Duration
}

func (s *slowWorker) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	in := &slowActivityInbound{pause: s.pause}
	in.Next = next
	return in
}

type slowActivityInbound struct {
	interceptor.ActivityInboundInterceptorBase
	pause time.Duration
}

func (in *slowActivityInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	out := &slowActivityOutbound{pause: in.pause}
	out.Next = outbound
	return in.Next.Init(out)
}

type slowActivityOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
	pause time.Duration
}

func (out *slowActivityOutbound) RecordHeartbeat(ctx context.Context, details ...any) {
	out.Next.RecordHeartbeat(ctx, details...)
	select {
	case <-ctx.Done():
	case <-activity.GetWorkerStopChannel(ctx):
	case <-time.After(out.pause):
	}
}

// The export streams: 100 000 products go out while the heap stays far
// below what holding them would take.
func TestCSVExportStreamsInFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 100 000 products")
	}
	h := newHarness(t, api.Config{})
	m := h.signup("bigexport")
	token := h.pat(m, "catalog:read")
	h.exec(`WITH p AS (
			INSERT INTO products (id, store_id, name, description, sku, price, status)
			SELECT gen_random_uuid(), $1, 'منتج ' || i, 'A product with a description of a realistic length for the export test', 'EXP-' || i, 1000 + i, 'active'
			FROM generate_series(1, 100000) AS i
			RETURNING id, store_id, price, sku)
		INSERT INTO variants (id, store_id, product_id, price, quantity, position, is_default)
		SELECT gen_random_uuid(), store_id, id, price, substr(sku, 5)::int % 40, 1, true FROM p`, m.storeID)

	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > peak.Load() {
					peak.Store(ms.HeapAlloc)
				}
			}
		}
	}()
	req, err := http.NewRequest(http.MethodGet, h.url+storePath(m.storeID, "/products/export"), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	lines, size := 0, 0
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		size += n
		lines += bytes.Count(buf[:n], []byte("\n"))
		if err != nil {
			break
		}
	}
	close(stop)
	<-sampled
	require.Equal(t, 100001, lines, "the header and every product")
	growth := int64(peak.Load()) - int64(before.HeapAlloc)
	t.Logf("exported %d MB; heap grew at most %d KB", size>>20, growth>>10)
	require.Greater(t, size, 10<<20)
	// Holding the catalog would take more than the export's own size (each
	// product record carries more than its CSV line, about twice); streaming
	// stays far below it, even under the race detector's allocation
	// overhead. The collector lets the heap pass what is live by its
	// percentage (10) before it collects, which in a process that earlier
	// tests left with a large live heap is megabytes that nothing holds.
	pacing := int64(before.HeapAlloc) / 10
	require.Less(t, growth, int64(size)+pacing, "the export must not hold the catalog in memory")
}
