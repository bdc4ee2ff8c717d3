package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// giftCardLedger is a card's balance and the sum of its ledger entries.
func (h *harness) giftCardLedger(id string) (balance, ledger int64) {
	h.t.Helper()
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT g.balance,
			(SELECT COALESCE(sum(amount), 0)::bigint FROM gift_card_transactions WHERE gift_card_id = g.id)
		FROM gift_cards g WHERE g.id = $1`, id).Scan(&balance, &ledger))
	return balance, ledger
}

// giftCardZone gives the shop a Giza zone: a 30.00 rate with a 10.00 COD fee.
func (h *harness) giftCardZone(s shop) {
	h.t.Helper()
	resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/shipping/zones"), auth: bearer(s.token),
		body: map[string]any{"name": "Giza", "areas": []any{map[string]any{"country": "EG", "cities": []string{"Giza"}}}}})
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	rate := h.do(request{method: "POST", path: storePath(s.m.storeID, "/shipping/zones/"+resp.data()["id"].(string)+"/rates"), auth: bearer(s.token),
		body: map[string]any{"name": "Courier", "price": 3000, "cod_fee": 1000}})
	require.Equal(h.t, http.StatusCreated, rate.Status, string(rate.Raw))
}

func appliedCards(cart map[string]any) []any { return cart["gift_cards"].([]any) }

// Cards on a cart apply last, in the order given, and pay shipping but not
// the COD fee; an unusable code is 422 on its index and changes nothing; the
// cart keeps card ids, never codes; null removes them.
func TestCartGiftCards(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "gccart")
	h.giftCardZone(s.shop)
	small, smallCode := h.issueGiftCard(s, map[string]any{"initial_value": 20000})
	_, bigCode := h.issueGiftCard(s, map[string]any{"initial_value": 50000})
	disabled, disabledCode := h.issueGiftCard(s, map[string]any{"initial_value": 100})
	require.Equal(t, http.StatusOK, h.giftCard(s, "POST", "/"+disabled["id"].(string)+"/disable", map[string]any{}, "").Status)

	cartID, token := h.openCart(s.shop, 1, "") // 450.00
	put := func(body map[string]any) response {
		return h.buyer(s.shop, "PUT", "/carts/"+cartID, body, token)
	}
	typed := strings.ToLower(strings.ReplaceAll(smallCode, "-", " "))
	resp := put(map[string]any{"shipping_address": map[string]any{"country": "EG", "city": "Giza"}, "payment_method": "cod",
		"gift_card_codes": []string{typed, bigCode}})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	cart := resp.data()
	// 450.00 + 30.00 shipping + 10.00 COD fee = 490.00; the cards apply to
	// 480.00: the small one first (200.00), the big one the rest (280.00).
	require.EqualValues(t, 49000, cart["total"])
	require.Equal(t, []any{
		map[string]any{"last4": smallCode[len(smallCode)-4:], "applied": float64(20000), "balance_after": float64(0)},
		map[string]any{"last4": bigCode[len(bigCode)-4:], "applied": float64(28000), "balance_after": float64(22000)},
	}, appliedCards(cart))
	require.EqualValues(t, 1000, cart["amount_due"], "the COD fee is left to the payment method")

	resp = put(map[string]any{"gift_card_codes": []string{bigCode, smallCode}})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	cards := appliedCards(resp.data())
	require.EqualValues(t, 48000, cards[0].(map[string]any)["applied"], "in the order given")
	require.EqualValues(t, 0, cards[1].(map[string]any)["applied"])

	var stored string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT to_jsonb(c)::text FROM carts c WHERE id = $1`, cartID).Scan(&stored))
	for _, code := range []string{smallCode, bigCode, strings.ReplaceAll(smallCode, "-", ""), strings.ReplaceAll(bigCode, "-", "")} {
		require.NotContains(t, stored, code, "a cart keeps card ids, never codes")
	}

	before := h.buyer(s.shop, "GET", "/carts/"+cartID, nil, token).data()
	bad := put(map[string]any{"gift_card_codes": []string{smallCode, "AAAA-BBBB-CCCC-DDDD", disabledCode, smallCode}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status, string(bad.Raw))
	require.Equal(t, []string{"gift_card_codes[1]", "gift_card_codes[2]", "gift_card_codes[3]"}, bad.fieldNames())
	require.Equal(t, "not_usable", bad.fieldCode("gift_card_codes[1]"))
	require.Equal(t, "not_usable", bad.fieldCode("gift_card_codes[2]"), "disabled is the same answer as unknown")
	require.Equal(t, "duplicate", bad.fieldCode("gift_card_codes[3]"))
	require.Equal(t, http.StatusUnprocessableEntity, put(map[string]any{"gift_card_codes": []string{"a", "b", "c", "d", "e", "f"}}).Status)
	require.Equal(t, before, h.buyer(s.shop, "GET", "/carts/"+cartID, nil, token).data(), "a refused change changes nothing")

	resp = put(map[string]any{"gift_card_codes": nil})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.Empty(t, appliedCards(resp.data()))
	require.Equal(t, resp.data()["total"], resp.data()["amount_due"])
	require.Equal(t, int64(20000), func() int64 { b, _ := h.giftCardLedger(small["id"].(string)); return b }(), "a cart debits nothing")
}

