package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/blob"
)

var allScopes = []string{"catalog:write", "media:write", "orders:write", "customers:write", "analytics:write",
	"marketing:write", "themes:write", "risk:write", "settings:write"}

// Store B's token and B's merchant session are refused on every one of store
// A's routes with 403, and nothing of store A changes.
func TestCrossStoreAccessIsRefusedOnEveryRoute(t *testing.T) {
	h := newHarness(t, api.Config{})
	a, b := h.signup("storea"), h.signup("storeb")
	tokenA, tokenB := h.pat(a, allScopes...), h.pat(b, allScopes...)
	product := h.createProduct(tokenA, a.storeID, map[string]any{"name": "A's", "price": 100, "sku": "A-1"})

	routes, err := h.server.Routes()
	require.NoError(t, err)
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	checked := 0
	for _, rt := range routes {
		method, pattern := rt[0], rt[1]
		if !strings.HasPrefix(pattern, "/api/v1/stores/{store_id}") {
			continue
		}
		path := strings.Replace(pattern, "{store_id}", a.storeID, 1)
		path = param.ReplaceAllString(path, product["id"].(string))
		for name, cred := range map[string]auth{"token": bearer(tokenB), "session": b.auth()} {
			resp := h.do(request{method: method, path: path, auth: cred, body: map[string]any{}})
			require.Equal(t, http.StatusForbidden, resp.Status, "%s %s with B's %s: %s", method, path, name, resp.Raw)
			require.Contains(t, []string{"STORE_MISMATCH", "TOKEN_NOT_ALLOWED"}, resp.errorCode())
		}
		checked++
	}
	require.GreaterOrEqual(t, checked, 15)

	got := h.do(request{method: "GET", path: storePath(a.storeID, "/products/"+product["id"].(string)), auth: bearer(tokenA)})
	require.Equal(t, http.StatusOK, got.Status)
	require.Equal(t, "A's", got.data()["name"])
}

func TestRateLimit(t *testing.T) {
	h := newHarness(t, api.Config{RateLimitPerMinute: 300})
	m := h.signup("ratelimit")
	token, other := h.pat(m, "catalog:read"), h.pat(m, "catalog:read")
	path := storePath(m.storeID, "/categories")

	awayFromWindowEdge()
	start := time.Now()
	for i := 1; i <= 300; i++ {
		resp := h.do(request{method: "GET", path: path, auth: bearer(token)})
		require.Equal(t, http.StatusOK, resp.Status, "request %d", i)
		require.Equal(t, "300", resp.Header.Get("X-RateLimit-Limit"))
		require.Equal(t, strconv.Itoa(300-i), resp.Header.Get("X-RateLimit-Remaining"), "request %d", i)
		require.NotEmpty(t, resp.Header.Get("X-RateLimit-Reset"))
	}
	require.Less(t, time.Since(start), 50*time.Second, "the 300 requests must fall inside one window for this test to mean anything")

	limited := h.do(request{method: "GET", path: path, auth: bearer(token)})
	require.Equal(t, http.StatusTooManyRequests, limited.Status)
	require.Equal(t, "RATE_LIMITED", limited.errorCode())
	require.NotEmpty(t, limited.errorField("message_ar"))
	retry, err := strconv.Atoi(limited.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, retry >= 1 && retry <= 60, retry)
	require.Equal(t, "0", limited.Header.Get("X-RateLimit-Remaining"))
	reset, err := strconv.ParseInt(limited.Header.Get("X-RateLimit-Reset"), 10, 64)
	require.NoError(t, err)
	require.InDelta(t, time.Now().Unix()+int64(retry), reset, 1)

	// The limit is per token.
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: path, auth: bearer(other)}).Status)
}

