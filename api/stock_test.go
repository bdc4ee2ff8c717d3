package api_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/migrations"
)

// level reads one (variant, location) level straight from the table.
func (h *harness) level(variantID, locationID string) (onHand, reserved int) {
	h.t.Helper()
	err := testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT on_hand, reserved FROM inventory_levels
		WHERE variant_id = $1 AND location_id = $2`, variantID, locationID).Scan(&onHand, &reserved)
	require.NoError(h.t, err)
	return onHand, reserved
}

func (h *harness) defaultLocation(storeID string) string {
	h.t.Helper()
	var id string
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT id FROM locations WHERE store_id = $1 AND is_default`,
		storeID).Scan(&id))
	return id
}

func (h *harness) adjust(s shop, key string, body map[string]any) response {
	h.t.Helper()
	headers := map[string]string{}
	if key != "" {
		headers["Idempotency-Key"] = key
	}
	return h.do(request{method: "POST", path: storePath(s.m.storeID, "/inventory/adjustments"), auth: bearer(s.token), body: body, headers: headers})
}

// A product created without variants sells as its default variant; the
// first variant converts it in place, and quantity means sellable units.
func TestEveryProductIsSellable(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("sellable")
	token := h.pat(m, "catalog:write", "catalog:read", "orders:write", "settings:write")
	p := h.createProduct(token, m.storeID, map[string]any{"name": "Kaftan", "price": 30000, "sku": "KAFTAN", "quantity": 5})
	productID := p["id"].(string)
	require.EqualValues(t, 5, p["quantity"])
	variantsPath := storePath(m.storeID, "/products/"+productID+"/variants")
	list := h.do(request{method: "GET", path: variantsPath, auth: bearer(token)})
	require.Len(t, list.list(), 1)
	def := list.list()[0].(map[string]any)
	require.Equal(t, true, def["is_default"])
	require.Nil(t, def["sku"])
	require.EqualValues(t, 30000, def["price"])
	require.EqualValues(t, 5, def["quantity"])
	require.Equal(t, map[string]any{}, def["options"])
	defaultID := def["id"].(string)
	s := shop{m: m, token: token, variantID: defaultID}

	// It can be ordered; the line takes the product's SKU.
	order := h.do(request{method: "POST", path: storePath(m.storeID, "/orders"), auth: bearer(token), body: orderBody(defaultID, 2, "+201001112223")})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
	require.Equal(t, "KAFTAN", order.data()["lines"].([]any)[0].(map[string]any)["sku"])
	onHand, reserved := h.level(defaultID, h.defaultLocation(m.storeID))
	require.Equal(t, []int{5, 2}, []int{onHand, reserved})
	require.EqualValues(t, 3, h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+productID), auth: bearer(token)}).data()["quantity"])

	// The price follows the product while it sells as its default variant.
	h.do(request{method: "PATCH", path: storePath(m.storeID, "/products/"+productID), auth: bearer(token), body: map[string]any{"price": 32000}})
	require.EqualValues(t, 32000, h.do(request{method: "GET", path: variantsPath, auth: bearer(token)}).list()[0].(map[string]any)["price"])

	// Writing quantity sets sellable units; the reservation is kept.
	zero := h.do(request{method: "PATCH", path: storePath(m.storeID, "/products/"+productID), auth: bearer(token), body: map[string]any{"quantity": 0}})
	require.Equal(t, http.StatusOK, zero.Status, string(zero.Raw))
	require.EqualValues(t, 0, zero.data()["quantity"])
	onHand, reserved = h.level(defaultID, h.defaultLocation(m.storeID))
	require.Equal(t, []int{2, 2}, []int{onHand, reserved})
	sub := h.subdomain(s)
	listed := h.do(request{method: "GET", path: "/api/v1/storefront/" + sub + "/products"})
	require.Equal(t, false, listed.list()[0].(map[string]any)["available"], "every variant out of stock")
	one := h.do(request{method: "GET", path: "/api/v1/storefront/" + sub + "/products/" + productID})
	require.Equal(t, false, one.data()["available"])
	require.Equal(t, false, one.data()["variants"].([]any)[0].(map[string]any)["available"])

	// The first variant with options converts the default one in place.
	conv := h.do(request{method: "POST", path: variantsPath, auth: bearer(token), body: map[string]any{"sku": "KAFTAN-M", "options": map[string]any{"size": "M"}}})
	require.Equal(t, http.StatusCreated, conv.Status, string(conv.Raw))
	require.Equal(t, defaultID, conv.Body["id"], "same id")
	require.Equal(t, false, conv.Body["is_default"])
	onHand, reserved = h.level(defaultID, h.defaultLocation(m.storeID))
	require.Equal(t, []int{2, 2}, []int{onHand, reserved}, "same stock")
	history := h.do(request{method: "GET", path: storePath(m.storeID, "/inventory/movements?variant_id="+defaultID), auth: bearer(token)})
	require.Len(t, history.list(), 3, "same history: the opening correction, the reservation, the quantity write")

	// Quantity now belongs to the variants.
	managed := h.do(request{method: "PATCH", path: storePath(m.storeID, "/products/"+productID), auth: bearer(token), body: map[string]any{"quantity": 4}})
	require.Equal(t, http.StatusUnprocessableEntity, managed.Status)
	require.Equal(t, "managed_by_variants", managed.fieldCode("quantity"))
	second := h.do(request{method: "POST", path: variantsPath, auth: bearer(token), body: map[string]any{"sku": "KAFTAN-L", "quantity": 4, "options": map[string]any{"size": "L"}}})
	require.Equal(t, http.StatusCreated, second.Status)
	require.NotEqual(t, defaultID, second.Body["id"])
	require.EqualValues(t, 4, h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+productID), auth: bearer(token)}).data()["quantity"])
	require.Equal(t, true, h.do(request{method: "GET", path: "/api/v1/storefront/" + sub + "/products"}).list()[0].(map[string]any)["available"])

	// Stock at a second location makes a quantity write ambiguous.
	loc := h.do(request{method: "POST", path: storePath(m.storeID, "/locations"), auth: bearer(token),
		body: map[string]any{"name": "Alexandria", "address": map[string]any{"line1": "1 Corniche", "city": "Alexandria", "country": "EG"}}})
	require.Equal(t, http.StatusCreated, loc.Status, string(loc.Raw))
	require.Equal(t, http.StatusCreated, h.adjust(s, "k1", map[string]any{"reason": "received",
		"changes": []any{map[string]any{"variant_id": second.Body["id"], "location_id": loc.data()["id"], "delta": 3}}}).Status)
	ambiguous := h.do(request{method: "PATCH", path: variantsPath + "/" + second.Body["id"].(string), auth: bearer(token), body: map[string]any{"quantity": 1}})
	require.Equal(t, http.StatusUnprocessableEntity, ambiguous.Status)
	require.Equal(t, "multiple_locations", ambiguous.fieldCode("quantity"))
	require.NotEmpty(t, ambiguous.fieldMessageAr("quantity"))
	require.Equal(t, 7, h.variantQuantity(shop{variantID: second.Body["id"].(string)}))
	// A location with stock cannot be deleted.
	inUse := h.do(request{method: "DELETE", path: storePath(m.storeID, "/locations/"+loc.data()["id"].(string)), auth: bearer(token)})
	require.Equal(t, "LOCATION_IN_USE", inUse.errorCode())
}

