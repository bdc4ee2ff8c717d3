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

// Merge moves a duplicate's orders and gift cards and fills the contact the
// survivor lacks, and the duplicate is 404 after; two customers with
// accounts are 409 and nothing changes (decisions §24).
func TestMergeCustomers(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "mergecustomers")
	c := func(body map[string]any) string {
		resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/customers"), auth: bearer(s.token), body: body})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		return resp.data()["id"].(string)
	}
	into := c(map[string]any{"name": "Huda", "phone": "+201002220001"})
	from := c(map[string]any{"name": "Huda K.", "email": "huda@example.com"})
	order := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: map[string]any{"customer_id": from, "lines": []map[string]any{{"variant_id": s.variantID, "quantity": 1}},
			"shipping_address": map[string]any{"name": "Huda", "phone": "+201002220001", "line1": "1 St", "city": "Cairo", "country": "EG"},
			"payment_method":   "cod"}})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
	card, _ := h.issueGiftCard(s, map[string]any{"initial_value": 1000, "customer_id": from})

	merge := func(into, from string) response {
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/customers/"+into+"/merge"), auth: bearer(s.token),
			body: map[string]any{"from_customer_id": from}})
	}
	require.Equal(t, "same_customer", merge(into, into).fieldCode("from_customer_id"))
	merged := merge(into, from)
	require.Equal(t, http.StatusOK, merged.Status, string(merged.Raw))
	require.Equal(t, "huda@example.com", merged.data()["email"], "the contact the survivor lacked")
	require.Equal(t, "+201002220001", merged.data()["phone"])
	require.Equal(t, into, h.getOrder(s.shop, order.data()["id"].(string))["customer_id"])
	require.Equal(t, into, h.giftCard(s, "GET", "/"+card["id"].(string), nil, "").data()["customer_id"])
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(s.m.storeID, "/customers/"+from), auth: bearer(s.token)}).Status)

	a, b := c(map[string]any{"name": "A", "phone": "+201002220002"}), c(map[string]any{"name": "B", "phone": "+201002220003"})
	_, err := testenv.SQL(t, h.db).Exec(context.Background(), `UPDATE customers SET has_account = true WHERE id = ANY($1::uuid[])`, []string{a, b})
	require.NoError(t, err)
	both := merge(a, b)
	require.Equal(t, http.StatusConflict, both.Status, string(both.Raw))
	require.Equal(t, "CUSTOMERS_BOTH_HAVE_ACCOUNTS", both.errorCode())
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(s.m.storeID, "/customers/"+b), auth: bearer(s.token)}).Status)
}

// Export lists what the store keeps; erase redacts the customer and their
// orders' copies and keeps the amounts, refused while an order is open.
func TestExportAndEraseCustomer(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "erasecustomer", 10)
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201003330001")})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	orderID, customerID := placed.data()["id"].(string), placed.data()["customer_id"].(string)
	total := placed.data()["total"]

	export := h.do(request{method: "GET", path: storePath(s.m.storeID, "/customers/"+customerID+"/export"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, export.Status, string(export.Raw))
	require.Contains(t, export.Header.Get("Content-Disposition"), "customer-"+customerID+".json")
	require.Len(t, export.data()["orders"], 1)
	require.Equal(t, "+201003330001", export.data()["customer"].(map[string]any)["phone"])

	erase := func() response {
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/customers/"+customerID+"/erase"), auth: bearer(s.token)})
	}
	open := erase()
	require.Equal(t, http.StatusConflict, open.Status, string(open.Raw))
	require.Equal(t, "CUSTOMER_HAS_OPEN_ORDERS", open.errorCode())
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+orderID+"?reason=x"), auth: bearer(s.token)}).Status)

	erased := erase()
	require.Equal(t, http.StatusOK, erased.Status, string(erased.Raw))
	require.Equal(t, "[erased]", erased.data()["name"])
	require.Nil(t, erased.data()["phone"])
	require.Nil(t, erased.data()["email"])
	order := h.getOrder(s, orderID)
	require.Equal(t, total, order["total"], "amounts stay")
	raw, _ := testenv.SQL(t, h.db).Query(context.Background(), `SELECT customer::text || shipping_address::text || COALESCE(customer_phone, '') || search_text
		FROM orders WHERE id = $1`, orderID)
	var copies string
	for raw.Next() {
		require.NoError(t, raw.Scan(&copies))
	}
	raw.Close()
	require.NotContains(t, copies, "01003330001", "no copy of the phone")
	require.NotContains(t, strings.ToLower(copies), "mona", "no copy of the name")
	require.NotContains(t, copies, "Tahrir", "no copy of the street")
}

// The merchant writes consent per channel (source merchant) and the
// customer shows it with the account fields (decisions §24).
func TestMerchantWritesConsent(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "merchantconsent", 5)
	created := h.do(request{method: "POST", path: storePath(s.m.storeID, "/customers"), auth: bearer(s.token),
		body: map[string]any{"name": "Salma", "phone": "+201004440001"}})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	id := created.data()["id"].(string)
	require.Equal(t, false, created.data()["has_account"])
	require.Equal(t, "not_subscribed", created.data()["marketing"].(map[string]any)["whatsapp"].(map[string]any)["state"])
	patched := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/customers/"+id), auth: bearer(s.token),
		body: map[string]any{"language": "en", "marketing": map[string]any{"whatsapp": map[string]any{"state": "subscribed"}}}})
	require.Equal(t, http.StatusOK, patched.Status, string(patched.Raw))
	consent := patched.data()["marketing"].(map[string]any)["whatsapp"].(map[string]any)
	require.Equal(t, "subscribed", consent["state"])
	require.Equal(t, "merchant", consent["source"])
	require.Equal(t, "en", patched.data()["language"])
	bad := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/customers/"+id), auth: bearer(s.token),
		body: map[string]any{"marketing": map[string]any{"sms": map[string]any{"state": "subscribed"}, "email": map[string]any{"state": "yes"}}}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status, string(bad.Raw))
	require.ElementsMatch(t, []string{"marketing.sms", "marketing.email.state"}, bad.fieldNames())
}
