package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// Orders created the old way (a manual shipping fee and discount, no
// codes) price exactly as before; the manual discount is now spread over
// the lines, and what goes past the lines falls on the shipping fee.
func TestOrdersCreatedTheOldWayPriceAsBefore(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "oldprices", 20)
	place := func(discount int64) response {
		body := orderBody(s.variantID, 3, "+201002223331") // 3 × 450.00, shipping 50.00
		body["discount"] = discount
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	}
	o := place(1000).data()
	require.EqualValues(t, 135000, o["subtotal"])
	require.EqualValues(t, 5000, o["shipping_fee"])
	require.EqualValues(t, 1000, o["discount"])
	require.EqualValues(t, 139000, o["total"])
	require.EqualValues(t, 1000, o["lines"].([]any)[0].(map[string]any)["discount"])
	require.Equal(t, []any{map[string]any{"discount_id": nil, "kind": "manual", "code": nil, "title": "Manual discount", "amount": float64(1000),
		"shipping_amount": float64(0)}}, o["discounts"])
	again := h.getOrder(s, o["id"].(string))
	require.Equal(t, o["discounts"], again["discounts"], "as stored")

	all := place(140000).data()
	require.EqualValues(t, 0, all["total"])
	require.EqualValues(t, 135000, all["lines"].([]any)[0].(map[string]any)["discount"])
	require.EqualValues(t, 5000, all["discounts"].([]any)[0].(map[string]any)["shipping_amount"])
	over := place(140001)
	require.Equal(t, http.StatusUnprocessableEntity, over.Status)
	require.Equal(t, "out_of_range", over.fieldCode("discount"))

	none := place(0).data()
	require.Equal(t, []any{}, none["discounts"])
	require.EqualValues(t, 140000, none["total"])
}
