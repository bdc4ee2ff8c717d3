package api_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	stripewebhook "github.com/stripe/stripe-go/v82/webhook"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/worker"
	"github.com/merchantsvc/svc/workflows"
)

// receiver is an HTTPS endpoint on loopback that records every delivery.
type receiver struct {
	srv     *httptest.Server
	caFile  string
	mu      sync.Mutex
	got     []received
	respond func(n int) int // status for the n-th request (1-based)
}

type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

func newReceiver(t *testing.T, respond func(n int) int) *receiver {
	rec := &receiver{respond: respond}
	rec.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.got = append(rec.got, received{header: r.Header.Clone(), body: body, at: time.Now()})
		status := rec.respond(len(rec.got))
		rec.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte("answer " + http.StatusText(status)))
	}))
	t.Cleanup(rec.srv.Close)
	rec.caFile = filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(rec.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rec.srv.Certificate().Raw}), 0o600))
	return rec
}

func (rec *receiver) url() string { return rec.srv.URL + "/hooks?source=svc" }

func (rec *receiver) requests() []received {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]received(nil), rec.got...)
}

// waitFor polls until cond holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// webhookHarness is the API plus a worker and dispatcher on a fresh task
// queue, trusting the receiver's certificate through SVC_WEBHOOK_CA_FILE's path.
type webhookHarness struct {
	*harness
	m     merchant
	token string
}

func newWebhookHarness(t *testing.T, rec *receiver, schedule []time.Duration) *webhookHarness {
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}, WebhookRetrySchedule: schedule})
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.startWorker(httpClient)
	m := h.signup("hooks")
	return &webhookHarness{harness: h, m: m, token: h.pat(m, "settings:write", "catalog:write", "orders:read")}
}

func (h *webhookHarness) subscribe(url string, events ...string) (id, secret string) {
	h.t.Helper()
	resp := h.do(request{method: "POST", path: storePath(h.m.storeID, "/webhooks"), auth: bearer(h.token),
		body: map[string]any{"url": url, "events": events, "description": "erp"}})
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	return resp.data()["id"].(string), resp.data()["secret"].(string)
}

