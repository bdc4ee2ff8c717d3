package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	stripewebhook "github.com/stripe/stripe-go/v84/webhook"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
)

const (
	testStripeKey  = "sk_test_cardpayments4242"
	testStripeHook = "whsec_card_payments_secret"
)

// connectStripe connects the shop's store to stripe-mock with the owner's
// session, as a merchant does (tokens may not: issue 48 §6).
// Connecting goes under an Idempotency-Key, whose stored answer must hold
// neither secret.
func (h *harness) connectStripe(s shop) response {
	h.t.Helper()
	resp := h.do(request{method: "PUT", path: storePath(s.m.storeID, "/payment-gateways/stripe"), auth: s.m.auth(),
		headers: map[string]string{"Idempotency-Key": "connect-" + s.m.storeID},
		body:    map[string]any{"secret_key": testStripeKey, "webhook_secret": testStripeHook, "statement_descriptor": "ABAYA"}})
	require.Equal(h.t, http.StatusOK, resp.Status, string(resp.Raw))
	for _, secret := range []string{testStripeKey, testStripeHook} {
		var stored int
		require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(),
			`SELECT count(*) FROM idempotency_keys WHERE position($1::bytea IN body) > 0`, []byte(secret)).Scan(&stored))
		require.Zero(h.t, stored, "no stored answer holds a gateway secret")
	}
	return resp
}

// cardCheckout places a storefront card order of qty and answers the
// checkout's data and the order token.
func (h *harness) cardCheckout(s shop, qty int) (map[string]any, string) {
	h.t.Helper()
	cartID, cartToken := h.openCart(s, qty, "")
	out := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("card"), cartToken)
	require.Equal(h.t, http.StatusCreated, out.Status, string(out.Raw))
	return out.data(), out.data()["order_token"].(string)
}

func (h *harness) cardPayment(s shop, orderID, orderToken string) response {
	h.t.Helper()
	return h.do(request{method: "POST", path: "/api/v1/storefront/" + h.subdomain(s) + "/orders/" + orderID + "/card-payment",
		headers: map[string]string{"X-Order-Token": orderToken}})
}