func TestIdempotencyKey(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("idem")
	token := h.pat(m, "catalog:write")
	path := storePath(m.storeID, "/products")
	body := map[string]any{"name": "Kettle", "price": 2500, "sku": "K-1"}
	key := map[string]string{"Idempotency-Key": "order-7781"}

	first := h.do(request{method: "POST", path: path, auth: bearer(token), body: body, headers: key})
	require.Equal(t, http.StatusCreated, first.Status)
	require.Empty(t, first.Header.Get("Idempotent-Replayed"))

	replay := h.do(request{method: "POST", path: path, auth: bearer(token), body: body, headers: key})
	require.Equal(t, http.StatusCreated, replay.Status)
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	require.JSONEq(t, string(first.Raw), string(replay.Raw))

	list := h.do(request{method: "GET", path: path, auth: bearer(token)})
	require.EqualValues(t, 1, list.data()["pagination"].(map[string]any)["total"], "the replay created nothing")

	reused := h.do(request{method: "POST", path: path, auth: bearer(token), body: map[string]any{"name": "Other", "price": 1}, headers: key})
	require.Equal(t, http.StatusUnprocessableEntity, reused.Status)
	require.Equal(t, "IDEMPOTENCY_KEY_REUSED", reused.errorCode())

	// A refused request replays its refusal too.
	dupKey := map[string]string{"Idempotency-Key": "dup-sku"}
	dup := h.do(request{method: "POST", path: path, auth: bearer(token), body: body, headers: dupKey})
	require.Equal(t, http.StatusConflict, dup.Status)
	dupAgain := h.do(request{method: "POST", path: path, auth: bearer(token), body: body, headers: dupKey})
	require.Equal(t, http.StatusConflict, dupAgain.Status)
	require.Equal(t, "true", dupAgain.Header.Get("Idempotent-Replayed"))

	// A key whose first request is still running answers 409.
	tokenRow, err := h.db.FindTokens(context.Background(), uuid.MustParse(m.storeID), "pat")
	require.NoError(t, err)
	scope := storage.IdempotencyScope{StoreID: uuid.MustParse(m.storeID), CredentialID: tokenRow[0].ID,
		Method: "POST", Route: "/api/v1/stores/{store_id}/products", Key: "in-flight"}
	_, err = h.db.ClaimIdempotencyKey(context.Background(), scope, []byte("fingerprint"))
	require.NoError(t, err)
	busy := h.do(request{method: "POST", path: path, auth: bearer(token), body: map[string]any{"name": "Busy", "price": 1},
		headers: map[string]string{"Idempotency-Key": "in-flight"}})
	require.Equal(t, http.StatusConflict, busy.Status)
	require.Equal(t, "IDEMPOTENCY_IN_PROGRESS", busy.errorCode())
	require.EqualValues(t, 1, h.do(request{method: "GET", path: path, auth: bearer(token)}).data()["pagination"].(map[string]any)["total"])

	invalid := h.do(request{method: "POST", path: path, auth: bearer(token), body: body,
		headers: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}})
	require.Equal(t, http.StatusUnprocessableEntity, invalid.Status)
	require.Equal(t, []string{"Idempotency-Key"}, invalid.fieldNames())
}

// Two identical requests racing with one key: one runs, the other is told it
// is in progress or gets the replay; exactly one product exists.
func TestIdempotencyKeyConcurrentRequests(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("race")
	token := h.pat(m, "catalog:write")
	path := storePath(m.storeID, "/products")
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = h.do(request{method: "POST", path: path, auth: bearer(token),
				body: map[string]any{"name": "Racer", "price": 1}, headers: map[string]string{"Idempotency-Key": "race-1"}}).Status
		}()
	}
	wg.Wait()
	for _, s := range statuses {
		require.Contains(t, []int{http.StatusCreated, http.StatusConflict}, s)
	}
	list := h.do(request{method: "GET", path: path, auth: bearer(token)})
	require.EqualValues(t, 1, list.data()["pagination"].(map[string]any)["total"])
}