// A COD order part-paid by a card: the card is a gift_card payment, the
// courier collects only the rest, and the delivery pays the order once.
func TestCheckoutGiftCardWithCOD(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "gccod")
	h.giftCardZone(s.shop)
	card, code := h.issueGiftCard(s, map[string]any{"initial_value": 20000})
	cartID, token := h.openCart(s.shop, 1, "")
	resp := h.buyer(s.shop, "PUT", "/carts/"+cartID, map[string]any{"shipping_address": map[string]any{"country": "EG", "city": "Giza"},
		"payment_method": "cod", "gift_card_codes": []string{code}}, token)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.EqualValues(t, 29000, resp.data()["amount_due"])

	placed := h.buyer(s.shop, "POST", "/carts/"+cartID+"/checkout", pricedCheckout("cod", "Giza", map[string]any{"expected_total": 49000}), token)
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	orderID := placed.data()["order"].(map[string]any)["id"].(string)
	order := h.getOrder(s.shop, orderID)
	require.Equal(t, "cod", order["payment_method"])
	require.Equal(t, "partially_paid", order["payment_status"])
	require.EqualValues(t, 20000, order["paid_total"])
	require.EqualValues(t, 29000, order["balance_due"])
	payments := order["payments"].([]any)
	require.Len(t, payments, 1)
	p := payments[0].(map[string]any)
	require.Equal(t, "gift_card", p["source"])
	require.EqualValues(t, 20000, p["amount"])
	require.Equal(t, map[string]any{"id": card["id"], "last4": code[len(code)-4:]}, p["gift_card"])
	balance, ledger := h.giftCardLedger(card["id"].(string))
	require.Equal(t, [2]int64{0, 0}, [2]int64{balance, ledger})

	shipped := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
		body: map[string]any{"carrier": "aramex"}})
	require.Equal(t, http.StatusCreated, shipped.Status, string(shipped.Raw))
	require.EqualValues(t, 29000, shipped.data()["cod_amount"], "the courier collects only what the card left")
	shipmentID := shipped.data()["id"].(string)
	require.Equal(t, http.StatusOK, h.shipmentEvent(s.shop, shipmentID, map[string]any{"status": "in_transit"}).Status)
	delivered := h.shipmentEvent(s.shop, shipmentID, map[string]any{"status": "delivered"})
	require.Equal(t, http.StatusOK, delivered.Status, string(delivered.Raw))
	order = h.getOrder(s.shop, orderID)
	require.Equal(t, "DELIVERED", order["status"])
	require.Equal(t, "paid", order["payment_status"], "the cash the courier collected settles it")
	require.EqualValues(t, 29000, order["collected_total"], "the cash part")
	require.EqualValues(t, 49000, order["paid_total"])
	require.Empty(t, h.openExceptions(s.m.storeID, orderID), "no COD mismatch")
	require.Len(t, h.events(s.m.storeID, "order.paid"), 1)
}

