package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// A suspended or closed store's access tokens are refused with 403
// STORE_SUSPENDED on every store route (issue 17, finding 11).
func TestSuspendedStoresTokensAreRefused(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("suspended")
	token := h.pat(m, "catalog:read")
	path := storePath(m.storeID, "/products")
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: path, auth: bearer(token)}).Status)
	for _, state := range []string{"suspended", "closed"} {
		h.exec(`UPDATE stores SET lifecycle_state = $2 WHERE id = $1`, m.storeID, state)
		refused := h.do(request{method: "GET", path: path, auth: bearer(token)})
		require.Equal(t, http.StatusForbidden, refused.Status, state)
		require.Equal(t, "STORE_SUSPENDED", refused.errorCode(), state)
		require.NotEmpty(t, refused.errorField("message_ar"))
	}
	h.exec(`UPDATE stores SET lifecycle_state = 'active' WHERE id = $1`, m.storeID)
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: path, auth: bearer(token)}).Status, "open again")
}

// A session answers as a token does: a suspended or closed store's members
// get 403 STORE_SUSPENDED on its store routes (issue 48 §11).
func TestSuspendedStoresSessionsAreRefused(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("suspendedsession")
	path := storePath(m.storeID, "/products")
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: path, auth: m.auth()}).Status)
	for _, state := range []string{"suspended", "closed"} {
		h.exec(`UPDATE stores SET lifecycle_state = $2 WHERE id = $1`, m.storeID, state)
		for _, method := range []string{"GET", "POST"} {
			refused := h.do(request{method: method, path: path, auth: m.auth(), body: map[string]any{"name": "Scarf", "price": 1000}})
			require.Equal(t, http.StatusForbidden, refused.Status, "%s %s: %s", state, method, refused.Raw)
			require.Equal(t, "STORE_SUSPENDED", refused.errorCode(), state)
		}
	}
	h.exec(`UPDATE stores SET lifecycle_state = 'active' WHERE id = $1`, m.storeID)
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: path, auth: m.auth()}).Status, "open again")
}