// intentOf is the gateway payment recorded for an order.
func (h *harness) intentOf(s shop, orderID string) string {
	h.t.Helper()
	var intent *string
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT intent_id FROM card_payments WHERE store_id = $1 AND order_id = $2`,
		s.m.storeID, orderID).Scan(&intent))
	require.NotNil(h.t, intent)
	return *intent
}

// stripeEvent is a Stripe event about a PaymentIntent of the order.
func stripeEvent(eventID, eventType, storeID, orderID, intent string, amount int64) []byte {
	status := "succeeded"
	lastError := "null"
	if eventType == "payment_intent.payment_failed" {
		status, lastError = "requires_payment_method", `{"type":"card_error","code":"card_declined","message":"Your card was declined."}`
	}
	return fmt.Appendf(nil, `{"id":%q,"object":"event","api_version":"2019-02-11","created":%d,"type":%q,"livemode":false,
		"data":{"object":{"id":%q,"object":"payment_intent","amount":%d,"amount_received":%d,"currency":"egp","status":%q,
		"last_payment_error":%s,"metadata":{"store_id":%q,"order_id":%q}}}}`,
		eventID, time.Now().Unix(), eventType, intent, amount, amount, status, lastError, storeID, orderID)
}

// sendStripe posts an event to the store's gateway webhook, signed with
// stripe-go's own test helper under secret.
func (h *harness) sendStripe(storeID string, payload []byte, secret string) response {
	h.t.Helper()
	signed := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: payload, Secret: secret})
	return h.do(request{method: "POST", path: "/api/v1/gateway-webhooks/stripe/" + storeID, body: payload,
		headers: map[string]string{"Stripe-Signature": signed.Header, "Content-Type": "application/json"}})
}

func (h *harness) timeline(s shop, orderID string) []string {
	h.t.Helper()
	acts := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/activities?limit=100"), auth: bearer(s.token)})
	require.Equal(h.t, http.StatusOK, acts.Status, string(acts.Raw))
	var kinds []string
	for _, a := range acts.data()["items"].([]any) {
		kinds = append(kinds, a.(map[string]any)["kind"].(string))
	}
	return kinds
}

// A card order end to end on the real worker, the API and stripe-mock:
// the store connects Stripe (its secrets sealed, never answered), a buyer
// checks out with card and gets a client secret (the same on every ask),
// a declined attempt keeps the order payable, and a signed
// payment_intent.succeeded — delivered twice at once, as gateways do —
// pays the order once and delivers order.paid once. The paid order cannot
// be unmarked, and its refund goes back through the gateway. Once the
// gateway is disconnected, card is not offered.
func TestCardPaymentThroughTheGateway(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}})
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.startWorker(httpClient)
	s := newShop(t, h, "cardpay", 10)

	cartID, cartToken := h.openCart(s, 1, "")
	notOffered := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("card"), cartToken)
	require.Equal(t, http.StatusUnprocessableEntity, notOffered.Status, string(notOffered.Raw))
	require.Equal(t, "not_offered", notOffered.fieldCode("payment_method"))

	// Connecting: every field checked, then the key tried at the gateway.
	path := storePath(s.m.storeID, "/payment-gateways/stripe")
	empty := h.do(request{method: "PUT", path: path, auth: s.m.auth(), body: map[string]any{}})
	require.Equal(t, http.StatusUnprocessableEntity, empty.Status)
	require.ElementsMatch(t, []string{"secret_key", "webhook_secret"}, empty.fieldNames())
	publishable := h.do(request{method: "PUT", path: path, auth: s.m.auth(),
		body: map[string]any{"secret_key": "pk_test_123456789", "webhook_secret": "secret", "statement_descriptor": strings.Repeat("x", 23)}})
	require.Equal(t, http.StatusUnprocessableEntity, publishable.Status)
	require.Equal(t, "invalid", publishable.fieldCode("secret_key"))
	require.Equal(t, "invalid", publishable.fieldCode("webhook_secret"))
	require.Equal(t, "too_long", publishable.fieldCode("statement_descriptor"))
	unknown := h.do(request{method: "PUT", path: storePath(s.m.storeID, "/payment-gateways/paypal"), auth: s.m.auth(),
		body: map[string]any{"secret_key": testStripeKey, "webhook_secret": testStripeHook}})
	require.Equal(t, http.StatusNotFound, unknown.Status)

	rejected := h.do(request{method: "PUT", path: path, auth: s.m.auth(),
		body: map[string]any{"secret_key": "sk_test_not_a_key_stripe_takes", "webhook_secret": testStripeHook}})
	require.Equal(t, http.StatusUnprocessableEntity, rejected.Status, string(rejected.Raw))
	require.Equal(t, "rejected", rejected.fieldCode("secret_key"), "the key is tried at the gateway before it is kept")
	require.NotContains(t, string(rejected.Raw), "sk_test_not_a_key_stripe_takes", "the gateway's words (which quote the key) are not repeated")
	require.Equal(t, []any{}, h.do(request{method: "GET", path: storePath(s.m.storeID, "/payment-gateways"), auth: bearer(s.token)}).Body["data"])

	connected := h.connectStripe(s).data()
	require.Equal(t, map[string]any{"provider": "stripe", "connected": true, "account_hint": "…4242",
		"webhook_url": h.url + "/api/v1/gateway-webhooks/stripe/" + s.m.storeID, "updated_at": connected["updated_at"]}, connected)
	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/payment-gateways"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, list.Status)
	require.NotContains(t, string(list.Raw), testStripeKey)
	require.NotContains(t, string(list.Raw), testStripeHook)
	var key, hook []byte
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT secret_key_sealed, webhook_secret_sealed FROM payment_gateways
		WHERE store_id = $1`, s.m.storeID).Scan(&key, &hook))
	require.NotContains(t, string(key), testStripeKey)
	require.NotContains(t, string(hook), testStripeHook)

	// The card-payment route is for card orders only.
	cartID, cartToken = h.openCart(s, 1, "")
	instapay := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("instapay"), cartToken)
	require.Equal(t, http.StatusCreated, instapay.Status, string(instapay.Raw))
	notCard := h.cardPayment(s, instapay.data()["order"].(map[string]any)["id"].(string), instapay.data()["order_token"].(string))
	require.Equal(t, http.StatusConflict, notCard.Status, string(notCard.Raw))
	require.Equal(t, "NOT_A_CARD_ORDER", notCard.errorCode())
	require.NotEmpty(t, notCard.errorField("message_ar"))

	sub := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks"), auth: bearer(s.token),
		body: map[string]any{"url": rec.url(), "events": []string{"order.paid"}}})
	require.Equal(t, http.StatusCreated, sub.Status, string(sub.Raw))

	before := h.variantQuantity(s)
	checkout, orderToken := h.cardCheckout(s, 2)
	order := checkout["order"].(map[string]any)
	orderID := order["id"].(string)
	require.Equal(t, "PENDING", order["status"])
	require.Equal(t, "pending", order["payment_status"])
	require.Equal(t, before-2, h.variantQuantity(s), "the stock is reserved as for any order")
	payment := checkout["payment"].(map[string]any)
	require.Equal(t, "stripe", payment["provider"])
	secret, _ := payment["client_secret"].(string)
	require.Contains(t, secret, "_secret_", "the checkout hands out the client secret")
	var sealedSecret []byte
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT client_secret_sealed FROM card_payments WHERE order_id = $1`,
		orderID).Scan(&sealedSecret))
	require.NotContains(t, string(sealedSecret), secret, "the client secret is stored sealed")

	again := h.cardPayment(s, orderID, orderToken)
	require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
	require.Equal(t, secret, again.data()["client_secret"], "the same payment on every ask")
	require.Equal(t, order["total"], again.data()["amount"])
	require.Equal(t, "EGP", again.data()["currency"])
	require.Equal(t, http.StatusNotFound, h.cardPayment(s, orderID, "wrong-token").Status)
	intent := h.intentOf(s, orderID)
	total := int64(order["total"].(float64))

	// Bad signatures change nothing; a decline keeps the order payable.
	forged := h.sendStripe(s.m.storeID, stripeEvent("evt_forged", "payment_intent.succeeded", s.m.storeID, orderID, intent, total), "whsec_other")
	require.Equal(t, http.StatusBadRequest, forged.Status, string(forged.Raw))
	require.Equal(t, "SIGNATURE_INVALID", forged.errorCode())
	require.NotEmpty(t, forged.errorField("message_ar"))
	stale := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Secret: testStripeHook, Timestamp: time.Now().Add(-10 * time.Minute),
		Payload: stripeEvent("evt_stale", "payment_intent.succeeded", s.m.storeID, orderID, intent, total)})
	old := h.do(request{method: "POST", path: "/api/v1/gateway-webhooks/stripe/" + s.m.storeID, body: stale.Payload,
		headers: map[string]string{"Stripe-Signature": stale.Header, "Content-Type": "application/json"}})
	require.Equal(t, http.StatusBadRequest, old.Status, "a signature older than 300 s is refused")
	require.Equal(t, "SIGNATURE_INVALID", old.errorCode())
	declined := h.sendStripe(s.m.storeID, stripeEvent("evt_declined", "payment_intent.payment_failed", s.m.storeID, orderID, intent, total), testStripeHook)
	require.Equal(t, http.StatusOK, declined.Status, string(declined.Raw))
	require.Equal(t, "pending", h.getOrder(s, orderID)["payment_status"])
	require.Contains(t, h.timeline(s, orderID), "card_payment_failed")
	retry := h.cardPayment(s, orderID, orderToken)
	require.Equal(t, http.StatusOK, retry.Status, string(retry.Raw))
	require.Equal(t, secret, retry.data()["client_secret"], "after a decline the buyer pays the same payment")

	// Events the service does not act on are taken and change nothing: an
	// unknown type, and a success naming an order that is not this store's.
	other := fmt.Appendf(nil, `{"id":"evt_customer","object":"event","type":"customer.created","created":%d,
		"data":{"object":{"id":"cus_1","object":"customer"}}}`, time.Now().Unix())
	require.Equal(t, http.StatusOK, h.sendStripe(s.m.storeID, other, testStripeHook).Status)
	stranger := h.sendStripe(s.m.storeID, stripeEvent("evt_stranger", "payment_intent.succeeded", s.m.storeID, "01a21069-0000-7000-8000-000000000000",
		intent, total), testStripeHook)
	require.Equal(t, http.StatusOK, stranger.Status, string(stranger.Raw))
	require.Equal(t, "pending", h.getOrder(s, orderID)["payment_status"])

	// The success, delivered twice at once.
	succeeded := stripeEvent("evt_paid", "payment_intent.succeeded", s.m.storeID, orderID, intent, total)
	var wg sync.WaitGroup
	answers := make([]response, 2)
	for i := range answers {
		wg.Go(func() { answers[i] = h.sendStripe(s.m.storeID, succeeded, testStripeHook) })
	}
	wg.Wait()
	for _, a := range answers {
		require.Equal(t, http.StatusOK, a.Status, string(a.Raw))
	}
	require.NotEqual(t, answers[0].data()["duplicate"], answers[1].data()["duplicate"], "one delivery took the event, the other was a duplicate")
	waitFor(t, "the order paid", func() bool { return h.getOrder(s, orderID)["payment_status"] == "paid" })
	waitFor(t, "order.paid delivered", func() bool { return len(rec.requests()) >= 1 })
	late := h.sendStripe(s.m.storeID, succeeded, testStripeHook)
	require.Equal(t, true, late.data()["duplicate"])
	time.Sleep(500 * time.Millisecond)
	paidEvents := 0
	for _, r := range rec.requests() {
		var body map[string]any
		require.NoError(t, json.Unmarshal(r.body, &body))
		if body["event"] == "order.paid" {
			paidEvents++
		}
	}
	require.Equal(t, 1, paidEvents, "order.paid is delivered exactly once")

	paid := h.getOrder(s, orderID)
	payments := paid["payments"].([]any)
	require.Len(t, payments, 1)
	p := payments[0].(map[string]any)
	require.Equal(t, "gateway", p["source"])
	require.Equal(t, "stripe", p["provider"])
	require.Equal(t, intent, p["reference"])
	require.Equal(t, "succeeded", p["status"])
	kinds := h.timeline(s, orderID)
	require.Contains(t, kinds, "card_payment_started")
	require.Contains(t, kinds, "card_payment_succeeded")

	unmark := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/unmark-paid"), auth: bearer(s.token),
		body: map[string]any{"reason": "the courier says no"}})
	require.Equal(t, http.StatusConflict, unmark.Status, string(unmark.Raw))
	require.Equal(t, "PAYMENT_NOT_REVERSIBLE", unmark.errorCode())
	alreadyPaid := h.cardPayment(s, orderID, orderToken)
	require.Equal(t, http.StatusConflict, alreadyPaid.Status)
	require.Equal(t, "ORDER_ALREADY_PAID", alreadyPaid.errorCode())

	// The refund goes back through stripe-mock and cannot be settled by hand.
	refund := h.refund(s, orderID, "card-refund", map[string]any{"amount": 1000, "method": "original", "reason": "goodwill"})
	require.Equal(t, http.StatusCreated, refund.Status, string(refund.Raw))
	refundID := refund.data()["id"].(string)
	waitFor(t, "the refund succeeded", func() bool {
		r := h.do(request{method: "GET", path: storePath(s.m.storeID, "/refunds/"+refundID), auth: bearer(s.token)})
		return r.data()["status"] == "succeeded"
	})
	byHand := h.settle(s, refundID, "card-settle", map[string]any{"status": "succeeded"})
	require.Equal(t, http.StatusConflict, byHand.Status)
	require.Contains(t, []string{"REFUND_AUTOMATIC", "REFUND_NOT_PENDING"}, byHand.errorCode())

	// Disconnected, the store takes no more card orders.
	del := h.do(request{method: "DELETE", path: path, auth: s.m.auth()})
	require.Equal(t, http.StatusNoContent, del.Status, string(del.Raw))
	require.Equal(t, http.StatusNotFound, h.do(request{method: "DELETE", path: path, auth: s.m.auth()}).Status)
	cartID, cartToken = h.openCart(s, 1, "")
	gone := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("card"), cartToken)
	require.Equal(t, http.StatusUnprocessableEntity, gone.Status)
	require.Equal(t, "not_offered", gone.fieldCode("payment_method"))
	require.Equal(t, http.StatusNotFound, h.sendStripe(s.m.storeID, succeeded, testStripeHook).Status, "no gateway, no webhook")
}

// The timeout's work (the workflow's timer is time-skipped in its own
// test; here its activity runs on the real database and stripe-mock):
// the payment is cancelled at the gateway, the order cancelled with
// reason payment_timeout and its stock released. A success that arrives
// after that goes to the order's workflow, which pays it back through the
// gateway and records it; the order stays cancelled and unpaid.
func TestExpiredCardOrderPaysBackALateSuccess(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "cardlate", 10)
	h.connectStripe(s)
	before := h.variantQuantity(s)
	checkout, orderToken := h.cardCheckout(s, 3)
	orderID := checkout["order"].(map[string]any)["id"].(string)
	total := int64(checkout["order"].(map[string]any)["total"].(float64))
	require.Equal(t, before-3, h.variantQuantity(s))
	intent := h.intentOf(s, orderID)

	acts := &activities.Activities{DB: h.db, Secrets: h.secrets, StripeAPIBase: h.stripeBase}
	in := activities.CardPaymentInput{StoreID: uuid.MustParse(s.m.storeID), OrderID: uuid.MustParse(orderID)}
	expired, err := acts.ExpireCardPayment(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, "expired", expired.Status)
	order := h.getOrder(s, orderID)
	require.Equal(t, "CANCELLED", order["status"])
	require.Equal(t, "payment_timeout", order["cancel_reason"])
	require.Equal(t, before, h.variantQuantity(s), "the stock is released")
	require.Contains(t, h.timeline(s, orderID), "card_payment_expired")
	again, err := acts.ExpireCardPayment(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, "expired", again.Status, "a second expiry changes nothing")
	closed := h.cardPayment(s, orderID, orderToken)
	require.Equal(t, http.StatusConflict, closed.Status, string(closed.Raw))
	require.Equal(t, "ORDER_CLOSED", closed.errorCode())

	late := h.sendStripe(s.m.storeID, stripeEvent("evt_late", "payment_intent.succeeded", s.m.storeID, orderID, intent, total), testStripeHook)
	require.Equal(t, http.StatusOK, late.Status, string(late.Raw))
	waitFor(t, "the late payment paid back", func() bool {
		for _, k := range h.timeline(s, orderID) {
			if k == "card_payment_refunded_late" {
				return true
			}
		}
		return false
	})
	order = h.getOrder(s, orderID)
	require.Equal(t, "CANCELLED", order["status"])
	require.Equal(t, "pending", order["payment_status"], "nothing is kept")
	payments := order["payments"].([]any)
	require.Len(t, payments, 1)
	require.Equal(t, "refunded", payments[0].(map[string]any)["status"])
	require.Equal(t, intent, payments[0].(map[string]any)["reference"])
}

// cardPaymentStatus is the status of the order's card payment.
func (h *harness) cardPaymentStatus(s shop, orderID string) string {
	h.t.Helper()
	var status string
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT status FROM card_payments WHERE store_id = $1 AND order_id = $2`,
		s.m.storeID, orderID).Scan(&status))
	return status
}