func TestInventoryAdjustments(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "adjust", 10)
	defaultLoc := h.defaultLocation(s.m.storeID)
	other := newShop(t, h, "adjustother", 10)

	change := func(fields map[string]any) map[string]any {
		c := map[string]any{"variant_id": s.variantID}
		for k, v := range fields {
			c[k] = v
		}
		return c
	}
	refusals := []struct {
		name  string
		body  map[string]any
		field string
		code  string
	}{
		{"no reason", map[string]any{"changes": []any{change(map[string]any{"delta": 1})}}, "reason", "required"},
		{"unknown reason", map[string]any{"reason": "order_ship", "changes": []any{change(map[string]any{"delta": 1})}}, "reason", "one_of"},
		{"no changes", map[string]any{"reason": "received", "changes": []any{}}, "changes", "required"},
		{"delta and set", map[string]any{"reason": "correction", "changes": []any{change(map[string]any{"delta": 1, "set_on_hand": 3})}}, "changes[0]", "one_of"},
		{"neither", map[string]any{"reason": "correction", "changes": []any{change(nil)}}, "changes[0]", "one_of"},
		{"received negative", map[string]any{"reason": "received", "changes": []any{change(map[string]any{"delta": -1})}}, "changes[0].delta", "sign"},
		{"damaged positive", map[string]any{"reason": "damaged", "changes": []any{change(map[string]any{"delta": 2})}}, "changes[0].delta", "sign"},
		{"zero delta", map[string]any{"reason": "correction", "changes": []any{change(map[string]any{"delta": 0})}}, "changes[0].delta", "out_of_range"},
		{"negative count", map[string]any{"reason": "correction", "changes": []any{change(map[string]any{"set_on_hand": -1})}}, "changes[0].set_on_hand", "out_of_range"},
		{"duplicate", map[string]any{"reason": "received", "changes": []any{change(map[string]any{"delta": 1}),
			change(map[string]any{"delta": 2, "location_id": defaultLoc})}}, "changes[1]", "duplicate"},
		{"another store's variant", map[string]any{"reason": "received", "changes": []any{map[string]any{"variant_id": other.variantID, "delta": 1}}},
			"changes[0].variant_id", "not_found"},
		{"another store's location", map[string]any{"reason": "received", "changes": []any{change(map[string]any{"delta": 1,
			"location_id": h.defaultLocation(other.m.storeID)})}}, "changes[0].location_id", "not_found"},
		{"damaged raising on_hand by set_on_hand", map[string]any{"reason": "damaged", "changes": []any{change(map[string]any{"set_on_hand": 12})}},
			"changes[0].set_on_hand", "sign"},
	}
	for i, tc := range refusals {
		resp := h.adjust(s, fmt.Sprintf("refused-%d", i), tc.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s: %s", tc.name, resp.Raw)
		require.Equal(t, tc.code, resp.fieldCode(tc.field), "%s: %s", tc.name, resp.Raw)
		require.NotEmpty(t, resp.fieldMessageAr(tc.field), tc.name)
	}
	noKey := h.adjust(s, "", map[string]any{"reason": "received", "changes": []any{change(map[string]any{"delta": 1})}})
	require.Equal(t, http.StatusPreconditionRequired, noKey.Status)
	require.Equal(t, "IDEMPOTENCY_KEY_REQUIRED", noKey.errorCode())
	require.NotEmpty(t, noKey.errorField("message_ar"))
	onHand, reserved := h.level(s.variantID, defaultLoc)
	require.Equal(t, []int{10, 0}, []int{onHand, reserved}, "no refusal changed anything")

	// Reserve 4, then try to count below it.
	require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: orderBody(s.variantID, 4, "+201002223334")}).Status)
	below := h.adjust(s, "below", map[string]any{"reason": "correction", "changes": []any{change(map[string]any{"set_on_hand": 3})}})
	require.Equal(t, http.StatusConflict, below.Status)
	require.Equal(t, "STOCK_RESERVED", below.errorCode())
	require.NotEmpty(t, below.errorField("message_ar"))
	stale := h.adjust(s, "stale", map[string]any{"reason": "correction", "changes": []any{change(map[string]any{"set_on_hand": 8, "expected_on_hand": 9})}})
	require.Equal(t, http.StatusConflict, stale.Status)
	require.Equal(t, "STOCK_CHANGED", stale.errorCode())

	// All or nothing: a good change beside a bad one changes nothing.
	loc := h.do(request{method: "POST", path: storePath(s.m.storeID, "/locations"), auth: bearer(s.token),
		body: map[string]any{"name": "Tanta", "priority": 50, "address": map[string]any{"line1": "2 Station Sq", "city": "Tanta", "country": "EG"}}})
	require.Equal(t, http.StatusCreated, loc.Status)
	locID := loc.data()["id"].(string)
	mixed := h.adjust(s, "mixed", map[string]any{"reason": "correction", "changes": []any{
		change(map[string]any{"location_id": locID, "delta": 5}), change(map[string]any{"set_on_hand": 1})}})
	require.Equal(t, "STOCK_RESERVED", mixed.errorCode())
	var levels int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM inventory_levels WHERE location_id = $1`, locID).Scan(&levels))
	require.Zero(t, levels)

	// A count that matches, and stock received at the second location.
	body := map[string]any{"reason": "received", "note": "delivery note 77", "reference": "DN-77", "changes": []any{
		change(map[string]any{"location_id": locID, "delta": 6}),
		change(map[string]any{"set_on_hand": 12, "expected_on_hand": 10}),
	}}
	done := h.adjust(s, "good", body)
	require.Equal(t, http.StatusCreated, done.Status, string(done.Raw))
	data := done.data()
	require.Len(t, data["movements"], 2)
	lv := data["levels"].([]any)
	require.EqualValues(t, 6, lv[0].(map[string]any)["available"])
	require.EqualValues(t, []any{float64(12), float64(4), float64(8)}, []any{lv[1].(map[string]any)["on_hand"], lv[1].(map[string]any)["reserved"], lv[1].(map[string]any)["available"]})
	replay := h.adjust(s, "good", body)
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	onHand, _ = h.level(s.variantID, defaultLoc)
	require.Equal(t, 12, onHand, "a replay applies nothing twice")
	require.Equal(t, 14, h.variantQuantity(s), "quantity is available over active locations")

	// The next order reserves from the higher-priority location (50 < 100).
	order := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 5, "+201002223335")})
	require.Equal(t, http.StatusCreated, order.Status)
	onHand, reserved = h.level(s.variantID, locID)
	require.Equal(t, []int{6, 5}, []int{onHand, reserved})
	// A line one location can hold whole goes there (8 at the default),
	// one that no location can hold is split by priority (1 here, 8 there).
	whole := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 9, "+201002223337")})
	require.Equal(t, "INSUFFICIENT_STOCK", h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: orderBody(s.variantID, 10, "+201002223337")}).errorCode())
	require.Equal(t, http.StatusCreated, whole.Status, string(whole.Raw))
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+whole.data()["id"].(string)), auth: bearer(s.token)}).Status)
	small := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 8, "+201002223338")})
	require.Equal(t, http.StatusCreated, small.Status)
	_, reserved = h.level(s.variantID, locID)
	require.Equal(t, 5, reserved, "8 fit whole at the default location")
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+small.data()["id"].(string)), auth: bearer(s.token)}).Status)
	split := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 9, "+201002223336")})
	require.Equal(t, http.StatusCreated, split.Status, string(split.Raw))
	_, reserved = h.level(s.variantID, locID)
	require.Equal(t, 6, reserved)
	_, reserved = h.level(s.variantID, defaultLoc)
	require.Equal(t, 12, reserved)
	require.Equal(t, 0, h.variantQuantity(s))
	// Switching a location off takes its stock out of quantity.
	require.Equal(t, http.StatusCreated, h.adjust(s, "more", map[string]any{"reason": "received", "changes": []any{
		change(map[string]any{"location_id": locID, "delta": 3})}}).Status)
	require.Equal(t, 3, h.variantQuantity(s))
	require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/locations/"+locID), auth: bearer(s.token),
		body: map[string]any{"is_active": false}}).Status)
	require.Equal(t, 0, h.variantQuantity(s))
	require.Equal(t, "LOCATION_IN_USE", h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/locations/"+locID), auth: bearer(s.token)}).errorCode())

	// Levels and movements read back with their filters.
	levelsList := h.do(request{method: "GET", path: storePath(s.m.storeID, "/inventory/levels?variant_id="+s.variantID), auth: bearer(s.token)})
	require.Len(t, levelsList.list(), 2)
	low := h.do(request{method: "GET", path: storePath(s.m.storeID, "/inventory/levels?available_lte=3&location_id="+locID), auth: bearer(s.token)})
	require.Len(t, low.list(), 1)
	require.Empty(t, h.do(request{method: "GET", path: storePath(s.m.storeID, "/inventory/levels?available_lte=2&location_id="+locID), auth: bearer(s.token)}).list())
	bySKU := h.do(request{method: "GET", path: storePath(s.m.storeID, "/inventory/levels?sku=adjust-ABAYA-M"), auth: bearer(s.token)})
	require.Len(t, bySKU.list(), 2)
	byAdjustment := h.do(request{method: "GET", path: storePath(s.m.storeID, "/inventory/movements?adjustment_id="+data["adjustment_id"].(string)), auth: bearer(s.token)})
	require.Len(t, byAdjustment.list(), 2)
	first := byAdjustment.list()[0].(map[string]any)
	require.Equal(t, "received", first["reason"])
	require.Equal(t, "delivery note 77", first["note"])
	require.Equal(t, "user", first["actor"].(map[string]any)["type"])
	byOrder := h.do(request{method: "GET", path: storePath(s.m.storeID, "/inventory/movements?order_id="+split.data()["id"].(string)), auth: bearer(s.token)})
	require.Len(t, byOrder.list(), 2, "one reservation per location")
	h.requireLedgerBalances(s.m.storeID)
	badFilter := h.do(request{method: "GET", path: storePath(s.m.storeID, "/inventory/movements?reason=stolen"), auth: bearer(s.token)})
	require.Equal(t, http.StatusUnprocessableEntity, badFilter.Status)
	require.Equal(t, "one_of", badFilter.fieldCode("reason"))
	badLevels := h.do(request{method: "GET", path: storePath(s.m.storeID, "/inventory/levels?available_lte=many"), auth: bearer(s.token)})
	require.Equal(t, http.StatusUnprocessableEntity, badLevels.Status)

	// Cancelling releases the reservations where they were taken.
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+split.data()["id"].(string)), auth: bearer(s.token)}).Status)
	_, reserved = h.level(s.variantID, locID)
	require.Equal(t, 5, reserved)
	_, reserved = h.level(s.variantID, defaultLoc)
	require.Equal(t, 4, reserved)
}

// Shipping takes units out of the building; RETURNED puts them back where
// they left from; a partial acceptance restocks the refused pieces.
func TestOrderStockFollowsTheOrder(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "follow", 10)
	loc := h.defaultLocation(s.m.storeID)
	move := func(id, status string) {
		t.Helper()
		resp := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+id+"/status"), auth: bearer(s.token),
			body: map[string]any{"status": status}})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	}
	a := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 3, "+201003334445")}).data()
	move(a["id"].(string), "SHIPPED")
	onHand, reserved := h.level(s.variantID, loc)
	require.Equal(t, []int{7, 0}, []int{onHand, reserved})
	move(a["id"].(string), "RETURNED")
	onHand, reserved = h.level(s.variantID, loc)
	require.Equal(t, []int{10, 0}, []int{onHand, reserved})
	require.Equal(t, 10, h.variantQuantity(s))

	b := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 4, "+201003334446")}).data()
	move(b["id"].(string), "SHIPPED")
	line := b["lines"].([]any)[0].(map[string]any)["id"]
	accept := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+b["id"].(string)+"/partial-acceptance"), auth: bearer(s.token),
		body: map[string]any{"lines": []any{map[string]any{"line_id": line, "accepted_quantity": 1}}}})
	require.Equal(t, http.StatusOK, accept.Status, string(accept.Raw))
	onHand, reserved = h.level(s.variantID, loc)
	require.Equal(t, []int{9, 0}, []int{onHand, reserved}, "3 refused pieces back, 1 kept")

	// Before shipping: the kept pieces leave, the refused ones are released.
	c := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 5, "+201003334447")}).data()
	move(c["id"].(string), "CONFIRMED")
	line = c["lines"].([]any)[0].(map[string]any)["id"]
	accept = h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+c["id"].(string)+"/partial-acceptance"), auth: bearer(s.token),
		body: map[string]any{"lines": []any{map[string]any{"line_id": line, "accepted_quantity": 2}}}})
	require.Equal(t, http.StatusOK, accept.Status, string(accept.Raw))
	onHand, reserved = h.level(s.variantID, loc)
	require.Equal(t, []int{7, 0}, []int{onHand, reserved})
	h.requireLedgerBalances(s.m.storeID)
}

// requireLedgerBalances recomputes every level of the store from its
// movements and compares, and checks each variant's quantity.
func (h *harness) requireLedgerBalances(storeID string) {
	h.t.Helper()
	db := testenv.SQL(h.t, h.db)
	var mismatched int
	require.NoError(h.t, db.QueryRow(context.Background(), `SELECT count(*) FROM inventory_levels l
		FULL JOIN (SELECT store_id, variant_id, location_id, sum(on_hand_delta) AS on_hand, sum(reserved_delta) AS reserved
		           FROM inventory_movements GROUP BY store_id, variant_id, location_id) m
		  USING (store_id, variant_id, location_id)
		WHERE store_id = $1 AND (COALESCE(l.on_hand, 0) <> COALESCE(m.on_hand, 0) OR COALESCE(l.reserved, 0) <> COALESCE(m.reserved, 0))`,
		storeID).Scan(&mismatched))
	require.Zero(h.t, mismatched, "levels equal the sums of their movements")
	require.NoError(h.t, db.QueryRow(context.Background(), `SELECT count(*) FROM variants v WHERE v.store_id = $1 AND v.quantity <>
		(SELECT COALESCE(sum(l.on_hand - l.reserved), 0) FROM inventory_levels l JOIN locations loc ON loc.id = l.location_id AND loc.is_active
		 WHERE l.variant_id = v.id)`, storeID).Scan(&mismatched))
	require.Zero(h.t, mismatched, "variant quantity is available over active locations")
	require.NoError(h.t, db.QueryRow(context.Background(), `SELECT count(*) FROM inventory_movements m
		WHERE m.store_id = $1 AND m.reason NOT IN ('received', 'damaged', 'correction', 'order_reserve', 'order_release', 'order_ship', 'return_restock')`,
		storeID).Scan(&mismatched))
	require.Zero(h.t, mismatched)
}

// A random run of every operation that moves stock leaves every level
// equal to the sum of its movements.
func TestLedgerRecomputesEveryLevel(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "ledger", 40)
	second := h.do(request{method: "POST", path: storePath(s.m.storeID, "/locations"), auth: bearer(s.token),
		body: map[string]any{"name": "Mansoura", "priority": 10, "address": map[string]any{"line1": "3 Gomhoria St", "city": "Mansoura", "country": "EG"}}}).data()["id"].(string)
	var productID string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT product_id FROM variants WHERE id = $1`, s.variantID).Scan(&productID))
	rng := rand.New(rand.NewPCG(19, 11))
	var open, shipped, drafts []string
	for i := range 80 {
		switch op := rng.IntN(9); op {
		case 0, 1:
			resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
				body: orderBody(s.variantID, 1+rng.IntN(6), fmt.Sprintf("+20100444%04d", i))})
			if resp.Status == http.StatusCreated {
				open = append(open, resp.data()["id"].(string))
			} else {
				require.Equal(t, "INSUFFICIENT_STOCK", resp.errorCode())
			}
		case 2:
			resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token),
				body: orderBody(s.variantID, 1+rng.IntN(3), fmt.Sprintf("+20100555%04d", i))})
			require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
			drafts = append(drafts, resp.data()["id"].(string))
		case 3:
			if len(drafts) > 0 {
				id := drafts[0]
				drafts = drafts[1:]
				if resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/convert"), auth: bearer(s.token)}); resp.Status == http.StatusOK {
					open = append(open, id)
				}
			}
		case 4:
			if len(open) > 0 {
				id := open[0]
				open = open[1:]
				require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+id), auth: bearer(s.token)}).Status)
			}
		case 5:
			if len(open) > 0 {
				id := open[len(open)-1]
				open = open[:len(open)-1]
				require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+id+"/status"), auth: bearer(s.token),
					body: map[string]any{"status": "SHIPPED"}}).Status)
				shipped = append(shipped, id)
			}
		case 6:
			if len(shipped) > 0 {
				id := shipped[0]
				shipped = shipped[1:]
				require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+id+"/status"), auth: bearer(s.token),
					body: map[string]any{"status": "RETURNED"}}).Status)
			}
		case 7:
			locations := []any{nil, second}
			h.adjust(s, fmt.Sprintf("op-%d", i), map[string]any{"reason": "correction", "changes": []any{map[string]any{"variant_id": s.variantID,
				"location_id": locations[rng.IntN(2)], "delta": rng.IntN(9) - 3}}})
		case 8:
			h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/products/"+productID+"/variants/"+s.variantID), auth: bearer(s.token),
				body: map[string]any{"quantity": rng.IntN(20)}})
		}
	}
	h.requireLedgerBalances(s.m.storeID)
}

