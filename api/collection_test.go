package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// collectionShop is a store with a catalog:write token and helpers for
// the collection routes.
type collectionShop struct {
	h     *harness
	m     merchant
	token string
}

func newCollectionShop(h *harness, name string) collectionShop {
	m := h.signup(name)
	return collectionShop{h: h, m: m, token: h.pat(m, "catalog:read", "catalog:write")}
}

func (s collectionShop) call(method, rest string, body any) response {
	s.h.t.Helper()
	return s.h.do(request{method: method, path: storePath(s.m.storeID, rest), auth: bearer(s.token), body: body})
}

func (s collectionShop) create(body map[string]any) map[string]any {
	s.h.t.Helper()
	resp := s.call("POST", "/collections", body)
	require.Equal(s.h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	return resp.data()
}

func (s collectionShop) product(name string, price int, extra map[string]any) string {
	s.h.t.Helper()
	body := map[string]any{"name": name, "price": price}
	for k, v := range extra {
		body[k] = v
	}
	return s.h.createProduct(s.token, s.m.storeID, body)["id"].(string)
}

// productIDs lists a collection's products in its order.
func (s collectionShop) productIDs(collectionID, query string) []string {
	s.h.t.Helper()
	resp := s.call("GET", "/collections/"+collectionID+"/products"+query, nil)
	require.Equal(s.h.t, http.StatusOK, resp.Status, string(resp.Raw))
	ids := []string{}
	for _, item := range resp.data()["items"].([]any) {
		ids = append(ids, item.(map[string]any)["id"].(string))
	}
	return ids
}

func (s collectionShop) countCollections() int {
	var n int
	require.NoError(s.h.t, testenv.SQL(s.h.t, s.h.db).QueryRow(context.Background(), `SELECT count(*) FROM collections WHERE store_id = $1`,
		s.m.storeID).Scan(&n))
	return n
}

func rule(field, relation string, value any) map[string]any {
	c := map[string]any{"field": field, "relation": relation}
	if value != nil {
		c["value"] = value
	}
	return c
}

func rules(match string, conditions ...map[string]any) map[string]any {
	list := make([]any, len(conditions))
	for i, c := range conditions {
		list[i] = c
	}
	return map[string]any{"match": match, "conditions": list}
}

// Manual collections: handles normalised and unique, products added,
// skipped, removed and ordered; another store's collection is not found.
func TestCollectionsManual(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newCollectionShop(h, "coll-manual")
	other := newCollectionShop(h, "coll-manual-other")

	sale := s.create(map[string]any{"kind": "manual", "handle": "  عُـروض  الصيف ", "title": map[string]any{"ar": "عروض الصيف", "en": "Summer sale"}})
	require.Equal(t, "عروض-الصيف", sale["handle"], "the handle is normalised: tashkeel and tatweel dropped, spaces to '-'")
	require.Equal(t, "manual", sale["sort"])
	require.Equal(t, "idle", sale["rebuild"])
	require.Equal(t, "عروض الصيف", sale["title"].(map[string]any)["text"], "the store's language without Accept-Language")
	en := h.do(request{method: "GET", path: storePath(s.m.storeID, "/collections/"+sale["id"].(string)), auth: bearer(s.token),
		headers: map[string]string{"Accept-Language": "en-GB,en;q=0.9"}})
	require.Equal(t, "Summer sale", en.data()["title"].(map[string]any)["text"])

	derived := s.create(map[string]any{"kind": "manual", "title": map[string]any{"en": "New Arrivals!"}})
	require.Equal(t, "new-arrivals", derived["handle"], "a handle is derived from the title when absent")
	again := s.create(map[string]any{"kind": "manual", "title": map[string]any{"en": "New arrivals"}})
	require.Equal(t, "new-arrivals-2", again["handle"])

	dup := s.call("POST", "/collections", map[string]any{"kind": "manual", "handle": "عروض الصيف", "title": map[string]any{"ar": "x"}})
	require.Equal(t, http.StatusConflict, dup.Status, string(dup.Raw))
	require.Equal(t, "DUPLICATE_HANDLE", dup.errorCode())
	renamed := s.call("PATCH", "/collections/"+derived["id"].(string), map[string]any{"handle": "عروض-الصيف"})
	require.Equal(t, http.StatusConflict, renamed.Status, string(renamed.Raw))
	require.Equal(t, "DUPLICATE_HANDLE", renamed.errorCode())
	// Another store may use the handle.
	other.create(map[string]any{"kind": "manual", "handle": "عروض-الصيف", "title": map[string]any{"ar": "x"}})

	id := sale["id"].(string)
	a, b, c := s.product("A", 100, nil), s.product("B", 200, nil), s.product("C", 300, nil)
	foreign := other.product("Foreign", 100, nil)
	added := s.call("POST", "/collections/"+id+"/products", map[string]any{"product_ids": []string{a, b}})
	require.Equal(t, http.StatusOK, added.Status, string(added.Raw))
	require.Equal(t, []any{a, b}, added.data()["added"])
	require.Equal(t, []any{}, added.data()["skipped"])
	added = s.call("POST", "/collections/"+id+"/products", map[string]any{"product_ids": []string{b, c}})
	require.Equal(t, []any{c}, added.data()["added"])
	require.Equal(t, []any{b}, added.data()["skipped"], "a product already in is skipped")
	require.Equal(t, []string{a, b, c}, s.productIDs(id, ""), "new members go last")

	notOurs := s.call("POST", "/collections/"+id+"/products", map[string]any{"product_ids": []string{a, foreign}})
	require.Equal(t, http.StatusUnprocessableEntity, notOurs.Status, string(notOurs.Raw))
	require.Equal(t, "not_found", notOurs.fieldCode("product_ids[1]"))
	tooMany := make([]string, 251)
	for i := range tooMany {
		tooMany[i] = a
	}
	require.Equal(t, "out_of_range", s.call("POST", "/collections/"+id+"/products", map[string]any{"product_ids": tooMany}).fieldCode("product_ids"))
	require.Equal(t, "out_of_range", s.call("POST", "/collections/"+id+"/products", map[string]any{"product_ids": []string{}}).fieldCode("product_ids"))

	mismatch := s.call("PUT", "/collections/"+id+"/products/order", map[string]any{"product_ids": []string{c, a}})
	require.Equal(t, http.StatusUnprocessableEntity, mismatch.Status, string(mismatch.Raw))
	require.Equal(t, "mismatch", mismatch.fieldCode("product_ids"))
	ordered := s.call("PUT", "/collections/"+id+"/products/order", map[string]any{"product_ids": []string{c, a, b}})
	require.Equal(t, http.StatusOK, ordered.Status, string(ordered.Raw))
	require.Equal(t, []string{c, a, b}, s.productIDs(id, ""))
	require.Equal(t, []string{c, b, a}, s.productIDs(id, "?sort=price_desc"))
	require.Equal(t, []string{a, b, c}, s.productIDs(id, "?sort=title"))

	removed := s.call("DELETE", "/collections/"+id+"/products", map[string]any{"product_ids": []string{a, foreign}})
	require.Equal(t, http.StatusOK, removed.Status, string(removed.Raw))
	require.Equal(t, []any{a}, removed.data()["removed"])
	require.Equal(t, []any{foreign}, removed.data()["skipped"])
	got := s.call("GET", "/collections/"+id, nil)
	require.EqualValues(t, 2, got.data()["products_count"])

	// Nothing of another store's.
	require.Equal(t, http.StatusNotFound, other.call("GET", "/collections/"+id, nil).Status)
	require.Equal(t, http.StatusNotFound, other.call("PATCH", "/collections/"+id, map[string]any{"published": false}).Status)
	require.Equal(t, http.StatusNotFound, other.call("POST", "/collections/"+id+"/products", map[string]any{"product_ids": []string{foreign}}).Status)
	require.Equal(t, http.StatusNotFound, other.call("DELETE", "/collections/"+id, nil).Status)

	// A product deleted leaves its collections.
	require.Equal(t, http.StatusNoContent, s.call("DELETE", "/products/"+c, nil).Status)
	require.Equal(t, []string{b}, s.productIDs(id, ""))

	require.Equal(t, http.StatusNoContent, s.call("DELETE", "/collections/"+id, nil).Status)
	require.Equal(t, http.StatusNotFound, s.call("GET", "/collections/"+id, nil).Status)
}

// A smart collection's rules are checked field by field (nothing is written
// on a refusal); it answers with its members; its products cannot be added
// or removed by hand; a store keeps at most 500.
func TestCollectionsSmartRulesAndRefusals(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newCollectionShop(h, "coll-smart")
	cheap := s.product("Cheap tee", 900, map[string]any{"sku": "TEE-CHEAP"})
	dear := s.product("Silk abaya", 45000, map[string]any{"attributes": map[string]any{"tags": []string{"Eid", "silk"}}})

	before := s.countCollections()
	title := map[string]any{"en": "x"}
	for _, c := range []struct {
		name        string
		body        map[string]any
		field, code string
	}{
		{"an unknown field", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("colour", "equals", "red"))}, "rules.conditions[0].field", "one_of"},
		{"a relation the field does not take", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("price", "contains", 5))}, "rules.conditions[0].relation", "one_of"},
		{"a price that is text", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("tag", "equals", "x"), rule("price", "equals", "cheap"))}, "rules.conditions[1].value", "type"},
		{"a negative price", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("price", "greater_than", -1))}, "rules.conditions[0].value", "out_of_range"},
		{"available that is text", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("available", "equals", "yes"))}, "rules.conditions[0].value", "type"},
		{"an unknown product kind", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("product_kind", "equals", "service"))}, "rules.conditions[0].value", "one_of"},
		{"a category that is not a uuid", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("category", "equals", "shoes"))}, "rules.conditions[0].value", "invalid_uuid"},
		{"a category of no store", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("category", "equals", "00000000-0000-0000-0000-000000000001"))}, "rules.conditions[0].value", "not_found"},
		{"a missing value", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("title", "contains", nil))}, "rules.conditions[0].value", "required"},
		{"a value on is_set", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("tag", "is_set", "x"))}, "rules.conditions[0].value", "not_allowed"},
		{"no conditions", map[string]any{"kind": "smart", "title": title, "rules": rules("all")}, "rules.conditions", "out_of_range"},
		{"a bad match", map[string]any{"kind": "smart", "title": title, "rules": rules("most", rule("tag", "is_set", nil))}, "rules.match", "one_of"},
		{"no rules", map[string]any{"kind": "smart", "title": title}, "rules", "required"},
		{"rules on a manual collection", map[string]any{"kind": "manual", "title": title, "rules": rules("all", rule("tag", "is_set", nil))}, "rules", "not_allowed"},
		{"no title", map[string]any{"kind": "manual", "title": map[string]any{"ar": " "}}, "title", "required"},
		{"a handle of symbols", map[string]any{"kind": "manual", "title": title, "handle": "sale!"}, "handle", "invalid"},
		{"a blank handle", map[string]any{"kind": "manual", "title": title, "handle": " -- "}, "handle", "blank"},
		{"a handle too long", map[string]any{"kind": "manual", "title": title, "handle": strings.Repeat("ب", 121)}, "handle", "too_long"},
		{"an image before the media library", map[string]any{"kind": "manual", "title": title, "image_id": "00000000-0000-0000-0000-000000000001"}, "image_id", "not_found"},
		{"a long SEO title", map[string]any{"kind": "manual", "title": title, "seo": map[string]any{"title": strings.Repeat("a", 71)}}, "seo.title", "too_long"},
		{"an unknown sort", map[string]any{"kind": "manual", "title": title, "sort": "random"}, "sort", "one_of"},
	} {
		resp := s.call("POST", "/collections", c.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s: %s", c.name, resp.Raw)
		require.Equal(t, c.code, resp.fieldCode(c.field), "%s: %s", c.name, resp.Raw)
		require.NotEmpty(t, resp.fieldMessageAr(c.field), c.name)
	}
	require.Equal(t, before, s.countCollections(), "a refused collection writes nothing")

	smart := s.create(map[string]any{"kind": "smart", "title": map[string]any{"ar": "هدايا"},
		"rules": rules("any", rule("tag", "equals", "eid"), rule("sku", "contains", "cheap"))})
	require.Equal(t, "best_selling", smart["sort"], "a smart collection sorts by best selling unless told")
	require.EqualValues(t, 2, smart["products_count"], "created with its members in place")
	id := smart["id"].(string)
	require.ElementsMatch(t, []string{cheap, dear}, s.productIDs(id, "?sort=price_asc"))
	require.Equal(t, []string{cheap, dear}, s.productIDs(id, "?sort=price_asc"))
	require.Equal(t, []string{dear, cheap}, s.productIDs(id, "?sort=newest"))

	for _, method := range []string{"POST", "DELETE"} {
		resp := s.call(method, "/collections/"+id+"/products", map[string]any{"product_ids": []string{cheap}})
		require.Equal(t, http.StatusConflict, resp.Status, string(resp.Raw))
		require.Equal(t, "COLLECTION_IS_SMART", resp.errorCode())
	}
	// A smart collection may still be ordered by hand, whole.
	ordered := s.call("PUT", "/collections/"+id+"/products/order", map[string]any{"product_ids": []string{dear, cheap}})
	require.Equal(t, http.StatusOK, ordered.Status, string(ordered.Raw))
	require.Equal(t, []string{dear, cheap}, s.productIDs(id, "?sort=manual"))

	// Lists: kind, published, search, pages.
	s.create(map[string]any{"kind": "manual", "title": map[string]any{"en": "Hidden"}, "published": false})
	list := func(query string) []string {
		resp := s.call("GET", "/collections"+query, nil)
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		handles := []string{}
		for _, item := range resp.data()["items"].([]any) {
			handles = append(handles, item.(map[string]any)["handle"].(string))
		}
		return handles
	}
	require.Equal(t, []string{"هدايا"}, list("?kind=smart"))
	require.Equal(t, []string{"hidden"}, list("?published=false"))
	require.Equal(t, []string{"hidden"}, list("?search=HIDD"))
	require.Equal(t, []string{"هدايا"}, list("?search=هدا"))
	require.Equal(t, []string{"هدايا"}, list("?limit=1"))
	require.Equal(t, []string{"hidden"}, list("?limit=1&page=2"))
	require.Equal(t, "one_of", s.call("GET", "/collections?kind=auto", nil).fieldCode("kind"))

	// 500 smart collections at most (categories' count too).
	h.exec(`INSERT INTO collections (id, store_id, handle, title, kind, rules, applied_rules, sort)
		SELECT gen_random_uuid(), $1, 'bulk-' || n, '{"en":"bulk"}', 'smart', r, r, 'manual'
		FROM generate_series(1, 499) n, (SELECT '{"match":"all","conditions":[{"field":"tag","relation":"equals","value":"x"}]}'::jsonb AS r) rr`, s.m.storeID)
	limit := s.call("POST", "/collections", map[string]any{"kind": "smart", "title": title, "rules": rules("all", rule("tag", "is_set", nil))})
	require.Equal(t, http.StatusUnprocessableEntity, limit.Status, string(limit.Raw))
	require.Equal(t, "limit_reached", limit.fieldCode("kind"))
	s.create(map[string]any{"kind": "manual", "title": map[string]any{"en": "Manual ones are not counted"}})
}

