package api_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// giftCardProduct creates a gift card product of price and value and
// answers its default variant's id.
func (h *harness) giftCardProduct(s shop, price, value int64) string {
	h.t.Helper()
	p := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "بطاقة هدايا", "price": price, "kind": "gift_card", "value": value})
	require.Equal(h.t, "gift_card", p["kind"])
	var (
		id    string
		worth int64
	)
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT id, value FROM variants WHERE product_id = $1`,
		p["id"]).Scan(&id, &worth))
	require.Equal(h.t, value, worth)
	return id
}

// Gift card products (decisions §19): value never below price, value only on
// them, no stock held, no discount, no cash on delivery.
func TestGiftCardProductRules(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "gcproducts", 10)

	// value ≥ price, and value only on a gift card product.
	over := h.do(request{method: "POST", path: storePath(s.m.storeID, "/products"), auth: bearer(s.token),
		body: map[string]any{"name": "Card", "price": 60000, "kind": "gift_card", "value": 50000}})
	require.Equal(t, http.StatusUnprocessableEntity, over.Status, string(over.Raw))
	require.Equal(t, "exceeds_value", over.fieldCode("value"))
	require.NotEmpty(t, over.fieldMessageAr("value"))
	standard := h.do(request{method: "POST", path: storePath(s.m.storeID, "/products"), auth: bearer(s.token),
		body: map[string]any{"name": "Scarf", "price": 1000, "value": 2000}})
	require.Equal(t, http.StatusUnprocessableEntity, standard.Status, string(standard.Raw))
	require.Equal(t, "gift_card_only", standard.fieldCode("value"))

	variantID := h.giftCardProduct(s, 45000, 50000)
	var productID string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT product_id FROM variants WHERE id = $1`, variantID).Scan(&productID))
	raise := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/products/"+productID+"/variants/"+variantID), auth: bearer(s.token),
		body: map[string]any{"price": 55000}})
	require.Equal(t, http.StatusUnprocessableEntity, raise.Status, string(raise.Raw))
	require.Equal(t, "exceeds_value", raise.fieldCode("price"))
	raiseProduct := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/products/"+productID), auth: bearer(s.token),
		body: map[string]any{"price": 55000}})
	require.Equal(t, http.StatusUnprocessableEntity, raiseProduct.Status, string(raiseProduct.Raw))
	require.Equal(t, "exceeds_value", raiseProduct.fieldCode("price"))
	same := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/products/"+productID+"/variants/"+variantID), auth: bearer(s.token),
		body: map[string]any{"sku": "GC-500"}})
	require.Equal(t, http.StatusOK, same.Status, string(same.Raw))
	require.EqualValues(t, 50000, same.Body["value"], string(same.Raw))
	lower := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/products/"+productID+"/variants/"+variantID), auth: bearer(s.token),
		body: map[string]any{"value": 40000}})
	require.Equal(t, http.StatusUnprocessableEntity, lower.Status, string(lower.Raw))
	require.Equal(t, "exceeds_value", lower.fieldCode("value"))
	onStandard := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/products/"+s.productID(h)+"/variants/"+s.variantID), auth: bearer(s.token),
		body: map[string]any{"value": 40000}})
	require.Equal(t, http.StatusUnprocessableEntity, onStandard.Status, string(onStandard.Raw))
	require.Equal(t, "gift_card_only", onStandard.fieldCode("value"))

	// No stock: three cards of a variant with none on hand, nothing reserved.
	body := orderBody(variantID, 3, "+201002223334")
	body["payment_method"], body["discount"] = "bank_transfer", 0
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	var allocations int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM order_allocations WHERE order_id = $1`,
		placed.data()["id"]).Scan(&allocations))
	require.Zero(t, allocations)

	// The storefront never shows a gift card sold out.
	shown := h.buyer(s, "GET", "/products/"+productID, nil, "")
	require.Equal(t, http.StatusOK, shown.Status, string(shown.Raw))
	require.Equal(t, true, shown.data()["available"])
	require.Equal(t, true, shown.data()["variants"].([]any)[0].(map[string]any)["available"])

	// No cash on delivery, for the merchant's order and the buyer's cart.
	body["payment_method"] = "cod"
	cod := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusUnprocessableEntity, cod.Status, string(cod.Raw))
	require.Equal(t, "not_offered", cod.fieldCode("payment_method"))

	// No discount: an automatic 10% takes its share of the scarf alone.
	marketing := h.pat(s.m, "marketing:write")
	auto := h.discount(marketing, s.m.storeID, map[string]any{"method": "automatic", "title": "Eid", "type": "percentage", "value": 10})
	require.Equal(t, http.StatusCreated, auto.Status, string(auto.Raw))
	opened := h.buyer(s, "POST", "/carts", map[string]any{"lines": []map[string]any{{"variant_id": variantID, "quantity": 2},
		{"variant_id": s.variantID, "quantity": 1}}}, "")
	require.Equal(t, http.StatusCreated, opened.Status, string(opened.Raw))
	cart := opened.data()["cart"].(map[string]any)
	cartID, token := cart["id"].(string), opened.data()["cart_token"].(string)
	require.EqualValues(t, 2*45000+45000, cart["subtotal"])
	require.EqualValues(t, 4500, cart["discount"], string(opened.Raw))
	refused := h.buyer(s, "PUT", "/carts/"+cartID, map[string]any{"payment_method": "cod"}, token)
	require.Equal(t, http.StatusUnprocessableEntity, refused.Status, string(refused.Raw))
	require.Equal(t, "not_offered", refused.fieldCode("payment_method"))
	checkout := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("cod"), token)
	require.Equal(t, http.StatusUnprocessableEntity, checkout.Status, string(checkout.Raw))
	require.Equal(t, "not_offered", checkout.fieldCode("payment_method"))
	paid := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("bank_transfer"), token)
	require.Equal(t, http.StatusCreated, paid.Status, string(paid.Raw))
	var cardDiscount int64
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT discount FROM order_lines WHERE variant_id = $1
		AND order_id = (SELECT order_id FROM carts WHERE id = $2)`, variantID, cartID).Scan(&cardDiscount))
	require.Zero(t, cardDiscount)
}

