package api

import (
	"net/http"
	"sort"
	"strings"
)

func (s *Server) handleHealthz() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		respond(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

func (s *Server) handleReadyz() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		checks := s.readiness(r.Context())
		var failing []string
		for name, state := range checks {
			if state != "ok" {
				failing = append(failing, name)
			}
		}
		if len(failing) == 0 {
			respond(w, http.StatusOK, checks)
			return
		}
		sort.Strings(failing)
		e := *errNotReady
		e.Message = "Not ready: " + strings.Join(failing, ", ") + " unreachable"
		e.MessageAr = "غير جاهز: لا يمكن الوصول إلى " + strings.Join(failing, "، ")
		for _, name := range failing {
			e.Fields = append(e.Fields, fieldError{Field: name, Code: "unreachable", Message: checks[name], MessageAr: "غير متاح"})
		}
		s.writeError(w, r, &e)
	}
}