func (h *webhookHarness) logs(subID string) []map[string]any {
	h.t.Helper()
	resp := h.do(request{method: "GET", path: storePath(h.m.storeID, "/webhooks/"+subID+"/logs?limit=100"), auth: bearer(h.token)})
	require.Equal(h.t, http.StatusOK, resp.Status, string(resp.Raw))
	var out []map[string]any
	for _, it := range resp.data()["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

var shortSchedule = []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}

func TestWebhookDeliveredFirstTimeAndVerifiableByStripeLibrary(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	h := newWebhookHarness(t, rec, shortSchedule)
	subID, secret := h.subscribe(rec.url(), "product.created")
	require.True(t, strings.HasPrefix(secret, "svc_whsec_"))

	p := h.createProduct(h.token, h.m.storeID, map[string]any{"name": "Lamp", "price": 1000, "sku": "L-1"})
	waitFor(t, "one delivery", func() bool { return len(rec.requests()) == 1 })
	got := rec.requests()[0]
	require.Equal(t, "application/json", got.header.Get("Content-Type"))
	require.Equal(t, "product.created", got.header.Get("X-SVC-Event"))
	_, err := uuid.Parse(got.header.Get("X-SVC-Delivery"))
	require.NoError(t, err)

	// A maintained Stripe-style verifier accepts the V1 header on the raw body.
	require.NoError(t, stripewebhook.ValidatePayload(got.body, got.header.Get("X-SVC-Signature-V1"), secret))
	require.Error(t, stripewebhook.ValidatePayload(got.body, got.header.Get("X-SVC-Signature-V1"), "svc_whsec_wrong"))
	require.NoError(t, webhook.Verify(secret, got.body, got.header.Get("X-SVC-Signature-V1"), 5*time.Minute, time.Now()))
	_, legacy := webhook.Sign(secret, got.body, time.Now())
	require.Equal(t, legacy, got.header.Get("X-SVC-Signature"))

	var body struct {
		Event     string         `json:"event"`
		Timestamp string         `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(got.body, &body))
	require.Equal(t, "product.created", body.Event)
	_, err = time.Parse(time.RFC3339, body.Timestamp)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"store_id": h.m.storeID, "product_id": p["id"], "sku": "L-1", "updated_at": body.Data["updated_at"]}, body.Data)

	waitFor(t, "the attempt in the log", func() bool { return len(h.logs(subID)) == 1 })
	log := h.logs(subID)[0]
	require.Equal(t, "succeeded", log["status"])
	require.EqualValues(t, 200, log["response_code"])
	require.EqualValues(t, 1, log["attempt"])
	require.Equal(t, "answer OK", log["response_body"])

	// Events the subscription did not name are not sent.
	h.do(request{method: "PATCH", path: storePath(h.m.storeID, "/products/"+p["id"].(string)), auth: bearer(h.token), body: map[string]any{"name": "x"}})
	time.Sleep(500 * time.Millisecond)
	require.Len(t, rec.requests(), 1)
}

func TestWebhookRetriedAfterFailureKeepsDeliveryID(t *testing.T) {
	rec := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	h := newWebhookHarness(t, rec, shortSchedule)
	subID, secret := h.subscribe(rec.url(), "product.created")
	h.createProduct(h.token, h.m.storeID, map[string]any{"name": "Lamp", "price": 1000})
	waitFor(t, "the retry", func() bool { return len(rec.requests()) == 2 })
	reqs := rec.requests()
	require.Equal(t, reqs[0].header.Get("X-SVC-Delivery"), reqs[1].header.Get("X-SVC-Delivery"))
	require.Equal(t, reqs[0].body, reqs[1].body, "the same bytes are sent on every attempt")
	for _, r := range reqs {
		require.NoError(t, stripewebhook.ValidatePayload(r.body, r.header.Get("X-SVC-Signature-V1"), secret))
	}
	waitFor(t, "two attempts logged", func() bool { return len(h.logs(subID)) == 2 })
	logs := h.logs(subID)
	require.Equal(t, "succeeded", logs[0]["status"])
	require.EqualValues(t, 2, logs[0]["attempt"])
	require.Equal(t, "failed", logs[1]["status"])
	require.EqualValues(t, 500, logs[1]["response_code"])
	time.Sleep(500 * time.Millisecond)
	require.Len(t, rec.requests(), 2, "nothing after the success")

	// Deleting the subscription takes its deliveries and, through them,
	// their attempts (an attempt has no reference of its own to the
	// subscription since migration 0039; since 0044 and 0045 neither table
	// has a foreign key, and statement triggers do the taking).
	resp := h.do(request{method: "DELETE", path: storePath(h.m.storeID, "/webhooks/"+subID), auth: bearer(h.token)})
	require.Equal(t, http.StatusNoContent, resp.Status, string(resp.Raw))
	var deliveries, attempts int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM webhook_deliveries WHERE subscription_id = $1),
			(SELECT count(*) FROM webhook_attempts WHERE subscription_id = $1)`, subID).Scan(&deliveries, &attempts))
	require.Zero(t, deliveries)
	require.Zero(t, attempts)
}

