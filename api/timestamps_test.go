package api_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// rfc3339Micro is a timestamp as the API writes it: UTC, at most six
// fractional digits (trailing zeros dropped, as Go prints them).
var rfc3339Micro = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$`)

// The times a create answers are byte for byte what later reads answer:
// microseconds everywhere, never the nanoseconds of the process's clock.
func TestTimestampsRoundTrip(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("times")
	minted := h.do(request{method: "POST", path: storePath(m.storeID, "/access-tokens"), auth: m.auth(),
		body: map[string]any{"name": "erp", "scopes": []string{"catalog:write"}, "expires_in_days": 30}})
	require.Equal(t, http.StatusCreated, minted.Status, string(minted.Raw))
	token := minted.data()["token"].(string)
	for _, field := range []string{"created_at", "expires_at"} {
		require.Regexp(t, rfc3339Micro, minted.data()[field], field)
	}

	me := h.do(request{method: "GET", path: "/api/v1/auth/api-key/me", auth: bearer(token)})
	require.Equal(t, http.StatusOK, me.Status, string(me.Raw))
	require.Equal(t, minted.data()["expires_at"], me.data()["expires_at"])
	list := h.do(request{method: "GET", path: storePath(m.storeID, "/access-tokens"), auth: m.auth()})
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	listed := list.data()["items"].([]any)[0].(map[string]any)
	require.Equal(t, minted.data()["created_at"], listed["created_at"])
	require.Equal(t, minted.data()["expires_at"], listed["expires_at"])

	product := h.createProduct(token, m.storeID, map[string]any{"name": "Lamp", "price": 100})
	read := h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+product["id"].(string)), auth: bearer(token)})
	require.Equal(t, http.StatusOK, read.Status, string(read.Raw))
	for _, field := range []string{"created_at", "updated_at"} {
		require.Regexp(t, rfc3339Micro, product[field], field)
		require.Equal(t, product[field], read.data()[field], field)
	}
}
