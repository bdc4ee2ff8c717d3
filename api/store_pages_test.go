package api_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/interceptor"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
)

// screenshotDir is where the page tests keep their screenshots:
// $SVC_SCREENSHOTS when set (to look at them), else the test's temp dir.
func screenshotDir(t *testing.T) string {
	if dir := os.Getenv("SVC_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		return dir
	}
	return t.TempDir()
}

// overflowScript lists the rendered elements whose box leaves the viewport
// sideways, and a page that scrolls sideways.
const overflowScript = `(() => {
  const W = document.documentElement.clientWidth, bad = [];
  if (document.documentElement.scrollWidth > W + 1) bad.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " > " + W);
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < -1 || r.right > W + 1) bad.push(el.tagName + "." + el.className + " " + Math.round(r.left) + ".." + Math.round(r.right) + " of " + W);
  }
  return bad.slice(0, 10);
})()`

// checkLayout screenshots the page at a desktop and a phone width and
// fails when an element box leaves the viewport at either.
func checkLayout(t *testing.T, tab context.Context, name string) {
	t.Helper()
	dir := screenshotDir(t)
	for _, width := range []int64{1280, 390} {
		var bad []string
		var shot []byte
		require.NoError(t, chromedp.Run(tab,
			chromedp.EmulateViewport(width, 900),
			chromedp.Sleep(100*time.Millisecond),
			chromedp.Evaluate(overflowScript, &bad),
			chromedp.CaptureScreenshot(&shot), // the viewport: FullScreenshot clips right-to-left pages
		))
		require.Empty(t, bad, "%s at %d px", name, width)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width)), shot, 0o644))
	}
	require.NoError(t, chromedp.Run(tab, chromedp.EmulateViewport(1280, 900)))
}

// setLocale switches the merchant's pages between Arabic and English.
func (h *harness) setLocale(email, locale string) {
	h.t.Helper()
	_, err := testenv.SQL(h.t, h.db).Exec(context.Background(), `UPDATE users SET locale = $2 WHERE email = $1`, email, locale)
	require.NoError(h.t, err)
}

func productCSV(prefix string, rows int) string {
	var b strings.Builder
	b.WriteString("sku,name,price\n")
	for i := range rows {
		fmt.Fprintf(&b, "%s-%05d,منتج %d,%d.50\n", prefix, i, i, 10+i%90)
	}
	return b.String()
}

// badRowsCSV has two good rows and two bad ones (rows 3 and 5).
const badRowsCSV = "sku,name,price,quantity\nOK-1,Good,1.00,1\nBAD-1,,2.00,1\nOK-2,Good too,3.00,2\nBAD-2,Bad quantity,4.00,lots\n"

func writeFile(t *testing.T, name, body string) string {
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// progressLog is every value an import card's bar took, in order.
func progressLog(t *testing.T, tab context.Context, importID string) []int {
	t.Helper()
	var raw string
	require.NoError(t, chromedp.Run(tab, chromedp.Evaluate(
		fmt.Sprintf(`document.querySelector('article[data-import-id="%s"]').dataset.progressLog`, importID), &raw)))
	var out []int
	for _, v := range strings.Split(raw, ",") {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, raw)
		out = append(out, n)
	}
	return out
}

func newestImportID(t *testing.T, tab context.Context, before int) string {
	t.Helper()
	var id string
	require.NoError(t, chromedp.Run(tab,
		chromedp.WaitVisible(fmt.Sprintf(`#imports article:nth-of-type(%d)`, before+1), chromedp.ByQuery),
		chromedp.AttributeValue(`#imports article:first-of-type`, "data-import-id", &id, nil, chromedp.ByQuery)))
	return id
}

func finished(importID string) chromedp.Action {
	return chromedp.WaitVisible(fmt.Sprintf(`article[data-import-id="%s"][data-finished="true"]`, importID), chromedp.ByQuery)
}

func cardText(t *testing.T, tab context.Context, importID, class string) string {
	t.Helper()
	var s string
	require.NoError(t, chromedp.Run(tab, chromedp.Text(fmt.Sprintf(`article[data-import-id="%s"] .%s`, importID, class), &s, chromedp.ByQuery)))
	return s
}

