package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

func TestProductLifecycleWritesOutboxEvents(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("products")
	token := h.pat(m, "catalog:write")

	p := h.createProduct(token, m.storeID, map[string]any{"name": "Scarf", "price": 14999, "sku": "SC-1",
		"cost_price": 9000, "quantity": 5, "attributes": map[string]any{"material": "silk", "origin": "EG"}})
	id := p["id"].(string)
	require.Equal(t, "active", p["status"])
	require.EqualValues(t, 14999, p["price"])
	require.Equal(t, []any{}, p["images"])
	require.Equal(t, map[string]any{}, p["media_urls"])

	// Alt text lives in media_urls (set by the image work); it must survive updates.
	_, err := testenv.SQL(h.t, h.db).Exec(context.Background(), `UPDATE products SET media_urls = '{"https://cdn/x.webp": {"alt": "وشاح"}}' WHERE id = $1`, id)
	require.NoError(t, err)

	upd := h.do(request{method: "PATCH", path: storePath(m.storeID, "/products/"+id), auth: bearer(token),
		body: map[string]any{"attributes": map[string]any{"colour": "red"}, "cost_price": nil, "name": "Silk scarf"}})
	require.Equal(t, http.StatusOK, upd.Status, string(upd.Raw))
	require.Equal(t, map[string]any{"colour": "red"}, upd.data()["attributes"], "attributes are replaced wholesale")
	require.Nil(t, upd.data()["cost_price"], "null clears cost_price")
	require.Equal(t, "Silk scarf", upd.data()["name"])
	require.EqualValues(t, 14999, upd.data()["price"], "absent fields are untouched")
	require.Equal(t, map[string]any{"https://cdn/x.webp": map[string]any{"alt": "وشاح"}}, upd.data()["media_urls"])

	bad := h.do(request{method: "PATCH", path: storePath(m.storeID, "/products/"+id), auth: bearer(token),
		body: map[string]any{"name": nil, "price": -1, "status": "gone", "attributes": []int{1}}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
	require.ElementsMatch(t, []string{"name", "price", "status", "attributes"}, bad.fieldNames())

	del := h.do(request{method: "DELETE", path: storePath(m.storeID, "/products/"+id), auth: bearer(token)})
	require.Equal(t, http.StatusNoContent, del.Status)
	require.Empty(t, del.Raw)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+id), auth: bearer(token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "DELETE", path: storePath(m.storeID, "/products/"+id), auth: bearer(token)}).Status)

	// The SKU is free again once the product is gone.
	h.createProduct(token, m.storeID, map[string]any{"name": "Scarf again", "price": 1, "sku": "SC-1"})

	events, err := h.db.FindOutboxEvents(context.Background(), uuid.MustParse(m.storeID))
	require.NoError(t, err)
	var names []string
	for _, e := range events {
		names = append(names, e.Event)
		var body struct {
			Event     string         `json:"event"`
			Timestamp string         `json:"timestamp"`
			Data      map[string]any `json:"data"`
		}
		require.NoError(t, json.Unmarshal(e.Body, &body))
		require.Equal(t, e.Event, body.Event)
		require.Equal(t, m.storeID, body.Data["store_id"])
		require.Regexp(t, `Z$`, body.Timestamp)
	}
	require.Equal(t, []string{"product.created", "product.updated", "product.deleted", "product.created"}, names,
		"one event per change; refused changes write none")
}

func TestCreateProductValidation(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("validation")
	token := h.pat(m, "catalog:write")
	cases := []struct {
		body   map[string]any
		fields []string
	}{
		{map[string]any{}, []string{"name", "price"}},
		{map[string]any{"name": "x", "price": -5}, []string{"price"}},
		{map[string]any{"name": "x", "price": 5, "status": "deleted"}, []string{"status"}},
		{map[string]any{"name": "x", "price": 5, "category_id": "nope"}, []string{"category_id"}},
		{map[string]any{"name": "x", "price": 5, "category_id": uuid.NewString()}, []string{"category_id"}},
		{map[string]any{"name": "x", "price": 5, "sku": ""}, []string{"sku"}},
		{map[string]any{"name": "x", "price": 5, "quantity": -1, "cost_price": -1}, []string{"quantity", "cost_price"}},
	}
	for i, tc := range cases {
		resp := h.do(request{method: "POST", path: storePath(m.storeID, "/products"), auth: bearer(token), body: tc.body})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "case %d: %s", i, resp.Raw)
		require.ElementsMatch(t, tc.fields, resp.fieldNames(), "case %d", i)
	}
}

