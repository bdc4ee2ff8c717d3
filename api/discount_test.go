package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

func (h *harness) discount(token, storeID string, body map[string]any) response {
	h.t.Helper()
	return h.do(request{method: "POST", path: storePath(storeID, "/discounts"), auth: bearer(token), body: body})
}

// Discounts: §14's input rules with field paths and Arabic messages,
// codes unique once normalised (ramadan٢٥ is RAMADAN25), statuses derived
// from the clock and the switch, PATCH checked on the whole result with
// method immutable, soft delete freeing the code, and nothing of another
// store's.
func TestDiscountsCRUD(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("discounts")
	token := h.pat(m, "marketing:write", "catalog:write")
	other := h.signup("discounts-other")
	otherToken := h.pat(other, "marketing:write", "catalog:write")
	foreign := h.createProduct(otherToken, other.storeID, map[string]any{"name": "Other", "price": 100})
	own := h.createProduct(token, m.storeID, map[string]any{"name": "Kaftan", "price": 30000})

	created := h.discount(token, m.storeID, map[string]any{"method": "code", "code": "RAMADAN25", "title": "رمضان كريم", "type": "percentage",
		"value": 25, "max_discount": 20000, "usage_limit": 100, "usage_limit_per_customer": 1})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	d := created.data()
	require.Equal(t, "active", d["status"])
	require.EqualValues(t, 0, d["times_used"])
	require.Equal(t, true, d["combines_with_automatic"])
	require.Equal(t, map[string]any{"scope": "order"}, d["applies_to"])

	dup := h.discount(token, m.storeID, map[string]any{"method": "code", "code": " ramadan٢٥ ", "title": "x", "type": "fixed_amount", "value": 500})
	require.Equal(t, http.StatusConflict, dup.Status, string(dup.Raw))
	require.Equal(t, "DUPLICATE_DISCOUNT_CODE", dup.errorCode())
	elsewhere := h.discount(otherToken, other.storeID, map[string]any{"method": "code", "code": "RAMADAN25", "title": "x", "type": "fixed_amount", "value": 500})
	require.Equal(t, http.StatusCreated, elsewhere.Status, "codes are per store")

	for i, c := range []struct {
		body        map[string]any
		field, code string
	}{
		{map[string]any{"method": "code", "title": "x", "type": "percentage", "value": 10}, "code", "required"},
		{map[string]any{"method": "automatic", "code": "AUTO", "title": "x", "type": "percentage", "value": 10}, "code", "not_allowed"},
		{map[string]any{"method": "code", "code": "has space", "title": "x", "type": "percentage", "value": 10}, "code", "invalid"},
		{map[string]any{"method": "code", "code": "ABCDEFGHIJKLMNOPQRSTUVWXYZ1234567", "title": "x", "type": "percentage", "value": 10}, "code", "invalid"},
		{map[string]any{"method": "code", "code": "P0", "title": "x", "type": "percentage", "value": 101}, "value", "out_of_range"},
		{map[string]any{"method": "code", "code": "P1", "title": "x", "type": "percentage"}, "value", "required"},
		{map[string]any{"method": "code", "code": "F0", "title": "x", "type": "fixed_amount", "value": 0}, "value", "out_of_range"},
		{map[string]any{"method": "code", "code": "S1", "title": "x", "type": "free_shipping", "value": 5}, "value", "not_allowed"},
		{map[string]any{"method": "automatic", "title": "x", "type": "free_shipping"}, "type", "not_allowed"},
		{map[string]any{"method": "code", "code": "S2", "title": "x", "type": "free_shipping", "applies_to": map[string]any{"scope": "products",
			"product_ids": []string{own["id"].(string)}}}, "applies_to.scope", "not_allowed"},
		{map[string]any{"method": "code", "code": "M1", "title": "x", "type": "fixed_amount", "value": 5, "max_discount": 3}, "max_discount", "not_allowed"},
		{map[string]any{"method": "code", "code": "C1", "title": "x", "type": "percentage", "value": 5, "include_cod_fee": true}, "include_cod_fee", "not_allowed"},
		{map[string]any{"method": "code", "code": "A1", "title": "x", "type": "percentage", "value": 5, "applies_to": map[string]any{"scope": "products"}},
			"applies_to.product_ids", "out_of_range"},
		{map[string]any{"method": "code", "code": "A2", "title": "x", "type": "percentage", "value": 5, "applies_to": map[string]any{"scope": "products",
			"product_ids": []string{own["id"].(string), foreign["id"].(string)}}}, "applies_to.product_ids[1]", "not_found"},
		{map[string]any{"method": "code", "code": "T1", "title": "x", "type": "percentage", "value": 5, "starts_at": "2026-12-01T00:00:00Z",
			"ends_at": "2026-11-01T00:00:00Z"}, "ends_at", "out_of_range"},
		{map[string]any{"method": "automatic", "title": "x", "type": "percentage", "value": 5, "usage_limit_per_customer": 1}, "usage_limit_per_customer", "not_allowed"},
		{map[string]any{"method": "voucher", "title": "x", "type": "percentage", "value": 5}, "method", "one_of"},
		{map[string]any{"method": "code", "code": "E1", "title": "", "type": "percentage", "value": 5}, "title", "required"},
	} {
		resp := h.discount(token, m.storeID, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%d %v: %s", i, c.body, resp.Raw)
		require.Equal(t, c.code, resp.fieldCode(c.field), "%d: %s", i, resp.Raw)
		require.NotEmpty(t, resp.fieldMessageAr(c.field))
	}

	// Statuses from the clock and the switch.
	future := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	statuses := map[string]string{}
	for name, body := range map[string]map[string]any{
		"scheduled": {"method": "automatic", "title": "later", "type": "percentage", "value": 5, "starts_at": future},
		"expired":   {"method": "automatic", "title": "over", "type": "percentage", "value": 5, "starts_at": "2026-01-01T00:00:00Z", "ends_at": past},
		"disabled":  {"method": "code", "code": "OFF", "title": "off", "type": "fixed_amount", "value": 100, "enabled": false},
	} {
		resp := h.discount(token, m.storeID, body)
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		statuses[name] = resp.data()["status"].(string)
	}
	require.Equal(t, map[string]string{"scheduled": "scheduled", "expired": "expired", "disabled": "disabled"}, statuses)
	list := func(query string) []any {
		resp := h.do(request{method: "GET", path: storePath(m.storeID, "/discounts"+query), auth: bearer(token)})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		return resp.list()
	}
	require.Len(t, list(""), 4)
	require.Len(t, list("?method=automatic"), 2)
	require.Len(t, list("?status=active"), 1)
	require.Len(t, list("?code=ramadan٢٥"), 1, "the code filter matches normalised")
	require.Len(t, list("?search=رمضان"), 1)
	bad := h.do(request{method: "GET", path: storePath(m.storeID, "/discounts?status=live"), auth: bearer(token)})
	require.Equal(t, "status", bad.fieldNames()[0])

	// PATCH: the result is checked whole; method is immutable; null clears.
	path := storePath(m.storeID, "/discounts/"+d["id"].(string))
	patch := func(body map[string]any) response {
		return h.do(request{method: "PATCH", path: path, auth: bearer(token), body: body})
	}
	immutable := patch(map[string]any{"method": "automatic"})
	require.Equal(t, "immutable", immutable.fieldCode("method"), string(immutable.Raw))
	toFixed := patch(map[string]any{"type": "fixed_amount"})
	require.Equal(t, "not_allowed", toFixed.fieldCode("max_discount"), "a fixed amount with the stored max_discount is refused: %s", toFixed.Raw)
	changed := patch(map[string]any{"type": "fixed_amount", "value": 5000, "max_discount": nil, "usage_limit": nil, "enabled": false})
	require.Equal(t, http.StatusOK, changed.Status, string(changed.Raw))
	require.Equal(t, "disabled", changed.data()["status"])
	require.Nil(t, changed.data()["max_discount"])
	require.Nil(t, changed.data()["usage_limit"])
	require.Equal(t, "RAMADAN25", changed.data()["code"])
	taken := patch(map[string]any{"code": "off"})
	require.Equal(t, "DUPLICATE_DISCOUNT_CODE", taken.errorCode())

	// Another store's discount is not found; delete is soft and frees the code.
	foreignGet := h.do(request{method: "GET", path: storePath(other.storeID, "/discounts/"+d["id"].(string)), auth: bearer(otherToken)})
	require.Equal(t, http.StatusNotFound, foreignGet.Status)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: path, auth: bearer(token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: path, auth: bearer(token)}).Status)
	redemptions := h.do(request{method: "GET", path: path + "/redemptions", auth: bearer(token)})
	require.Equal(t, http.StatusOK, redemptions.Status, "a deleted discount's history stays readable: %s", redemptions.Raw)
	again := h.discount(token, m.storeID, map[string]any{"method": "code", "code": "Ramadan25", "title": "again", "type": "fixed_amount", "value": 1})
	require.Equal(t, http.StatusCreated, again.Status, "the code is free again: %s", again.Raw)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "DELETE", path: path, auth: bearer(token)}).Status)
}