// The imports page in headless Chromium: a 10 000-row import moves the bar
// at least three times before its counts show; an import with bad rows
// lists them in Arabic and its error report downloads; two imports at once
// each show their own, and leaving and coming back shows the same imports.
func TestImportsPageInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{ImportEventsInterval: 40 * time.Millisecond})
	// Each batch of 1000 rows pauses after it commits, so the import takes
	// a couple of seconds instead of a fraction of one: long enough to watch.
	h.workerInterceptors = []interceptor.WorkerInterceptor{slowHeartbeats(200 * time.Millisecond)}
	h.startWorker(nil)
	m := h.signup("importpage")
	tab, _ := editorBrowser(t, h, m.email)
	big := writeFile(t, "catalog.csv", productCSV("BIG", 10_000))
	bad := writeFile(t, "bad.csv", badRowsCSV)
	page := h.url + "/stores/" + m.storeID + "/imports"

	var dir string
	require.NoError(t, chromedp.Run(tab,
		chromedp.Navigate(page),
		chromedp.WaitVisible(`#upload`, chromedp.ByID),
		chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
		chromedp.SetUploadFiles(`#file`, []string{big}, chromedp.ByID),
		chromedp.Click(`#upload-button`, chromedp.ByID),
	))
	require.Equal(t, "rtl", dir)
	first := newestImportID(t, tab, 0)
	require.NoError(t, chromedp.Run(tab, finished(first)))
	values := progressLog(t, tab, first)
	var between []int
	for _, v := range values {
		if v > 0 && v < 10_000 {
			between = append(between, v)
		}
	}
	require.GreaterOrEqual(t, len(between), 3, "the bar advanced at least three times before the end: %v", values)
	require.IsIncreasing(t, values)
	require.Equal(t, 10_000, values[len(values)-1])
	require.Equal(t, "10000", cardText(t, tab, first, "created"))
	require.Equal(t, "اكتمل", cardText(t, tab, first, "status"))

	// Bad rows: listed in the page's language, and the report downloads.
	downloads := t.TempDir()
	var downloaded atomic.Value
	chromedp.ListenTarget(tab, func(ev any) {
		if e, ok := ev.(*cdpbrowser.EventDownloadProgress); ok && e.State == cdpbrowser.DownloadProgressStateCompleted {
			downloaded.Store(e.GUID)
		}
	})
	require.NoError(t, chromedp.Run(tab,
		cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName).WithDownloadPath(downloads).WithEventsEnabled(true),
		chromedp.SetUploadFiles(`#file`, []string{bad}, chromedp.ByID),
		chromedp.Click(`#upload-button`, chromedp.ByID),
	))
	second := newestImportID(t, tab, 1)
	require.NotEqual(t, first, second)
	require.NoError(t, chromedp.Run(tab, finished(second)))
	var errorRows int
	var messages string
	require.NoError(t, chromedp.Run(tab,
		chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll('article[data-import-id="%s"] .row-errors tbody tr').length`, second), &errorRows),
		chromedp.Text(fmt.Sprintf(`article[data-import-id="%s"] .row-errors tbody`, second), &messages, chromedp.ByQuery),
	))
	require.Equal(t, 2, errorRows)
	require.Contains(t, messages, "الحقل مطلوب")
	require.Contains(t, messages, "ليس رقمًا صالحًا")
	require.Equal(t, "2", cardText(t, tab, second, "failed"))
	require.NoError(t, chromedp.Run(tab, chromedp.Click(fmt.Sprintf(`article[data-import-id="%s"] .errors-csv`, second), chromedp.ByQuery)))
	require.Eventually(t, func() bool { return downloaded.Load() != nil }, 10*time.Second, 50*time.Millisecond, "the error report downloads")
	report, err := os.ReadFile(filepath.Join(downloads, downloaded.Load().(string)))
	require.NoError(t, err)
	require.Contains(t, string(report), "row,column,code,message,message_ar")
	require.Contains(t, string(report), "3,name,required,is required,الحقل مطلوب")
	require.Contains(t, string(report), "5,quantity,invalid_number")
	checkLayout(t, tab, "imports-ar")

	// Two at once, then away and back while they run.
	more := writeFile(t, "more.csv", productCSV("MORE", 10_000))
	dry := writeFile(t, "dry.csv", productCSV("DRY", 4_000))
	require.NoError(t, chromedp.Run(tab, chromedp.SetUploadFiles(`#file`, []string{more}, chromedp.ByID), chromedp.Click(`#upload-button`, chromedp.ByID)))
	third := newestImportID(t, tab, 2)
	require.NoError(t, chromedp.Run(tab,
		chromedp.Click(`#dry-run`, chromedp.ByID),
		chromedp.SetUploadFiles(`#file`, []string{dry}, chromedp.ByID),
		chromedp.Click(`#upload-button`, chromedp.ByID)))
	fourth := newestImportID(t, tab, 3)
	require.NoError(t, chromedp.Run(tab,
		chromedp.Navigate(h.url+"/stores/"+m.storeID+"/work"),
		chromedp.WaitVisible(`#images`, chromedp.ByID),
		chromedp.Navigate(page),
		chromedp.WaitVisible(fmt.Sprintf(`article[data-import-id="%s"]`, third), chromedp.ByQuery),
		chromedp.WaitVisible(fmt.Sprintf(`article[data-import-id="%s"]`, fourth), chromedp.ByQuery),
		finished(third), finished(fourth), finished(first), finished(second),
	))
	require.Equal(t, "10000", cardText(t, tab, third, "created"))
	require.Equal(t, "4000", cardText(t, tab, fourth, "processed"))
	require.Equal(t, "4000", cardText(t, tab, fourth, "created"), "a dry run reports what it would create")
	var dryShown, wetShown bool
	require.NoError(t, chromedp.Run(tab,
		chromedp.Evaluate(fmt.Sprintf(`getComputedStyle(document.querySelector('article[data-import-id="%s"] .dry')).display !== "none"`, fourth), &dryShown),
		chromedp.Evaluate(fmt.Sprintf(`getComputedStyle(document.querySelector('article[data-import-id="%s"] .dry')).display !== "none"`, third), &wetShown)))
	require.True(t, dryShown, "the dry run is marked")
	require.False(t, wetShown, "a real import is not")
	var cards int
	require.NoError(t, chromedp.Run(tab, chromedp.Evaluate(`document.querySelectorAll('#imports article').length`, &cards)))
	require.Equal(t, 4, cards, "each import once")
	require.Nil(t, h.productBySKU(h.pat(m, "catalog:read"), m.storeID, "DRY-00001"), "the dry run saved nothing")

	h.setLocale(m.email, "en")
	require.NoError(t, chromedp.Run(tab, chromedp.Navigate(page), chromedp.WaitVisible(fmt.Sprintf(`article[data-import-id="%s"][data-finished="true"]`, second), chromedp.ByQuery),
		chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
		chromedp.Text(fmt.Sprintf(`article[data-import-id="%s"] .row-errors tbody`, second), &messages, chromedp.ByQuery)))
	require.Equal(t, "ltr", dir)
	require.Contains(t, messages, "is required")
	checkLayout(t, tab, "imports-en")
}

// The deliveries page: a failing receiver's delivery shows retrying with
// its next retry, then exhausted; once the receiver answers again,
// redeliver from the page delivers it.
func TestDeliveriesPageInHeadlessChromium(t *testing.T) {
	var healthy atomic.Bool
	rec := newReceiver(t, func(int) int {
		if healthy.Load() {
			return http.StatusOK
		}
		return http.StatusInternalServerError
	})
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}, WebhookRetrySchedule: []time.Duration{4 * time.Second}})
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.startWorker(httpClient)
	s := newShop(t, h, "deliverypage", 100)
	sub := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks"), auth: bearer(s.token),
		body: map[string]any{"url": rec.url(), "events": []string{"order.created"}}})
	require.Equal(t, http.StatusCreated, sub.Status, string(sub.Raw))
	order := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201001234567")})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))

	tab, _ := editorBrowser(t, h, s.m.email)
	page := h.url + "/stores/" + s.m.storeID + "/deliveries"
	status := func() string {
		var v string
		var ok bool
		require.NoError(t, chromedp.Run(tab, chromedp.Navigate(page), chromedp.WaitVisible(`.subscription`, chromedp.ByQuery),
			chromedp.AttributeValue(`tr.delivery`, "data-status", &v, &ok, chromedp.ByQuery, chromedp.AtLeast(0))))
		return v
	}
	require.Eventually(t, func() bool { return status() == "retrying" }, 20*time.Second, 200*time.Millisecond)
	var nextRetry, redeliverButtons string
	require.NoError(t, chromedp.Run(tab,
		chromedp.Text(`tr.delivery td:nth-child(5)`, &nextRetry, chromedp.ByQuery),
		chromedp.Evaluate(`String(document.querySelectorAll('tr.delivery .redeliver').length)`, &redeliverButtons)))
	require.Contains(t, nextRetry, "UTC", "a retrying delivery shows its next retry")
	require.Equal(t, "0", redeliverButtons, "as in the API, a delivery still retrying is not redelivered")
	checkLayout(t, tab, "deliveries-ar")

	require.Eventually(t, func() bool { return status() == "exhausted" }, 30*time.Second, 300*time.Millisecond)
	healthy.Store(true)
	click := func(button string) (ok, answer string) {
		t.Helper()
		require.NoError(t, chromedp.Run(tab,
			chromedp.Click(button, chromedp.ByQuery),
			chromedp.WaitVisible(`.result[data-ok]`, chromedp.ByQuery),
			chromedp.Text(`.result`, &answer, chromedp.ByQuery),
			chromedp.AttributeValue(`.result`, "data-ok", &ok, nil, chromedp.ByQuery)))
		return ok, answer
	}
	// The exhausted delivery switched the subscription off; as in the API,
	// a redelivery then answers 409 with its message, in Arabic here.
	var badge string
	require.NoError(t, chromedp.Run(tab, chromedp.Text(`.subscription .badge`, &badge, chromedp.ByQuery)))
	require.Equal(t, "متوقف", badge)
	ok, answer := click(`tr.delivery .redeliver`)
	require.Equal(t, "false", ok)
	require.Contains(t, answer, "الاشتراك متوقف")
	require.Equal(t, "exhausted", status(), "a refused redelivery changes nothing")
	ok, _ = click(`.subscription .enable`)
	require.Equal(t, "true", ok)
	require.Eventually(t, func() bool { return status() == "exhausted" }, 5*time.Second, 200*time.Millisecond)
	ok, answer = click(`tr.delivery .redeliver`)
	require.Equal(t, "true", ok, answer)
	require.Contains(t, answer, "1")
	require.Eventually(t, func() bool { return status() == "succeeded" }, 20*time.Second, 200*time.Millisecond)
	h.setLocale(s.m.email, "en")
	require.Equal(t, "succeeded", status())
	checkLayout(t, tab, "deliveries-en")
}

