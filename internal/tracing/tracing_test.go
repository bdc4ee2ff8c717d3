package tracing_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/tracing"
)

// Without an endpoint nothing is wrapped, traced or exported.
func TestOffWithoutAnEndpoint(t *testing.T) {
	tr, err := tracing.New(context.Background(), "", "svc-api", 1)
	require.NoError(t, err)
	require.False(t, tr.Enabled())
	h := http.NewServeMux()
	require.Same(t, h, tr.Handler(h), "the handler is served as it is")
	require.Nil(t, tr.QueryTracer())
	interceptors, err := tr.TemporalInterceptors()
	require.NoError(t, err)
	require.Empty(t, interceptors)
	ctx, span := tr.StartLinked(context.Background(), "webhook dispatch", []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	require.Equal(t, context.Background(), ctx)
	require.False(t, span.IsRecording())
	require.NoError(t, tr.Shutdown(context.Background()))
}

// A stored traceparent brings a later span into the trace that stored it,
// and a span gathering several traces links to each.
func TestContinueFromAndLinks(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	tr := tracing.NewWith("svc-test", sdktrace.WithSyncer(exporter))
	ctx, request := tr.Provider().Tracer("test").Start(context.Background(), "request")
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	stored := carrier["traceparent"]
	request.End()
	require.Regexp(t, `^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`, stored)

	_, later := tr.Provider().Tracer("test").Start(tracing.ContinueFrom(context.Background(), stored), "after commit")
	later.End()
	_, dispatch := tr.StartLinked(context.Background(), "webhook dispatch", []string{stored, "garbage"})
	dispatch.End()
	spans := exporter.GetSpans()
	require.Len(t, spans, 3)
	require.Equal(t, spans[0].SpanContext.TraceID(), spans[1].SpanContext.TraceID())
	require.Equal(t, spans[0].SpanContext.SpanID(), spans[1].Parent.SpanID())
	require.NotEqual(t, spans[0].SpanContext.TraceID(), spans[2].SpanContext.TraceID(), "a trace of its own")
	require.Len(t, spans[2].Links, 1, "linked to the valid traceparent only")
	require.Equal(t, spans[0].SpanContext.SpanID(), spans[2].Links[0].SpanContext.SpanID())
	require.Equal(t, context.Background(), tracing.ContinueFrom(context.Background(), ""))
}

// A failed request's log line names its trace, and the span holds the error.
func TestTraceIDAndRecordError(t *testing.T) {
	require.Empty(t, tracing.TraceID(context.Background()))
	tracing.RecordError(context.Background(), errors.New("no span: nothing happens"))

	exporter := tracetest.NewInMemoryExporter()
	tr := tracing.NewWith("svc-test", sdktrace.WithSyncer(exporter))
	ctx, span := tr.Provider().Tracer("test").Start(context.Background(), "request")
	tracing.RecordError(ctx, errors.New("database down"))
	span.End()
	got := exporter.GetSpans()[0]
	require.Equal(t, got.SpanContext.TraceID().String(), tracing.TraceID(ctx))
	require.Len(t, got.Events, 1)
	require.Equal(t, "exception", got.Events[0].Name)
}

// With an endpoint, spans go to the collector over OTLP/HTTP, at the
// standard /v1/traces path below the configured URL.
func TestExportsOverOTLPHTTP(t *testing.T) {
	collector := testenv.TraceCollector(t)
	for _, endpoint := range []string{collector.URL, collector.URL + "/", collector.URL + "/v1/traces", collector.URL + "/otlp"} {
		tr, err := tracing.New(context.Background(), endpoint, "svc-api", 1)
		require.NoError(t, err)
		require.True(t, tr.Enabled())
		_, span := tr.Provider().Tracer("test").Start(context.Background(), "GET /api/v1/stores/{store_id}/orders")
		span.End()
		require.NoError(t, tr.Shutdown(context.Background()), "shutdown flushes the batch")
	}
	require.Equal(t, []string{"/v1/traces", "/v1/traces", "/v1/traces", "/otlp/v1/traces"}, collector.Paths())
	require.Equal(t, []string{"GET /api/v1/stores/{store_id}/orders", "GET /api/v1/stores/{store_id}/orders",
		"GET /api/v1/stores/{store_id}/orders", "GET /api/v1/stores/{store_id}/orders"}, collector.SpanNames())
}

// New traces are kept at the sample ratio; a trace the caller sampled is
// kept whatever the ratio.
func TestSampleRatio(t *testing.T) {
	collector := testenv.TraceCollector(t)
	tr, err := tracing.New(context.Background(), collector.URL, "svc-api", 1e-9)
	require.NoError(t, err)
	tracer := tr.Provider().Tracer("test")
	for range 100 {
		_, span := tracer.Start(context.Background(), "unsampled root")
		span.End()
	}
	_, span := tracer.Start(tracing.ContinueFrom(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), "caller sampled")
	span.End()
	require.NoError(t, tr.Shutdown(context.Background()))
	require.Equal(t, []string{"caller sampled"}, collector.SpanNames())
}

// An endpoint that is not an http(s) URL, or a ratio outside (0, 1], stops
// the process at start.
func TestRejectsBadSettings(t *testing.T) {
	for _, endpoint := range []string{"otel-collector:4318", "grpc://collector:4317", "http://"} {
		_, err := tracing.New(context.Background(), endpoint, "svc-api", 1)
		require.ErrorContains(t, err, "SVC_OTEL_ENDPOINT", endpoint)
	}
	for _, ratio := range []float64{0, -0.5, 1.5} {
		_, err := tracing.New(context.Background(), "http://collector:4318", "svc-api", ratio)
		require.ErrorContains(t, err, "SVC_OTEL_SAMPLE_RATIO", "%v", ratio)
	}
}