// A PATCH checks usage_limit against times_used as they stand when it
// commits: an order's transaction counting uses meanwhile is waited for, so
// the limit never ends below the uses (the PATCH locks the discount's row).
func TestDiscountPatchWaitsForUsesBeingCounted(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("discount-race")
	token := h.pat(m, "marketing:write")
	created := h.discount(token, m.storeID, map[string]any{"method": "code", "code": "RACE", "title": "x", "type": "percentage",
		"value": 10, "usage_limit": 10})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	id := created.data()["id"].(string)

	// An order's transaction that has counted five uses and not committed.
	ctx := context.Background()
	counting, err := testenv.SQL(t, h.db).Begin(ctx)
	require.NoError(t, err)
	_, err = counting.Exec(ctx, `UPDATE discounts SET times_used = 5 WHERE id = $1`, id)
	require.NoError(t, err)

	patched := make(chan response, 1)
	go func() {
		patched <- h.do(request{method: "PATCH", path: storePath(m.storeID, "/discounts/"+id), auth: bearer(token),
			body: map[string]any{"usage_limit": 3}})
	}()
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, counting.Commit(ctx))
	resp := <-patched
	require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
	require.Contains(t, resp.fieldNames(), "usage_limit")
	got := h.do(request{method: "GET", path: storePath(m.storeID, "/discounts/"+id), auth: bearer(token)}).data()
	require.EqualValues(t, 10, got["usage_limit"], "the refused PATCH changed nothing")
	require.EqualValues(t, 5, got["times_used"])
}
