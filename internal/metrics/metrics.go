// Package metrics holds the Prometheus collectors of the API and the
// worker. Each server gets its own registry (tests run several servers in
// one process); labels are route patterns and outcomes, never raw paths.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// API are the HTTP side's metrics.
type API struct {
	Registry          *prometheus.Registry
	Requests          *prometheus.CounterVec
	Duration          *prometheus.HistogramVec
	RateLimited       *prometheus.CounterVec
	IdempotentReplays prometheus.Counter
}

// NewAPI registers the API's collectors, with the process and Go runtime ones.
func NewAPI() *API {
	m := &API{
		Registry: prometheus.NewRegistry(),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "svc_http_requests_total",
			Help: "HTTP requests by route pattern, method and status."}, []string{"route", "method", "status"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "svc_http_request_duration_seconds",
			Help: "HTTP request latency by route pattern and method.", Buckets: []float64{.002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}},
			[]string{"route", "method"}),
		RateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "svc_rate_limit_rejections_total",
			Help: "Requests refused by a rate limit (token or storefront address)."}, []string{"limit"}),
		IdempotentReplays: prometheus.NewCounter(prometheus.CounterOpts{Name: "svc_idempotency_replays_total",
			Help: "Responses replayed for a repeated Idempotency-Key."}),
	}
	m.Registry.MustRegister(m.Requests, m.Duration, m.RateLimited, m.IdempotentReplays,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func Handler(r *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(r, promhttp.HandlerOpts{Registry: r})
}

// Worker are the worker side's metrics (Temporal's own go through the SDK's
// handler into the same registry).
type Worker struct {
	Registry   *prometheus.Registry
	Deliveries *prometheus.CounterVec
	ImportRows prometheus.Counter
}

// NewWorker registers the worker's collectors.
func NewWorker() *Worker {
	m := &Worker{
		Registry: prometheus.NewRegistry(),
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "svc_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome (succeeded, retrying, exhausted, gone, skipped)."}, []string{"outcome"}),
		ImportRows: prometheus.NewCounter(prometheus.CounterOpts{Name: "svc_import_rows_total",
			Help: "CSV import rows applied; its rate is rows per second."}),
	}
	m.Registry.MustRegister(m.Deliveries, m.ImportRows, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Delivery counts one webhook attempt's outcome (a nil Worker counts nothing).
func (m *Worker) Delivery(outcome string) {
	if m != nil {
		m.Deliveries.WithLabelValues(outcome).Inc()
	}
}

// ImportedRows counts applied import rows.
func (m *Worker) ImportedRows(n int) {
	if m != nil {
		m.ImportRows.Add(float64(n))
	}
}