// 64 buyers at once, storefront checkouts and merchant orders, for one
// variant with 50 available: exactly 50 units are placed.
func TestNoOversellUnderConcurrentCheckoutsAndOrders(t *testing.T) {
	h := newHarness(t, api.Config{StorefrontOrdersPerPhone: 1000, StorefrontOrdersPerNetwork: 1000, StorefrontRateLimitPerMinute: 10000})
	s := newShop(t, h, "oversell", 50)
	type cart struct{ id, token string }
	carts := make([]cart, 32)
	for i := range carts {
		carts[i].id, carts[i].token = h.openCart(s, 1, "")
	}
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		placed, refused int
	)
	record := func(resp response) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case resp.Status == http.StatusCreated:
			placed++
		case resp.Status == http.StatusConflict && resp.errorCode() == "INSUFFICIENT_STOCK":
			refused++
		default:
			t.Errorf("unexpected %d: %s", resp.Status, resp.Raw)
		}
	}
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				c := carts[i/2]
				body := checkoutBody("cod")
				phone := fmt.Sprintf("+2010066%05d", i)
				body["customer"].(map[string]any)["phone"] = phone
				body["shipping_address"].(map[string]any)["phone"] = phone
				record(h.buyer(s, "POST", "/carts/"+c.id+"/checkout", body, c.token))
				return
			}
			record(h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
				body: orderBody(s.variantID, 1, fmt.Sprintf("+2010077%05d", i))}))
		}()
	}
	wg.Wait()
	require.Equal(t, 50, placed)
	require.Equal(t, 14, refused)
	onHand, reserved := h.level(s.variantID, h.defaultLocation(s.m.storeID))
	require.Equal(t, []int{50, 50}, []int{onHand, reserved})
	require.Zero(t, h.variantQuantity(s))
	h.requireLedgerBalances(s.m.storeID)
}

