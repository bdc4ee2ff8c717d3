package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// Shipping zones and rates: areas by normalised name, one zone per
// address (409 AREA_OVERLAP naming the conflicts, nothing written), §15's
// rate rules, areas replaced whole, nothing of another store's.
func TestShippingZonesAndRates(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("zones")
	token := h.pat(m, "settings:write")
	other := h.signup("zones-other")
	otherToken := h.pat(other, "settings:write")
	zones := storePath(m.storeID, "/shipping/zones")
	post := func(path string, body map[string]any) response {
		return h.do(request{method: "POST", path: path, auth: bearer(token), body: body})
	}

	cairo := post(zones, map[string]any{"name": "القاهرة الكبرى", "areas": []any{map[string]any{"country": "EG", "cities": []string{"Cairo", "القاهرة"}}}})
	require.Equal(t, http.StatusCreated, cairo.Status, string(cairo.Raw))
	giza := post(zones, map[string]any{"name": "الجيزة", "areas": []any{map[string]any{"country": "EG", "cities": []string{"الجيزة", "Giza"}}}})
	require.Equal(t, http.StatusCreated, giza.Status, string(giza.Raw))
	require.Equal(t, []any{map[string]any{"country": "EG", "cities": []any{"الجيزة", "Giza"}}}, giza.data()["areas"])
	rest := post(zones, map[string]any{"name": "Rest of Egypt", "areas": []any{map[string]any{"country": "EG"}, map[string]any{"country": "EG", "region": "أسوان"}}})
	require.Equal(t, http.StatusCreated, rest.Status, string(rest.Raw))

	overlap := post(zones, map[string]any{"name": "Giza again", "areas": []any{
		map[string]any{"country": "EG", "cities": []string{"الجيزه", "6th of October"}}, map[string]any{"country": "EG", "region": "اسوان"}}})
	require.Equal(t, http.StatusConflict, overlap.Status, string(overlap.Raw))
	require.Equal(t, "AREA_OVERLAP", overlap.errorCode())
	conflicts := overlap.errorField("conflicts").([]any)
	require.Len(t, conflicts, 2)
	require.Equal(t, giza.data()["id"], conflicts[0].(map[string]any)["zone_id"])
	require.Equal(t, "الجيزه", conflicts[0].(map[string]any)["city"])
	require.Equal(t, rest.data()["id"], conflicts[1].(map[string]any)["zone_id"])
	list := h.do(request{method: "GET", path: zones, auth: bearer(token)})
	require.Equal(t, http.StatusOK, list.Status)
	require.Len(t, list.Body["data"], 3, "a refused zone writes nothing")

	for _, c := range []struct {
		body        map[string]any
		field, code string
	}{
		{map[string]any{"name": "x", "areas": []any{map[string]any{"country": "eg"}}}, "areas[0].country", "invalid"},
		{map[string]any{"name": "x", "areas": []any{map[string]any{"country": "EGY"}}}, "areas[0].country", "invalid"},
		{map[string]any{"name": "x", "areas": []any{}}, "areas", "out_of_range"},
		{map[string]any{"name": "", "areas": []any{map[string]any{"country": "SA"}}}, "name", "required"},
		{map[string]any{"name": "x", "areas": []any{map[string]any{"country": "SA", "cities": []string{""}}}}, "areas[0].cities[0]", "required"},
		{map[string]any{"name": "x", "areas": []any{map[string]any{"country": "SA", "cities": manyCities(501)}}}, "areas[0].cities", "out_of_range"},
		{map[string]any{"name": "x", "areas": []any{map[string]any{"country": "SA", "cities": []string{strings.Repeat("م", 101)}}}}, "areas[0].cities[0]", "too_long"},
	} {
		resp := post(zones, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%v: %s", c.body, resp.Raw)
		require.Equal(t, c.code, resp.fieldCode(c.field), string(resp.Raw))
		require.NotEmpty(t, resp.fieldMessageAr(c.field))
	}

	// Rates.
	ratesPath := zones + "/" + giza.data()["id"].(string) + "/rates"
	express := post(ratesPath, map[string]any{"name": "Express", "price": 4500, "weight_bands": []any{
		map[string]any{"up_to_grams": 1000, "price": 4500}, map[string]any{"up_to_grams": 5000, "price": 7000}},
		"additional_per_kg": 1000, "free_above_subtotal": 100000, "cod_fee": 1000, "delivery_days": map[string]any{"min": 1, "max": 2}})
	require.Equal(t, http.StatusCreated, express.Status, string(express.Raw))
	require.Equal(t, true, express.data()["cod_available"])
	for _, c := range []struct {
		body        map[string]any
		field, code string
	}{
		{map[string]any{"name": "x", "price": 1, "weight_bands": []any{map[string]any{"up_to_grams": 1000, "price": 1},
			map[string]any{"up_to_grams": 1000, "price": 2}}}, "weight_bands[1].up_to_grams", "not_ascending"},
		{map[string]any{"name": "x", "price": 1, "free_above_subtotal": 0}, "free_above_subtotal", "out_of_range"},
		{map[string]any{"name": "x", "price": 1, "delivery_days": map[string]any{"min": 3, "max": 2}}, "delivery_days.min", "out_of_range"},
		{map[string]any{"name": "x"}, "price", "required"},
		{map[string]any{"name": "x", "price": -1}, "price", "out_of_range"},
	} {
		resp := post(ratesPath, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%v: %s", c.body, resp.Raw)
		require.Equal(t, c.code, resp.fieldCode(c.field), string(resp.Raw))
	}
	ratePath := ratesPath + "/" + express.data()["id"].(string)
	changed := h.do(request{method: "PATCH", path: ratePath, auth: bearer(token), body: map[string]any{"price": 5000, "delivery_days": nil, "cod_available": false}})
	require.Equal(t, http.StatusOK, changed.Status, string(changed.Raw))
	require.EqualValues(t, 5000, changed.data()["price"])
	require.Nil(t, changed.data()["delivery_days"])
	require.Len(t, changed.data()["weight_bands"], 2, "what the PATCH does not name stays")
	badPatch := h.do(request{method: "PATCH", path: ratePath, auth: bearer(token), body: map[string]any{"weight_bands": []any{
		map[string]any{"up_to_grams": 2000, "price": 1}, map[string]any{"up_to_grams": 1000, "price": 1}}}})
	require.Equal(t, "not_ascending", badPatch.fieldCode("weight_bands[1].up_to_grams"))
	zone := h.do(request{method: "GET", path: zones + "/" + giza.data()["id"].(string), auth: bearer(token)})
	require.Len(t, zone.data()["rates"], 1)

	// Areas are replaced whole; a freed city is free for another zone.
	moved := h.do(request{method: "PATCH", path: zones + "/" + giza.data()["id"].(string), auth: bearer(token),
		body: map[string]any{"areas": []any{map[string]any{"country": "EG", "cities": []string{"Giza"}}}}})
	require.Equal(t, http.StatusOK, moved.Status, string(moved.Raw))
	require.Equal(t, http.StatusCreated, post(zones, map[string]any{"name": "الجيزة الجديدة", "areas": []any{
		map[string]any{"country": "EG", "cities": []string{"الجيزة"}}}}).Status)

	// Another store sees none of it; delete takes the rates with the zone.
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(other.storeID, "/shipping/zones/"+giza.data()["id"].(string)),
		auth: bearer(otherToken)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "POST", path: storePath(other.storeID, "/shipping/zones/"+giza.data()["id"].(string)+"/rates"),
		auth: bearer(otherToken), body: map[string]any{"name": "x", "price": 1}}).Status)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: zones + "/" + giza.data()["id"].(string), auth: bearer(token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "PATCH", path: ratePath, auth: bearer(token), body: map[string]any{"price": 1}}).Status)
}