func TestEnvelopeAndBodyErrors(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("envelope")
	token := h.pat(m, "catalog:write")
	path := storePath(m.storeID, "/products")

	cases := []struct {
		name    string
		req     request
		status  int
		code    string
		headers map[string]string
	}{
		{"malformed json", request{method: "POST", path: path, body: `{"name": "x",`}, 400, "MALFORMED_JSON", nil},
		{"unknown field", request{method: "POST", path: path, body: `{"name": "x", "price": 1, "colour": "red"}`}, 422, "VALIDATION_FAILED", nil},
		{"wrong type", request{method: "POST", path: path, body: `{"name": "x", "price": "ten"}`}, 422, "VALIDATION_FAILED", nil},
		{"fractional money", request{method: "POST", path: path, body: `{"name": "x", "price": 10.5}`}, 422, "VALIDATION_FAILED", nil},
		{"too large", request{method: "POST", path: path, body: `{"name": "` + strings.Repeat("x", 1<<20) + `", "price": 1}`}, 413, "PAYLOAD_TOO_LARGE", nil},
		{"not json", request{method: "POST", path: path, body: `name=x`, headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, "UNSUPPORTED_MEDIA_TYPE", nil},
		{"no content type", request{method: "POST", path: path, body: `{"name": "x", "price": 1}`, headers: map[string]string{"Content-Type": ""}}, 415, "UNSUPPORTED_MEDIA_TYPE", nil},
		{"malformed id", request{method: "GET", path: path + "/not-a-uuid"}, 422, "VALIDATION_FAILED", nil},
		{"malformed store id", request{method: "GET", path: "/api/v1/stores/123/products"}, 422, "VALIDATION_FAILED", nil},
		{"unknown route", request{method: "GET", path: "/api/v1/nothing-here"}, 404, "NOT_FOUND", nil},
		{"missing product", request{method: "GET", path: path + "/" + uuid.NewString()}, 404, "NOT_FOUND", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.auth = bearer(token)
			resp := h.do(tc.req)
			require.Equal(t, tc.status, resp.Status, string(resp.Raw))
			require.Equal(t, false, resp.Body["success"])
			require.Equal(t, tc.code, resp.errorCode())
			require.NotEmpty(t, resp.errorField("message"))
			require.NotEmpty(t, resp.errorField("message_ar"))
			require.Equal(t, resp.Header.Get("X-Request-Id"), resp.errorField("request_id"))
		})
	}
	unknown := h.do(request{method: "POST", path: path, auth: bearer(token), body: `{"name": "x", "price": 1, "colour": "red"}`})
	require.Equal(t, []string{"colour"}, unknown.fieldNames())
	list := h.do(request{method: "GET", path: path, auth: bearer(token)})
	require.EqualValues(t, 0, list.data()["pagination"].(map[string]any)["total"], "refused requests changed nothing")

	echoed := h.do(request{method: "GET", path: path, auth: bearer(token), headers: map[string]string{"X-Request-Id": "client-req-42"}})
	require.Equal(t, "client-req-42", echoed.Header.Get("X-Request-Id"))
	require.Equal(t, true, echoed.Body["success"])
}