func TestProductListFiltersAndSorts(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("listing")
	token := h.pat(m, "catalog:write")
	cat := h.do(request{method: "POST", path: storePath(m.storeID, "/categories"), auth: bearer(token), body: map[string]any{"name": "Lamps"}})
	require.Equal(t, http.StatusCreated, cat.Status)
	catID := cat.data()["id"].(string)

	h.createProduct(token, m.storeID, map[string]any{"name": "Brass lamp", "price": 5000, "sku": "LAMP-BR", "category_id": catID, "cost_price": 3000, "quantity": 3})
	h.createProduct(token, m.storeID, map[string]any{"name": "Copper lamp", "price": 7000, "sku": "LAMP-CU", "category_id": catID, "quantity": 9})
	h.createProduct(token, m.storeID, map[string]any{"name": "Rug", "price": 12000, "sku": "RUG-1", "status": "draft", "quantity": 1})
	withVariant := h.createProduct(token, m.storeID, map[string]any{"name": "Mug", "price": 900})
	v := h.do(request{method: "POST", path: storePath(m.storeID, "/products/"+withVariant["id"].(string)+"/variants"), auth: bearer(token), body: map[string]any{"sku": "MUG-BLUE"}})
	require.Equal(t, http.StatusCreated, v.Status)

	names := func(query string) []string {
		resp := h.do(request{method: "GET", path: storePath(m.storeID, "/products?"+query), auth: bearer(token)})
		require.Equal(t, http.StatusOK, resp.Status, query+": "+string(resp.Raw))
		var out []string
		for _, it := range resp.data()["items"].([]any) {
			out = append(out, it.(map[string]any)["name"].(string))
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"Brass lamp", "Copper lamp", "Rug", "Mug"}},
		{"category_id=" + catID, []string{"Brass lamp", "Copper lamp"}},
		{"status=draft", []string{"Rug"}},
		{"search=lamp", []string{"Brass lamp", "Copper lamp"}},
		{"sku=lamp-c", []string{"Copper lamp"}},
		{"sku=blue", []string{"Mug"}},
		{"price_min=5000&price_max=7000", []string{"Brass lamp", "Copper lamp"}},
		{"has_cost=true", []string{"Brass lamp"}},
		{"has_cost=false&sort_by=name", []string{"Copper lamp", "Mug", "Rug"}},
		{"sort_by=price&sort_order=desc", []string{"Rug", "Copper lamp", "Brass lamp", "Mug"}},
		{"sort_by=quantity", []string{"Mug", "Rug", "Brass lamp", "Copper lamp"}},
		{"sort_by=name&limit=2&page=2", []string{"Mug", "Rug"}},
		{"search=100%25", nil},
	} {
		require.Equal(t, tc.want, names(tc.query), tc.query)
	}

	page := h.do(request{method: "GET", path: storePath(m.storeID, "/products?limit=3&page=1"), auth: bearer(token)})
	require.Equal(t, map[string]any{"page": 1.0, "limit": 3.0, "total": 4.0, "total_pages": 2.0, "has_next": true}, page.data()["pagination"])
	beyond := h.do(request{method: "GET", path: storePath(m.storeID, "/products?limit=3&page=5"), auth: bearer(token)})
	require.EqualValues(t, 4, beyond.data()["pagination"].(map[string]any)["total"])
	require.Empty(t, beyond.data()["items"])

	for query, fields := range map[string][]string{
		"page=0":                  {"page"},
		"limit=101":               {"limit"},
		"limit=abc":               {"limit"},
		"price_min=-1":            {"price_min"},
		"price_min=9&price_max=1": {"price_min"},
		"sort_by=colour":          {"sort_by"},
		"sort_order=up":           {"sort_order"},
		"has_cost=maybe":          {"has_cost"},
		"category_id=12":          {"category_id"},
		"status=gone":             {"status"},
	} {
		resp := h.do(request{method: "GET", path: storePath(m.storeID, "/products?"+query), auth: bearer(token)})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, query)
		require.ElementsMatch(t, fields, resp.fieldNames(), query)
	}
}