// Cards that pay the whole total: no payment_method, the order's is
// gift_card, paid once; cancel gives the debits back once, and unmark-paid
// leaves card payments alone.
func TestCheckoutGiftCardsPayWholeAndCancel(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "gcwhole")
	h.giftCardZone(s.shop)
	first, firstCode := h.issueGiftCard(s, map[string]any{"initial_value": 30000})
	second, secondCode := h.issueGiftCard(s, map[string]any{"initial_value": 50000})
	cartID, token := h.openCart(s.shop, 1, "")
	resp := h.buyer(s.shop, "PUT", "/carts/"+cartID, map[string]any{"shipping_address": map[string]any{"country": "EG", "city": "Giza"},
		"gift_card_codes": []string{firstCode, secondCode}}, token)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.EqualValues(t, 48000, resp.data()["total"])
	require.EqualValues(t, 0, resp.data()["amount_due"])

	body := pricedCheckout("", "Giza", map[string]any{"expected_total": 48000})
	delete(body, "payment_method")
	placed := h.buyer(s.shop, "POST", "/carts/"+cartID+"/checkout", body, token)
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	orderID := placed.data()["order"].(map[string]any)["id"].(string)
	order := h.getOrder(s.shop, orderID)
	require.Equal(t, "gift_card", order["payment_method"])
	require.Equal(t, "paid", order["payment_status"])
	require.EqualValues(t, 48000, order["paid_total"])
	require.Len(t, order["payments"], 2)
	paid := h.events(s.m.storeID, "order.paid")
	require.Len(t, paid, 1, "order.paid once")
	require.Equal(t, "gift_card", paid[0]["payment_method"])
	checkedOut := h.buyer(s.shop, "GET", "/carts/"+cartID, nil, token).data()
	require.EqualValues(t, 0, checkedOut["amount_due"])
	require.Len(t, appliedCards(checkedOut), 2)
	b1, _ := h.giftCardLedger(first["id"].(string))
	b2, _ := h.giftCardLedger(second["id"].(string))
	require.Equal(t, [2]int64{0, 32000}, [2]int64{b1, b2})

	unmark := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/unmark-paid"), auth: bearer(s.token),
		body: map[string]any{"reason": "test"}})
	require.Equal(t, http.StatusConflict, unmark.Status, "nothing was paid by hand: card payments stay")
	b1, _ = h.giftCardLedger(first["id"].(string))
	require.Zero(t, b1)

	for range 2 {
		cancel := h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+orderID+"?reason=changed%20mind"), auth: bearer(s.token)})
		require.Contains(t, []int{http.StatusNoContent, http.StatusConflict}, cancel.Status, string(cancel.Raw))
	}
	for _, c := range []map[string]any{first, second} {
		balance, ledger := h.giftCardLedger(c["id"].(string))
		require.Equal(t, c["initial_value"], float64(balance), "the balance is back, once")
		require.Equal(t, balance, ledger, "the ledger sums to the balance")
	}
	var reverses int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM gift_card_transactions
		WHERE order_id = $1 AND kind = 'reverse'`, orderID).Scan(&reverses))
	require.Equal(t, 2, reverses)
	order = h.getOrder(s.shop, orderID)
	require.Equal(t, "CANCELLED", order["status"])
	require.EqualValues(t, 0, order["refund_due"], "the cards got their money back; nothing is due as a refund")
	for _, p := range order["payments"].([]any) {
		require.Equal(t, "reversed", p.(map[string]any)["status"])
	}
}

// §19's concurrency: 50 concurrent checkouts of 30 on a card of 100 place
// exactly three orders; the others are 409 GIFT_CARD_BALANCE_CHANGED with
// the fresh cart, and the balance is 10 = initial − Σ ledger debits.
// Orders of one store take their numbers one at a time, after the variant
// locks and before the debit, so here the fourth checkout reads the spent
// balance; TestGiftCardConcurrentDebits (storage) races DebitGiftCard's
// conditional UPDATE alone.
func TestCheckoutGiftCardConcurrentRedemptions(t *testing.T) {
	h := newHarness(t, api.Config{StorefrontRateLimitPerMinute: 1000, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	s := newGiftCardShop(t, h, "gcrace")
	h.exec(`UPDATE variants SET price = 30 WHERE id = $1`, s.variantID)
	card, code := h.issueGiftCard(s, map[string]any{"initial_value": 100})
	type cart struct{ id, token string }
	carts := make([]cart, 50)
	for i := range carts {
		carts[i].id, carts[i].token = h.openCart(s.shop, 1, "")
		resp := h.buyer(s.shop, "PUT", "/carts/"+carts[i].id, map[string]any{"gift_card_codes": []string{code}}, carts[i].token)
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		require.EqualValues(t, 0, resp.data()["amount_due"])
	}
	statuses := burst(len(carts), func(i int) string {
		c := carts[i]
		body := checkoutBody("")
		delete(body, "payment_method")
		body["customer"] = map[string]any{"name": "Buyer", "phone": fmt.Sprintf("+2010077%05d", i)}
		resp := h.do(request{method: "POST", path: "/api/v1/storefront/" + h.subdomain(s.shop) + "/carts/" + c.id + "/checkout", body: body,
			headers: map[string]string{"X-Cart-Token": c.token, "X-Forwarded-For": fmt.Sprintf("10.7.%d.1", i)}})
		key := fmt.Sprint(resp.Status)
		if resp.Status == http.StatusConflict {
			key += " " + resp.errorCode()
			if current, ok := resp.Body["current"].(map[string]any); !ok || current["amount_due"] == nil {
				key += " without the fresh cart"
			}
		}
		return key
	})
	require.Equal(t, map[string]int{"201": 3, "409 GIFT_CARD_BALANCE_CHANGED": 47}, statuses)
	require.Equal(t, 3, h.orderCount(s.m.storeID))
	balance, ledger := h.giftCardLedger(card["id"].(string))
	require.Equal(t, int64(10), balance)
	require.Equal(t, balance, ledger, "balance = initial − Σ redemptions")
	var payments int64
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT COALESCE(sum(amount), 0)::bigint FROM order_payments
		WHERE store_id = $1 AND source = 'gift_card' AND status = 'succeeded'`, s.m.storeID).Scan(&payments))
	require.Equal(t, int64(90), payments)
}