// The merchant cancels a card order whose payment is open: the payment is
// closed at the gateway at once (the workflow's order-cancelled signal),
// not at the store's timeout half an hour later, and the timeline says why;
// the order keeps the merchant's cancel. Were the signal lost, the timeout
// closes it the same way and leaves the order as the merchant left it.
func TestMerchantCancelClosesTheCardPayment(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "cardcancel", 10)
	h.connectStripe(s)
	checkout, orderToken := h.cardCheckout(s, 1)
	orderID := checkout["order"].(map[string]any)["id"].(string)
	require.Equal(t, "open", h.cardPaymentStatus(s, orderID))

	cancelled := h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+orderID+"?reason=out+of+stock"), auth: bearer(s.token)})
	require.Equal(t, http.StatusNoContent, cancelled.Status, string(cancelled.Raw))
	waitFor(t, "the card payment closed", func() bool { return h.cardPaymentStatus(s, orderID) == "cancelled" })
	require.Contains(t, h.timeline(s, orderID), "card_payment_cancelled")
	require.NotContains(t, h.timeline(s, orderID), "card_payment_expired")
	order := h.getOrder(s, orderID)
	require.Equal(t, "CANCELLED", order["status"])
	require.Equal(t, "out of stock", order["cancel_reason"], "the merchant's cancel stands")
	closed := h.cardPayment(s, orderID, orderToken)
	require.Equal(t, http.StatusConflict, closed.Status, string(closed.Raw))
	require.Equal(t, "ORDER_CLOSED", closed.errorCode())

	// A second order cancelled where no signal is sent: the timeout's
	// expiry closes its payment as cancelled and cancels nothing again.
	checkout, _ = h.cardCheckout(s, 1)
	second := checkout["order"].(map[string]any)["id"].(string)
	require.NoError(t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
		_, err := tx.CancelOrder(context.Background(), uuid.MustParse(s.m.storeID), uuid.MustParse(second), "changed my mind", nil)
		return err
	}))
	acts := &activities.Activities{DB: h.db, Secrets: h.secrets, StripeAPIBase: h.stripeBase}
	expired, err := acts.ExpireCardPayment(context.Background(), activities.CardPaymentInput{StoreID: uuid.MustParse(s.m.storeID), OrderID: uuid.MustParse(second)})
	require.NoError(t, err)
	require.Equal(t, "cancelled", expired.Status)
	require.Equal(t, "cancelled", h.cardPaymentStatus(s, second))
	require.Equal(t, "changed my mind", h.getOrder(s, second)["cancel_reason"])
	require.Equal(t, "order_cancelled", h.activityData(s, second, "card_payment_cancelled")["reason"])
}

