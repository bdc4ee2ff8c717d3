package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// fakeStripe is Stripe's refund endpoint on loopback (and a bare
// PaymentIntent create, for card checkouts), with failures stripe-mock
// cannot make: it checks the
// secret key, answers 500 to the first failFirst calls, refuses with a 400
// card error when refuse is set, and answers a replayed Idempotency-Key
// with the refund it made the first time.
type fakeStripe struct {
	key       string
	mu        sync.Mutex
	failFirst int
	refuse    bool
	pending   bool // refunds are answered pending, to be confirmed by a charge.refunded event
	calls     int
	refunds   map[string]string // Idempotency-Key → refund id
	bodies    []map[string]string
}

func (f *fakeStripe) serve(t *testing.T) string {
	f.refunds = map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+f.key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"type":"invalid_request_error","message":"Invalid API Key provided"}}`)
			return
		}
		if r.Method == http.MethodPost && r.URL.Path == "/v1/payment_intents" {
			_ = r.ParseForm()
			fmt.Fprintf(w, `{"id":"pi_fake_1","object":"payment_intent","client_secret":"pi_fake_1_secret_fake","status":"requires_payment_method","amount":%s,"currency":"egp"}`,
				r.PostForm.Get("amount"))
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/refunds" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"type":"invalid_request_error","message":"Unrecognized request URL"}}`)
			return
		}
		f.calls++
		if f.calls <= f.failFirst {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"error":{"type":"api_error","message":"An unknown error occurred"}}`)
			return
		}
		if f.refuse {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"type":"invalid_request_error","code":"charge_already_refunded","message":"Charge has already been refunded."}}`)
			return
		}
		_ = r.ParseForm()
		body := map[string]string{"idempotency_key": r.Header.Get("Idempotency-Key")}
		for k := range r.PostForm {
			body[k] = r.PostForm.Get(k)
		}
		f.bodies = append(f.bodies, body)
		id, ok := f.refunds[body["idempotency_key"]]
		if !ok {
			id = fmt.Sprintf("re_test_%d", len(f.refunds)+1)
			f.refunds[body["idempotency_key"]] = id
		}
		status := "succeeded"
		if f.pending {
			status = "pending"
		}
		fmt.Fprintf(w, `{"id":%q,"object":"refund","amount":%s,"currency":"egp","payment_intent":%q,"status":%q}`,
			id, body["amount"], body["payment_intent"], status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// cardOrderPaid places a card order and pays it through the gateway with
// the PaymentIntent pi.
func (h *harness) cardOrderPaid(s shop, qty int, pi string) map[string]any {
	h.t.Helper()
	order := h.placeOrder(s, "card", qty)
	require.NoError(h.t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
		_, err := tx.PayThroughGateway(context.Background(), uuid.MustParse(s.m.storeID), uuid.MustParse(order["id"].(string)),
			storage.GatewayStripe, pi, int64(order["total"].(float64)))
		return err
	}))
	return h.getOrder(s, order["id"].(string))
}