// A quote takes the address's most specific zone (Arabic spellings
// normalised), weighs the lines, and answers the zone's options cheapest
// first; an address no zone covers is 422 NOT_DELIVERABLE on address.city.
// The storefront lists the areas for a picker.
func TestShippingQuoteAndAreas(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "quote", 20)
	zones := storePath(s.m.storeID, "/shipping/zones")
	post := func(path string, body map[string]any) response {
		resp := h.do(request{method: "POST", path: path, auth: bearer(s.token), body: body})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		return resp
	}
	h.exec(`UPDATE variants SET weight_grams = 700 WHERE id = $1`, s.variantID)
	egypt := post(zones, map[string]any{"name": "Egypt", "areas": []any{map[string]any{"country": "EG"}}}).data()["id"].(string)
	giza := post(zones, map[string]any{"name": "Giza", "areas": []any{map[string]any{"country": "EG", "cities": []string{"الجيزة", "Giza"}}}}).data()["id"].(string)
	post(zones+"/"+egypt+"/rates", map[string]any{"name": "Standard", "price": 9000})
	post(zones+"/"+giza+"/rates", map[string]any{"name": "Courier", "price": 0, "cod_fee": 1000, "weight_bands": []any{
		map[string]any{"up_to_grams": 1000, "price": 3000}, map[string]any{"up_to_grams": 3000, "price": 4500}}})
	post(zones+"/"+giza+"/rates", map[string]any{"name": "Same day", "price": 8000, "cod_available": false, "delivery_days": map[string]any{"min": 0, "max": 0}})
	quote := func(city string, qty int, method string) response {
		body := map[string]any{"address": map[string]any{"country": "EG", "city": city},
			"lines": []any{map[string]any{"variant_id": s.variantID, "quantity": qty}}}
		if method != "" {
			body["payment_method"] = method
		}
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/shipping/quote"), auth: bearer(s.token), body: body})
	}
	q := quote("الجيزه", 2, "cod") // 1400 g
	require.Equal(t, http.StatusOK, q.Status, string(q.Raw))
	require.Equal(t, giza, q.data()["zone_id"], "the city zone, the spelling normalised")
	require.Equal(t, []any{map[string]any{"rate_id": q.data()["options"].([]any)[0].(map[string]any)["rate_id"], "name": "Courier", "fee": float64(4500),
		"cod_fee": float64(1000), "free": false, "delivery_days": nil}}, q.data()["options"], "the second band; no COD-less rate for cod")
	prepaid := quote("Giza", 1, "instapay")
	require.Len(t, prepaid.data()["options"], 2)
	require.Equal(t, "Courier", prepaid.data()["options"].([]any)[0].(map[string]any)["name"], "cheapest first")
	aswan := quote("أسوان", 1, "")
	require.Equal(t, egypt, aswan.data()["zone_id"], "the country zone")

	h.exec(`DELETE FROM shipping_zones WHERE id = $1`, egypt)
	far := quote("أسوان", 1, "")
	require.Equal(t, http.StatusUnprocessableEntity, far.Status, string(far.Raw))
	require.Equal(t, "NOT_DELIVERABLE", far.errorCode())
	require.Equal(t, "not_deliverable", far.fieldCode("address.city"))

	areas := h.do(request{method: "GET", path: "/api/v1/storefront/" + h.subdomain(s) + "/shipping/areas"})
	require.Equal(t, http.StatusOK, areas.Status, string(areas.Raw))
	require.Equal(t, []any{map[string]any{"country": "EG", "regions": []any{}, "cities": []any{"Giza", "الجيزة"}}}, areas.Body["data"])
}