func TestHealthAndReadiness(t *testing.T) {
	h := newHarness(t, api.Config{})
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: "/healthz"}).Status)
	ready := h.do(request{method: "GET", path: "/readyz"})
	require.Equal(t, http.StatusOK, ready.Status, string(ready.Raw))
	require.Equal(t, map[string]any{"postgres": "ok", "temporal": "ok", "object_store": "ok"}, ready.data())

	// An object store nobody listens on makes the service unready, by name.
	deadBlob, err := blob.Open(blob.Options{Endpoint: "127.0.0.1:1", AccessKey: "x", SecretKey: "xxxxxxxx", Bucket: "b"})
	require.NoError(t, err)
	srv := httptest.NewServer(api.NewServer(api.Config{}, testenv.DB(t), testenv.Temporal(t), deadBlob, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Contains(t, body["error"].(map[string]any)["message"], "object_store")
	require.NotContains(t, body["error"].(map[string]any)["message"], "postgres")
}

// The OpenAPI document names exactly the routes the server serves.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	h := newHarness(t, api.Config{})
	resp := h.do(request{method: "GET", path: "/api/v1/openapi.json"})
	require.Equal(t, http.StatusOK, resp.Status)
	require.Equal(t, "3.1.0", resp.Body["openapi"])

	documented := map[string]bool{}
	for path, item := range resp.Body["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			switch method {
			case "get", "post", "put", "patch", "delete":
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	routes, err := h.server.Routes()
	require.NoError(t, err)
	served := map[string]bool{}
	for _, rt := range routes {
		served[rt[0]+" "+strings.TrimSuffix(rt[1], "/")] = true
	}
	var missing, extra []string
	for r := range served {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for r := range documented {
		if !served[r] {
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	require.Empty(t, missing, "served but not documented")
	require.Empty(t, extra, "documented but not served")
}

// A 500 says only "internal error", and its idempotency key is freed so the
// retry runs for real once the fault is gone.
func TestServerErrorIsOpaqueAndNotStored(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("fault")
	token := h.pat(m, "catalog:write")
	ctx := context.Background()
	_, err := testenv.SQL(h.t, h.db).Exec(ctx, `ALTER TABLE products RENAME TO products_away`)
	require.NoError(t, err)

	req := request{method: "POST", path: storePath(m.storeID, "/products"), auth: bearer(token),
		body: map[string]any{"name": "Vase", "price": 100}, headers: map[string]string{"Idempotency-Key": "retry-me"}}
	failed := h.do(req)
	require.Equal(t, http.StatusInternalServerError, failed.Status)
	require.Equal(t, "INTERNAL", failed.errorCode())
	require.Equal(t, "Internal error", failed.errorField("message"))
	require.NotContains(t, string(failed.Raw), "products")
	require.NotContains(t, string(failed.Raw), "SQLSTATE")

	_, err = testenv.SQL(h.t, h.db).Exec(ctx, `ALTER TABLE products_away RENAME TO products`)
	require.NoError(t, err)
	retried := h.do(req)
	require.Equal(t, http.StatusCreated, retried.Status, string(retried.Raw))
	require.Empty(t, retried.Header.Get("Idempotent-Replayed"))
}

// The OpenAPI document holds together: every $ref resolves, every {param}
// of a path is declared as a path parameter, every operation has responses.
func TestOpenAPIDocumentIsConsistent(t *testing.T) {
	raw, err := api.OpenAPIDocument()
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))

	resolve := func(ref string) (any, bool) {
		var node any = doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, ok := node.(map[string]any)
			if !ok {
				return nil, false
			}
			if node, ok = m[part]; !ok {
				return nil, false
			}
		}
		return node, true
	}
	var walk func(path string, node any)
	walk = func(path string, node any) {
		switch v := node.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				_, found := resolve(ref)
				require.True(t, found, "%s: $ref %s does not resolve", path, ref)
			}
			for k, child := range v {
				walk(path+"/"+k, child)
			}
		case []any:
			for i, child := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), child)
			}
		}
	}
	walk("#", doc)

	pathParams := func(list []any) map[string]bool {
		names := map[string]bool{}
		for _, p := range list {
			param := p.(map[string]any)
			if ref, ok := param["$ref"].(string); ok {
				resolved, _ := resolve(ref)
				param = resolved.(map[string]any)
			}
			if param["in"] == "path" {
				names[param["name"].(string)] = true
			}
		}
		return names
	}
	placeholder := regexp.MustCompile(`\{([a-z_]+)\}`)
	for path, item := range doc["paths"].(map[string]any) {
		item := item.(map[string]any)
		shared, _ := item["parameters"].([]any)
		for method, op := range item {
			if method == "parameters" {
				continue
			}
			op := op.(map[string]any)
			own, _ := op["parameters"].([]any)
			declared := pathParams(append(append([]any{}, shared...), own...))
			for _, m := range placeholder.FindAllStringSubmatch(path, -1) {
				require.True(t, declared[m[1]], "%s %s does not declare the path parameter %s", method, path, m[1])
			}
			responses, _ := op["responses"].(map[string]any)
			require.NotEmpty(t, responses, "%s %s has no responses", method, path)
			require.NotEmpty(t, op["summary"], "%s %s has no summary", method, path)
		}
	}
}