// Every category has its smart collection with the category's id, written
// in the category's transaction; its members follow the products'
// categories (descendants included) at every write, and a category deleted
// leaves its collection empty.
func TestCollectionsOfCategories(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newCollectionShop(h, "coll-cats")
	newCategory := func(name string, parent any) string {
		resp := s.call("POST", "/categories", map[string]any{"name": name, "parent_id": parent})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		return resp.data()["id"].(string)
	}
	clothes := newCategory("ملابس", nil)
	shirts := newCategory("Shirts & Tops", clothes)
	shoes := newCategory("Shoes", nil)

	col := s.call("GET", "/collections/"+clothes, nil)
	require.Equal(t, http.StatusOK, col.Status, string(col.Raw))
	require.Equal(t, "ملابس", col.data()["handle"])
	require.Equal(t, "smart", col.data()["kind"])
	require.Equal(t, rules("all", rule("category", "equals", clothes)), col.data()["rules"])
	require.Equal(t, "shirts-tops", s.call("GET", "/collections/"+shirts, nil).data()["handle"])

	tee := s.product("Tee", 100, map[string]any{"category_id": shirts})
	boot := s.product("Boot", 200, map[string]any{"category_id": shoes})
	require.Equal(t, []string{tee}, s.productIDs(clothes, ""), "a product in a child category is in its ancestors' collections")
	require.Equal(t, []string{tee}, s.productIDs(shirts, ""))
	require.Equal(t, []string{boot}, s.productIDs(shoes, ""))

	moved := s.call("PATCH", "/products/"+boot, map[string]any{"category_id": shirts})
	require.Equal(t, http.StatusOK, moved.Status, string(moved.Raw))
	require.Empty(t, s.productIDs(shoes, ""), "a product write leaves the collection it no longer matches")
	require.ElementsMatch(t, []string{tee, boot}, s.productIDs(clothes, ""))

	// Shirts moves to the top: its products leave Clothes.
	require.Equal(t, http.StatusOK, s.call("PATCH", "/categories/"+shirts, map[string]any{"parent_id": nil}).Status)
	require.Empty(t, s.productIDs(clothes, ""))
	require.Equal(t, http.StatusOK, s.call("PATCH", "/categories/"+shirts, map[string]any{"parent_id": clothes}).Status)
	require.ElementsMatch(t, []string{tee, boot}, s.productIDs(clothes, ""))

	// Deleting Shirts: its products lose their category and leave Clothes;
	// Shirts' collection stays, empty.
	require.Equal(t, http.StatusNoContent, s.call("DELETE", "/categories/"+shirts, nil).Status)
	require.Empty(t, s.productIDs(clothes, ""))
	left := s.call("GET", "/collections/"+shirts, nil)
	require.Equal(t, http.StatusOK, left.Status, string(left.Raw))
	require.EqualValues(t, 0, left.data()["products_count"])

	// Variant prices feed the price rule.
	cheap := s.create(map[string]any{"kind": "smart", "title": map[string]any{"en": "Under 50"}, "rules": rules("all", rule("price", "less_than", 5000))})
	require.ElementsMatch(t, []string{tee, boot}, s.productIDs(cheap["id"].(string), ""))
	variant := s.call("POST", "/products/"+tee+"/variants", map[string]any{"sku": "TEE-XL", "price": 9000, "options": map[string]any{"size": "XL"}})
	require.Equal(t, http.StatusCreated, variant.Status, string(variant.Raw))
	require.Equal(t, http.StatusOK, s.call("PATCH", "/products/"+tee, map[string]any{"price": 7000}).Status)
	require.Equal(t, []string{boot}, s.productIDs(cheap["id"].(string), ""), "no variant of the tee is under 50 any more")
}