// Merchant orders priced with a rate: its band for the order's weight, its
// COD fee for cod, free above the discounted subtotal; the rate snapshot
// stays as placed whatever happens to the zone.
func TestMerchantOrdersWithAShippingRate(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := discountShop(t, h, "rateorders", 20)
	h.exec(`UPDATE variants SET weight_grams = 600 WHERE id = $1`, s.variantID)
	zones := storePath(s.m.storeID, "/shipping/zones")
	zone := h.do(request{method: "POST", path: zones, auth: bearer(s.token), body: map[string]any{"name": "Cairo",
		"areas": []any{map[string]any{"country": "EG", "cities": []string{"Cairo"}}}}}).data()["id"].(string)
	rate := h.do(request{method: "POST", path: zones + "/" + zone + "/rates", auth: bearer(s.token), body: map[string]any{"name": "Courier", "price": 0,
		"cod_fee": 1000, "free_above_subtotal": 134500, "weight_bands": []any{map[string]any{"up_to_grams": 1000, "price": 3000},
			map[string]any{"up_to_grams": 2000, "price": 4000}}}}).data()
	noCOD := h.do(request{method: "POST", path: zones + "/" + zone + "/rates", auth: bearer(s.token), body: map[string]any{"name": "Card only",
		"price": 2000, "cod_available": false}}).data()
	place := func(qty int, extra map[string]any) response {
		b := orderBody(s.variantID, qty, "+201004445551") // 450.00 each, manual discount 10.00, shipping_fee 50.00
		delete(b, "shipping_fee")
		for k, v := range extra {
			b[k] = v
		}
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: b})
	}
	two := place(2, map[string]any{"shipping_rate_id": rate["id"]}) // 1200 g: the second band; cod
	require.Equal(t, http.StatusCreated, two.Status, string(two.Raw))
	require.EqualValues(t, 4000+1000, two.data()["shipping_fee"])
	require.EqualValues(t, 90000+5000-1000, two.data()["total"])
	require.Equal(t, []any{map[string]any{"rate_id": rate["id"], "zone_id": zone, "name": "Courier", "fee": float64(4000), "cod_fee": float64(1000)}},
		two.data()["shipping_lines"])

	// 3 × 450.00 = 1350.00, above the 1345.00 threshold: free. The manual
	// discount comes after shipping (§14's order), so it does not count;
	// an automatic 10.00 off does: 1340.00 is under the threshold.
	free := place(3, map[string]any{"shipping_rate_id": rate["id"], "payment_method": "instapay"})
	require.Equal(t, http.StatusCreated, free.Status, string(free.Raw))
	require.EqualValues(t, 0, free.data()["shipping_fee"])
	require.Equal(t, http.StatusCreated, h.discount(s.token, s.m.storeID, map[string]any{"method": "automatic", "title": "off", "type": "fixed_amount",
		"value": 1000}).Status)
	three := place(3, map[string]any{"shipping_rate_id": rate["id"], "payment_method": "instapay", "apply_automatic_discounts": true})
	require.Equal(t, http.StatusCreated, three.Status, string(three.Raw))
	require.EqualValues(t, 4000, three.data()["shipping_fee"], "the discounted subtotal decides")

	for _, c := range []struct {
		extra       map[string]any
		field, code string
	}{
		{map[string]any{"shipping_rate_id": rate["id"], "shipping_fee": 5000}, "shipping_fee", "not_allowed"},
		{map[string]any{"shipping_rate_id": noCOD["id"]}, "payment_method", "not_offered"},
		{map[string]any{"shipping_rate_id": "0190d3c4-0000-7000-8000-000000000001"}, "shipping_rate_id", "not_found"},
	} {
		resp := place(1, c.extra)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%v: %s", c.extra, resp.Raw)
		require.Equal(t, c.code, resp.fieldCode(c.field), string(resp.Raw))
		require.NotEmpty(t, resp.fieldMessageAr(c.field))
	}
	heavy := place(4, map[string]any{"shipping_rate_id": rate["id"]}) // 2400 g, past the last band, no per-kg price
	require.Equal(t, "not_offered", heavy.fieldCode("shipping_rate_id"), string(heavy.Raw))

	require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: zones + "/" + zone + "/rates/" + rate["id"].(string), auth: bearer(s.token),
		body: map[string]any{"cod_fee": 9999}}).Status)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: zones + "/" + zone, auth: bearer(s.token)}).Status)
	again := h.getOrder(s, two.data()["id"].(string))
	require.Equal(t, two.data()["shipping_lines"], again["shipping_lines"], "zone edits never touch placed orders")
	require.EqualValues(t, 5000, again["shipping_fee"])
}