// activityData is the data of the order's timeline entry of kind (nil when
// it has none).
func (h *harness) activityData(s shop, orderID, kind string) map[string]any {
	h.t.Helper()
	acts := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/activities?limit=100"), auth: bearer(s.token)})
	require.Equal(h.t, http.StatusOK, acts.Status, string(acts.Raw))
	for _, a := range acts.data()["items"].([]any) {
		if a := a.(map[string]any); a["kind"] == kind {
			return a["data"].(map[string]any)
		}
	}
	return nil
}

// A card order the merchant marks paid by hand while its card payment is
// still open (the buyer paid another way) is not paid twice: a success
// that arrives afterwards is paid back through the gateway and recorded
// with the reason order_already_paid; the order keeps the one payment.
func TestCardSuccessAfterMarkPaidIsPaidBack(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "cardtwice", 10)
	h.connectStripe(s)
	checkout, _ := h.cardCheckout(s, 1)
	orderID := checkout["order"].(map[string]any)["id"].(string)
	total := int64(checkout["order"].(map[string]any)["total"].(float64))
	intent := h.intentOf(s, orderID)

	marked := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, marked.Status, string(marked.Raw))
	require.EqualValues(t, total, marked.data()["paid_total"])

	paid := h.sendStripe(s.m.storeID, stripeEvent("evt_twice", "payment_intent.succeeded", s.m.storeID, orderID, intent, total), testStripeHook)
	require.Equal(t, http.StatusOK, paid.Status, string(paid.Raw))
	waitFor(t, "the second payment paid back", func() bool {
		return slices.Contains(h.timeline(s, orderID), "card_payment_refunded_late")
	})
	order := h.getOrder(s, orderID)
	require.Equal(t, "paid", order["payment_status"])
	require.EqualValues(t, total, order["paid_total"], "paid once")
	require.NotContains(t, h.timeline(s, orderID), "card_payment_succeeded")
	var gatewayPayments []map[string]any
	for _, p := range order["payments"].([]any) {
		if p := p.(map[string]any); p["source"] == "gateway" {
			gatewayPayments = append(gatewayPayments, p)
		}
	}
	require.Len(t, gatewayPayments, 1)
	require.Equal(t, "refunded", gatewayPayments[0]["status"])
	require.Equal(t, intent, gatewayPayments[0]["reference"])
	require.Equal(t, "order_already_paid", h.activityData(s, orderID, "card_payment_refunded_late")["reason"])
}

