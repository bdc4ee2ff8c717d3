package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// pricedCheckout is checkoutBody going to a city, with extra fields.
func pricedCheckout(method, city string, extra map[string]any) map[string]any {
	b := checkoutBody(method)
	b["shipping_address"].(map[string]any)["city"] = city
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// Storefront carts priced by §14 and §15: the automatic discount, the code
// (422 and the cart unchanged when it cannot be used; not_applicable until
// its conditions hold), the zone's options for the address with the
// cheapest chosen, COD fees for cod; and a checkout that places exactly the
// total the buyer saw, or answers 409 with the fresh cart and writes nothing.
func TestStorefrontCartPricingAndCheckout(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := discountShop(t, h, "pricedcart", 50)
	h.exec(`UPDATE variants SET weight_grams = 500 WHERE id = $1`, s.variantID)
	discount := func(body map[string]any) string {
		resp := h.discount(s.token, s.m.storeID, body)
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		return resp.data()["id"].(string)
	}
	discount(map[string]any{"method": "automatic", "title": "Eid", "type": "fixed_amount", "value": 3000})
	ramadan := discount(map[string]any{"method": "code", "code": "RAMADAN10", "title": "رمضان", "type": "percentage", "value": 10})
	discount(map[string]any{"method": "code", "code": "BIG", "title": "big", "type": "fixed_amount", "value": 20000, "min_subtotal": 200000})
	late := discount(map[string]any{"method": "code", "code": "LATE", "title": "late", "type": "fixed_amount", "value": 500})
	discount(map[string]any{"method": "code", "code": "SHIPFREE", "title": "free", "type": "free_shipping", "include_cod_fee": true})

	cartID, token := h.openCart(s, 2, "") // 2 × 450.00
	put := func(body map[string]any) response {
		return h.buyer(s, "PUT", "/carts/"+cartID, body, token)
	}
	cart := h.buyer(s, "GET", "/carts/"+cartID, nil, token).data()
	require.Equal(t, map[string]any{"status": "not_required", "zone_id": nil, "options": []any{}, "rate_id": nil, "fee": float64(0)}, cart["shipping"],
		"a store without zones ships for 0")
	require.EqualValues(t, 90000-3000, cart["total"], "the automatic discount")
	require.EqualValues(t, 3000, cart["lines"].([]any)[0].(map[string]any)["discount"])

	// Zones: Giza (city) with a COD fee, Egypt (country) dearer.
	zones := storePath(s.m.storeID, "/shipping/zones")
	post := func(path string, body map[string]any) string {
		resp := h.do(request{method: "POST", path: path, auth: bearer(s.token), body: body})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		return resp.data()["id"].(string)
	}
	egypt := post(zones, map[string]any{"name": "Egypt", "areas": []any{map[string]any{"country": "EG"}}})
	giza := post(zones, map[string]any{"name": "Giza", "areas": []any{map[string]any{"country": "EG", "cities": []string{"الجيزة", "Giza"}}}})
	standard := post(zones+"/"+egypt+"/rates", map[string]any{"name": "Standard", "price": 9000})
	courier := post(zones+"/"+giza+"/rates", map[string]any{"name": "Courier", "price": 3000, "cod_fee": 1000})
	express := post(zones+"/"+giza+"/rates", map[string]any{"name": "Express", "price": 6000, "cod_available": false})

	cart = h.buyer(s, "GET", "/carts/"+cartID, nil, token).data()
	require.Equal(t, "needs_address", cart["shipping"].(map[string]any)["status"], "carts re-quote on their next read")

	applied := put(map[string]any{"discount_code": " ramadan10 ", "shipping_address": map[string]any{"country": "EG", "city": "الجيزه"},
		"payment_method": "cod"})
	require.Equal(t, http.StatusOK, applied.Status, string(applied.Raw))
	cart = applied.data()
	require.Equal(t, map[string]any{"code": "RAMADAN10", "status": "applied", "reason": nil}, cart["discount_code"])
	shipping := cart["shipping"].(map[string]any)
	require.Equal(t, "quoted", shipping["status"])
	require.Equal(t, giza, shipping["zone_id"], "the city zone, its spelling normalised")
	require.Equal(t, courier, shipping["rate_id"], "the cheapest; the COD-less rate is not offered to cod")
	require.Len(t, shipping["options"], 1)
	require.EqualValues(t, 4000, shipping["fee"])
	// 900.00 − 30.00 automatic − 10% of 870.00 + 30.00 + 10.00 COD fee.
	require.EqualValues(t, 3000+8700, cart["discount"])
	require.EqualValues(t, 4000, cart["shipping_fee"])
	require.EqualValues(t, 90000-11700+4000, cart["total"])
	require.Len(t, cart["discounts"], 2)

	// A code that cannot be used: 422, the cart unchanged.
	for code, reason := range map[string]string{"NOPE": "not_found", "LATE": "expired"} {
		if code == "LATE" {
			h.exec(`UPDATE discounts SET starts_at = now() - interval '2 days', ends_at = now() - interval '1 day' WHERE id = $1`, late)
		}
		refused := put(map[string]any{"discount_code": code, "lines": []any{map[string]any{"variant_id": s.variantID, "quantity": 3}}})
		require.Equal(t, http.StatusUnprocessableEntity, refused.Status, string(refused.Raw))
		require.Equal(t, reason, refused.fieldCode("discount_code"))
		require.NotEmpty(t, refused.fieldMessageAr("discount_code"))
		again := h.buyer(s, "GET", "/carts/"+cartID, nil, token).data()
		require.Equal(t, "RAMADAN10", again["discount_code"].(map[string]any)["code"], "cart unchanged")
		require.EqualValues(t, 2, again["item_count"], "cart unchanged")
	}

	// A code whose conditions fail stays, not applicable, until they hold.
	big := put(map[string]any{"discount_code": "BIG"}).data()
	require.Equal(t, map[string]any{"code": "BIG", "status": "not_applicable", "reason": "min_subtotal_not_met",
		"required_subtotal": float64(200000)}, big["discount_code"])
	require.EqualValues(t, 3000, big["discount"])
	five := put(map[string]any{"lines": []any{map[string]any{"variant_id": s.variantID, "quantity": 5}}}).data()
	require.Equal(t, "applied", five["discount_code"].(map[string]any)["status"])
	require.EqualValues(t, 3000+20000, five["discount"])

	// A rate is one of the options where the cart goes; null is the cheapest.
	for rate, field := range map[string]string{standard: "shipping_rate_id", express: "payment_method",
		"0190d3c4-0000-7000-8000-000000000001": "shipping_rate_id"} {
		refused := put(map[string]any{"shipping_rate_id": rate})
		require.Equal(t, http.StatusUnprocessableEntity, refused.Status, string(refused.Raw))
		require.Contains(t, []string{"not_offered", "not_found"}, refused.fieldCode(field), string(refused.Raw))
	}
	prepaid := put(map[string]any{"payment_method": "instapay", "shipping_rate_id": express, "discount_code": "SHIPFREE"}).data()
	require.Equal(t, express, prepaid["shipping"].(map[string]any)["rate_id"])
	require.Len(t, prepaid["shipping"].(map[string]any)["options"], 2)
	require.EqualValues(t, 6000, prepaid["shipping_fee"], "a free-shipping code is a discount, not a lower fee")
	require.EqualValues(t, 225000+6000-3000-6000, prepaid["total"])

	// Aswan falls to the country zone; without it, nothing delivers there.
	aswan := put(map[string]any{"shipping_address": map[string]any{"country": "EG", "city": "أسوان"}, "shipping_rate_id": nil}).data()
	require.Equal(t, standard, aswan["shipping"].(map[string]any)["rate_id"])
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: zones + "/" + egypt, auth: bearer(s.token)}).Status)
	far := h.buyer(s, "GET", "/carts/"+cartID, nil, token).data()
	require.Equal(t, "not_deliverable", far["shipping"].(map[string]any)["status"])

	// Checkout re-matches the address it is given.
	lost := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", pricedCheckout("cod", "أسوان", nil), token)
	require.Equal(t, http.StatusUnprocessableEntity, lost.Status, string(lost.Raw))
	require.Equal(t, "NOT_DELIVERABLE", lost.errorCode())
	require.Equal(t, "not_deliverable", lost.fieldCode("shipping_address.city"))
	noCOD := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", pricedCheckout("cod", "Giza", map[string]any{"shipping_rate_id": express}), token)
	require.Equal(t, "not_offered", noCOD.fieldCode("payment_method"), string(noCOD.Raw))
	elsewhere := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", pricedCheckout("cod", "Giza", map[string]any{"shipping_rate_id": standard}), token)
	require.Equal(t, "not_offered", elsewhere.fieldCode("shipping_rate_id"), string(elsewhere.Raw))

	// The total the buyer saw, or 409 with the fresh cart and nothing written.
	require.Equal(t, http.StatusOK, put(map[string]any{"discount_code": "ramadan10", "payment_method": "cod"}).Status)
	seen := put(map[string]any{"shipping_address": map[string]any{"country": "EG", "city": "Giza"}}).data()
	require.Equal(t, courier, seen["shipping"].(map[string]any)["rate_id"])
	stale := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", pricedCheckout("cod", "Giza", map[string]any{"expected_total": 1}), token)
	require.Equal(t, http.StatusConflict, stale.Status, string(stale.Raw))
	require.Equal(t, "CART_TOTAL_CHANGED", stale.errorCode())
	require.NotEmpty(t, stale.Body["error"].(map[string]any)["message_ar"])
	require.Equal(t, seen["total"], stale.Body["current"].(map[string]any)["total"], "the fresh cart")
	require.Equal(t, 0, h.orderCount(s.m.storeID))

	h.exec(`UPDATE discounts SET enabled = false WHERE id = $1`, ramadan)
	gone := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", pricedCheckout("cod", "Giza", map[string]any{"expected_total": seen["total"]}), token)
	require.Equal(t, http.StatusConflict, gone.Status, string(gone.Raw))
	require.Equal(t, "DISCOUNT_NOT_APPLICABLE", gone.errorCode())
	require.Equal(t, "not_found", gone.errorField("reason"))
	current := gone.Body["current"].(map[string]any)
	require.Equal(t, map[string]any{"code": "RAMADAN10", "status": "unusable", "reason": "not_found"}, current["discount_code"])
	require.Equal(t, 0, h.orderCount(s.m.storeID))
	times, _, _ := h.timesUsed(ramadan)
	require.Zero(t, times)

	h.exec(`UPDATE discounts SET enabled = true WHERE id = $1`, ramadan)
	placed := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", pricedCheckout("cod", "الجيزة", map[string]any{"expected_total": seen["total"]}), token)
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	order := h.getOrder(s, placed.data()["order"].(map[string]any)["id"].(string))
	require.Equal(t, seen["total"], order["total"])
	require.Equal(t, seen["discount"], order["discount"])
	require.Equal(t, []any{map[string]any{"rate_id": courier, "zone_id": giza, "name": "Courier", "fee": float64(3000), "cod_fee": float64(1000)}},
		order["shipping_lines"])
	require.Len(t, order["discounts"], 2)
	times, counted, _ := h.timesUsed(ramadan)
	require.Equal(t, [2]int{1, 1}, [2]int{times, counted}, "usage counted at checkout")
	closed := h.buyer(s, "GET", "/carts/"+cartID, nil, token).data()
	require.Equal(t, seen["total"], closed["total"], "a checked-out cart shows its order's prices")
}