// The background work page lists images still processing and the orders
// whose side effects need the merchant, in the merchant's language.
func TestWorkPageInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "workpage", 100)
	ctx := context.Background()
	productID := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "مصباح نحاسي بنقوش يدوية طويلة الاسم جدًا", "price": 100})["id"].(string)
	_, err := testenv.SQL(t, h.db).Exec(ctx, `INSERT INTO product_images (id, store_id, product_id, status, original_key, content_type, position, workflow_started_at)
		VALUES ($1, $2, $3, 'processing', 'k', 'image/jpeg', 0, now())`, uuid.New(), s.m.storeID, productID)
	require.NoError(t, err)
	order := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201001234567")})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
	storeID, orderID := uuid.MustParse(s.m.storeID), uuid.MustParse(order.data()["id"].(string))
	require.NoError(t, h.db.InTx(ctx, func(tx *storage.Tx) error {
		return tx.FlagOrder(ctx, storeID, orderID, storage.ReasonSideEffectFailed+":email", "The order email could not be sent", "تعذّر إرسال بريد الطلب", nil)
	}))

	tab, _ := editorBrowser(t, h, s.m.email)
	var images, exceptions string
	require.NoError(t, chromedp.Run(tab,
		chromedp.Navigate(h.url+"/stores/"+s.m.storeID+"/work"),
		chromedp.Text(`#images`, &images, chromedp.ByID),
		chromedp.Text(`#exceptions`, &exceptions, chromedp.ByID)))
	require.Contains(t, images, "مصباح نحاسي")
	require.Contains(t, exceptions, "تعذّر إرسال بريد الطلب")
	require.Contains(t, exceptions, order.data()["order_number"].(string))
	checkLayout(t, tab, "work-ar")
	h.setLocale(s.m.email, "en")
	require.NoError(t, chromedp.Run(tab, chromedp.Navigate(h.url+"/stores/"+s.m.storeID+"/work"), chromedp.Text(`#exceptions`, &exceptions, chromedp.ByID)))
	require.Contains(t, exceptions, "The order email could not be sent")
	checkLayout(t, tab, "work-en")
}

