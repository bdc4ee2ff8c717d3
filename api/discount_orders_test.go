package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// discountShop is a shop whose token also manages discounts.
func discountShop(t *testing.T, h *harness, name string, stock int) shop {
	s := newShop(t, h, name, stock)
	s.token = h.pat(s.m, "catalog:write", "orders:write", "customers:write", "settings:write", "marketing:write")
	return s
}

func (h *harness) timesUsed(discountID string) (times int, counted, released int) {
	h.t.Helper()
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT times_used,
		(SELECT count(*) FROM discount_redemptions WHERE discount_id = $1 AND status = 'counted'),
		(SELECT count(*) FROM discount_redemptions WHERE discount_id = $1 AND status = 'released')
		FROM discounts WHERE id = $1`, discountID).Scan(&times, &counted, &released))
	return times, counted, released
}

func (h *harness) orderCount(storeID string) int {
	h.t.Helper()
	var n int
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM orders WHERE store_id = $1`, storeID).Scan(&n))
	return n
}

// Merchant orders with a code and the automatic discount: priced by §14,
// counted in the order's transaction, released once by a cancel; a code
// that cannot be used is a 422, one whose conditions fail a 409 with its
// reason; a preview prices exactly the same and writes nothing.
func TestMerchantOrdersWithDiscounts(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := discountShop(t, h, "discorders", 50)
	code := h.discount(s.token, s.m.storeID, map[string]any{"method": "code", "code": "RAMADAN10", "title": "رمضان", "type": "percentage", "value": 10})
	require.Equal(t, http.StatusCreated, code.Status, string(code.Raw))
	codeID := code.data()["id"].(string)
	auto := h.discount(s.token, s.m.storeID, map[string]any{"method": "automatic", "title": "Eid", "type": "fixed_amount", "value": 3000})
	require.Equal(t, http.StatusCreated, auto.Status, string(auto.Raw))
	autoID := auto.data()["id"].(string)

	body := func(phone string, extra map[string]any) map[string]any {
		b := orderBody(s.variantID, 3, phone) // 3 × 450.00, shipping 50.00, manual discount 10.00
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	withBoth := map[string]any{"discount_code": "ramadan10", "apply_automatic_discounts": true}
	preview := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/preview"), auth: bearer(s.token), body: body("+201003334441", withBoth)})
	require.Equal(t, http.StatusOK, preview.Status, string(preview.Raw))
	require.Zero(t, h.orderCount(s.m.storeID), "a preview writes nothing")
	times, _, _ := h.timesUsed(codeID)
	require.Zero(t, times)

	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body("+201003334441", withBoth)})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	o := placed.data()
	// 135000: the automatic 3000 first, then 10% of the 132000 left, then the manual 1000.
	require.EqualValues(t, 3000+13200+1000, o["discount"])
	require.EqualValues(t, 135000+5000-17200, o["total"])
	require.EqualValues(t, 17200, o["lines"].([]any)[0].(map[string]any)["discount"])
	kinds := []string{}
	for _, d := range o["discounts"].([]any) {
		kinds = append(kinds, fmt.Sprintf("%s:%v", d.(map[string]any)["kind"], d.(map[string]any)["amount"]))
	}
	require.Equal(t, []string{"automatic:3000", "code:13200", "manual:1000"}, kinds)
	for _, k := range []string{"subtotal", "shipping_fee", "discount", "total", "discounts"} {
		require.Equal(t, o[k], preview.data()[k], "the preview priced %s as placing did", k)
	}
	for _, id := range []string{codeID, autoID} {
		times, counted, _ := h.timesUsed(id)
		require.Equal(t, [2]int{1, 1}, [2]int{times, counted})
	}
	redemptions := h.do(request{method: "GET", path: storePath(s.m.storeID, "/discounts/"+codeID+"/redemptions"), auth: bearer(s.token)}).list()
	require.Len(t, redemptions, 1)
	require.EqualValues(t, 13200, redemptions[0].(map[string]any)["amount"])

	// A cancel releases the usages once, whichever route.
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+o["id"].(string)), auth: bearer(s.token)}).Status)
	require.Equal(t, http.StatusConflict, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+o["id"].(string)), auth: bearer(s.token)}).Status)
	times, counted, released := h.timesUsed(codeID)
	require.Equal(t, [3]int{0, 0, 1}, [3]int{times, counted, released})
	second := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body("+201003334442", withBoth)}).data()
	status := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+second["id"].(string)+"/status"), auth: bearer(s.token),
		body: map[string]any{"status": "CANCELLED"}})
	require.Equal(t, http.StatusOK, status.Status, string(status.Raw))
	times, _, released = h.timesUsed(codeID)
	require.Equal(t, [2]int{0, 2}, [2]int{times, released}, "the status route releases too")

	// Codes that cannot be used, and conditions that fail.
	h.exec(`UPDATE discounts SET ends_at = now() - interval '1 minute', starts_at = now() - interval '1 day' WHERE id = $1`, codeID)
	for _, c := range []struct {
		code, want string
	}{{"NOPE", "not_found"}, {"RAMADAN10", "expired"}} {
		resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
			body: body("+201003334443", map[string]any{"discount_code": c.code})})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Equal(t, c.want, resp.fieldCode("discount_code"))
		require.NotEmpty(t, resp.fieldMessageAr("discount_code"))
	}
	big := h.discount(s.token, s.m.storeID, map[string]any{"method": "code", "code": "BIG", "title": "big", "type": "fixed_amount", "value": 500,
		"min_subtotal": 500000})
	require.Equal(t, http.StatusCreated, big.Status, string(big.Raw))
	before := h.orderCount(s.m.storeID)
	small := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: body("+201003334444", map[string]any{"discount_code": "big"})})
	require.Equal(t, http.StatusConflict, small.Status, string(small.Raw))
	require.Equal(t, "DISCOUNT_NOT_APPLICABLE", small.errorCode())
	require.Equal(t, "min_subtotal_not_met", small.errorField("reason"))
	require.EqualValues(t, 500000, small.errorField("required_subtotal"))
	require.Equal(t, before, h.orderCount(s.m.storeID), "nothing written")
}