// Merchant orders take gift_card_codes: a placed order debits them, a
// draft checks them and its conversion debits.
func TestOrderGiftCardCodes(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "gcorders")
	card, code := h.issueGiftCard(s, map[string]any{"initial_value": 10000})
	body := orderBody(s.variantID, 1, "+201007000001") // 450.00 + 50.00 − 10.00 = 490.00
	body["gift_card_codes"] = []string{code}
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	require.EqualValues(t, 10000, placed.data()["paid_total"])
	require.Equal(t, "cod", placed.data()["payment_method"])
	balance, _ := h.giftCardLedger(card["id"].(string))
	require.Zero(t, balance)

	bad := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status, string(bad.Raw))
	require.Equal(t, "not_usable", bad.fieldCode("gift_card_codes[0]"), "a spent card")

	draftCard, draftCode := h.issueGiftCard(s, map[string]any{"initial_value": 100000})
	draftBody := orderBody(s.variantID, 1, "+201007000002")
	delete(draftBody, "payment_method")
	draftBody["gift_card_codes"] = []string{draftCode}
	draft := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token), body: draftBody})
	require.Equal(t, http.StatusCreated, draft.Status, string(draft.Raw))
	require.EqualValues(t, 0, draft.data()["paid_total"], "a draft debits nothing")
	balance, _ = h.giftCardLedger(draftCard["id"].(string))
	require.Equal(t, int64(100000), balance)
	converted := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+draft.data()["id"].(string)+"/convert"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, converted.Status, string(converted.Raw))
	order := h.getOrder(s.shop, draft.data()["id"].(string))
	require.Equal(t, "gift_card", order["payment_method"])
	require.Equal(t, "paid", order["payment_status"])
	balance, ledger := h.giftCardLedger(draftCard["id"].(string))
	require.Equal(t, [2]int64{100000 - 49000, 100000 - 49000}, [2]int64{balance, ledger})
}

// A cart's unusable codes count as misses of the balance check: after 10
// in an hour the cart's next codes are 429, a real one included.
func TestCartGiftCardMissesAreLimited(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "gcmiss")
	_, code := h.issueGiftCard(s, map[string]any{"initial_value": 1000})
	cartID, token := h.openCart(s.shop, 1, "")
	put := func(codes ...string) response {
		return h.buyer(s.shop, "PUT", "/carts/"+cartID, map[string]any{"gift_card_codes": codes}, token)
	}
	require.Equal(t, http.StatusOK, put(code).Status, "hits count nothing")
	for i := range 10 {
		miss := put(fmt.Sprintf("ABCD-EFGH-JKMN-PQ%02d", 22+i%8))
		require.Equal(t, http.StatusUnprocessableEntity, miss.Status, string(miss.Raw))
	}
	limited := put(code)
	require.Equal(t, http.StatusTooManyRequests, limited.Status, string(limited.Raw))
	require.NotEmpty(t, limited.Header.Get("Retry-After"))
	require.Equal(t, http.StatusOK, put().Status, "a cart without codes is not limited")
}
