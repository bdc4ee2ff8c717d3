package api

import (
	"net/http"
	"sort"
	"strings"

	"github.com/merchantsvc/svc/api/wire"
)

// handleHealthz serves GET /healthz.
func (s *Server) handleHealthz() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		respond(w, http.StatusOK, map[string]string{"status": "ok"})
		return nil
	}
}

// handleReadyz serves GET /readyz.
func (s *Server) handleReadyz() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		checks := s.readiness(r.Context())
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