// 50 concurrent orders with a limit-1 code place exactly one; a
// per-customer limit of 1 holds across two concurrent orders of one phone.
func TestDiscountLimitsHoldUnderConcurrency(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := discountShop(t, h, "disclimit", 200)
	once := h.discount(s.token, s.m.storeID, map[string]any{"method": "code", "code": "ONCE", "title": "once", "type": "fixed_amount", "value": 100,
		"usage_limit": 1})
	require.Equal(t, http.StatusCreated, once.Status, string(once.Raw))
	statuses := burst(50, func(i int) string {
		b := orderBody(s.variantID, 1, fmt.Sprintf("+2010055%05d", i))
		b["discount_code"] = "ONCE"
		resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: b})
		key := fmt.Sprint(resp.Status)
		if resp.Status == http.StatusConflict {
			key += " " + resp.errorCode()
		} else if resp.Status == http.StatusUnprocessableEntity {
			key += " " + resp.fieldCode("discount_code")
		}
		return key
	})
	require.Equal(t, 1, statuses["201"], "%v", statuses)
	require.Equal(t, 49, statuses["409 DISCOUNT_USAGE_LIMIT_REACHED"]+statuses["422 usage_limit_reached"], "%v", statuses)
	require.Equal(t, 1, h.orderCount(s.m.storeID))
	times, counted, _ := h.timesUsed(once.data()["id"].(string))
	require.Equal(t, [2]int{1, 1}, [2]int{times, counted})

	perCustomer := h.discount(s.token, s.m.storeID, map[string]any{"method": "code", "code": "WELCOME", "title": "welcome", "type": "fixed_amount",
		"value": 100, "usage_limit_per_customer": 1})
	require.Equal(t, http.StatusCreated, perCustomer.Status, string(perCustomer.Raw))
	// The customer exists first, so both orders name the same one.
	first := orderBody(s.variantID, 1, "+201007770000")
	require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: first}).Status)
	results := make([]response, 2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := orderBody(s.variantID, 1, "+201007770000")
			b["discount_code"] = "WELCOME"
			results[i] = h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: b})
		}()
	}
	wg.Wait()
	created := 0
	for _, r := range results {
		if r.Status == http.StatusCreated {
			created++
		} else {
			require.Contains(t, []string{"DISCOUNT_USAGE_LIMIT_REACHED", "DISCOUNT_NOT_APPLICABLE"}, r.errorCode(), string(r.Raw))
		}
	}
	require.Equal(t, 1, created)
	times, _, _ = h.timesUsed(perCustomer.data()["id"].(string))
	require.Equal(t, 1, times)
}