func TestWebhookExhaustionSwitchesOffNotifiesAndReenables(t *testing.T) {
	healthy := false
	var mu sync.Mutex
	rec := newReceiver(t, func(int) int {
		mu.Lock()
		defer mu.Unlock()
		if healthy {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	h := newWebhookHarness(t, rec, shortSchedule)
	subID, _ := h.subscribe(rec.url(), "product.created")
	h.createProduct(h.token, h.m.storeID, map[string]any{"name": "First", "price": 1})
	waitFor(t, "six attempts", func() bool { return len(rec.requests()) == 6 })
	waitFor(t, "switched off", func() bool {
		sub := h.do(request{method: "GET", path: storePath(h.m.storeID, "/webhooks/"+subID), auth: bearer(h.token)})
		return sub.data()["is_active"] == false
	})
	logs := h.logs(subID)
	require.Len(t, logs, 6)
	require.Equal(t, "exhausted", logs[0]["status"], "the final failed attempt is logged as exhausted")
	for _, l := range logs[1:] {
		require.Equal(t, "failed", l["status"])
	}
	notes := h.do(request{method: "GET", path: storePath(h.m.storeID, "/notifications"), auth: h.m.auth()})
	require.Equal(t, http.StatusOK, notes.Status)
	items := notes.data()["items"].([]any)
	require.Len(t, items, 1)
	require.Equal(t, "webhook.disabled", items[0].(map[string]any)["kind"])
	require.NotEmpty(t, items[0].(map[string]any)["body_ar"])

	// While switched off, events are recorded as skipped and not sent.
	since := time.Now().UTC()
	h.createProduct(h.token, h.m.storeID, map[string]any{"name": "While off", "price": 1})
	time.Sleep(700 * time.Millisecond)
	require.Len(t, rec.requests(), 6)

	mu.Lock()
	healthy = true
	mu.Unlock()
	on := h.do(request{method: "PATCH", path: storePath(h.m.storeID, "/webhooks/"+subID), auth: bearer(h.token), body: map[string]any{"is_active": true}})
	require.Equal(t, http.StatusOK, on.Status)
	require.Nil(t, on.data()["disabled_at"])
	h.createProduct(h.token, h.m.storeID, map[string]any{"name": "After", "price": 1})
	waitFor(t, "delivery after re-enabling", func() bool { return len(rec.requests()) == 7 })
	require.Contains(t, string(rec.requests()[6].body), "product.created")

	// recover re-sends what was skipped while the subscription was off.
	recovered := h.do(request{method: "POST", path: storePath(h.m.storeID, "/webhooks/"+subID+"/recover"), auth: bearer(h.token),
		body: map[string]any{"since": since.Add(-time.Second).Format(time.RFC3339Nano)}})
	require.Equal(t, http.StatusAccepted, recovered.Status, string(recovered.Raw))
	require.EqualValues(t, 1, recovered.data()["queued"])
	waitFor(t, "the skipped event", func() bool { return len(rec.requests()) == 8 })
	var skippedBody map[string]any
	require.NoError(t, json.Unmarshal(rec.requests()[7].body, &skippedBody))
	require.Equal(t, "product.created", skippedBody["event"])
}

func TestWebhookGoneStopsAtOnce(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusGone })
	h := newWebhookHarness(t, rec, shortSchedule)
	subID, _ := h.subscribe(rec.url(), "product.created")
	h.createProduct(h.token, h.m.storeID, map[string]any{"name": "x", "price": 1})
	waitFor(t, "one attempt", func() bool { return len(h.logs(subID)) == 1 })
	time.Sleep(700 * time.Millisecond)
	require.Len(t, rec.requests(), 1, "410 is not retried")
	require.Equal(t, "gone", h.logs(subID)[0]["status"])
	sub := h.do(request{method: "GET", path: storePath(h.m.storeID, "/webhooks/"+subID), auth: bearer(h.token)})
	require.Equal(t, true, sub.data()["is_active"], "410 ends the delivery, not the subscription")

	// Redeliver sends that delivery again on request.
	deliveryID := h.logs(subID)[0]["delivery_id"].(string)
	again := h.do(request{method: "POST", path: storePath(h.m.storeID, "/webhooks/"+subID+"/deliveries/"+deliveryID+"/redeliver"), auth: bearer(h.token)})
	require.Equal(t, http.StatusAccepted, again.Status, string(again.Raw))
	waitFor(t, "the redelivery", func() bool { return len(rec.requests()) == 2 })
	require.Equal(t, deliveryID, rec.requests()[1].header.Get("X-SVC-Delivery"))
}

func TestWebhookRotationSignsNextRetryWithNewSecret(t *testing.T) {
	rec := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	h := newWebhookHarness(t, rec, []time.Duration{1500 * time.Millisecond})
	subID, oldSecret := h.subscribe(rec.url(), "product.created")
	h.createProduct(h.token, h.m.storeID, map[string]any{"name": "x", "price": 1})
	waitFor(t, "the first attempt", func() bool { return len(rec.requests()) == 1 })
	rotated := h.do(request{method: "POST", path: storePath(h.m.storeID, "/webhooks/"+subID+"/rotate-secret"), auth: bearer(h.token)})
	require.Equal(t, http.StatusOK, rotated.Status)
	newSecret := rotated.data()["secret"].(string)
	require.NotEqual(t, oldSecret, newSecret)
	waitFor(t, "the retry", func() bool { return len(rec.requests()) == 2 })
	retry := rec.requests()[1]
	require.NoError(t, stripewebhook.ValidatePayload(retry.body, retry.header.Get("X-SVC-Signature-V1"), newSecret))
	require.Error(t, stripewebhook.ValidatePayload(retry.body, retry.header.Get("X-SVC-Signature-V1"), oldSecret))
}

func TestWebhookTestPing(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusAccepted })
	h := newWebhookHarness(t, rec, shortSchedule)
	subID, secret := h.subscribe(rec.url(), "order.paid")
	resp := h.do(request{method: "POST", path: storePath(h.m.storeID, "/webhooks/"+subID+"/test"), auth: bearer(h.token)})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.EqualValues(t, 202, resp.data()["status_code"])
	require.Equal(t, "answer Accepted", resp.data()["response_body"])
	require.Nil(t, resp.data()["error"])
	got := rec.requests()
	require.Len(t, got, 1)
	require.Equal(t, "webhook.ping", got[0].header.Get("X-SVC-Event"))
	require.Equal(t, resp.data()["delivery_id"], got[0].header.Get("X-SVC-Delivery"))
	require.NoError(t, stripewebhook.ValidatePayload(got[0].body, got[0].header.Get("X-SVC-Signature-V1"), secret))
	require.Equal(t, "webhook.ping", h.logs(subID)[0]["event"])
}