var giftCardCodeInMail = regexp.MustCompile(`[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}-[A-HJKMNP-Z2-9]{4}`)

// productID reads the shop's product.
func (s shop) productID(h *harness) string {
	var id string
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT product_id FROM variants WHERE id = $1`, s.variantID).Scan(&id))
	return id
}

// At paid an order issues one card per unit sold, to its customer, mailed;
// refunding the line disables an unspent card and refuses a spent one.
func TestGiftCardIssuedAtPaidAndRefunded(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newGiftCardShop(t, h, "gcissue")
	variantID := h.giftCardProduct(s.shop, 45000, 50000)
	email := fmt.Sprintf("buyer-%d@example.com", time.Now().UnixNano())
	body := orderBody(variantID, 2, "+201003334445")
	body["payment_method"], body["discount"], body["shipping_fee"] = "bank_transfer", 0, 0
	body["customer"] = map[string]any{"name": "Nour Samir", "phone": "+201003334445", "email": email}
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	order := placed.data()
	orderID := order["id"].(string)
	lineID := order["lines"].([]any)[0].(map[string]any)["id"].(string)

	var before int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM gift_cards WHERE order_id = $1`, orderID).Scan(&before))
	require.Zero(t, before, "nothing is issued before the order is paid")
	paid := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, paid.Status, string(paid.Raw))

	list := h.giftCard(s, "GET", "?kind=gift_card", nil, "")
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	items := list.data()["items"].([]any)
	require.Len(t, items, 2)
	var cardIDs []string
	for _, it := range items {
		c := it.(map[string]any)
		require.Equal(t, "purchase", c["source"])
		require.Equal(t, orderID, c["order_id"])
		require.Equal(t, order["customer_id"], c["customer_id"])
		require.EqualValues(t, 50000, c["balance"])
		require.Equal(t, email, c["recipient"].(map[string]any)["email"])
		require.Nil(t, c["code"])
		cardIDs = append(cardIDs, c["id"].(string))
	}
	codeMails := func() int { // the order's confirmation goes to the buyer too
		n := 0
		for _, m := range h.messagesTo(email) {
			if giftCardCodeInMail.MatchString(mailHTML(t, m.Data)) {
				n++
			}
		}
		return n
	}
	require.Eventually(t, func() bool { return codeMails() == 2 }, 20*time.Second, 50*time.Millisecond, "one mail per card")

	// A card redeemed elsewhere is spent: first refund the unspent one.
	spent := uuid.MustParse(cardIDs[0])
	require.NoError(t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
		_, err := tx.DebitGiftCard(context.Background(), uuid.MustParse(s.m.storeID), spent, 1000, storage.GiftCardMove{})
		return err
	}))
	first := h.refund(s.shop, orderID, "gc-line-1", map[string]any{"lines": []map[string]any{{"line_id": lineID, "quantity": 1}},
		"method": "cash", "reason": "changed mind", "settled": true})
	require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))
	require.Equal(t, "disabled", h.giftCard(s, "GET", "/"+cardIDs[1], nil, "").data()["status"])
	require.Equal(t, "active", h.giftCard(s, "GET", "/"+cardIDs[0], nil, "").data()["status"])

	second := h.refund(s.shop, orderID, "gc-line-2", map[string]any{"lines": []map[string]any{{"line_id": lineID, "quantity": 1}},
		"method": "cash", "reason": "changed mind", "settled": true})
	require.Equal(t, http.StatusConflict, second.Status, string(second.Raw))
	require.Equal(t, "GIFT_CARD_ALREADY_USED", second.errorCode())
	require.Equal(t, "active", h.giftCard(s, "GET", "/"+cardIDs[0], nil, "").data()["status"])
	var refunds int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM order_refunds WHERE order_id = $1`, orderID).Scan(&refunds))
	require.Equal(t, 1, refunds)
}

// Cards sold count in gift_cards_sold, not in gross_sales (decisions §17,
// §19), in the JSON and the rollups' recomputation alike.
func TestAnalyticsGiftCardsSold(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := analyticsShop(t, h, "gcanalytics")
	variantID := h.giftCardProduct(s, 45000, 50000)
	body := orderBody(variantID, 2, "+201004445556")
	body["lines"] = []map[string]any{{"variant_id": variantID, "quantity": 2}, {"variant_id": s.variantID, "quantity": 1}}
	body["payment_method"], body["discount"], body["shipping_fee"] = "bank_transfer", 0, 0
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))

	resp := h.sales(s, "")
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	totals := resp.data()["totals"].(map[string]any)
	require.EqualValues(t, 45000, totals["gross_sales"], string(resp.Raw))
	require.EqualValues(t, 90000, totals["gift_cards_sold"])
	require.EqualValues(t, 45000, totals["net_sales"])

	now := time.Now().UTC().Truncate(15 * time.Minute)
	bounds := []time.Time{now.Add(-24 * time.Hour), now.Add(24 * time.Hour)}
	recomputed, err := h.db.RecomputeSalesFigures(context.Background(), uuid.MustParse(s.m.storeID), bounds)
	require.NoError(t, err)
	require.EqualValues(t, 45000, recomputed[0].GrossSales)
}

// A gift card never pays for a gift card (decisions §19): on a cart holding
// a card and a scarf the code pays the scarf alone, and on a merchant order
// of a card it pays the shipping alone; cards that cannot cover such an
// order leave the payment method required.
func TestGiftCardNeverPaysForAGiftCard(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "gcnotforgc")
	variantID := h.giftCardProduct(s.shop, 45000, 50000)
	card, code := h.issueGiftCard(s, map[string]any{"initial_value": 200000})

	opened := h.buyer(s.shop, "POST", "/carts", map[string]any{"lines": []map[string]any{{"variant_id": variantID, "quantity": 1},
		{"variant_id": s.variantID, "quantity": 1}}}, "")
	require.Equal(t, http.StatusCreated, opened.Status, string(opened.Raw))
	cart := opened.data()["cart"].(map[string]any)
	cartID, token := cart["id"].(string), opened.data()["cart_token"].(string)
	applied := h.buyer(s.shop, "PUT", "/carts/"+cartID, map[string]any{"gift_card_codes": []string{code}}, token)
	require.Equal(t, http.StatusOK, applied.Status, string(applied.Raw))
	require.EqualValues(t, 90000, applied.data()["total"])
	require.EqualValues(t, 45000, appliedCards(applied.data())[0].(map[string]any)["applied"], "the scarf, not the card")
	require.EqualValues(t, 45000, applied.data()["amount_due"])

	body := orderBody(variantID, 1, "+201007200001") // a 450.00 card and 50.00 shipping
	body["discount"] = 0
	body["gift_card_codes"] = []string{code}
	delete(body, "payment_method")
	noMethod := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusUnprocessableEntity, noMethod.Status, string(noMethod.Raw))
	require.Equal(t, "required", noMethod.fieldCode("payment_method"), "the card cannot pay for the card")
	body["payment_method"] = "bank_transfer"
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	require.EqualValues(t, 5000, placed.data()["paid_total"], "the shipping only")
	balance, ledger := h.giftCardLedger(card["id"].(string))
	require.Equal(t, [2]int64{200000 - 5000, 200000 - 5000}, [2]int64{balance, ledger})
}

// A gift card line names its recipient (decisions §19: "sent to the line's
// recipient"): the cart keeps it, the checkout's order line snapshots it,
// and at paid each card is issued to that recipient, message included, and
// mailed to them, not to the buyer. A recipient on a line that is not a
// gift card is 422 on that line, for carts and merchant orders alike.
func TestGiftCardSentToTheLinesRecipient(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newGiftCardShop(t, h, "gcrecipient")
	variantID := h.giftCardProduct(s.shop, 45000, 50000)
	friend := fmt.Sprintf("friend-%d@example.com", time.Now().UnixNano())
	recipient := map[string]any{"name": "سارة علي", "email": friend, "message": "عيد سعيد"}

	wrong := h.buyer(s.shop, "POST", "/carts", map[string]any{"lines": []map[string]any{
		{"variant_id": s.variantID, "quantity": 1, "recipient": recipient}}}, "")
	require.Equal(t, http.StatusUnprocessableEntity, wrong.Status, string(wrong.Raw))
	require.Equal(t, "not_allowed", wrong.fieldCode("lines[0].recipient"))
	badEmail := h.buyer(s.shop, "POST", "/carts", map[string]any{"lines": []map[string]any{
		{"variant_id": variantID, "quantity": 1, "recipient": map[string]any{"name": "x", "email": "nope"}}}}, "")
	require.Equal(t, http.StatusUnprocessableEntity, badEmail.Status, string(badEmail.Raw))
	require.NotEmpty(t, badEmail.fieldCode("lines[0].recipient.email"))
	merchantWrong := orderBody(s.variantID, 1, "+201007300001")
	merchantWrong["lines"] = []map[string]any{{"variant_id": s.variantID, "quantity": 1, "recipient": recipient}}
	refused := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: merchantWrong})
	require.Equal(t, http.StatusUnprocessableEntity, refused.Status, string(refused.Raw))
	require.Equal(t, "not_allowed", refused.fieldCode("lines[0].recipient"))

	opened := h.buyer(s.shop, "POST", "/carts", map[string]any{"lines": []map[string]any{
		{"variant_id": variantID, "quantity": 1, "recipient": recipient}, {"variant_id": s.variantID, "quantity": 1}}}, "")
	require.Equal(t, http.StatusCreated, opened.Status, string(opened.Raw))
	cart := opened.data()["cart"].(map[string]any)
	lines := cart["lines"].([]any)
	require.Equal(t, friend, lines[0].(map[string]any)["recipient"].(map[string]any)["email"])
	require.Nil(t, lines[1].(map[string]any)["recipient"])
	cartID, token := cart["id"].(string), opened.data()["cart_token"].(string)
	placed := h.buyer(s.shop, "POST", "/carts/"+cartID+"/checkout", checkoutBody("bank_transfer"), token)
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	orderID := placed.data()["order"].(map[string]any)["id"].(string)
	order := h.getOrder(s.shop, orderID)
	require.Equal(t, "سارة علي", order["lines"].([]any)[0].(map[string]any)["recipient"].(map[string]any)["name"])
	paid := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, paid.Status, string(paid.Raw))

	list := h.giftCard(s, "GET", "?kind=gift_card", nil, "")
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	items := list.data()["items"].([]any)
	require.Len(t, items, 1)
	got := items[0].(map[string]any)["recipient"].(map[string]any)
	require.Equal(t, friend, got["email"])
	require.Equal(t, "عيد سعيد", got["message"])
	require.Eventually(t, func() bool {
		for _, m := range h.messagesTo(friend) {
			if giftCardCodeInMail.MatchString(mailHTML(t, m.Data)) {
				return true
			}
		}
		return false
	}, 20*time.Second, 50*time.Millisecond, "the recipient gets the card's code")
}

// Cancelling a paid order takes back the cards it sold: each live card is
// disabled, and a spent one refuses the cancel with 409
// GIFT_CARD_ALREADY_USED, leaving the order and its cards as they were.
func TestCancelTakesBackTheCardsSold(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newGiftCardShop(t, h, "gccancel")
	variantID := h.giftCardProduct(s.shop, 45000, 50000)
	paidOrder := func(phone string, qty int) (orderID string, cardIDs []string) {
		body := orderBody(variantID, qty, phone)
		body["payment_method"], body["discount"], body["shipping_fee"] = "bank_transfer", 0, 0
		placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
		require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
		orderID = placed.data()["id"].(string)
		paid := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)})
		require.Equal(t, http.StatusOK, paid.Status, string(paid.Raw))
		rows, err := testenv.SQL(t, h.db).Query(context.Background(), `SELECT id::text FROM gift_cards WHERE order_id = $1 ORDER BY created_at, id`, orderID)
		require.NoError(t, err)
		cardIDs, err = pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		require.Len(t, cardIDs, qty)
		return orderID, cardIDs
	}
	cancel := func(orderID string) response {
		return h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+orderID+"?reason=changed"), auth: bearer(s.token)})
	}

	orderID, cards := paidOrder("+201007400001", 2)
	require.NoError(t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
		_, err := tx.DebitGiftCard(context.Background(), uuid.MustParse(s.m.storeID), uuid.MustParse(cards[1]), 1000, storage.GiftCardMove{})
		return err
	}))
	refused := cancel(orderID)
	require.Equal(t, http.StatusConflict, refused.Status, string(refused.Raw))
	require.Equal(t, "GIFT_CARD_ALREADY_USED", refused.errorCode())
	require.NotEqual(t, "CANCELLED", h.getOrder(s.shop, orderID)["status"])
	for _, id := range cards {
		require.Equal(t, "active", h.giftCard(s, "GET", "/"+id, nil, "").data()["status"], "nothing changed")
	}

	orderID, cards = paidOrder("+201007400002", 1)
	require.Equal(t, http.StatusNoContent, cancel(orderID).Status)
	require.Equal(t, "disabled", h.giftCard(s, "GET", "/"+cards[0], nil, "").data()["status"])
}