// A draft validates its code and counts nothing; conversion re-checks and
// counts, and refuses (409, the draft unchanged) once the code is disabled.
func TestDraftsCountDiscountsAtConversion(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := discountShop(t, h, "discdrafts", 20)
	code := h.discount(s.token, s.m.storeID, map[string]any{"method": "code", "code": "DRAFT5", "title": "five", "type": "percentage", "value": 5})
	require.Equal(t, http.StatusCreated, code.Status, string(code.Raw))
	codeID := code.data()["id"].(string)
	draft := func() map[string]any {
		b := orderBody(s.variantID, 2, "+201008880001")
		b["discount_code"] = "DRAFT5"
		resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token), body: b})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		return resp.data()
	}
	d := draft()
	require.EqualValues(t, 4500+1000, d["discount"])
	times, _, _ := h.timesUsed(codeID)
	require.Zero(t, times, "a draft counts nothing")
	conv := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+d["id"].(string)+"/convert"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, conv.Status, string(conv.Raw))
	times, _, _ = h.timesUsed(codeID)
	require.Equal(t, 1, times)
	second := draft()
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+second["id"].(string)+"/convert"),
		auth: bearer(s.token)}).Status)

	// usage_limit may not go below times_used (2 now).
	discountPath := storePath(s.m.storeID, "/discounts/"+codeID)
	below := h.do(request{method: "PATCH", path: discountPath, auth: bearer(s.token), body: map[string]any{"usage_limit": 1}})
	require.Equal(t, http.StatusUnprocessableEntity, below.Status, string(below.Raw))
	require.Equal(t, "out_of_range", below.fieldCode("usage_limit"))
	atTimesUsed := h.do(request{method: "PATCH", path: discountPath, auth: bearer(s.token), body: map[string]any{"usage_limit": 2}})
	require.Equal(t, http.StatusOK, atTimesUsed.Status, string(atTimesUsed.Raw))
	require.Equal(t, "exhausted", atTimesUsed.data()["status"])
	require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: discountPath, auth: bearer(s.token), body: map[string]any{"usage_limit": nil}}).Status)

	other := draft()
	require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/discounts/"+codeID), auth: bearer(s.token),
		body: map[string]any{"enabled": false}}).Status)
	refused := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+other["id"].(string)+"/convert"), auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, refused.Status, string(refused.Raw))
	require.Equal(t, "DISCOUNT_NOT_APPLICABLE", refused.errorCode())
	require.Equal(t, "DRAFT", h.getOrder(s, other["id"].(string))["status"])
}

// A once-per-customer code counts the customer §4 finds, by phone then
// email: an order that leaves customer.phone out is known by its shipping
// phone, so a fresh email with the same phone is the same customer, and an
// email in other letters is the same email (issue 48, item 11).
func TestPerCustomerDiscountFollowsPhoneAndEmail(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := discountShop(t, h, "disccontact", 20)
	welcome := h.discount(s.token, s.m.storeID, map[string]any{"method": "code", "code": "HELLO", "title": "hello", "type": "fixed_amount",
		"value": 100, "usage_limit_per_customer": 1})
	require.Equal(t, http.StatusCreated, welcome.Status, string(welcome.Raw))
	order := func(customer map[string]any, shippingPhone string) response {
		b := orderBody(s.variantID, 1, shippingPhone)
		b["customer"], b["discount_code"] = customer, "HELLO"
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: b})
	}
	first := order(map[string]any{"name": "Mona Adel", "phone": "+201008880000", "email": "mona@example.com"}, "+201008880000")
	require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))
	customerID := first.data()["customer"].(map[string]any)["id"]

	for _, c := range []struct {
		name          string
		customer      map[string]any
		shippingPhone string
	}{
		{"the same phone only as the shipping phone, a fresh email",
			map[string]any{"name": "Mona A.", "email": "mona.adel@example.org"}, "+20 100 888 0000"},
		{"the same phone as customer.phone, a fresh email",
			map[string]any{"name": "Mona A.", "phone": "+201008880000", "email": "mona2@example.org"}, "+201009990000"},
		{"the email in other letters, no phone",
			map[string]any{"name": "Mona A.", "email": "MONA@Example.COM"}, "+201007770001"},
	} {
		resp := order(c.customer, c.shippingPhone)
		require.Equal(t, http.StatusConflict, resp.Status, "%s: %s", c.name, resp.Raw)
		require.Contains(t, []string{"DISCOUNT_USAGE_LIMIT_REACHED", "DISCOUNT_NOT_APPLICABLE"}, resp.errorCode(), "%s: %s", c.name, resp.Raw)
		if resp.errorCode() == "DISCOUNT_NOT_APPLICABLE" {
			require.Equal(t, "customer_limit_reached", resp.errorField("reason"), c.name)
		}
	}
	times, _, _ := h.timesUsed(welcome.data()["id"].(string))
	require.Equal(t, 1, times)

	// Without the code, the shipping phone links the order to the customer.
	b := orderBody(s.variantID, 1, "+201008880000")
	b["customer"] = map[string]any{"name": "Mona A.", "email": "mona.adel@example.org"}
	linked := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: b})
	require.Equal(t, http.StatusCreated, linked.Status, string(linked.Raw))
	require.Equal(t, customerID, linked.data()["customer"].(map[string]any)["id"])
}
