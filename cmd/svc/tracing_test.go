package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/merchantsvc/svc/internal/testenv"
)

// `svc api` with SVC_OTEL_ENDPOINT set sends its spans to the collector over
// OTLP/HTTP, named by route pattern with the SQL under them, and flushes the
// last batch when it stops.
func TestAPIProcessExportsTraces(t *testing.T) {
	var (
		mu       sync.Mutex
		names    []string
		services = map[string]bool{}
	)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.ResourceSpans {
			for _, attr := range rs.Resource.Attributes {
				if attr.Key == "service.name" {
					services[attr.Value.GetStringValue()] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(collector.Close)

	hostPort, namespace := testenv.TemporalAddress(t)
	endpoint, accessKey, secretKey := testenv.S3(t)
	cfg := Config{HTTPAddr: "127.0.0.1:0", DatabaseURL: testenv.DatabaseURL(t, true), TemporalAddress: hostPort,
		TemporalNamespace: namespace, TaskQueue: testenv.TaskQueue(t), S3Endpoint: endpoint, S3AccessKey: accessKey,
		S3SecretKey: secretKey, S3Bucket: "svc-test", RateLimitPerMinute: 300, StorefrontRateLimitPerMinute: 120,
		LogLevel: "error", OtelEndpoint: collector.URL, OtelSampleRatio: 1}
	ctx, stop := context.WithCancel(context.Background())
	out := addrWriter{addr: make(chan string, 1)}
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, []string{"api"}, out, io.Discard) }()
	base := <-out.addr

	resp, err := http.Get(base + "/api/v1/storefront/no-such-shop/products")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	stop() // SIGTERM
	require.NoError(t, <-done)

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, map[string]bool{"svc-api": true}, services)
	require.Contains(t, names, "GET /api/v1/storefront/{subdomain}/products")
	var queries int
	for _, n := range names {
		if strings.HasPrefix(n, "query ") {
			queries++
		}
	}
	require.Positive(t, queries, "the store lookup is a span: %v", names)
}
