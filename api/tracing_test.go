package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/client"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/tracing"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
)

// traces reads what an in-memory exporter received.
type traces struct{ exporter *tracetest.InMemoryExporter }

// of returns the spans of one trace, by span id.
func (tr traces) of(traceID string) map[string]tracetest.SpanStub {
	spans := map[string]tracetest.SpanStub{}
	for _, s := range tr.exporter.GetSpans() {
		if s.SpanContext.TraceID().String() == traceID {
			spans[s.SpanContext.SpanID().String()] = s
		}
	}
	return spans
}

// waitFor waits until every named span of the trace has ended (a
// workflow's span ends after its activities').
func (tr traces) waitFor(t *testing.T, traceID string, names []string) {
	t.Helper()
	waitFor(t, strings.Join(names, ", "), func() bool {
		spans := tr.of(traceID)
		for _, name := range names {
			if _, ok := named(spans, name); !ok {
				return false
			}
		}
		return true
	})
}

func named(spans map[string]tracetest.SpanStub, name string) (tracetest.SpanStub, bool) {
	for _, s := range spans {
		if s.Name == name {
			return s, true
		}
	}
	return tracetest.SpanStub{}, false
}

// descends reports whether span has ancestor among its parents in spans.
func descends(spans map[string]tracetest.SpanStub, span, ancestor tracetest.SpanStub) bool {
	for span.Parent.IsValid() {
		if span.Parent.SpanID() == ancestor.SpanContext.SpanID() {
			return true
		}
		parent, ok := spans[span.Parent.SpanID().String()]
		if !ok {
			return false
		}
		span = parent
	}
	return false
}

// hasSQLChild reports whether some query span hangs directly under parent.
func hasSQLChild(spans map[string]tracetest.SpanStub, parent tracetest.SpanStub) bool {
	for _, s := range spans {
		if s.Parent.SpanID() == parent.SpanContext.SpanID() && strings.HasPrefix(s.Name, "query ") {
			return true
		}
	}
	return false
}

// One trace runs from the caller's traceparent through the HTTP request,
// Temporal and the activity down to its SQL: for a route that starts its
// workflow itself (the webhook test ping), and for an order, whose
// order-placed workflow the dispatcher starts after commit; the order's
// webhook batch links back to it.
func TestTracingFollowsARequestThroughTemporalToSQL(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	tr := tracing.NewWith("svc-test", sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	interceptors, err := tr.TemporalInterceptors()
	require.NoError(t, err)
	db, err := storage.OpenTraced(context.Background(), testenv.DatabaseURL(t, true), tr.QueryTracer())
	require.NoError(t, err)
	t.Cleanup(db.Close)
	temporal := testenv.TemporalWith(t, client.Options{Interceptors: interceptors})
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	h := newHarnessWith(t, api.Config{TaskQueue: testenv.TaskQueue(t), Tracing: tr,
		WebhookGuard: webhook.Guard{AllowPrivate: true}}, db, temporal)
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.startWorker(httpClient)
	s := newShop(t, h, "traced", 10)
	settings := h.pat(s.m, "settings:write", "orders:read")
	sub := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks"), auth: bearer(settings),
		body: map[string]any{"url": rec.url(), "events": []string{"order.created"}}})
	require.Equal(t, http.StatusCreated, sub.Status)
	spans := traces{exporter}

	const pingTrace, caller = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	ping := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks/"+sub.data()["id"].(string)+"/test"),
		auth: bearer(settings), headers: map[string]string{"traceparent": "00-" + pingTrace + "-" + caller + "-01"}})
	require.Equal(t, http.StatusOK, ping.Status, string(ping.Raw))
	pingSpans := []string{"StartWorkflow:WebhookTest", "RunWorkflow:WebhookTest", "RunActivity:AttemptDelivery"}
	spans.waitFor(t, pingTrace, pingSpans)
	trace := spans.of(pingTrace)
	server, ok := named(trace, "POST /api/v1/stores/{store_id}/webhooks/{webhook_id}/test")
	require.True(t, ok, "the server span is named by the route pattern")
	require.Equal(t, caller, server.Parent.SpanID().String(), "the request continues the caller's trace")
	require.True(t, hasSQLChild(trace, server), "the handler's queries are spans under the request")
	for _, name := range pingSpans {
		span, ok := named(trace, name)
		require.True(t, ok, name)
		require.True(t, descends(trace, span, server), "%s descends from the request", name)
	}
	activity, _ := named(trace, "RunActivity:AttemptDelivery")
	require.True(t, hasSQLChild(trace, activity), "the activity's queries are spans under it")

	const orderTrace = "0af7651916cd43dd8448eb211c80319c"
	order := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: orderBody(s.variantID, 1, "+201001234567"), headers: map[string]string{"traceparent": "00-" + orderTrace + "-b7ad6b7169203331-01"}})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
	orderSpans := []string{"StartWorkflow:OrderPlaced", "RunWorkflow:OrderPlaced", "RunActivity:RunOrderSideEffects"}
	spans.waitFor(t, orderTrace, orderSpans)
	trace = spans.of(orderTrace)
	server, ok = named(trace, "POST /api/v1/stores/{store_id}/orders")
	require.True(t, ok)
	for _, name := range orderSpans {
		span, ok := named(trace, name)
		require.True(t, ok, name)
		require.True(t, descends(trace, span, server), "%s descends from the request that placed the order", name)
	}
	sideEffects, _ := named(trace, "RunActivity:RunOrderSideEffects")
	require.True(t, hasSQLChild(trace, sideEffects))
	orderRequest := server

	// Its order.created goes out in a webhook batch: a trace of its own
	// (a batch gathers many requests' events), linked to the request.
	var dispatch tracetest.SpanStub
	waitFor(t, "a webhook dispatch linked to the order's request", func() bool {
		for _, span := range exporter.GetSpans() {
			for _, link := range span.Links {
				if span.Name == "webhook dispatch" && link.SpanContext.SpanID() == orderRequest.SpanContext.SpanID() {
					dispatch = span
					return true
				}
			}
		}
		return false
	})
	dispatchTrace := dispatch.SpanContext.TraceID().String()
	require.NotEqual(t, orderTrace, dispatchTrace)
	spans.waitFor(t, dispatchTrace, []string{"StartWorkflow:Dispatch", "RunWorkflow:Dispatch", "RunActivity:SendFirstAttempts"})
	trace = spans.of(dispatchTrace)
	send, _ := named(trace, "RunActivity:SendFirstAttempts")
	require.True(t, descends(trace, send, dispatch))
	require.True(t, hasSQLChild(trace, send))

	// Probes are not traced.
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: "/healthz"}).Status)
	// Span names carry route patterns, never ids; attributes carry no token.
	for _, span := range exporter.GetSpans() {
		require.NotContains(t, span.Name, s.m.storeID, span.Name)
		require.NotEqual(t, "GET /healthz", span.Name)
		for _, attr := range span.Attributes {
			require.NotContains(t, attr.Value.Emit(), s.token, "span %s attribute %s", span.Name, attr.Key)
			require.NotContains(t, attr.Value.Emit(), settings, "span %s attribute %s", span.Name, attr.Key)
		}
	}
}
