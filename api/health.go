package api

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/merchantsvc/svc/api/wire"
)

// handleHealthz serves GET /healthz.
func (s *Server) handleHealthz() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		respond(w, http.StatusOK, map[string]string{"status": "ok"})
		return nil
	}
}

// readyCache is the last readiness check: probes within readyFor of it
// share it, and concurrent probes wait for the one check in flight, so
// however often a load balancer probes, Postgres, Temporal and the object
// store are asked at most once a second.
type readyCache struct {
	mu     sync.Mutex
	at     time.Time
	checks map[string]string
}

// readyFor is how long a readiness check answers probes.
const readyFor = time.Second

// cachedReadiness is the last check when it is fresh, else a new one.
func (s *Server) cachedReadiness(ctx context.Context) map[string]string {
	s.ready.mu.Lock()
	defer s.ready.mu.Unlock()
	if s.ready.checks == nil || time.Since(s.ready.at) >= readyFor {
		// The check answers every waiting probe: one probe's hang-up must
		// not fail it for the others.
		s.ready.checks, s.ready.at = s.readiness(context.WithoutCancel(ctx)), time.Now()
	}
	return s.ready.checks
}

// handleReadyz serves GET /readyz from cachedReadiness.
func (s *Server) handleReadyz() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		checks := s.cachedReadiness(r.Context())
		var failing []string
		for name, state := range checks {
			if state != "ok" {
				failing = append(failing, name)
			}
		}
		if len(failing) == 0 {
			respond(w, http.StatusOK, checks)
			return nil
		}
		sort.Strings(failing)
		e := *errNotReady
		e.Message = "Not ready: " + strings.Join(failing, ", ") + " unreachable"
		e.MessageAr = "غير جاهز: لا يمكن الوصول إلى " + strings.Join(failing, "، ")
		for _, name := range failing {
			e.Fields = append(e.Fields, wire.FieldError{Field: name, Code: "unreachable", Message: checks[name], MessageAr: "غير متاح"})
		}
		return &e
	}
}