func TestVariants(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("variants")
	token := h.pat(m, "catalog:write")
	p := h.createProduct(token, m.storeID, map[string]any{"name": "Tee", "price": 3000, "sku": "TEE"})
	base := storePath(m.storeID, "/products/"+p["id"].(string)+"/variants")

	small := h.do(request{method: "POST", path: base, auth: bearer(token), body: map[string]any{"sku": "TEE-S", "barcode": "622000000001", "cost_price": 1200, "options": map[string]any{"size": "S"}}})
	require.Equal(t, http.StatusCreated, small.Status, string(small.Raw))
	require.Nil(t, small.Body["success"], "variant operations answer the bare variant")
	require.EqualValues(t, 3000, small.Body["price"], "price defaults to the product's")
	require.EqualValues(t, 1, small.Body["position"])
	large := h.do(request{method: "POST", path: base, auth: bearer(token), body: map[string]any{"sku": "TEE-L", "price": 3500}})
	require.EqualValues(t, 2, large.Body["position"])

	// SKU unique per store across products and variants, checked before writing.
	for _, sku := range []string{"TEE-S", "TEE"} {
		dup := h.do(request{method: "POST", path: base, auth: bearer(token), body: map[string]any{"sku": sku}})
		require.Equal(t, http.StatusConflict, dup.Status, sku)
		require.Equal(t, "DUPLICATE_SKU", dup.errorCode())
		require.Contains(t, dup.errorField("message"), "SKU")
		require.Contains(t, dup.errorField("message_ar"), "SKU")
	}
	prodDup := h.do(request{method: "POST", path: storePath(m.storeID, "/products"), auth: bearer(token), body: map[string]any{"name": "x", "price": 1, "sku": "TEE-L"}})
	require.Equal(t, http.StatusConflict, prodDup.Status)
	require.Equal(t, "DUPLICATE_SKU", prodDup.errorCode())
	// Another store may use the same SKU.
	other := h.signup("variants-other")
	otherToken := h.pat(other, "catalog:write")
	h.createProduct(otherToken, other.storeID, map[string]any{"name": "Tee", "price": 1, "sku": "TEE-S"})

	// Partial PATCH: only fields present are written; null clears sku, barcode, cost_price.
	smallID := small.Body["id"].(string)
	patched := h.do(request{method: "PATCH", path: base + "/" + smallID, auth: bearer(token), body: map[string]any{"sku": nil, "barcode": nil, "cost_price": nil, "position": 3}})
	require.Equal(t, http.StatusOK, patched.Status, string(patched.Raw))
	require.Nil(t, patched.Body["sku"])
	require.Nil(t, patched.Body["barcode"])
	require.Nil(t, patched.Body["cost_price"])
	require.Equal(t, map[string]any{"size": "S"}, patched.Body["options"])
	require.EqualValues(t, 3000, patched.Body["price"])
	taken := h.do(request{method: "PATCH", path: base + "/" + smallID, auth: bearer(token), body: map[string]any{"sku": "TEE-L"}})
	require.Equal(t, http.StatusConflict, taken.Status)
	// The freed SKU can be used again.
	reuse := h.do(request{method: "POST", path: base, auth: bearer(token), body: map[string]any{"sku": "TEE-S"}})
	require.Equal(t, http.StatusCreated, reuse.Status)

	list := h.do(request{method: "GET", path: base, auth: bearer(token)})
	require.Equal(t, http.StatusOK, list.Status)
	var variants []map[string]any
	require.NoError(t, json.Unmarshal(list.Raw, &variants), "the list is a bare array")
	var skus []any
	for _, v := range variants {
		skus = append(skus, v["sku"])
	}
	require.Equal(t, []any{"TEE-L", nil, "TEE-S"}, skus, "ordered by position: TEE-L 2, the cleared one 3, the new TEE-S 4")

	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: base + "/" + smallID, auth: bearer(token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "PATCH", path: base + "/" + smallID, auth: bearer(token), body: map[string]any{"price": 1}}).Status)
	var remaining int
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM variants WHERE id = $1`, smallID).Scan(&remaining))
	require.Zero(t, remaining, "hard delete")

	missing := h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+uuid.NewString()+"/variants"), auth: bearer(token)})
	require.Equal(t, http.StatusNotFound, missing.Status)
	require.Equal(t, "NOT_FOUND", missing.errorCode())
	invalid := h.do(request{method: "POST", path: base, auth: bearer(token), body: map[string]any{"price": -1, "options": "big"}})
	require.Equal(t, http.StatusUnprocessableEntity, invalid.Status)
	require.ElementsMatch(t, []string{"price", "options"}, invalid.fieldNames())
}

func TestCategories(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("categories")
	token := h.pat(m, "catalog:write")
	base := storePath(m.storeID, "/categories")
	create := func(body map[string]any) response {
		return h.do(request{method: "POST", path: base, auth: bearer(token), body: body})
	}
	parent := create(map[string]any{"name": "Home", "position": 1})
	require.Equal(t, http.StatusCreated, parent.Status)
	parentID := parent.data()["id"].(string)
	child := create(map[string]any{"name": "Kitchen", "parent_id": parentID})
	require.Equal(t, http.StatusCreated, child.Status)
	childID := child.data()["id"].(string)

	cycle := h.do(request{method: "PATCH", path: base + "/" + parentID, auth: bearer(token), body: map[string]any{"parent_id": childID}})
	require.Equal(t, http.StatusUnprocessableEntity, cycle.Status)
	require.Equal(t, []string{"parent_id"}, cycle.fieldNames())
	require.Equal(t, http.StatusUnprocessableEntity, create(map[string]any{"name": "Orphan", "parent_id": uuid.NewString()}).Status)
	require.Equal(t, http.StatusUnprocessableEntity, create(map[string]any{"name": ""}).Status)

	renamed := h.do(request{method: "PATCH", path: base + "/" + childID, auth: bearer(token), body: map[string]any{"name": "Cookware", "parent_id": nil}})
	require.Equal(t, http.StatusOK, renamed.Status)
	require.Nil(t, renamed.data()["parent_id"])

	p := h.createProduct(token, m.storeID, map[string]any{"name": "Pan", "price": 1, "category_id": childID})
	list := h.do(request{method: "GET", path: base, auth: bearer(token)})
	require.EqualValues(t, 2, list.data()["pagination"].(map[string]any)["total"])
	require.Equal(t, "Cookware", list.data()["items"].([]any)[0].(map[string]any)["name"], "position 0 sorts first")

	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: base + "/" + childID, auth: bearer(token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: base + "/" + childID, auth: bearer(token)}).Status)
	got := h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+p["id"].(string)), auth: bearer(token)})
	require.Nil(t, got.data()["category_id"], "products lose a deleted category")
}

// Store A's category cannot be attached to store B's product.
func TestCategoryFromAnotherStoreIsRefused(t *testing.T) {
	h := newHarness(t, api.Config{})
	a, b := h.signup("cat-a"), h.signup("cat-b")
	ta, tb := h.pat(a, "catalog:write"), h.pat(b, "catalog:write")
	cat := h.do(request{method: "POST", path: storePath(a.storeID, "/categories"), auth: bearer(ta), body: map[string]any{"name": "A"}})
	resp := h.do(request{method: "POST", path: storePath(b.storeID, "/products"), auth: bearer(tb),
		body: map[string]any{"name": "x", "price": 1, "category_id": cat.data()["id"]}})
	require.Equal(t, http.StatusUnprocessableEntity, resp.Status, fmt.Sprint(resp.Body))
	require.Equal(t, []string{"category_id"}, resp.fieldNames())
}

// A variant's weight is grams from 0 to a tonne; null clears it.
func TestVariantWeight(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("weight")
	token := h.pat(m, "catalog:write", "catalog:read")
	p := h.createProduct(token, m.storeID, map[string]any{"name": "Jug", "price": 500})
	variants := storePath(m.storeID, "/products/"+p["id"].(string)+"/variants")
	for _, weight := range []int{-1, 1_000_001} {
		bad := h.do(request{method: "POST", path: variants, auth: bearer(token), body: map[string]any{"options": map[string]any{"size": "L"}, "weight_grams": weight}})
		require.Equal(t, http.StatusUnprocessableEntity, bad.Status, string(bad.Raw))
		require.Equal(t, "out_of_range", bad.fieldCode("weight_grams"))
		require.NotEmpty(t, bad.fieldMessageAr("weight_grams"))
	}
	created := h.do(request{method: "POST", path: variants, auth: bearer(token), body: map[string]any{"options": map[string]any{"size": "L"}, "weight_grams": 1_000_000}})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	require.EqualValues(t, 1_000_000, created.Body["weight_grams"])
	one := variants + "/" + created.Body["id"].(string)
	require.Equal(t, "out_of_range", h.do(request{method: "PATCH", path: one, auth: bearer(token), body: map[string]any{"weight_grams": -5}}).fieldCode("weight_grams"))
	cleared := h.do(request{method: "PATCH", path: one, auth: bearer(token), body: map[string]any{"weight_grams": nil}})
	require.Equal(t, http.StatusOK, cleared.Status, string(cleared.Raw))
	require.Contains(t, cleared.Body, "weight_grams")
	require.Nil(t, cleared.Body["weight_grams"])
}
