package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// A store-credit refund (decisions §19) succeeds at once onto the order's
// customer's store-credit card, made on first use and reused after: the
// balance and a `credit` entry naming the refund, no code anywhere, no
// settling by hand. An order without a customer answers 422 `method`
// no_customer and changes nothing.
func TestRefundStoreCredit(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "storecredit")
	order := h.placePaidOrderOf(s.shop, "+201001112223")
	orderID := order["id"].(string)
	customerID := order["customer_id"].(string)

	first := h.refund(s.shop, orderID, "credit-1", map[string]any{"amount": 10000, "method": "store_credit", "reason": "returned"})
	require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))
	ref := first.data()
	require.Equal(t, "store_credit", ref["method"])
	require.Equal(t, "succeeded", ref["status"])
	require.NotNil(t, ref["settled_at"])
	cardID := ref["reference"].(string)

	card := h.giftCard(s, "GET", "/"+cardID, nil, "")
	require.Equal(t, http.StatusOK, card.Status, string(card.Raw))
	c := card.data()
	require.Equal(t, "store_credit", c["kind"])
	require.Equal(t, customerID, c["customer_id"])
	require.Equal(t, "refund", c["source"])
	require.Equal(t, ref["id"], c["refund_id"])
	require.Nil(t, c["last4"])
	require.NotContains(t, c, "code")
	require.EqualValues(t, 10000, c["balance"])
	require.Equal(t, "active", c["status"])
	entries := c["transactions"].([]any)
	require.Len(t, entries, 1)
	entry := entries[0].(map[string]any)
	require.Equal(t, "credit", entry["kind"])
	require.EqualValues(t, 10000, entry["amount"])
	require.Equal(t, ref["id"], entry["refund_id"])
	require.Equal(t, orderID, entry["order_id"])
	require.Equal(t, "partially_refunded", h.getOrder(s.shop, orderID)["payment_status"])

	// Never settled by hand.
	settle := h.settle(s.shop, ref["id"].(string), "settle-credit", map[string]any{"status": "succeeded"})
	require.Equal(t, http.StatusConflict, settle.Status, string(settle.Raw))
	require.Equal(t, "REFUND_NOT_PENDING", settle.errorCode())

	// A second order of the same customer: the same card grows.
	second := h.placePaidOrderOf(s.shop, "+201001112223")
	require.Equal(t, customerID, second["customer_id"])
	secondID := second["id"].(string)
	again := h.refund(s.shop, secondID, "credit-2", map[string]any{"amount": 2500, "method": "store_credit", "reason": "late"})
	require.Equal(t, http.StatusCreated, again.Status, string(again.Raw))
	require.Equal(t, cardID, again.data()["reference"])
	list := h.giftCard(s, "GET", "?kind=store_credit&customer_id="+customerID, nil, "")
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	require.Len(t, list.data()["items"].([]any), 1, string(list.Raw))
	c = h.giftCard(s, "GET", "/"+cardID, nil, "").data()
	require.EqualValues(t, 12500, c["balance"])
	require.Len(t, c["transactions"].([]any), 2)

	// A payout goes with the methods that pay out, not with store credit.
	payout := h.refund(s.shop, secondID, "credit-payout", map[string]any{"amount": 100, "method": "store_credit", "reason": "x",
		"payout": map[string]any{"phone": "+201001234567"}})
	require.Equal(t, http.StatusUnprocessableEntity, payout.Status, string(payout.Raw))
	require.Equal(t, "not_allowed", payout.fieldCode("payout"))

	// No customer, no store credit: 422 and nothing written.
	third := h.placePaidOrderOf(s.shop, "+201009998887")
	thirdID := third["id"].(string)
	_, err := testenv.SQL(t, h.db).Exec(context.Background(), `UPDATE orders SET customer_id = NULL WHERE id = $1`, thirdID)
	require.NoError(t, err)
	refused := h.refund(s.shop, thirdID, "credit-3", map[string]any{"amount": 1000, "method": "store_credit", "reason": "returned"})
	require.Equal(t, http.StatusUnprocessableEntity, refused.Status, string(refused.Raw))
	require.Equal(t, "no_customer", refused.fieldCode("method"))
	var refunds, cards int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT (SELECT count(*) FROM order_refunds WHERE order_id = $1),
		(SELECT count(*) FROM gift_cards WHERE store_id = $2)`, thirdID, s.m.storeID).Scan(&refunds, &cards))
	require.Zero(t, refunds)
	require.Equal(t, 1, cards)
	require.Equal(t, "paid", h.getOrder(s.shop, thirdID)["payment_status"])
}

// placePaidOrderOf places a bank-transfer order of one unit for the buyer
// with phone (the same phone, the same customer) and marks it paid.
func (h *harness) placePaidOrderOf(s shop, phone string) map[string]any {
	h.t.Helper()
	body := orderBody(s.variantID, 1, phone)
	body["payment_method"] = "bank_transfer"
	resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	id := resp.data()["id"].(string)
	paid := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/mark-paid"), auth: bearer(s.token)})
	require.Equal(h.t, http.StatusOK, paid.Status, string(paid.Raw))
	return resp.data()
}
