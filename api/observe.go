package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
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

// observe counts and times every request by its route pattern (never the
// raw path, whose ids would make a series per order).
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
		s.metrics.Requests.WithLabelValues(route, r.Method, strconv.Itoa(rec.status)).Inc()
		s.metrics.Duration.WithLabelValues(route, r.Method).Observe(time.Since(start).Seconds())
	})
}

// outboxCollectors report the events not yet handed to the dispatcher and
// the age of the oldest, read at scrape time.
func (s *Server) outboxCollectors() []prometheus.Collector {
	read := func() (int, float64) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, age, err := s.db.OutboxBacklog(ctx)
		if err != nil {
			return -1, -1
		}
		return n, age
	}
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "svc_outbox_backlog", Help: "Events written but not yet dispatched."},
			func() float64 { n, _ := read(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "svc_outbox_oldest_age_seconds", Help: "Age of the oldest undispatched event."},
			func() float64 { _, age := read(); return age }),
	}
}
