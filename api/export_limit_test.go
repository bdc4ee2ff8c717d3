package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// Expensive reads have a tighter limit than ordinary requests (issue 48,
// item 3): ExportRateLimitPerMinute per token, and per signed-in user across
// the CSV exports and the waybill print run, answered 429 RATE_LIMITED with
// Retry-After and the X-RateLimit-* headers (the print page with the problem
// page); the JSON reads of the same routes stay ordinary.
func TestExportRateLimit(t *testing.T) {
	h := newHarness(t, api.Config{ExportRateLimitPerMinute: 2})
	m := h.signup("exportlimit")
	token := h.pat(m, "catalog:read")
	awayFromWindowEdge()

	export := storePath(m.storeID, "/products/export")
	for i := 1; i <= 2; i++ {
		resp := h.do(request{method: "GET", path: export, auth: bearer(token)})
		require.Equal(t, http.StatusOK, resp.Status, "export %d", i)
		require.Equal(t, "2", resp.Header.Get("X-RateLimit-Limit"), "export %d", i)
	}
	limited := h.do(request{method: "GET", path: export, auth: bearer(token)})
	require.Equal(t, http.StatusTooManyRequests, limited.Status, string(limited.Raw))
	require.Equal(t, "RATE_LIMITED", limited.errorCode())
	require.NotEmpty(t, limited.errorField("message_ar"))
	require.NotEmpty(t, limited.Header.Get("Retry-After"))
	require.Equal(t, "0", limited.Header.Get("X-RateLimit-Remaining"))
	require.NotEmpty(t, limited.Header.Get("X-RateLimit-Reset"))
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(m.storeID, "/products"), auth: bearer(token)}).Status,
		"ordinary reads go on")

	// The signed-in user has a budget of their own, shared by the audit
	// CSV and the print run; the audit log's JSON is not counted.
	audit := storePath(m.storeID, "/audit-log")
	for i := 1; i <= 3; i++ {
		require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: audit, auth: m.auth()}).Status, "audit json %d", i)
	}
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: audit + "?format=csv", auth: m.auth()}).Status)
	print := "/stores/" + m.storeID + "/shipments/print"
	first := h.do(request{method: "GET", path: print, auth: m.auth()})
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	page := h.do(request{method: "GET", path: print, auth: m.auth()})
	require.Equal(t, http.StatusTooManyRequests, page.Status, string(page.Raw))
	require.Contains(t, page.Header.Get("Content-Type"), "text/html")
	require.NotEmpty(t, page.Header.Get("Retry-After"))
	require.Equal(t, "0", page.Header.Get("X-RateLimit-Remaining"))
	csv := h.do(request{method: "GET", path: audit + "?format=csv", auth: m.auth()})
	require.Equal(t, http.StatusTooManyRequests, csv.Status, string(csv.Raw))
	require.Equal(t, "RATE_LIMITED", csv.errorCode())
	require.NotEmpty(t, csv.Header.Get("Retry-After"))
}