// Unknown fields are named by their path, at any depth; known fields match
// without case, as encoding/json matches them.
func TestUnknownFieldPaths(t *testing.T) {
	h := newHarness(t, api.Config{})
	nested := h.do(request{method: "POST", path: "/api/v1/auth/signup", body: `{"email":"a@example.com","password":"correct horse battery",
		"name":"A","store":{"name":"S","subdomain":"unknown-field","currency":"EGP","default_language":"ar","colour":"red"}}`})
	require.Equal(t, http.StatusUnprocessableEntity, nested.Status, string(nested.Raw))
	require.Equal(t, []string{"store.colour"}, nested.fieldNames())

	m := h.signup("fieldpaths")
	token := h.pat(m, "orders:write", "catalog:write")
	inList := h.do(request{method: "POST", path: storePath(m.storeID, "/orders"), auth: bearer(token),
		body: `{"customer":{"name":"x","phone":"+201001234567"},"lines":[{"variant_id":"` + uuid.NewString() + `","quantity":1,"qty":2}],
		"shipping_address":{"name":"x","phone":"+201001234567","line1":"1","city":"c","country":"EG"},"payment_method":"cod"}`})
	require.Equal(t, http.StatusUnprocessableEntity, inList.Status, string(inList.Raw))
	require.Equal(t, []string{"lines[0].qty"}, inList.fieldNames())

	cased := h.do(request{method: "POST", path: storePath(m.storeID, "/products"), auth: bearer(token), body: `{"Name":"Lamp","PRICE":100}`,
		contractExempt: "keys match without case, as encoding/json matches them, which JSON Schema cannot say"})
	require.Equal(t, http.StatusCreated, cased.Status, string(cased.Raw))
}

// /metrics speaks Prometheus: requests by route pattern (never a raw path),
// rate-limit rejections, idempotent replays and the outbox backlog.
func TestMetricsEndpoint(t *testing.T) {
	h := newHarness(t, api.Config{RateLimitPerMinute: 2, MetricsToken: scrapeToken})
	m := h.signup("metrics")
	token := h.pat(m, "catalog:write")
	for range 3 {
		h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+uuid.NewString()), auth: bearer(token)})
	}
	status, text := scrape(t, h.url, scrapeToken)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, text, `svc_http_requests_total{method="GET",route="/api/v1/stores/{store_id}/products/{product_id}",status="404"} 2`)
	require.Contains(t, text, `svc_rate_limit_rejections_total{limit="token"} 1`)
	require.Contains(t, text, `svc_http_request_duration_seconds_bucket{method="GET",route="/api/v1/stores/{store_id}/products/{product_id}"`)
	require.Contains(t, text, "svc_outbox_backlog ")
	require.Contains(t, text, "svc_outbox_oldest_age_seconds ")
	require.NotContains(t, text, m.storeID, "no raw paths as labels")
}