func TestWebhookSubscriptionRules(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("rules")
	token := h.pat(m, "settings:write", "orders:read")
	readOnly := h.pat(m, "settings:read")
	path := storePath(m.storeID, "/webhooks")

	// The address guard, with the private-address rule in force.
	for _, url := range []string{
		"http://example.com/hook",           // not https
		"https://127.0.0.1/hook",            // loopback
		"https://localhost/hook",            // a name that resolves to loopback
		"https://10.1.2.3/hook",             // private
		"https://172.16.5.4/hook",           // private
		"https://192.168.0.10/hook",         // private
		"https://169.254.169.254/latest",    // link-local (cloud metadata)
		"https://100.64.0.1/hook",           // CGNAT
		"https://224.0.0.1/hook",            // multicast
		"https://0.0.0.0/hook",              // unspecified
		"https://[::1]/hook",                // IPv6 loopback
		"https://[fc00::1]/hook",            // ULA
		"https://[fe80::1]/hook",            // IPv6 link-local
		"https://[ff02::1]/hook",            // IPv6 multicast
		"https://[::ffff:127.0.0.1]/hook",   // IPv4-mapped loopback
		"https://[::ffff:192.168.1.1]/hook", // IPv4-mapped private
		"https://user:pw@203.0.113.7/hook",  // credentials in the URL
	} {
		resp := h.do(request{method: "POST", path: path, auth: bearer(token), body: map[string]any{"url": url, "events": []string{"order.paid"}}})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, url)
		require.Equal(t, []string{"url"}, resp.fieldNames(), url)
	}
	ok := h.do(request{method: "POST", path: path, auth: bearer(token), body: map[string]any{"url": "https://203.0.113.7/hook", "events": []string{"order.paid"}}})
	require.Equal(t, http.StatusCreated, ok.Status, string(ok.Raw))
	subID := ok.data()["id"].(string)
	patched := h.do(request{method: "PATCH", path: path + "/" + subID, auth: bearer(token), body: map[string]any{"url": "https://10.0.0.1/x"}})
	require.Equal(t, http.StatusUnprocessableEntity, patched.Status)

	badEvents := h.do(request{method: "POST", path: path, auth: bearer(token), body: map[string]any{"url": "https://203.0.113.7/h", "events": []string{"order.paid", "customer.created", "webhook.ping"}}})
	require.Equal(t, http.StatusUnprocessableEntity, badEvents.Status)
	require.ElementsMatch(t, []string{"events[1]", "events[2]"}, badEvents.fieldNames())

	list := h.do(request{method: "GET", path: path, auth: bearer(readOnly)})
	require.Equal(t, http.StatusOK, list.Status)
	require.Len(t, list.Body["data"], 1)
	require.NotContains(t, string(list.Raw), "svc_whsec_", "the secret is shown only at creation and rotation")
	require.Equal(t, http.StatusForbidden, h.do(request{method: "POST", path: path, auth: bearer(readOnly), body: map[string]any{}}).Status)

	for i := 1; i < 20; i++ {
		resp := h.do(request{method: "POST", path: path, auth: bearer(token), body: map[string]any{"url": "https://203.0.113.7/h", "events": []string{"order.paid"}}})
		require.Equal(t, http.StatusCreated, resp.Status)
	}
	over := h.do(request{method: "POST", path: path, auth: bearer(token), body: map[string]any{"url": "https://203.0.113.7/h", "events": []string{"order.paid"}}})
	require.Equal(t, http.StatusUnprocessableEntity, over.Status)

	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: path + "/" + subID, auth: bearer(token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: path + "/" + subID, auth: bearer(token)}).Status)
}