// Checkout counts a code in the order's transaction: 50 concurrent
// checkouts of a limit-1 code place exactly one order.
func TestStorefrontCheckoutsOfALimitedCode(t *testing.T) {
	h := newHarness(t, api.Config{StorefrontRateLimitPerMinute: 1000})
	s := discountShop(t, h, "cartlimit", 200)
	once := h.discount(s.token, s.m.storeID, map[string]any{"method": "code", "code": "ONCE", "title": "once", "type": "fixed_amount", "value": 100,
		"usage_limit": 1})
	require.Equal(t, http.StatusCreated, once.Status, string(once.Raw))
	type cart struct{ id, token string }
	carts := make([]cart, 50)
	for i := range carts {
		carts[i].id, carts[i].token = h.openCart(s, 1, "")
		require.Equal(t, http.StatusOK, h.buyer(s, "PUT", "/carts/"+carts[i].id, map[string]any{"discount_code": "once"}, carts[i].token).Status)
	}
	statuses := burst(len(carts), func(i int) string {
		c := carts[i]
		body := checkoutBody("cod")
		body["customer"] = map[string]any{"name": "Buyer", "phone": fmt.Sprintf("+2010066%05d", i)}
		resp := h.buyer(s, "POST", "/carts/"+c.id+"/checkout", body, c.token)
		key := fmt.Sprint(resp.Status)
		if resp.Status == http.StatusConflict {
			key += " " + resp.errorCode()
			require.NotNil(t, resp.Body["current"], "the fresh cart")
		}
		return key
	})
	require.Equal(t, 1, statuses["201"], "%v", statuses)
	require.Equal(t, 49, statuses["409 DISCOUNT_USAGE_LIMIT_REACHED"]+statuses["409 DISCOUNT_NOT_APPLICABLE"], "%v", statuses)
	require.Equal(t, 1, h.orderCount(s.m.storeID))
	times, counted, _ := h.timesUsed(once.data()["id"].(string))
	require.Equal(t, [2]int{1, 1}, [2]int{times, counted})
}