// Metric labels come from bounded sets whatever a client sends: unknown
// methods are OTHER and unknown paths unmatched, so garbage cannot grow
// /metrics (20 requests with 100 kB methods once grew it by 32 MB).
func TestMetricsLabelsStayBounded(t *testing.T) {
	h := newHarness(t, api.Config{MetricsToken: scrapeToken})
	series := func() int {
		_, text := scrape(t, h.url, scrapeToken)
		return strings.Count(text, "svc_http_requests_total{")
	}
	send := func(method, path string) {
		req, err := http.NewRequest(method, h.url+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	send("GET", "/api/v1/no-such-thing")
	send("BREW", "/healthz")
	before := series()
	for i := range 50 {
		send(fmt.Sprintf("X%d%s", i, strings.Repeat("M", 2000)), fmt.Sprintf("/api/v1/garbage-%d/%s", i, uuid.NewString()))
		send("GET", fmt.Sprintf("/garbage-%d", i))
	}
	require.LessOrEqual(t, series(), before+2, "at most the OTHER and unmatched combinations seen once more")
	_, body := scrape(t, h.url, scrapeToken)
	require.NotContains(t, body, "MMMM", "no client-chosen method in a label")
	require.Contains(t, body, `method="OTHER"`)
}

// Two API replicas over one database share each token's count: the limit
// holds for the token, not per replica. Each replica counts in memory and
// shares at every sync (every second in `svc api`; by hand here).
func TestRateLimitIsSharedAcrossReplicas(t *testing.T) {
	const limit = 10
	first := newHarness(t, api.Config{RateLimitPerMinute: limit})
	second := newHarnessWith(t, api.Config{RateLimitPerMinute: limit}, first.db, testenv.Temporal(t))
	m := first.signup("shared-limit")
	token := first.pat(m, "catalog:read")
	path := storePath(m.storeID, "/categories")
	ctx := context.Background()
	remaining := func(h *harness) string {
		t.Helper()
		resp := h.do(request{method: "GET", path: path, auth: bearer(token)})
		require.Equal(t, http.StatusOK, resp.Status)
		return resp.Header.Get("X-RateLimit-Remaining")
	}
	share := func(hs ...*harness) {
		for _, h := range hs {
			require.NoError(t, h.server.ShareRateLimits(ctx))
		}
	}

	awayFromWindowEdge()
	for range 6 {
		remaining(first)
	}
	share(first)
	require.Equal(t, "9", remaining(second), "before a sync the second replica knows only its own request")
	share(second)
	require.Equal(t, "2", remaining(second), "after it, the first replica's six count too")
	share(second, first)
	require.Equal(t, "1", remaining(first))
	share(first, second)
	require.Equal(t, "0", remaining(second))
	share(second, first)
	for _, h := range []*harness{first, second} {
		limited := h.do(request{method: "GET", path: path, auth: bearer(token)})
		require.Equal(t, http.StatusTooManyRequests, limited.Status, "the token's ten are spent on both replicas")
		require.Equal(t, "0", limited.Header.Get("X-RateLimit-Remaining"))
	}
}

// A signed-in user's API requests are limited too (they were unlimited):
// SessionRateLimitPerMinute per user in any 60 s, with the X-RateLimit-*
// headers tokens get, counted per user however many sessions they hold.
func TestSessionRateLimit(t *testing.T) {
	h := newHarness(t, api.Config{SessionRateLimitPerMinute: 5})
	m := h.signup("sessionlimit")
	other := h.signup("sessionlimit2")
	awayFromWindowEdge()
	path := storePath(m.storeID, "/categories")
	var last response
	for i := 1; i <= 6; i++ {
		last = h.do(request{method: "GET", path: path, auth: m.auth()})
		if last.Status != http.StatusOK {
			break
		}
		require.Equal(t, "5", last.Header.Get("X-RateLimit-Limit"), "request %d", i)
		require.NotEmpty(t, last.Header.Get("X-RateLimit-Remaining"))
		require.NotEmpty(t, last.Header.Get("X-RateLimit-Reset"))
	}
	require.Equal(t, http.StatusTooManyRequests, last.Status, string(last.Raw))
	require.Equal(t, "RATE_LIMITED", last.errorCode())
	require.NotEmpty(t, last.errorField("message_ar"))
	require.NotEmpty(t, last.Header.Get("Retry-After"))
	require.Equal(t, "0", last.Header.Get("X-RateLimit-Remaining"))
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(other.storeID, "/categories"), auth: other.auth()}).Status, "per user")
	// Signing in again opens no fresh budget: the user's new session shares
	// the count.
	again := sessionCookie(t, h.login(m.email, "correct horse battery"))
	fresh := h.do(request{method: "GET", path: path, auth: auth{session: again}})
	require.Equal(t, http.StatusTooManyRequests, fresh.Status, "a second session of the same user: %s", fresh.Raw)
	require.Equal(t, "RATE_LIMITED", fresh.errorCode())
}