// The check happens on the address actually dialled: even a URL that passed
// validation cannot reach a loopback receiver (DNS rebinding), and redirects
// are not followed.
func TestWebhookDialGuardRefusesInternalAddresses(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	guarded, err := webhook.Guard{}.NewClient(rec.caFile)
	require.NoError(t, err)
	res := webhook.Send(context.Background(), guarded, webhook.Request{URL: rec.url(), Secret: "s", DeliveryID: "d", Event: "e", Body: []byte("{}")}, time.Now())
	require.Zero(t, res.StatusCode)
	require.Contains(t, res.Err, "not public")
	require.Empty(t, rec.requests())

	redirect := httptest.NewTLSServer(http.RedirectHandler("https://169.254.169.254/", http.StatusFound))
	t.Cleanup(redirect.Close)
	open, err := webhook.Guard{AllowPrivate: true}.NewClient("")
	require.NoError(t, err)
	open.Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify = true
	res = webhook.Send(context.Background(), open, webhook.Request{URL: redirect.URL, Secret: "s", DeliveryID: "d", Event: "e", Body: []byte("{}")}, time.Now())
	require.Equal(t, http.StatusFound, res.StatusCode, "the redirect is reported, not followed")
	require.False(t, res.OK())
}

// Events written while Temporal cannot be reached are delivered once it can,
// and two dispatchers racing over the same outbox send each delivery once.
func TestWebhookOutboxSurvivesTemporalOutageAndDuplicateDispatch(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	queue := testenv.TaskQueue(t)
	h := newHarness(t, api.Config{TaskQueue: queue, WebhookGuard: webhook.Guard{AllowPrivate: true}})
	m := h.signup("outage")
	token := h.pat(m, "settings:write", "catalog:write")
	sub := h.do(request{method: "POST", path: storePath(m.storeID, "/webhooks"), auth: bearer(token),
		body: map[string]any{"url": rec.url(), "events": []string{"product.created"}}})
	require.Equal(t, http.StatusCreated, sub.Status)
	for i := range 5 {
		h.createProduct(token, m.storeID, map[string]any{"name": "p" + string(rune('a'+i)), "price": 1})
	}

	// Temporal is down: a client to a port where nothing listens.
	down, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	require.NoError(t, err)
	t.Cleanup(down.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	(&worker.Dispatcher{DB: h.db, Temporal: down, TaskQueue: queue, Schedule: shortSchedule}).DispatchPending(ctx)
	unstarted, err := h.db.FindUnstartedBatches(ctx, 0)
	require.NoError(t, err)
	require.Len(t, unstarted, 1, "the deliveries exist; their workflow is not started")
	require.Empty(t, rec.requests())

	// Temporal is back: two dispatchers sweep and dispatch at the same time.
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	w := worker.New(testenv.Temporal(t), queue, &activities.Activities{DB: h.db, HTTPClient: httpClient}, worker.Options{})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	for i := range 3 {
		h.createProduct(token, m.storeID, map[string]any{"name": "after" + string(rune('a'+i)), "price": 1})
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := &worker.Dispatcher{DB: h.db, Temporal: testenv.Temporal(t), TaskQueue: queue, Schedule: shortSchedule}
			d.Sweep(ctx, 0)
			d.DispatchPending(ctx)
			d.Sweep(ctx, 0)
		}()
	}
	wg.Wait()
	waitFor(t, "all eight deliveries", func() bool { return len(rec.requests()) >= 8 })
	time.Sleep(time.Second)
	seen := map[string]int{}
	for _, r := range rec.requests() {
		seen[r.header.Get("X-SVC-Delivery")]++
	}
	require.Len(t, seen, 8)
	for id, n := range seen {
		require.Equal(t, 1, n, "delivery %s sent %d times", id, n)
	}
	unstarted, err = h.db.FindUnstartedBatches(ctx, 0)
	require.NoError(t, err)
	require.Empty(t, unstarted)
}