// Adjustments racing orders never lose a reservation: every count is
// compare-and-set, and on_hand never drops below what orders hold.
func TestAdjustmentsRacingOrdersKeepReservations(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "racing", 30)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
					body: orderBody(s.variantID, 1, fmt.Sprintf("+2010088%05d", i))})
				return
			}
			resp := h.adjust(s, fmt.Sprintf("race-%d", i), map[string]any{"reason": "damaged", "changes": []any{
				map[string]any{"variant_id": s.variantID, "delta": -1}}})
			assert.Contains(t, []int{http.StatusCreated, http.StatusConflict}, resp.Status, string(resp.Raw)) // not require: off the test goroutine
		}()
	}
	wg.Wait()
	var orders int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT COALESCE(sum(l.quantity), 0) FROM order_lines l
		JOIN orders o ON o.id = l.order_id WHERE o.store_id = $1 AND o.status = 'PENDING'`, s.m.storeID).Scan(&orders))
	_, reserved := h.level(s.variantID, h.defaultLocation(s.m.storeID))
	require.Equal(t, orders, reserved, "every placed order still holds its units")
	h.requireLedgerBalances(s.m.storeID)
}

// The inventory migration on a database seeded the old way: products
// without variants get a default variant holding their quantity, and every
// variant's stock lands at the default location with the unshipped units
// of open orders reserved.
func TestInventoryMigrationFromTheOldWay(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("pgx", testenv.DatabaseURL(t, false))
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, migrations.UpTo(ctx, db, 22))
	const store = "00000000-0000-0000-0000-0000000000b1"
	exec := func(query string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, query, args...)
		require.NoError(t, err)
	}
	exec(`INSERT INTO users (id, email, password_hash, name, locale, created_at, updated_at)
		VALUES ('00000000-0000-0000-0000-0000000000a1', 'old@example.com', 'x', 'Old', 'ar', now(), now())`)
	exec(`INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, created_at, updated_at)
		VALUES ($1, '00000000-0000-0000-0000-0000000000a1', 'Old', 'old-inventory', 'EGP', 'ar', 'trial', now(), now())`, store)
	exec(`INSERT INTO locations (id, store_id, name, is_default, created_at, updated_at)
		VALUES ('00000000-0000-0000-0000-0000000000c1', $1, 'المستودع الرئيسي', true, now(), now())`, store)
	// A product sold without variants, and one with a variant (whose own
	// product quantity nothing ever read).
	exec(`INSERT INTO products (id, store_id, name, sku, price, quantity) VALUES
		('00000000-0000-0000-0000-0000000000d1', $1, 'Plain', 'PLAIN', 1000, 7),
		('00000000-0000-0000-0000-0000000000d2', $1, 'Sized', NULL, 2000, 99)`, store)
	const variant = "00000000-0000-0000-0000-0000000000e1"
	exec(`INSERT INTO variants (id, store_id, product_id, sku, price, quantity, position) VALUES
		($2, $1, '00000000-0000-0000-0000-0000000000d2', 'SIZED-M', 2000, 3, 1)`, store, variant)
	// Orders the old way took stock off variants.quantity at placement.
	for i, o := range []struct {
		status        string
		qty, returned int
	}{{"PENDING", 2, 0}, {"SHIPPED", 4, 0}, {"CANCELLED", 1, 0}, {"READY_TO_SHIP", 3, 1}, {"DRAFT", 5, 0}} {
		orderID := fmt.Sprintf("00000000-0000-0000-0000-0000000001%02d", i)
		exec(`INSERT INTO orders (id, store_id, order_number, status, payment_method, currency, customer, shipping_address, subtotal, total, collectible_total)
			VALUES ($1, $2, $3, $4, 'cod', 'EGP', '{}', '{}', 5000, 5000, 5000)`, orderID, store, fmt.Sprintf("ORD-%d", 1001+i), o.status)
		exec(`INSERT INTO order_lines (id, store_id, order_id, variant_id, product_id, name, quantity, unit_price, total, returned_quantity, position)
			VALUES ($1, $2, $3, $4, '00000000-0000-0000-0000-0000000000d2', 'Sized', $5, 2000, 0, $6, 1)`,
			fmt.Sprintf("00000000-0000-0000-0000-0000000002%02d", i), store, orderID, variant, o.qty, o.returned)
	}
	// The worker wrote one shipments row per placed order (auto_create_shipment).
	exec(`INSERT INTO shipments (id, store_id, order_id) VALUES ('00000000-0000-0000-0000-0000000003a1', $1, '00000000-0000-0000-0000-000000000100')`, store)
	require.NoError(t, migrations.Up(ctx, db))

	type level struct {
		variantSKU, product        string
		onHand, reserved, quantity int
		isDefault                  bool
	}
	rows, err := db.QueryContext(ctx, `SELECT COALESCE(v.sku, ''), p.name, l.on_hand, l.reserved, v.quantity, v.is_default
		FROM inventory_levels l JOIN variants v ON v.id = l.variant_id JOIN products p ON p.id = v.product_id
		WHERE l.store_id = $1 AND l.location_id = '00000000-0000-0000-0000-0000000000c1' ORDER BY p.name`, store)
	require.NoError(t, err)
	defer rows.Close()
	var got []level
	for rows.Next() {
		var l level
		require.NoError(t, rows.Scan(&l.variantSKU, &l.product, &l.onHand, &l.reserved, &l.quantity, &l.isDefault))
		got = append(got, l)
	}
	require.Equal(t, []level{
		{variantSKU: "", product: "Plain", onHand: 7, reserved: 0, quantity: 7, isDefault: true},
		// 3 sellable, 2 + (3 − 1) reserved by the PENDING and READY_TO_SHIP orders.
		{variantSKU: "SIZED-M", product: "Sized", onHand: 7, reserved: 4, quantity: 3, isDefault: false},
	}, got)
	var allocations, mismatched int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM order_allocations WHERE store_id = $1 AND reserved > 0`, store).Scan(&allocations))
	require.Equal(t, 2, allocations)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM inventory_levels l
		JOIN (SELECT variant_id, location_id, sum(on_hand_delta) AS on_hand, sum(reserved_delta) AS reserved FROM inventory_movements GROUP BY 1, 2) m
		USING (variant_id, location_id) WHERE l.on_hand <> m.on_hand OR l.reserved <> m.reserved`).Scan(&mismatched))
	require.Zero(t, mismatched, "the ledger opens with what the levels hold")
	var productQuantity int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT sum(quantity) FROM variants WHERE product_id = '00000000-0000-0000-0000-0000000000d2'`).Scan(&productQuantity))
	require.Equal(t, 3, productQuantity, "a product's quantity is now its variants'")

	// Shipments (decisions §12): the old row and a new one for the order
	// that had left take the status their orders imply and all their lines.
	type shipment struct {
		number, status, carrier, codState string
		lines, events                     int
		departed, waybillWanted           bool
	}
	shipmentRows, err := db.QueryContext(ctx, `SELECT s.number, s.status, s.carrier, s.cod_state,
			(SELECT sum(quantity) FROM shipment_lines l WHERE l.shipment_id = s.id),
			(SELECT count(*) FROM shipment_events e WHERE e.shipment_id = s.id AND e.source = 'system' AND e.status = s.status),
			s.shipped_at IS NOT NULL, s.waybill_wanted > s.waybill_started
		FROM shipments s WHERE s.store_id = $1 AND s.location_id = '00000000-0000-0000-0000-0000000000c1' ORDER BY s.number`, store)
	require.NoError(t, err)
	defer shipmentRows.Close()
	var shipments []shipment
	for shipmentRows.Next() {
		var sh shipment
		require.NoError(t, shipmentRows.Scan(&sh.number, &sh.status, &sh.carrier, &sh.codState, &sh.lines, &sh.events, &sh.departed, &sh.waybillWanted))
		shipments = append(shipments, sh)
	}
	require.Equal(t, []shipment{
		{number: "ORD-1001-1", status: "label_created", carrier: "other", codState: "pending", lines: 2, events: 1, waybillWanted: true},
		{number: "ORD-1002-1", status: "in_transit", carrier: "other", codState: "pending", lines: 4, events: 1, departed: true, waybillWanted: true},
	}, shipments)
}