// A success for another amount pays nothing and opens the exception
// gateway_amount_mismatch; an event naming another store's order, or sent
// to another store's endpoint, is taken and changes nothing.
func TestCardAmountMismatchOpensAnException(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s, other := newShop(t, h, "cardmismatch", 10), newShop(t, h, "cardother", 10)
	h.connectStripe(s)
	h.connectStripe(other)
	checkout, _ := h.cardCheckout(s, 1)
	orderID := checkout["order"].(map[string]any)["id"].(string)
	total := int64(checkout["order"].(map[string]any)["total"].(float64))
	intent := h.intentOf(s, orderID)

	// Signed for the other store's endpoint, naming this store's order.
	crossed := h.sendStripe(other.m.storeID, stripeEvent("evt_crossed", "payment_intent.succeeded", s.m.storeID, orderID, intent, total), testStripeHook)
	require.Equal(t, http.StatusOK, crossed.Status, string(crossed.Raw))
	short := h.sendStripe(s.m.storeID, stripeEvent("evt_short", "payment_intent.succeeded", s.m.storeID, orderID, intent, total-100), testStripeHook)
	require.Equal(t, http.StatusOK, short.Status, string(short.Raw))
	waitFor(t, "the mismatch flagged", func() bool { return len(h.flags(s)) == 1 })
	flag := h.flags(s)[0].(map[string]any)
	require.Equal(t, "gateway_amount_mismatch", flag["reason"])
	require.NotEmpty(t, flag["message_ar"])
	require.EqualValues(t, total, flag["data"].(map[string]any)["expected_amount"])
	order := h.getOrder(s, orderID)
	require.Equal(t, "pending", order["payment_status"], "a mismatch pays nothing")
	require.Empty(t, order["payments"])
	require.NotContains(t, h.timeline(s, orderID), "card_payment_succeeded")
}