// The store pages show a store only to its members: another merchant and a visitor
// without a session are sent to sign in, and see nothing of the store.
func TestStorePagesShowAStoreToItsMembersOnly(t *testing.T) {
	h := newHarness(t, api.Config{})
	a, b := h.signup("watch-a"), h.signup("watch-b")
	owner, other, nobody := h.newBrowser(), h.newBrowser(), h.newBrowser()
	owner.signIn(a.email)
	other.signIn(b.email)
	for _, section := range []string{"imports", "deliveries", "work"} {
		path := "/stores/" + a.storeID + "/" + section
		resp, body := owner.get(path)
		require.Equal(t, http.StatusOK, resp.StatusCode, section)
		require.Contains(t, body, a.storeID)
		require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'")
		for who, br := range map[string]*browser{"another merchant": other, "no session": nobody} {
			resp, body := br.get(path)
			require.Equal(t, http.StatusFound, resp.StatusCode, "%s on %s", who, section)
			require.True(t, strings.HasPrefix(resp.Header.Get("Location"), "/login?next="), who)
			require.NotContains(t, body, "<html", who)
			require.NotContains(t, body, a.email, who)
		}
	}
}

// The import's event stream over plain HTTP: progress events as batches
// commit, then the result, then the end, through a server whose write
// timeout is shorter than the stream (each event extends it); a finished
// import answers its result at once; an unknown import is a 404 in the
// envelope.
func TestImportEventsStream(t *testing.T) {
	h := newHarness(t, api.Config{ImportEventsInterval: 20 * time.Millisecond})
	h.workerInterceptors = []interceptor.WorkerInterceptor{slowHeartbeats(600 * time.Millisecond)}
	h.startWorker(nil)
	m := h.signup("events")
	writer, reader := h.pat(m, "catalog:write"), h.pat(m, "catalog:read")
	start := time.Now()
	resp := h.uploadFileWith(writer, storePath(m.storeID, "/products/import"), "file", []byte(productCSV("EV", 5_000)), nil,
		map[string]string{"Prefer": "respond-async"})
	require.Equal(t, http.StatusAccepted, resp.Status, string(resp.Raw))
	require.Less(t, time.Since(start), 2*time.Second, "Prefer: respond-async does not wait for the import")
	id := resp.data()["import_id"].(string)

	// Like `svc api`'s server, with a write timeout the stream outlasts.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	short := &http.Server{Handler: h.server, WriteTimeout: time.Second}
	go func() { _ = short.Serve(l) }()
	t.Cleanup(func() { _ = short.Close() })
	base := "http://" + l.Addr().String()

	stream := func(lastEventID string) (events []string, data []string) {
		req, err := http.NewRequest(http.MethodGet, base+storePath(m.storeID, "/products/imports/"+id+"/events"), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+reader)
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
		lines := bufio.NewScanner(res.Body)
		lines.Buffer(make([]byte, 1<<20), 1<<20)
		for lines.Scan() { // to the end of the stream
			line := lines.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				events = append(events, v)
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				data = append(data, v)
			}
		}
		return events, data
	}
	began := time.Now()
	events, data := stream("")
	require.Greater(t, time.Since(began), 1500*time.Millisecond, "the stream outlasted the write timeout")
	require.Equal(t, "result", events[len(events)-1], "the stream ends with the result")
	require.GreaterOrEqual(t, strings.Count(strings.Join(events, " "), "progress"), 3, "progress as batches commit: %v", events)
	require.Contains(t, data[len(data)-1], `"status":"succeeded"`)
	require.Contains(t, data[len(data)-1], `"created":5000`)

	events, _ = stream("5000")
	require.Equal(t, []string{"result"}, events, "a finished import answers its result at once")

	missing := h.do(request{method: "GET", path: storePath(m.storeID, "/products/imports/"+uuid.NewString()+"/events"), auth: bearer(reader)})
	require.Equal(t, http.StatusNotFound, missing.Status)
	require.NotEmpty(t, missing.errorField("message_ar"))
}

