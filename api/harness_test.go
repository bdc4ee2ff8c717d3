package api_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/activities/waybill"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/mailsink"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/tracing"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/blob"
	"github.com/merchantsvc/svc/worker"
	"github.com/merchantsvc/svc/workflows"
)

func TestMain(m *testing.M) {
	testenv.SearchAttributes = workflows.SearchAttributeTypes
	testenv.MainChecked(m, everyWriteRouteAudited, waybills.Close)
}

// everyWriteRouteAudited checks, after a whole green run of the package,
// that its tests walked every audited write route to a success that wrote
// its one entry (checkAudited). A route no test changes anything through
// is a route whose audit entry nothing proves.
func everyWriteRouteAudited() error {
	actions, _ := api.AuditedRoutes()
	var missing []string
	for route, action := range actions {
		if _, ok := auditSeen.Load(action); !ok {
			missing = append(missing, route+" ("+action+")")
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("audit: no test made a successful change through %d write routes:\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
	return nil
}

// waybills is the test binary's one Chromium for waybill renders, started
// by the first render.
var waybills = &waybill.Printer{}

func (h *harness) waybillPrinter() *waybill.Printer {
	if h.noWaybillPrinter {
		return nil
	}
	return waybills
}

// harness is the real API over a fresh database, the in-process Temporal
// server and a fresh bucket, reached over loopback HTTP.
type harness struct {
	t      *testing.T
	db     *storage.DB
	blob   *blob.Store
	server *api.Server
	url    string
	queue  string
	mail   *mailsink.Sink
	chat   *fakeChat
	// temporal is the client of the API, the worker and the dispatcher.
	temporal client.Client
	// tracing is the API's, given to the dispatcher too.
	tracing *tracing.Tracing
	// schedule is the webhook retry ladder the harness's dispatcher uses.
	schedule []time.Duration
	// authority is the e-invoicing service the worker talks to, when set
	// before startWorker.
	authority einvoice.Authority
	// contactInterval is the worker's confirmation interval per contact:
	// off (a nanosecond) unless a test sets it before startWorker.
	contactInterval time.Duration
	// lostStartAge, when set before startWorker, makes the dispatcher sweep
	// up lost workflow starts this old, every two of them.
	lostStartAge time.Duration
	// workerInterceptors, when set before startWorker, wrap the worker's
	// activities (slowHeartbeats, to watch an import move).
	workerInterceptors []interceptor.WorkerInterceptor
	// noWaybillPrinter starts the worker without a waybill printer: every
	// render fails for good.
	noWaybillPrinter bool
	// secrets and stripeBase open stores' gateway secrets and name the
	// Stripe API the worker calls: the API's (stripe-mock) unless a test
	// sets another before startWorker.
	secrets    *storage.Sealer
	stripeBase string
}

// fakeChat is a WhatsApp-Cloud-style provider on loopback that records
// every message and answers with failWith's code when it is set; the first
// `unavailable` messages it answers 503.
type fakeChat struct {
	srv         *httptest.Server
	mu          sync.Mutex
	sent        []map[string]any
	failWith    int
	unavailable int
}

func newFakeChat(t *testing.T) *fakeChat {
	f := &fakeChat{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.sent = append(f.sent, body)
		w.Header().Set("Content-Type", "application/json")
		if f.unavailable > 0 {
			f.unavailable--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if f.failWith != 0 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"code":%d,"message":"Message undeliverable"}}`, f.failWith)
			return
		}
		fmt.Fprintf(w, `{"messages":[{"id":"wamid.%d"}]}`, len(f.sent))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeChat) messages() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.sent...)
}

func newHarness(t *testing.T, cfg api.Config) *harness {
	t.Helper()
	return newHarnessWith(t, cfg, testenv.DB(t), testenv.Temporal(t))
}

// newHarnessWith is newHarness over a given database and Temporal client
// (traced ones, for the tracing test); the worker uses them too.
func newHarnessWith(t *testing.T, cfg api.Config, db *storage.DB, temporal client.Client) *harness {
	t.Helper()
	return newHarnessOver(t, cfg, db, temporal, testenv.Blob(t))
}

// newHarnessOver is newHarnessWith over a given object store too.
func newHarnessOver(t *testing.T, cfg api.Config, db *storage.DB, temporal client.Client, store *blob.Store) *harness {
	t.Helper()
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = testenv.TaskQueue(t)
	}
	// Every test signs up and orders from loopback: the per-network limits
	// are lifted unless a test sets them (their own tests do).
	if cfg.Passwords.SignupsPerAddress == 0 {
		cfg.Passwords.SignupsPerAddress = 1_000_000
	}
	if cfg.SessionRateLimitPerMinute == 0 {
		cfg.SessionRateLimitPerMinute = 1_000_000
	}
	if cfg.ExportRateLimitPerMinute == 0 {
		cfg.ExportRateLimitPerMinute = 1_000_000
	}
	if cfg.StorefrontOrdersPerPhone == 0 {
		cfg.StorefrontOrdersPerPhone = 1_000_000
	}
	if cfg.StorefrontOrdersPerNetwork == 0 {
		cfg.StorefrontOrdersPerNetwork = 1_000_000
	}
	// Card payments: a sealer of the test's own and the binary's stripe-mock.
	if cfg.Secrets == nil {
		cfg.Secrets = testenv.Sealer(t)
	}
	if cfg.WhatsAppAPIBase == "" {
		cfg.WhatsAppAPIBase = testenv.WhatsAppAPIBase(t)
	}
	if cfg.StripeAPIBase == "" {
		cfg.StripeAPIBase = testenv.StripeAPIBase(t)
	}
	// The server learns its own URL only once it listens.
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL
	var logTo io.Writer = io.Discard
	if os.Getenv("SVC_TEST_LOG") != "" { // the server's log, to see what a 500 was
		logTo = os.Stderr
	}
	server := api.NewServer(cfg, db, temporal, store, slog.New(slog.NewTextHandler(logTo, nil)))
	handler = server
	return &harness{t: t, db: db, blob: store, server: server, url: srv.URL, queue: cfg.TaskQueue, schedule: cfg.WebhookRetrySchedule,
		temporal: temporal, tracing: cfg.Tracing, secrets: cfg.Secrets, stripeBase: cfg.StripeAPIBase}
}

// startWorker runs a worker with every activity on the harness's task
// queue, sending mail to an in-process SMTP sink and chat to a fake provider.
func (h *harness) startWorker(httpClient *http.Client) {
	h.t.Helper()
	sink, err := mailsink.Start("")
	require.NoError(h.t, err)
	h.t.Cleanup(func() { _ = sink.Stop() })
	h.mail, h.chat = sink, newFakeChat(h.t)
	host, port, _ := net.SplitHostPort(sink.Addr)
	portNumber, _ := strconv.Atoi(port)
	w := worker.New(h.temporal, h.queue, &activities.Activities{DB: h.db, Blob: h.blob, HTTPClient: httpClient, BaseURL: h.url,
		Mailer:    &activities.SMTPMailer{Host: host, Port: portNumber, From: "orders@example.com", PlainText: true},
		Chat:      activities.HTTPChatProvider{BaseURL: h.chat.srv.URL, Token: "test"},
		EInvoices: h.authority, ZATCAAPIBase: testenv.ZATCAAPIBase(h.t), ContactInterval: cmp.Or(h.contactInterval, time.Nanosecond), Waybills: h.waybillPrinter(),
		Secrets: h.secrets, StripeAPIBase: h.stripeBase, WhatsAppAPIBase: testenv.WhatsAppAPIBase(h.t)}, worker.Options{Interceptors: h.workerInterceptors})
	require.NoError(h.t, w.Start())
	h.t.Cleanup(w.Stop)
	// Like `svc worker`, the dispatcher runs beside the worker.
	d := &worker.Dispatcher{DB: h.db, Temporal: h.temporal, TaskQueue: h.queue, Tracing: h.tracing, Schedule: h.schedule, PollInterval: 50 * time.Millisecond,
		LostStartAge: h.lostStartAge, SweepInterval: 2 * h.lostStartAge}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	h.t.Cleanup(func() { cancel(); <-done })
}

// response is a decoded answer.
type response struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// data is the success envelope's data object.
func (r response) data() map[string]any {
	d, _ := r.Body["data"].(map[string]any)
	return d
}

func (r response) errorCode() string {
	e, _ := r.Body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func (r response) errorField(name string) any {
	e, _ := r.Body["error"].(map[string]any)
	return e[name]
}

// fieldNames lists the fields of a 422.
func (r response) fieldNames() []string {
	e, _ := r.Body["error"].(map[string]any)
	fields, _ := e["fields"].([]any)
	var names []string
	for _, f := range fields {
		names = append(names, f.(map[string]any)["field"].(string))
	}
	return names
}

// auth is how a request authenticates: a bearer token or a session cookie.
type auth struct {
	token   string
	session string
}

type request struct {
	method  string
	path    string
	body    any // marshalled to JSON unless []byte or string
	auth    auth
	headers map[string]string
	// contractExempt, with the reason, skips checking that an accepted
	// request matches the OpenAPI document (a test of the server's leniency).
	contractExempt string
}

func (h *harness) do(req request) response {
	h.t.Helper()
	var (
		body    io.Reader
		payload []byte
	)
	switch b := req.body.(type) {
	case nil:
	case []byte:
		payload = b
	case string:
		payload = []byte(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(h.t, err)
		payload = raw
	}
	if req.body != nil {
		body = bytes.NewReader(payload)
	}
	httpReq, err := http.NewRequest(req.method, h.url+req.path, body)
	require.NoError(h.t, err)
	if body != nil {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	if req.auth.token != "" {
		httpReq.Header.Set("Authorization", "Bearer "+req.auth.token)
	}
	if req.auth.session != "" {
		// What a browser sends from the merchant's pages; a test of the
		// origin rule sets its own (an empty value reads as absent).
		httpReq.AddCookie(&http.Cookie{Name: "svc_session", Value: req.auth.session})
		httpReq.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	for k, v := range req.headers {
		httpReq.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(httpReq)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	if err := checkContract(httpReq, payload, req.contractExempt == "", resp, raw); err != nil {
		h.t.Error(err)
	}
	h.checkAudited(httpReq, resp)
	out := response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(raw, &out.Body)
	}
	return out
}

// auditSeen holds every audit action a test saw written for a successful
// request, for TestMain's check that the suite walked every write route.
var auditSeen sync.Map

// checkAudited holds every store write the tests make to decisions §16: a
// change that succeeded wrote exactly one audit entry, one refused wrote
// none (a replayed answer is no change). It runs on every harness request.
func (h *harness) checkAudited(req *http.Request, resp *http.Response) {
	h.t.Helper()
	if !strings.HasPrefix(req.URL.Path, "/api/v1/stores/") || req.Method == http.MethodGet ||
		resp.StatusCode >= 500 || resp.Header.Get("Idempotent-Replayed") == "true" || !testenv.OpenedHere(h.db) {
		return
	}
	rows, err := testenv.SQL(h.t, h.db).Query(context.Background(), `SELECT action FROM audit_entries WHERE request_id = $1`,
		resp.Header.Get("X-Request-Id"))
	require.NoError(h.t, err)
	var actions []string
	for rows.Next() {
		var a string
		require.NoError(h.t, rows.Scan(&a))
		actions = append(actions, a)
	}
	require.NoError(h.t, rows.Err())
	switch {
	case resp.StatusCode >= 400 && len(actions) > 0:
		h.t.Errorf("audit: %s %s was refused (%d) but wrote %v", req.Method, req.URL.Path, resp.StatusCode, actions)
	case resp.StatusCode < 400 && (strings.HasSuffix(req.URL.Path, "/orders/preview") || strings.HasSuffix(req.URL.Path, "/shipping/quote")):
		if len(actions) > 0 {
			h.t.Errorf("audit: %s %s changes nothing but wrote %v", req.Method, req.URL.Path, actions)
		}
	case resp.StatusCode < 400 && len(actions) != 1:
		h.t.Errorf("audit: %s %s answered %d and wrote %d audit entries %v, not one", req.Method, req.URL.Path, resp.StatusCode, len(actions), actions)
	case resp.StatusCode < 400:
		auditSeen.Store(actions[0], true)
	}
}

// merchant is a signed-up merchant with one store.
type merchant struct {
	email   string
	session string
	storeID string
}

func (h *harness) signup(name string) merchant {
	h.t.Helper()
	sub := fmt.Sprintf("%s-%d", name, rand.Uint32())
	email := sub + "@example.com"
	resp := h.do(request{method: "POST", path: "/api/v1/auth/signup", body: map[string]any{
		"email": email, "password": "correct horse battery", "name": "Merchant " + name,
		"store": map[string]any{"name": "Store " + name, "subdomain": sub, "currency": "EGP", "default_language": "ar"},
	}})
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	var session string
	for _, c := range (&http.Response{Header: resp.Header}).Cookies() {
		if c.Name == "svc_session" {
			session = c.Value
		}
	}
	require.NotEmpty(h.t, session)
	store := resp.data()["store"].(map[string]any)
	return merchant{email: email, session: session, storeID: store["id"].(string)}
}

func (m merchant) auth() auth { return auth{session: m.session} }

// pat mints a personal access token with the scopes.
func (h *harness) pat(m merchant, scopes ...string) string {
	h.t.Helper()
	resp := h.do(request{method: "POST", path: "/api/v1/stores/" + m.storeID + "/access-tokens", auth: m.auth(),
		body: map[string]any{"name": "test", "scopes": scopes}})
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	return resp.data()["token"].(string)
}

func bearer(token string) auth { return auth{token: token} }

func storePath(storeID, rest string) string { return "/api/v1/stores/" + storeID + rest }

// createProduct makes a product through the API and returns its data.
func (h *harness) createProduct(token, storeID string, body map[string]any) map[string]any {
	h.t.Helper()
	resp := h.do(request{method: "POST", path: storePath(storeID, "/products"), auth: bearer(token), body: body})
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	return resp.data()
}

// awayFromWindowEdge waits for the next minute when less than 10 s of this
// one is left: rate limits count in wall-clock minutes (the same windows on
// every replica), and a test expecting exact counts must not straddle two.
func awayFromWindowEdge() {
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 10*time.Second {
		time.Sleep(left)
	}
}

// burst runs do(0) … do(n-1) at once, each in its own goroutine, and
// tallies what they answer (a status, or a status and an error code): the
// shape of every test that a limit or a lock holds under a parallel rush.
func burst[K comparable](n int, do func(i int) K) map[K]int {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		tally = map[K]int{}
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := do(i)
			mu.Lock()
			defer mu.Unlock()
			tally[k]++
		}()
	}
	wg.Wait()
	return tally
}

// list is a page's items, or the elements of a bare array answer.
func (r response) list() []any {
	if len(r.Raw) > 0 && r.Raw[0] == '[' {
		var items []any
		if err := json.Unmarshal(r.Raw, &items); err != nil {
			panic(err)
		}
		return items
	}
	items, _ := r.data()["items"].([]any)
	return items
}

// fieldError is the 422 entry for one field (nil when absent).
func (r response) fieldError(name string) map[string]any {
	e, _ := r.Body["error"].(map[string]any)
	fields, _ := e["fields"].([]any)
	for _, f := range fields {
		if f := f.(map[string]any); f["field"] == name {
			return f
		}
	}
	return nil
}

func (r response) fieldCode(name string) string {
	code, _ := r.fieldError(name)["code"].(string)
	return code
}

func (r response) fieldMessageAr(name string) string {
	msg, _ := r.fieldError(name)["message_ar"].(string)
	return msg
}