// An event naming an order whose PaymentIntent is not yet recorded on its
// card payment (the gateway can be faster than the worker that records
// it) is refused with 409 PAYMENT_NOT_RECORDED, which Stripe redelivers,
// and changes nothing: the event is not taken, the order stays unpaid.
// The same event once the intent is recorded is taken as new.
func TestGatewayEventBeforeTheIntentIsRefused(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "cardearly", 10)
	h.connectStripe(s)
	checkout, _ := h.cardCheckout(s, 1)
	orderID := checkout["order"].(map[string]any)["id"].(string)
	total := int64(checkout["order"].(map[string]any)["total"].(float64))
	intent := h.intentOf(s, orderID)
	db := testenv.SQL(t, h.db)
	_, err := db.Exec(context.Background(), `UPDATE card_payments SET intent_id = NULL WHERE order_id = $1`, orderID)
	require.NoError(t, err)

	event := stripeEvent("evt_early", "payment_intent.succeeded", s.m.storeID, orderID, intent, total)
	early := h.sendStripe(s.m.storeID, event, testStripeHook)
	require.Equal(t, http.StatusConflict, early.Status, string(early.Raw))
	require.Equal(t, "PAYMENT_NOT_RECORDED", early.errorCode())
	require.NotEmpty(t, early.errorField("message_ar"))
	var taken int
	require.NoError(t, db.QueryRow(context.Background(), `SELECT count(*) FROM gateway_events WHERE event_id = 'evt_early'`).Scan(&taken))
	require.Zero(t, taken, "the refused event is not recorded, so its redelivery is taken")
	require.Equal(t, "pending", h.getOrder(s, orderID)["payment_status"])
	require.NotContains(t, h.timeline(s, orderID), "card_payment_succeeded")
	var intentID *string
	require.NoError(t, db.QueryRow(context.Background(), `SELECT intent_id FROM card_payments WHERE order_id = $1`, orderID).Scan(&intentID))
	require.Nil(t, intentID, "the card payment is untouched")

	_, err = db.Exec(context.Background(), `UPDATE card_payments SET intent_id = $2 WHERE order_id = $1`, orderID, intent)
	require.NoError(t, err)
	redelivered := h.sendStripe(s.m.storeID, event, testStripeHook)
	require.Equal(t, http.StatusOK, redelivered.Status, string(redelivered.Raw))
	require.Equal(t, false, redelivered.data()["duplicate"])
	waitFor(t, "the order paid", func() bool { return h.getOrder(s, orderID)["payment_status"] == "paid" })
}

