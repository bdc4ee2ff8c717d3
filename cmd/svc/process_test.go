package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/operatorservice/v1"

	"github.com/merchantsvc/svc/internal/mailsink"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/workflows"
)

// TestMain gives the binary's in-process Temporal server the search
// attributes the service's workflows carry.
func TestMain(m *testing.M) {
	testenv.SearchAttributes = workflows.SearchAttributeTypes
	testenv.Main(m)
}

// `svc api` with SVC_OTEL_ENDPOINT set sends its spans to the collector over
// OTLP/HTTP, named by route pattern with the SQL under them, and flushes the
// last batch when it stops.
func TestAPIProcessExportsTraces(t *testing.T) {
	collector := testenv.TraceCollector(t)

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

	require.Equal(t, map[string]bool{"svc-api": true}, collector.Services())
	names := collector.SpanNames()
	require.Contains(t, names, "GET /api/v1/storefront/{subdomain}/products")
	var queries int
	for _, n := range names {
		if strings.HasPrefix(n, "query ") {
			queries++
		}
	}
	require.Positive(t, queries, "the store lookup is a span: %v", names)
}

// `svc worker` serves the probes its Deployment uses beside its metrics.
func TestWorkerProcessServesProbesAndMetrics(t *testing.T) {
	hostPort, namespace := testenv.TemporalAddress(t)
	endpoint, accessKey, secretKey := testenv.S3(t)
	sink, err := mailsink.Start("")
	require.NoError(t, err)
	t.Cleanup(func() { _ = sink.Stop() })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	metricsAddr := l.Addr().String()
	require.NoError(t, l.Close())
	cfg := Config{MetricsAddr: metricsAddr, DatabaseURL: testenv.DatabaseURL(t, true), TemporalAddress: hostPort,
		TemporalNamespace: namespace, TaskQueue: testenv.TaskQueue(t), S3Endpoint: endpoint, S3AccessKey: accessKey,
		S3SecretKey: secretKey, S3Bucket: "svc-test", SMTPAddr: sink.Addr, SMTPFrom: "orders@example.com", SMTPNoTLS: true,
		WebhookRetrySchedule: durationList{10 * time.Second}, LogLevel: "error", OtelSampleRatio: 1}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, []string{"worker"}, io.Discard, io.Discard) }()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + metricsAddr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	require.Eventually(t, func() bool { code, _ := get("/healthz"); return code == http.StatusOK }, 20*time.Second, 20*time.Millisecond)
	code, body := get("/readyz")
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"success": true, "data": {"postgres": "ok", "temporal": "ok", "object_store": "ok"}}`, body)
	code, body = get("/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "temporal_")
	stop()
	require.NoError(t, <-done)
}

// `svc temporal-setup` adds the search attributes to the namespace and may
// run again (deploy runs it before every start).
func TestTemporalSetupIsIdempotent(t *testing.T) {
	hostPort, namespace := testenv.TemporalAddress(t)
	cfg := Config{TemporalAddress: hostPort, TemporalNamespace: namespace, LogLevel: "error"}
	for range 2 {
		var out bytes.Buffer
		require.NoError(t, run(context.Background(), cfg, []string{"temporal-setup"}, &out, io.Discard))
		require.Contains(t, out.String(), "StoreId, ResourceId, OrderNumber, WorkKind")
	}
	c := testenv.Temporal(t)
	attrs, err := c.OperatorService().ListSearchAttributes(context.Background(), &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	require.NoError(t, err)
	for name, kind := range workflows.SearchAttributeTypes {
		require.Equal(t, kind, attrs.GetCustomAttributes()[name], name)
	}
	bad := Config{TemporalAddress: "127.0.0.1:1", TemporalNamespace: namespace}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	require.Error(t, run(ctx, bad, []string{"temporal-setup"}, io.Discard, io.Discard), "an unreachable Temporal fails the setup")
}
