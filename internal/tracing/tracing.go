// Package tracing sets up OpenTelemetry for the API and the worker: spans
// from HTTP through Temporal (the SDK's tracing interceptor) to activities
// and SQL, exported over OTLP/HTTP when an endpoint is configured. Without
// one, tracing is off: nothing is wrapped and nothing is exported.
package tracing

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// Propagator carries trace context across HTTP (W3C traceparent and baggage)
// and into stored rows.
var Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Tracing is the process's tracer provider; the zero value (and nil) is off.
type Tracing struct {
	provider *sdktrace.TracerProvider
}

// New exports spans over OTLP/HTTP to the collector at endpoint, a base URL
// such as http://otel-collector:4318 that spans are posted below, at
// /v1/traces, as with OTEL_EXPORTER_OTLP_ENDPOINT (a URL that already ends
// in /v1/traces is used as it is). An empty endpoint turns tracing off.
//
// sampleRatio is the share of new traces kept (0 < ratio ≤ 1); a request
// that arrives with a traceparent follows its caller's decision, and work
// continued from a stored traceparent follows the request's.
func New(ctx context.Context, endpoint, service string, sampleRatio float64) (*Tracing, error) {
	if endpoint == "" {
		return &Tracing{}, nil
	}
	target, err := tracesURL(endpoint)
	if err != nil {
		return nil, err
	}
	if !(sampleRatio > 0 && sampleRatio <= 1) {
		return nil, fmt.Errorf("SVC_OTEL_SAMPLE_RATIO %v: want more than 0 and at most 1", sampleRatio)
	}
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(target))
	if err != nil {
		return nil, fmt.Errorf("otlp exporter for %s: %w", endpoint, err)
	}
	return NewWith(service, sdktrace.WithBatcher(exporter),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(sampleRatio)))), nil
}

// tracesURL is endpoint with the OTLP traces path below it.
func tracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("SVC_OTEL_ENDPOINT %q: want the collector's http:// or https:// URL, such as http://otel-collector:4318", endpoint)
	}
	if !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

// NewWith builds a provider with opts, which say where spans go
// (sdktrace.WithBatcher in production, WithSyncer over an in-memory exporter
// in tests).
func NewWith(service string, opts ...sdktrace.TracerProviderOption) *Tracing {
	opts = append(opts, sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service))))
	return &Tracing{provider: sdktrace.NewTracerProvider(opts...)}
}

// Enabled reports whether spans are recorded.
func (t *Tracing) Enabled() bool { return t != nil && t.provider != nil }

// Provider is the tracer provider; nil when off.
func (t *Tracing) Provider() trace.TracerProvider {
	if !t.Enabled() {
		return nil
	}
	return t.provider
}

// Shutdown flushes the spans not yet exported.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Handler starts a server span per request (but probes and scrapes), continuing the caller's trace
// when the request carries a traceparent. The span is named by the method
// alone until the router knows the route (see NameServerSpan).
func (t *Tracing) Handler(h http.Handler) http.Handler {
	if !t.Enabled() {
		return h
	}
	return otelhttp.NewHandler(h, "http.request", otelhttp.WithTracerProvider(t.provider), otelhttp.WithPropagators(Propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }),
		otelhttp.WithFilter(func(r *http.Request) bool { return !probes[r.URL.Path] }))
}

// probes are the paths scraped and probed every few seconds; tracing them
// would bury the requests that matter.
var probes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// NameServerSpan names the request's span by its route pattern, never the
// raw path (whose ids would make every span name unique).
func NameServerSpan(ctx context.Context, method, route string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetName(method + " " + route)
	span.SetAttributes(semconv.HTTPRoute(route))
}

// TemporalInterceptors are the Temporal client's interceptors: the SDK's
// tracing interceptor, which carries the span into workflow headers so that
// workflows and activities (on any worker built from the client) continue
// the trace. None when off.
func (t *Tracing) TemporalInterceptors() ([]interceptor.ClientInterceptor, error) {
	if !t.Enabled() {
		return nil, nil
	}
	i, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer: t.provider.Tracer("temporal-sdk-go"), TextMapPropagator: Propagator})
	if err != nil {
		return nil, fmt.Errorf("temporal tracing interceptor: %w", err)
	}
	return []interceptor.ClientInterceptor{i}, nil
}

// QueryTracer turns every query made under a recording span into a child
// span (statement text, never its arguments); nil when off.
func (t *Tracing) QueryTracer() pgx.QueryTracer {
	if !t.Enabled() {
		return nil
	}
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(t.provider), otelpgx.WithTrimSQLInSpanName(),
		otelpgx.WithDisableConnectionDetailsInAttributes())
}

// StartLinked starts a new trace for work that gathers what many traces
// wrote (a webhook batch holds events of many requests), linked to each of
// them (W3C traceparents). End the span when the work is handed on. Off, ctx
// comes back as it is.
func (t *Tracing) StartLinked(ctx context.Context, name string, traceparents []string) (context.Context, trace.Span) {
	if !t.Enabled() {
		return ctx, noop.Span{}
	}
	links := make([]trace.Link, 0, len(traceparents))
	for _, tp := range traceparents {
		if sc := trace.SpanContextFromContext(ContinueFrom(ctx, tp)); sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	return t.provider.Tracer("svc").Start(ctx, name, trace.WithNewRoot(), trace.WithLinks(links...))
}

// TraceID is the id of the trace ctx belongs to, empty without one; logs
// carry it so a log line leads to its trace.
func TraceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}

// RecordError puts err on ctx's span, when it records one.
func RecordError(ctx context.Context, err error) {
	trace.SpanFromContext(ctx).RecordError(err)
}

// ContinueFrom returns ctx with traceparent (as stored with a row) as its
// remote parent, so spans started under it join the trace that stored it.
func ContinueFrom(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}
