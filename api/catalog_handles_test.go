package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// Products have handles (decisions §23): made from the name at creation
// (Arabic kept, -2 on a name taken), or typed and normalised; kept when the
// name changes; moved by PATCH, which leaves a redirect from the old path;
// unique in the store; shown to the storefront.
func TestProductHandles(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("handles")
	token := h.pat(m, "catalog:write", "themes:read")
	create := func(body map[string]any) response {
		return h.do(request{method: "POST", path: storePath(m.storeID, "/products"), auth: bearer(token), body: body})
	}
	patch := func(id string, body map[string]any) response {
		return h.do(request{method: "PATCH", path: storePath(m.storeID, "/products/"+id), auth: bearer(token), body: body})
	}

	tee := create(map[string]any{"name": "Cotton Tee", "price": 100})
	require.Equal(t, http.StatusCreated, tee.Status, string(tee.Raw))
	require.Equal(t, "cotton-tee", tee.data()["handle"])
	again := create(map[string]any{"name": "cotton   tee!", "price": 100})
	require.Equal(t, "cotton-tee-2", again.data()["handle"], "a name taken is numbered")
	abaya := create(map[string]any{"name": "عَبـاية سوداء ٢", "price": 100})
	require.Equal(t, "عباية-سوداء-2", abaya.data()["handle"], "Arabic kept, tashkeel and tatweel dropped, digits read")
	typed := create(map[string]any{"name": "Hat", "handle": "  Summer HAT ", "price": 100})
	require.Equal(t, "summer-hat", typed.data()["handle"], "a typed handle is normalised")

	// Refusals change nothing.
	products := func() int {
		return len(h.do(request{method: "GET", path: storePath(m.storeID, "/products"), auth: bearer(token)}).list())
	}
	count := products()
	taken := create(map[string]any{"name": "Other", "handle": "Cotton-Tee", "price": 1})
	require.Equal(t, http.StatusConflict, taken.Status, string(taken.Raw))
	require.Equal(t, "DUPLICATE_HANDLE", taken.errorCode())
	require.Equal(t, []string{"handle"}, taken.fieldNames())
	for _, bad := range []string{"", "   ", "a/b", "<x>"} {
		resp := create(map[string]any{"name": "Other", "handle": bad, "price": 1})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%q: %s", bad, resp.Raw)
		require.Equal(t, []string{"handle"}, resp.fieldNames(), bad)
	}
	require.Equal(t, count, products())

	// The name changes, the handle stays.
	renamed := patch(tee.data()["id"].(string), map[string]any{"name": "Linen Tee"})
	require.Equal(t, http.StatusOK, renamed.Status, string(renamed.Raw))
	require.Equal(t, "cotton-tee", renamed.data()["handle"])

	// A new handle moves the address and leaves a redirect from the old one.
	moved := patch(tee.data()["id"].(string), map[string]any{"handle": "Linen Tee"})
	require.Equal(t, http.StatusOK, moved.Status, string(moved.Raw))
	require.Equal(t, "linen-tee", moved.data()["handle"])
	redirects := h.do(request{method: "GET", path: storePath(m.storeID, "/redirects"), auth: bearer(h.pat(m, "themes:read"))}).list()
	require.Len(t, redirects, 1)
	redirect := redirects[0].(map[string]any)
	require.Equal(t, "/products/cotton-tee", redirect["from_path"])
	require.Equal(t, "/products/linen-tee", redirect["to"])
	clash := patch(tee.data()["id"].(string), map[string]any{"handle": "cotton-tee-2"})
	require.Equal(t, http.StatusConflict, clash.Status, string(clash.Raw))
	require.Equal(t, "DUPLICATE_HANDLE", clash.errorCode())
	null := patch(tee.data()["id"].(string), map[string]any{"handle": nil})
	require.Equal(t, http.StatusUnprocessableEntity, null.Status, string(null.Raw))
	// The old name is free again, for a new product.
	fresh := create(map[string]any{"name": "Cotton Tee", "price": 100})
	require.Equal(t, "cotton-tee", fresh.data()["handle"])

	// The storefront shows it.
	sf := h.do(request{method: "GET", path: "/api/v1/storefront/" + h.subdomain(shop{m: m}) + "/products/" + abaya.data()["id"].(string)})
	require.Equal(t, http.StatusOK, sf.Status, string(sf.Raw))
	require.Equal(t, "عباية-سوداء-2", sf.data()["handle"])
}