// Webhook dispatches run on their own task queue: with nothing polling the
// main queue, so that every order's order-placed workflow waits there,
// order.created still reaches the subscriber.
func TestWebhooksAreDeliveredWhileTheMainQueueIsBacklogged(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	queue := testenv.TaskQueue(t)
	h := newHarness(t, api.Config{TaskQueue: queue, WebhookGuard: webhook.Guard{AllowPrivate: true}})
	s := newShop(t, h, "backlog", 10)
	settings := h.pat(s.m, "settings:write", "orders:read")
	sub := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks"), auth: bearer(settings),
		body: map[string]any{"url": rec.url(), "events": []string{"order.created"}}})
	require.Equal(t, http.StatusCreated, sub.Status)

	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	webhooksOnly := sdkworker.New(testenv.Temporal(t), workflows.WebhookTaskQueue(queue), sdkworker.Options{})
	worker.Register(webhooksOnly, &activities.Activities{DB: h.db, HTTPClient: httpClient})
	require.NoError(t, webhooksOnly.Start())
	t.Cleanup(webhooksOnly.Stop)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = (&worker.Dispatcher{DB: h.db, Temporal: testenv.Temporal(t), TaskQueue: queue, Schedule: shortSchedule,
			PollInterval: 50 * time.Millisecond}).Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })

	for range 3 {
		h.placeOrder(s, "cod", 1)
	}
	waitFor(t, "three order.created deliveries", func() bool { return len(rec.requests()) >= 3 })
	waitFor(t, "the order-placed workflows started on the main queue", func() bool {
		var started int
		require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(ctx, `SELECT count(*) FROM orders WHERE store_id = $1 AND placed_started_at IS NOT NULL`,
			s.m.storeID).Scan(&started))
		return started == 3
	})
	var sideEffects int
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(ctx, `SELECT count(*) FROM order_side_effects WHERE store_id = $1`, s.m.storeID).Scan(&sideEffects))
	require.Zero(t, sideEffects, "nothing polls the main queue, so no order-placed workflow ran")
}

// A subscription is a standing read: a merchant's subscription names only
// the events its credential could read (orders:read for order events,
// catalog:read for product events), as an app's grant does (issue 48 §6).
func TestWebhookSubscriptionEventsNeedTheirReadScope(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil) // the member's invitation mail
	m := h.signup("evscope")
	path := storePath(m.storeID, "/webhooks")
	hook := func(a auth, events ...string) response {
		return h.do(request{method: "POST", path: path, auth: a, body: map[string]any{"url": "https://203.0.113.7/h", "events": events}})
	}
	count := func() int {
		list := h.do(request{method: "GET", path: path, auth: m.auth()})
		require.Equal(t, http.StatusOK, list.Status)
		return len(list.Body["data"].([]any))
	}

	settingsOnly := h.pat(m, "settings:write")
	refused := hook(bearer(settingsOnly), "order.paid", "product.updated")
	require.Equal(t, http.StatusUnprocessableEntity, refused.Status, string(refused.Raw))
	require.ElementsMatch(t, []string{"events[0]", "events[1]"}, refused.fieldNames())
	require.Contains(t, string(refused.Raw), "scope_required")
	require.Equal(t, 0, count(), "nothing is created")

	orders := h.pat(m, "settings:write", "orders:read")
	require.Equal(t, []string{"events[1]"}, hook(bearer(orders), "order.paid", "product.created").fieldNames())
	created := hook(bearer(orders), "order.paid")
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	subID := created.data()["id"].(string)
	patched := h.do(request{method: "PATCH", path: path + "/" + subID, auth: bearer(orders), body: map[string]any{"events": []string{"product.deleted"}}})
	require.Equal(t, http.StatusUnprocessableEntity, patched.Status, string(patched.Raw))
	require.Equal(t, []string{"events[0]"}, patched.fieldNames())
	got := h.do(request{method: "GET", path: path + "/" + subID, auth: m.auth()})
	require.Equal(t, []any{"order.paid"}, got.data()["events"], "nothing is changed")
	// :write implies :read.
	require.Equal(t, http.StatusCreated, hook(bearer(h.pat(m, "settings:write", "catalog:write")), "product.updated").Status)

	// A session member holds their role's scopes.
	role := h.do(request{method: "POST", path: storePath(m.storeID, "/roles"), auth: m.auth(),
		body: map[string]any{"name": "Hooks", "scopes": []string{"settings:write", "catalog:read"}}})
	require.Equal(t, http.StatusCreated, role.Status, string(role.Raw))
	member := h.join(m, "hooks-evscope@example.com", role.data()["id"].(string))
	require.Equal(t, []string{"events[1]"}, hook(member.auth(), "product.created", "order.created").fieldNames())
	require.Equal(t, http.StatusCreated, hook(member.auth(), "product.created").Status)
	require.Equal(t, 3, count())
}