// A location whose units left in a shipped order is still in use: the
// shipment is open until the order is delivered (or returned), and a
// return puts the units back there. Once delivered, it can go.
func TestLocationThatShippedAnOpenOrderIsInUse(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "shippedloc", 0)
	loc := h.do(request{method: "POST", path: storePath(s.m.storeID, "/locations"), auth: bearer(s.token),
		body: map[string]any{"name": "Mansoura", "address": map[string]any{"line1": "3 Gomhoria St", "city": "Mansoura", "country": "EG"}}})
	require.Equal(t, http.StatusCreated, loc.Status, string(loc.Raw))
	locID := loc.data()["id"].(string)
	require.Equal(t, http.StatusCreated, h.adjust(s, "stock", map[string]any{"reason": "received",
		"changes": []any{map[string]any{"variant_id": s.variantID, "location_id": locID, "delta": 2}}}).Status)
	order := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 2, "+201004445556")})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
	move := func(status string) {
		t.Helper()
		resp := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+order.data()["id"].(string)+"/status"), auth: bearer(s.token),
			body: map[string]any{"status": status}})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	}
	move("SHIPPED")
	onHand, reserved := h.level(s.variantID, locID)
	require.Equal(t, [2]int{0, 0}, [2]int{onHand, reserved}, "nothing left there: only the shipped order holds it")
	deletePath := storePath(s.m.storeID, "/locations/"+locID)
	inUse := h.do(request{method: "DELETE", path: deletePath, auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, inUse.Status)
	require.Equal(t, "LOCATION_IN_USE", inUse.errorCode())
	move("DELIVERED")
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: deletePath, auth: bearer(s.token)}).Status)
	h.requireLedgerBalances(s.m.storeID)
}
