package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// The storefront lists published collections only and a collection's
// active products in its sort: manual by default, best selling over the
// last 30 days, by price, newest, and by title with ICU Arabic collation
// (lower and upper case together, not byte order); an Arabic handle is
// reached percent-encoded; an unpublished collection is 404.
func TestStorefrontCollections(t *testing.T) {
	h := newHarness(t, api.Config{})
	shop := newShop(t, h, "coll-front", 50)
	s := collectionShop{h: h, m: shop.m, token: h.pat(shop.m, "catalog:read", "catalog:write")}
	sub := h.subdomain(shop)
	front := func(rest string) response {
		return h.do(request{method: "GET", path: "/api/v1/storefront/" + sub + rest})
	}
	// newShop's product is the abaya (45000) with stock; three more.
	var abayaID string
	for _, item := range s.call("GET", "/products", nil).data()["items"].([]any) {
		abayaID = item.(map[string]any)["id"].(string)
	}
	apple := s.product("apple scarf", 9000, nil)
	banana := s.product("Banana hat", 3000, nil)
	hidden := s.product("Draft ring", 1000, map[string]any{"status": "draft"})

	picks := s.create(map[string]any{"kind": "manual", "handle": "عروض", "title": map[string]any{"ar": "عروض", "en": "Offers"}})
	id := picks["id"].(string)
	added := s.call("POST", "/collections/"+id+"/products", map[string]any{"product_ids": []string{banana, abayaID, apple, hidden}})
	require.Equal(t, http.StatusOK, added.Status, string(added.Raw))
	s.create(map[string]any{"kind": "manual", "handle": "secret", "title": map[string]any{"en": "Secret"}, "published": false})

	list := front("/collections")
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	items := list.data()["items"].([]any)
	require.Len(t, items, 1, "published collections only")
	require.Equal(t, "عروض", items[0].(map[string]any)["handle"])
	require.Equal(t, "عروض", items[0].(map[string]any)["title"].(map[string]any)["text"])

	names := func(query string) []string {
		t.Helper()
		resp := front("/collections/" + url.PathEscape("عروض") + "/products" + query)
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		out := []string{}
		for _, item := range resp.data()["items"].([]any) {
			out = append(out, item.(map[string]any)["name"].(string))
		}
		return out
	}
	require.Equal(t, []string{"Banana hat", "Abaya", "apple scarf"}, names(""), "the manual order, active products only")
	require.Equal(t, []string{"Banana hat", "apple scarf", "Abaya"}, names("?sort=price_asc"))
	require.Equal(t, []string{"Abaya", "apple scarf", "Banana hat"}, names("?sort=price_desc"))
	require.Equal(t, []string{"Banana hat", "apple scarf", "Abaya"}, names("?sort=newest"))
	require.Equal(t, []string{"Abaya", "apple scarf", "Banana hat"}, names("?sort=title"), "ICU collation: apple before Banana")
	require.Equal(t, []string{"apple scarf"}, names("?sort=price_asc&limit=1&page=2"))

	// Best selling: the abaya sold twice.
	h.placeOrder(shop, "cod", 1)
	h.placeOrder(shop, "cod", 2)
	require.Equal(t, "Abaya", names("?sort=best_selling")[0])
	require.Equal(t, "one_of", front("/collections/"+url.PathEscape("عروض")+"/products?sort=random").fieldCode("sort"))

	require.Equal(t, http.StatusNotFound, front("/collections/secret/products").Status, "an unpublished collection is not found")
	require.Equal(t, http.StatusNotFound, front("/collections/nothing/products").Status)
	require.Equal(t, http.StatusOK, s.call("PATCH", "/collections/"+id, map[string]any{"published": false}).Status)
	require.Equal(t, http.StatusNotFound, front("/collections/"+url.PathEscape("عروض")+"/products").Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: "/api/v1/storefront/no-such-store/collections"}).Status)
}