// The error report: every row error with its Arabic message, as CSV with a
// BOM, cells a spreadsheet would run neutralised.
func TestImportErrorReport(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("report")
	token := h.pat(m, "catalog:write")
	resp := h.importCSV(token, m.storeID, badRowsCSV+"OK-1,Twice,1.00,1\n", nil)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	first := resp.data()["errors"].([]any)[0].(map[string]any)
	require.Equal(t, "الحقل مطلوب", first["message_ar"])
	req, err := http.NewRequest(http.MethodGet, h.url+storePath(m.storeID, "/products/imports/"+resp.data()["import_id"].(string)+"/errors"), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body := new(strings.Builder)
	_, err = bufio.NewReader(res.Body).WriteTo(body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/csv; charset=utf-8", res.Header.Get("Content-Type"))
	require.Contains(t, res.Header.Get("Content-Disposition"), "attachment")
	lines := strings.Split(strings.TrimSpace(body.String()), "\n")
	require.Equal(t, "\ufeffrow,column,code,message,message_ar", lines[0])
	require.Equal(t, "3,name,required,is required,الحقل مطلوب", lines[1])
	require.Contains(t, body.String(), "duplicate_in_file")
	require.Len(t, lines, 4, "header, the missing name, the bad quantity, the repeated SKU")
}
