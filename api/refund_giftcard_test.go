package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// An `original` refund of an order part-paid by a gift card (decisions §19)
// gives the card-paid part back to that card first, at once, and the rest
// by the order's other method: the card's `credit` entry names the refund,
// the refund shows gift_card_amount, and a failed remainder leaves the
// card's part where it went (only the remainder is refundable again).
func TestRefundOriginalCreditsTheGiftCardFirst(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "gcrefund")
	card, code := h.issueGiftCard(s, map[string]any{"initial_value": 10000})
	cardID := card["id"].(string)
	body := orderBody(s.variantID, 1, "+201007100001") // 490.00, 100.00 of it by the card
	body["payment_method"] = "bank_transfer"
	body["gift_card_codes"] = []string{code}
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	orderID := placed.data()["id"].(string)
	paid := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, paid.Status, string(paid.Raw))
	require.EqualValues(t, 49000, h.getOrder(s.shop, orderID)["paid_total"])

	// 40.00 fits the card's part: credited at once, succeeded.
	small := h.refund(s.shop, orderID, "gc-small", map[string]any{"amount": 4000, "method": "original", "reason": "damaged"})
	require.Equal(t, http.StatusCreated, small.Status, string(small.Raw))
	require.Equal(t, "succeeded", small.data()["status"])
	require.EqualValues(t, 4000, small.data()["gift_card_amount"])
	require.Equal(t, cardID, small.data()["reference"])
	balance, ledger := h.giftCardLedger(cardID)
	require.Equal(t, [2]int64{4000, 4000}, [2]int64{balance, ledger})
	var kind string
	var amount int64
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT kind, amount FROM gift_card_transactions
		WHERE gift_card_id = $1 AND refund_id = $2`, cardID, small.data()["id"]).Scan(&kind, &amount))
	require.Equal(t, "credit", kind)
	require.EqualValues(t, 4000, amount)

	// 150.00: the card's last 60.00 at once, 90.00 by hand, pending.
	split := h.refund(s.shop, orderID, "gc-split", map[string]any{"amount": 15000, "method": "original", "reason": "returned"})
	require.Equal(t, http.StatusCreated, split.Status, string(split.Raw))
	require.Equal(t, "pending", split.data()["status"])
	require.EqualValues(t, 6000, split.data()["gift_card_amount"])
	balance, ledger = h.giftCardLedger(cardID)
	require.Equal(t, [2]int64{10000, 10000}, [2]int64{balance, ledger}, "the card has its whole payment back")

	// The remainder fails: the card keeps its 60.00, and only the 90.00 is
	// refundable again.
	failed := h.settle(s.shop, split.data()["id"].(string), "gc-split-fail", map[string]any{"status": "failed", "failure_reason": "bank refused"})
	require.Equal(t, http.StatusOK, failed.Status, string(failed.Raw))
	require.Equal(t, "failed", failed.data()["status"])
	balance, _ = h.giftCardLedger(cardID)
	require.EqualValues(t, 10000, balance)
	order := h.getOrder(s.shop, orderID)
	require.Equal(t, "partially_refunded", order["payment_status"])
	over := h.refund(s.shop, orderID, "gc-over", map[string]any{"amount": 39001, "method": "original", "reason": "x"})
	require.Equal(t, http.StatusUnprocessableEntity, over.Status, string(over.Raw))
	require.Equal(t, "exceeds_refundable", over.fieldCode("amount"), "490.00 − 40.00 − 60.00 on the card leaves 390.00")

	// Nothing is left for the card: the next `original` goes by hand whole.
	rest := h.refund(s.shop, orderID, "gc-rest", map[string]any{"amount": 39000, "method": "original", "reason": "returned"})
	require.Equal(t, http.StatusCreated, rest.Status, string(rest.Raw))
	require.Equal(t, "pending", rest.data()["status"])
	require.EqualValues(t, 0, rest.data()["gift_card_amount"])
	balance, ledger = h.giftCardLedger(cardID)
	require.Equal(t, [2]int64{10000, 10000}, [2]int64{balance, ledger}, "never credited twice")
}

// An order the card paid whole: an `original` refund goes back to the card;
// a later cancel reverses only what the refund left, so the card ends at
// its initial value, once. A disabled card is passed over: its part goes
// back by hand.
func TestRefundOriginalThenCancelGivesTheCardItsValueOnce(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "gcrefundcancel")
	card, code := h.issueGiftCard(s, map[string]any{"initial_value": 100000})
	cardID := card["id"].(string)
	place := func(phone, code string) string {
		body := orderBody(s.variantID, 1, phone)
		delete(body, "payment_method")
		body["gift_card_codes"] = []string{code}
		placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
		require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
		require.Equal(t, "gift_card", placed.data()["payment_method"])
		require.Equal(t, "paid", placed.data()["payment_status"])
		return placed.data()["id"].(string)
	}
	orderID := place("+201007100002", code)
	refund := h.refund(s.shop, orderID, "gcc-refund", map[string]any{"amount": 9000, "method": "original", "reason": "late"})
	require.Equal(t, http.StatusCreated, refund.Status, string(refund.Raw))
	require.Equal(t, "succeeded", refund.data()["status"])
	require.EqualValues(t, 9000, refund.data()["gift_card_amount"])
	balance, _ := h.giftCardLedger(cardID)
	require.EqualValues(t, 100000-49000+9000, balance)

	cancel := h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+orderID+"?reason=changed%20mind"), auth: bearer(s.token)})
	require.Equal(t, http.StatusNoContent, cancel.Status, string(cancel.Raw))
	balance, ledger := h.giftCardLedger(cardID)
	require.Equal(t, [2]int64{100000, 100000}, [2]int64{balance, ledger}, "the card has its value back once, not 90.00 more")
	order := h.getOrder(s.shop, orderID)
	require.EqualValues(t, 0, order["refund_due"])

	// A disabled card cannot take the refund: it goes back by hand.
	second, secondCode := h.issueGiftCard(s, map[string]any{"initial_value": 60000})
	secondOrder := place("+201007100003", secondCode)
	disabled := h.giftCard(s, "POST", "/"+second["id"].(string)+"/disable", map[string]any{"reason": "fraud"}, "")
	require.Equal(t, http.StatusOK, disabled.Status, string(disabled.Raw))
	byHand := h.refund(s.shop, secondOrder, "gcc-disabled", map[string]any{"amount": 1000, "method": "original", "reason": "late"})
	require.Equal(t, http.StatusCreated, byHand.Status, string(byHand.Raw))
	require.Equal(t, "pending", byHand.data()["status"])
	require.EqualValues(t, 0, byHand.data()["gift_card_amount"])
	balance, _ = h.giftCardLedger(second["id"].(string))
	require.EqualValues(t, 60000-49000, balance)
}

// A card order part-paid by a gift card: one `original` refund of
// everything credits the gift card its part at once and asks the gateway
// for the rest alone.
func TestRefundOriginalSplitsBetweenTheGiftCardAndTheGateway(t *testing.T) {
	h := newHarness(t, api.Config{})
	stripe := &fakeStripe{key: "sk_test_gift_split_4242"}
	h.stripeBase = stripe.serve(t)
	h.startWorker(nil)
	s := newGiftCardShop(t, h, "gcgateway")
	storeID := uuid.MustParse(s.m.storeID)
	require.NoError(t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
		return tx.ConnectGateway(context.Background(), h.secrets, storage.GatewayAccount{StoreID: storeID, Provider: storage.GatewayStripe,
			SecretKey: stripe.key, WebhookSecret: "whsec_test"})
	}))
	card, code := h.issueGiftCard(s, map[string]any{"initial_value": 10000})
	body := orderBody(s.variantID, 1, "+201007100004")
	body["payment_method"] = "card"
	body["gift_card_codes"] = []string{code}
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	orderID := placed.data()["id"].(string)
	require.NoError(t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
		_, err := tx.PayThroughGateway(context.Background(), storeID, uuid.MustParse(orderID), storage.GatewayStripe, "pi_gift_split", 39000)
		return err
	}))
	require.Equal(t, "paid", h.getOrder(s.shop, orderID)["payment_status"])

	refund := h.refund(s.shop, orderID, "gcg-all", map[string]any{"amount": 49000, "method": "original", "reason": "returned"})
	require.Equal(t, http.StatusCreated, refund.Status, string(refund.Raw))
	refundID := refund.data()["id"].(string)
	require.EqualValues(t, 10000, refund.data()["gift_card_amount"])
	balance, ledger := h.giftCardLedger(card["id"].(string))
	require.Equal(t, [2]int64{10000, 10000}, [2]int64{balance, ledger})
	require.Eventually(t, func() bool {
		got := h.do(request{method: "GET", path: storePath(s.m.storeID, "/refunds/"+refundID), auth: bearer(s.token)}).data()
		return got["status"] == "succeeded"
	}, 30*time.Second, 50*time.Millisecond)
	stripe.mu.Lock()
	defer stripe.mu.Unlock()
	require.Len(t, stripe.bodies, 1)
	require.Equal(t, "39000", stripe.bodies[0]["amount"], "the gateway is asked only for what the gift card did not pay")
	require.Equal(t, "refunded", h.getOrder(s.shop, orderID)["payment_status"])
}