func manyCities(n int) []string {
	cities := make([]string, n)
	for i := range cities {
		cities[i] = fmt.Sprintf("city %d", i)
	}
	return cities
}

// A per-kilogram fee is money arithmetic like any other (decisions part
// two): a heavy cart on a rate with a large additional_per_kg is not offered
// that rate (an order asking for it answers 422), never quoted a wrapped
// negative fee (issue 48 §11).
func TestShippingPerKgFeeDoesNotOverflow(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "perkg", 20)
	h.exec(`UPDATE variants SET weight_grams = 1000000 WHERE id = $1`, s.variantID)
	zones := storePath(s.m.storeID, "/shipping/zones")
	zone := h.do(request{method: "POST", path: zones, auth: bearer(s.token), body: map[string]any{"name": "Egypt",
		"areas": []any{map[string]any{"country": "EG"}}}})
	require.Equal(t, http.StatusCreated, zone.Status, string(zone.Raw))
	rate := h.do(request{method: "POST", path: zones + "/" + zone.data()["id"].(string) + "/rates", auth: bearer(s.token), body: map[string]any{
		"name": "Freight", "price": 0, "weight_bands": []any{map[string]any{"up_to_grams": 1000, "price": 3000}},
		"additional_per_kg": 1_000_000_000_000}})
	require.Equal(t, http.StatusCreated, rate.Status, string(rate.Raw))
	quote := func(qty int) response {
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/shipping/quote"), auth: bearer(s.token), body: map[string]any{
			"address": map[string]any{"country": "EG", "city": "Cairo"}, "payment_method": "instapay",
			"lines": []any{map[string]any{"variant_id": s.variantID, "quantity": qty}}}})
	}
	order := orderBody(s.variantID, 1, "+201004445552")
	delete(order, "shipping_fee")
	order["shipping_rate_id"] = rate.data()["id"]
	placeOrder := func() response {
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: order})
	}

	// The rate is offered where its fee fits: within its band the quote
	// names it and an order takes it, so the refusals below are the fee's,
	// not the zone's or the rate's.
	h.exec(`UPDATE variants SET weight_grams = 500 WHERE id = $1`, s.variantID)
	within := quote(1)
	require.Equal(t, http.StatusOK, within.Status, string(within.Raw))
	require.Len(t, within.data()["options"], 1, string(within.Raw))
	require.Equal(t, "Freight", within.data()["options"].([]any)[0].(map[string]any)["name"])
	require.Equal(t, http.StatusCreated, placeOrder().Status)
	h.exec(`UPDATE variants SET weight_grams = 1000000 WHERE id = $1`, s.variantID)

	heavy := quote(10000) // 10^10 g: 10^7 kilos × 10^12 overflows int64
	require.Equal(t, http.StatusOK, heavy.Status, string(heavy.Raw))
	require.Empty(t, heavy.data()["options"], "the rate is not offered, never quoted a wrapped fee")
	light := quote(1) // 999 started kilos × 10^12 is past MaxAmount
	require.Equal(t, http.StatusOK, light.Status, string(light.Raw))
	require.Empty(t, light.data()["options"], string(light.Raw))

	placed := placeOrder()
	require.Equal(t, http.StatusUnprocessableEntity, placed.Status, string(placed.Raw))
	require.Equal(t, "not_offered", placed.fieldCode("shipping_rate_id"))
}
