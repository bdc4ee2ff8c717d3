package api

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/merchantsvc/svc/internal/metrics"
	"github.com/merchantsvc/svc/internal/tracing"
)

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// methodLabel is a request's method as a metric label: one of the known
// methods, else OTHER. Anyone can send any method string, and every label
// value is a series kept for the life of the process.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// observe counts and times every request by its route pattern (never the
// raw path, whose ids would make a series per order) and its method label.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		route := "unmatched"
		if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RoutePattern() != "" {
			route = rctx.RoutePattern()
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		method := methodLabel(r.Method)
		tracing.NameServerSpan(r.Context(), method, route)
		s.metrics.Requests.WithLabelValues(route, method, strconv.Itoa(rec.status)).Inc()
		s.metrics.Duration.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
	})
}

// outboxGauges report the events not yet handed to the dispatcher and the
// age of the oldest.
type outboxGauges struct {
	backlog, oldestAge prometheus.Gauge
}

func newOutboxGauges(reg prometheus.Registerer) outboxGauges {
	g := outboxGauges{
		backlog:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "svc_outbox_backlog", Help: "Events written but not yet dispatched."}),
		oldestAge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "svc_outbox_oldest_age_seconds", Help: "Age of the oldest undispatched event."}),
	}
	reg.MustRegister(g.backlog, g.oldestAge)
	return g
}

// handlePublicMetrics serves GET /metrics on the public port: 404 unless
// MetricsToken is set, then only to a scraper bearing it (401 otherwise).
func (s *Server) handlePublicMetrics() http.HandlerFunc {
	serve := s.MetricsHandler()
	want := []byte("Bearer " + s.cfg.MetricsToken)
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case s.cfg.MetricsToken == "":
			writeError(w, r, errRouteNotFound)
		case subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1:
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			writeError(w, r, errUnauthenticated)
		default:
			serve.ServeHTTP(w, r)
		}
	}
}

// MetricsHandler serves the API's metrics without a credential, for an
// address of its own (svc mounts it on SVC_DEBUG_ADDR, beside the profiles).
func (s *Server) MetricsHandler() http.Handler { return s.handleMetrics() }

// handleMetrics serves the metrics: it reads the outbox once per scrape, within the scrape's own
// request, then serves the registry.
func (s *Server) handleMetrics() http.HandlerFunc {
	serve := metrics.Handler(s.metrics.Registry)
	return func(w http.ResponseWriter, r *http.Request) {
		n, age, err := s.db.OutboxBacklog(r.Context())
		if err != nil {
			n, age = -1, -1 // the gauges say the database did not answer
		}
		s.outbox.backlog.Set(float64(n))
		s.outbox.oldestAge.Set(age)
		serve.ServeHTTP(w, r)
	}
}
