package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage/blob"
)

// scrapeToken is the SVC_METRICS_TOKEN of the tests that scrape the public port.
const scrapeToken = "scrape-secret"

// scrape reads /metrics on the public port with token (none when empty).
func scrape(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// /metrics is off the public port unless SVC_METRICS_TOKEN is set: 404
// without it, 401 for a scraper without the token; the metrics address
// (MetricsHandler) serves it to anyone who reaches it (issue 48 §9).
func TestMetricsOffThePublicPort(t *testing.T) {
	closed := newHarness(t, api.Config{})
	status, body := scrape(t, closed.url, "")
	require.Equal(t, http.StatusNotFound, status, body)
	status, _ = scrape(t, closed.url, "anything")
	require.Equal(t, http.StatusNotFound, status)
	private := httptest.NewServer(closed.server.MetricsHandler())
	t.Cleanup(private.Close)
	status, body = scrape(t, private.URL, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "svc_http_requests_total{")

	open := newHarness(t, api.Config{MetricsToken: scrapeToken})
	for _, token := range []string{"", "wrong", scrapeToken + "x"} {
		status, body := scrape(t, open.url, token)
		require.Equal(t, http.StatusUnauthorized, status, "token %q: %s", token, body)
		require.NotContains(t, body, "svc_http_requests_total")
	}
	status, body = scrape(t, open.url, scrapeToken)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "svc_http_requests_total{")
}

// /readyz answers from a check made at most once a second: a burst of
// concurrent probes asks the dependencies once, not once each (issue 48 §9).
// The object store here counts the requests it gets.
func TestReadinessIsCheckedOncePerSecond(t *testing.T) {
	var hits atomic.Int32
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(store.Close)
	objects, err := blob.Open(blob.Options{Endpoint: strings.TrimPrefix(store.URL, "http://"), AccessKey: "x", SecretKey: "xxxxxxxx", Bucket: "readiness"})
	require.NoError(t, err)
	srv := httptest.NewServer(api.NewServer(api.Config{}, testenv.DB(t), testenv.Temporal(t), objects, slog.New(slog.DiscardHandler)))
	t.Cleanup(srv.Close)

	const probes = 40
	var wg sync.WaitGroup
	statuses := make([]int, probes)
	for i := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(srv.URL + "/readyz")
			if err == nil {
				statuses[i] = resp.StatusCode
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	for _, s := range statuses {
		require.Equal(t, statuses[0], s, "every probe gets the one check's answer")
	}
	require.NotZero(t, statuses[0])
	require.LessOrEqual(t, hits.Load(), int32(2), "%d probes asked the object store %d times", probes, hits.Load())
}
