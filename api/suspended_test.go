package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
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

// The merchant's pages answer as the API does (issue 48 §11): every store
// page of a suspended or closed store, opened by its owner, is the problem
// page with 403 and the STORE_SUSPENDED message in the member's language,
// and none of the store's data (the print run's consignees included). The
// walk takes every page route the router serves under /stores/{store_id},
// as the isolation matrix walks them for a member lacking a page's scope.
func TestSuspendedStoresPagesAreRefused(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("suspendedpages")
	token := h.pat(m, allScopes...)
	const secretName = "Suspended store's secret product"
	product := h.createProduct(token, m.storeID, map[string]any{"name": secretName, "price": 100, "sku": "SUSP-1"})
	variant := h.do(request{method: "POST", path: storePath(m.storeID, "/products/"+product["id"].(string)+"/variants"), auth: bearer(token),
		body: map[string]any{"sku": "SUSP-M", "quantity": 5, "options": map[string]any{"size": "M"}}})
	require.Equal(t, http.StatusCreated, variant.Status, string(variant.Raw))
	const consigneePhone = "+201055507777"
	order := h.do(request{method: "POST", path: storePath(m.storeID, "/orders"), auth: bearer(token),
		body: orderBody(variant.Body["id"].(string), 1, consigneePhone)})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
	orderID := order.data()["id"].(string)
	draft := h.do(request{method: "GET", path: storePath(m.storeID, "/themes/v3/customization"), auth: bearer(token)})
	require.Equal(t, http.StatusOK, draft.Status, string(draft.Raw))

	type page struct{ method, path string }
	var pages []page
	routes, err := h.server.Routes()
	require.NoError(t, err)
	for _, rt := range routes {
		if !strings.HasPrefix(rt[1], "/stores/{store_id}/") {
			continue
		}
		path := strings.NewReplacer("{store_id}", m.storeID, "{order_id}", orderID).Replace(rt[1])
		require.NotContains(t, path, "{", "a page of a parameter the walk does not fill: %s", rt[1])
		pages = append(pages, page{rt[0], path})
	}
	require.Len(t, pages, 11, "every store page (routeAccess lists them)")
	open := func(p page) response {
		var body any
		if p.method == http.MethodPost { // the preview's render of the draft
			body = map[string]any{"document": draft.data()["draft"], "page": "index"}
		}
		return h.do(request{method: p.method, path: p.path, auth: m.auth(), body: body})
	}
	for _, p := range pages {
		require.Equal(t, http.StatusOK, open(p).Status, "%s %s while the store is open", p.method, p.path)
	}

	for _, c := range []struct{ state, locale, message string }{
		{"suspended", "ar", "هذا المتجر موقوف أو مغلق"},
		{"closed", "en", "This store is suspended or closed"},
	} {
		h.exec(`UPDATE stores SET lifecycle_state = $2 WHERE id = $1`, m.storeID, c.state)
		h.setLocale(m.email, c.locale)
		for _, p := range pages {
			resp := open(p)
			what := c.state + ": " + p.method + " " + p.path
			require.Equal(t, http.StatusForbidden, resp.Status, "%s: %s", what, resp.Raw)
			require.Contains(t, string(resp.Raw), c.message, what)
			require.Contains(t, string(resp.Raw), "STORE_SUSPENDED", what)
			for _, secret := range []string{secretName, consigneePhone, "Mona Adel", orderID, "Store suspendedpages"} {
				require.NotContains(t, string(resp.Raw), secret, "%s shows the store's data", what)
			}
		}
	}
	h.exec(`UPDATE stores SET lifecycle_state = 'active' WHERE id = $1`, m.storeID)
	require.Equal(t, http.StatusOK, open(pages[0]).Status, "open again")
}

// The suspended store's problem page in headless Chromium, in Arabic and
// English at 390 and 1280 px: the message fits, nothing overflows.
func TestSuspendedStorePageInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("suspendedlook")
	tab, _ := editorBrowser(t, h, m.email)
	h.exec(`UPDATE stores SET lifecycle_state = 'suspended' WHERE id = $1`, m.storeID)
	for _, c := range []struct{ locale, message string }{{"ar", "هذا المتجر موقوف أو مغلق"}, {"en", "This store is suspended or closed"}} {
		h.setLocale(m.email, c.locale)
		var text string
		require.NoError(t, chromedp.Run(tab, chromedp.Navigate(h.url+"/stores/"+m.storeID+"/shipments/print"),
			chromedp.Text(`#error`, &text, chromedp.ByID)))
		require.Contains(t, text, c.message)
		require.Contains(t, text, "STORE_SUSPENDED")
		checkLayout(t, tab, "store-suspended-"+c.locale)
	}
}