// A gateway's keys decide where the store's money goes (issue 48 §6):
// connecting, replacing and disconnecting them is the owner's or an
// admin's, with a session. A token with settings:write gets 403
// TOKEN_NOT_ALLOWED, a member whose custom role holds settings:write 403
// ROLE_NOT_ALLOWED, and neither changes the connection.
func TestGatewayKeysAreOwnerOrAdminSessionOnly(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "cardkeys", 10)
	path := storePath(s.m.storeID, "/payment-gateways/stripe")
	keys := map[string]any{"secret_key": testStripeKey, "webhook_secret": testStripeHook}
	role := h.do(request{method: "POST", path: storePath(s.m.storeID, "/roles"), auth: s.m.auth(),
		body: map[string]any{"name": "Bookkeeper", "scopes": []string{"settings:write"}}})
	require.Equal(t, http.StatusCreated, role.Status, string(role.Raw))
	bookkeeper := h.join(s.m, "bookkeeper-cardkeys@example.com", role.data()["id"].(string))
	admin := h.join(s.m, "admin-cardkeys@example.com", h.roleID(s.m, "Admin"))
	token := h.pat(s.m, "settings:write")

	refused := func(a auth, code string) {
		t.Helper()
		for _, method := range []string{"PUT", "DELETE"} {
			resp := h.do(request{method: method, path: path, auth: a, body: keys})
			require.Equal(t, http.StatusForbidden, resp.Status, "%s %s", method, resp.Raw)
			require.Equal(t, code, resp.errorCode())
		}
	}
	refused(bearer(token), "TOKEN_NOT_ALLOWED")
	refused(bookkeeper.auth(), "ROLE_NOT_ALLOWED")
	require.Equal(t, []any{}, h.do(request{method: "GET", path: storePath(s.m.storeID, "/payment-gateways"), auth: bearer(token)}).Body["data"])

	connected := h.do(request{method: "PUT", path: path, auth: admin.auth(), body: keys})
	require.Equal(t, http.StatusOK, connected.Status, string(connected.Raw))
	refused(bearer(token), "TOKEN_NOT_ALLOWED")
	refused(bookkeeper.auth(), "ROLE_NOT_ALLOWED")
	require.Len(t, h.do(request{method: "GET", path: storePath(s.m.storeID, "/payment-gateways"), auth: bearer(token)}).Body["data"], 1)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: path, auth: s.m.auth()}).Status)
}