// `original` on a card order goes back through the gateway in the
// refund:<id> workflow: a gateway that fails twice is retried under one
// idempotency key, the refund succeeds with the gateway's id, it cannot be
// settled by hand, and the order becomes partially_refunded; a refusal
// fails the refund and frees its amount; an order paid by card by hand has
// no original to go back to.
func TestCardRefundsGoThroughTheGateway(t *testing.T) {
	h := newHarness(t, api.Config{})
	stripe := &fakeStripe{key: "sk_test_refunds_4242", failFirst: 2}
	h.stripeBase = stripe.serve(t)
	h.startWorker(nil)
	s := newShop(t, h, "cardrefund", 10)
	storeID := uuid.MustParse(s.m.storeID)
	require.NoError(t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
		return tx.ConnectGateway(context.Background(), h.secrets, storage.GatewayAccount{StoreID: storeID, Provider: storage.GatewayStripe,
			SecretKey: stripe.key, WebhookSecret: "whsec_test"})
	}))
	var sealed []byte
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT secret_key_sealed FROM payment_gateways WHERE store_id = $1`, storeID).Scan(&sealed))
	require.NotContains(t, string(sealed), stripe.key, "the secret key is stored sealed")

	order := h.cardOrderPaid(s, 2, "pi_test_card_1")
	orderID := order["id"].(string)
	require.Equal(t, "paid", order["payment_status"])

	manual := h.refund(s, orderID, "card-settled", map[string]any{"amount": 1000, "method": "original", "reason": "x", "settled": true})
	require.Equal(t, http.StatusUnprocessableEntity, manual.Status, string(manual.Raw))
	require.Equal(t, "automatic", manual.fieldCode("settled"))

	created := h.refund(s, orderID, "card-1", map[string]any{"amount": 20000, "method": "original", "reason": "damaged in transit"})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	refundID := created.data()["id"].(string)
	require.Equal(t, "pending", created.data()["status"])
	byHand := h.settle(s, refundID, "card-settle", map[string]any{"status": "succeeded"})
	require.Equal(t, http.StatusConflict, byHand.Status, string(byHand.Raw))
	require.Equal(t, "REFUND_AUTOMATIC", byHand.errorCode())

	getRefund := func(id string) map[string]any {
		return h.do(request{method: "GET", path: storePath(s.m.storeID, "/refunds/"+id), auth: bearer(s.token)}).data()
	}
	require.Eventually(t, func() bool { return getRefund(refundID)["status"] == "succeeded" }, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, "re_test_1", getRefund(refundID)["reference"])
	stripe.mu.Lock()
	require.Equal(t, 3, stripe.calls, "two 500s, then the refund")
	require.Equal(t, []map[string]string{{"idempotency_key": "refund:" + refundID, "amount": "20000", "payment_intent": "pi_test_card_1",
		"metadata[store_id]": s.m.storeID, "metadata[order_id]": orderID, "metadata[refund_id]": refundID}}, stripe.bodies)
	stripe.refuse = true
	stripe.mu.Unlock()
	require.Equal(t, "partially_refunded", h.getOrder(s, orderID)["payment_status"])
	wf, err := h.temporal.DescribeWorkflowExecution(context.Background(), "refund:"+refundID, "")
	require.NoError(t, err)
	require.Equal(t, "Refund", wf.GetWorkflowExecutionInfo().GetType().GetName())
	require.Contains(t, string(wf.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()["WorkKind"].GetData()), "refund")

	// A refusal fails the refund with the gateway's reason and frees the amount.
	rest := int64(order["paid_total"].(float64)) - 20000
	refused := h.refund(s, orderID, "card-2", map[string]any{"amount": rest, "method": "original", "reason": "x"})
	require.Equal(t, http.StatusCreated, refused.Status, string(refused.Raw))
	refusedID := refused.data()["id"].(string)
	require.Eventually(t, func() bool { return getRefund(refusedID)["status"] == "failed" }, 30*time.Second, 50*time.Millisecond)
	require.Contains(t, getRefund(refusedID)["failure_reason"], "charge_already_refunded")
	stripe.mu.Lock()
	stripe.refuse = false
	stripe.mu.Unlock()
	again := h.refund(s, orderID, "card-3", map[string]any{"amount": rest, "method": "original", "reason": "x"})
	require.Equal(t, http.StatusCreated, again.Status, "a failed refund frees its amount: %s", again.Raw)
	require.Eventually(t, func() bool { return getRefund(again.data()["id"].(string))["status"] == "succeeded" }, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, "refunded", h.getOrder(s, orderID)["payment_status"])
	unmark := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/unmark-paid"), auth: bearer(s.token), body: map[string]any{"reason": "x"}})
	require.Equal(t, "PAYMENT_NOT_REVERSIBLE", unmark.errorCode())

	// The timeline names every step, the gateway's without an actor.
	timeline := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/timeline"), auth: bearer(s.token)})
	var kinds []string
	for _, e := range timeline.Body["data"].([]any) {
		entry := e.(map[string]any)
		if k := entry["kind"].(string); strings.HasPrefix(k, "refund_") {
			by := "gateway"
			if entry["author_user_id"] != nil {
				by = "merchant"
			}
			kinds = append(kinds, k+" by "+by)
		}
	}
	require.Equal(t, []string{"refund_created by merchant", "refund_succeeded by gateway", "refund_created by merchant", "refund_failed by gateway",
		"refund_created by merchant", "refund_succeeded by gateway"}, kinds)

	// A card order marked paid by hand has no gateway payment to go back to.
	byCardByHand := h.placeOrder(s, "card", 1)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+byCardByHand["id"].(string)+"/mark-paid"), auth: bearer(s.token)}).Status)
	unavailable := h.refund(s, byCardByHand["id"].(string), "card-hand", map[string]any{"amount": 100, "method": "original", "reason": "x"})
	require.Equal(t, http.StatusUnprocessableEntity, unavailable.Status)
	require.Equal(t, "original_unavailable", unavailable.fieldCode("method"))
	require.NotEmpty(t, unavailable.fieldMessageAr("method"))
}

// A store whose gateway was disconnected fails the refund at once
// (gateway_not_connected) and frees its amount.
func TestCardRefundWithoutAConnectedGatewayFails(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "cardnogw", 10)
	order := h.cardOrderPaid(s, 1, "pi_test_card_2")
	created := h.refund(s, order["id"].(string), "nogw", map[string]any{"amount": 1000, "method": "original", "reason": "x"})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	id := created.data()["id"].(string)
	require.Eventually(t, func() bool {
		r := h.do(request{method: "GET", path: storePath(s.m.storeID, "/refunds/"+id), auth: bearer(s.token)}).data()
		return r["status"] == "failed" && r["failure_reason"] == "gateway_not_connected"
	}, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, "paid", h.getOrder(s, order["id"].(string))["payment_status"])
}

// A succeeded refund of an e-invoiced order is issued to the authority as a
// credit note against the order's invoice; a failed one is not.
func TestSucceededRefundsQueueCreditNotes(t *testing.T) {
	h := newHarness(t, api.Config{})
	// The invoice is still at the authority when the credit note is queued.
	authority := &fakeAuthority{invoiceDelay: 1500 * time.Millisecond}
	h.authority = &einvoice.HTTP{BaseURL: authority.serve(t).URL, Token: "authority-token"}
	h.startWorker(nil)
	s := newShop(t, h, "creditnote", 10)
	require.Equal(t, true, h.settings(s, map[string]any{"e_invoicing": true}).data()["e_invoicing"])
	order := h.placeOrder(s, "instapay", 1)
	id := order["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/mark-paid"), auth: bearer(s.token)}).Status)

	failed := h.refund(s, id, "cn-failed", map[string]any{"amount": 5000, "method": "cash", "reason": "x"})
	require.Equal(t, http.StatusOK, h.settle(s, failed.data()["id"].(string), "cn-failed-settle", map[string]any{"status": "failed", "failure_reason": "no show"}).Status)
	ok := h.refund(s, id, "cn-ok", map[string]any{"amount": 12345, "method": "cash", "reason": "x", "settled": true})
	require.Equal(t, http.StatusCreated, ok.Status, string(ok.Raw))

	invoices := h.invoicesSettled(s, id, 2)
	require.Equal(t, "reported", invoices[0]["status"])
	require.Equal(t, "invoice", invoices[0]["kind"])
	require.Equal(t, "credit_note", invoices[1]["kind"])
	require.Equal(t, "refund", invoices[1]["reason"])
	require.Equal(t, "reported", invoices[1]["status"])
	require.EqualValues(t, 12345, invoices[1]["totals"].(map[string]any)["total"])
	require.Equal(t, invoices[0]["id"], invoices[1]["credits_invoice_id"])
	require.Equal(t, ok.data()["id"], invoices[1]["refund_id"])
	require.Nil(t, invoices[0]["cancelled_by_credit_note_id"], "a part credited cancels nothing")
	authority.mu.Lock()
	defer authority.mu.Unlock()
	require.Len(t, authority.issued, 2)
	require.Equal(t, "credit_note", authority.issued[1]["kind"])
	require.Equal(t, "123.45", authority.issued[1]["amount"])
	require.Equal(t, invoices[0]["id"], authority.issued[1]["credits_invoice_id"])
	require.Equal(t, "invoice", authority.issued[0]["kind"], "a credit note waits for the invoice it credits")
	require.Equal(t, "ETA-1", authority.issued[1]["credits_reference"])
}

// A refund the gateway accepts as pending waits for its confirmation:
// charge.refunded (signed, verified by the production path) reporting it
// succeeded settles it, and the order becomes partially_refunded; a
// refund.updated reporting another one failed fails it and frees its
// amount. Repeating the event changes nothing.
func TestGatewayRefundsAreConfirmedByTheirEvents(t *testing.T) {
	h := newHarness(t, api.Config{})
	stripe := &fakeStripe{key: "sk_test_pending_4242", pending: true}
	h.stripeBase = stripe.serve(t)
	h.startWorker(nil)
	s := newShop(t, h, "refundevents", 10)
	storeID := uuid.MustParse(s.m.storeID)
	const hook = "whsec_refund_events"
	require.NoError(t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
		return tx.ConnectGateway(context.Background(), h.secrets, storage.GatewayAccount{StoreID: storeID, Provider: storage.GatewayStripe,
			SecretKey: stripe.key, WebhookSecret: hook})
	}))
	order := h.cardOrderPaid(s, 2, "pi_test_refund_events")
	orderID := order["id"].(string)
	getRefund := func(id string) map[string]any {
		return h.do(request{method: "GET", path: storePath(s.m.storeID, "/refunds/"+id), auth: bearer(s.token)}).data()
	}
	first := h.refund(s, orderID, "pending-1", map[string]any{"amount": 20000, "method": "original", "reason": "damaged"})
	require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))
	second := h.refund(s, orderID, "pending-2", map[string]any{"amount": 5000, "method": "original", "reason": "late"})
	require.Equal(t, http.StatusCreated, second.Status, string(second.Raw))
	firstID, secondID := first.data()["id"].(string), second.data()["id"].(string)
	waitFor(t, "both refunds accepted by the gateway", func() bool {
		return getRefund(firstID)["reference"] != nil && getRefund(secondID)["reference"] != nil
	})
	require.Equal(t, "pending", getRefund(firstID)["status"])

	refunded := fmt.Appendf(nil, `{"id":"evt_refunded","object":"event","type":"charge.refunded","created":%d,"api_version":"2024-06-20",
		"data":{"object":{"id":"ch_1","object":"charge","payment_intent":"pi_test_refund_events","refunds":{"object":"list","data":[
		{"id":%q,"object":"refund","status":"succeeded","metadata":{"refund_id":%q}}]}}}}`, time.Now().Unix(), getRefund(firstID)["reference"], firstID)
	for range 2 {
		resp := h.sendStripe(s.m.storeID, refunded, hook)
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	}
	require.Equal(t, "succeeded", getRefund(firstID)["status"])
	require.Equal(t, "partially_refunded", h.getOrder(s, orderID)["payment_status"])

	failed := fmt.Appendf(nil, `{"id":"evt_failed","object":"event","type":"refund.updated","created":%d,
		"data":{"object":{"id":%q,"object":"refund","status":"failed","failure_reason":"expired_or_canceled_card","metadata":{}}}}`,
		time.Now().Unix(), getRefund(secondID)["reference"])
	resp := h.sendStripe(s.m.storeID, failed, hook)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	got := getRefund(secondID)
	require.Equal(t, "failed", got["status"], "found by the gateway's reference when the event names no refund of ours")
	require.Equal(t, "expired_or_canceled_card", got["failure_reason"])
}
