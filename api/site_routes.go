package api

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// handleSite serves GET /s/{subdomain}[/…]: a store's website (package
// site) under the API's address, for development and tests.
func (s *Server) handleSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub := chi.URLParam(r, "subdomain")
		rest := strings.TrimPrefix(r.URL.Path, "/s/"+sub)
		s.site.ServePath(w, r, sub, rest)
	})
}

// storefrontHost serves a request to {subdomain}.{StorefrontDomain} as
// that store's website, under the storefront's per-client limit; any other
// host goes on to the API's routes.
func (s *Server) storefrontHost(next http.Handler) http.Handler {
	limit := s.perClientLimit(s.buyerLimiter, errStorefrontRateLimited)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub := s.site.Host(r)
		if sub == "" {
			next.ServeHTTP(w, r)
			return
		}
		limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.site.ServeHost(w, r, sub) })).ServeHTTP(w, r)
	})
}
