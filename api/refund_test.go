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

// refund posts a refund with its own Idempotency-Key.
func (h *harness) refund(s shop, orderID, key string, body map[string]any) response {
	h.t.Helper()
	return h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/refunds"), auth: bearer(s.token), body: body,
		headers: map[string]string{"Idempotency-Key": key}})
}

func (h *harness) settle(s shop, refundID, key string, body map[string]any) response {
	h.t.Helper()
	return h.do(request{method: "POST", path: storePath(s.m.storeID, "/refunds/"+refundID+"/settle"), auth: bearer(s.token), body: body,
		headers: map[string]string{"Idempotency-Key": key}})
}

// The refund cap holds under concurrency: twelve refunds of a quarter of
// the paid total at once make exactly four; a failed one frees its amount;
// succeeded ones move payment_status to partially_refunded, then refunded.
func TestRefundCapHoldsUnderConcurrency(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "refundcap", 10)
	order := h.placeOrder(s, "bank_transfer", 1)
	orderID := order["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)}).Status)
	paid := int64(h.getOrder(s, orderID)["paid_total"].(float64))
	require.EqualValues(t, 49000, paid)
	quarter := paid / 4

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
		created  []string
	)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := h.refund(s, orderID, fmt.Sprintf("cap-%d", i), map[string]any{"amount": quarter, "method": "cash", "reason": "goodwill"})
			mu.Lock()
			defer mu.Unlock()
			statuses[resp.Status]++
			if resp.Status == http.StatusCreated {
				created = append(created, resp.data()["id"].(string))
			} else if resp.fieldCode("amount") != "exceeds_refundable" {
				statuses[-1]++
			}
		}()
	}
	wg.Wait()
	require.Equal(t, map[int]int{http.StatusCreated: 4, http.StatusUnprocessableEntity: 8}, statuses)

	failed := h.settle(s, created[0], "settle-0", map[string]any{"status": "failed", "failure_reason": "wrong wallet number"})
	require.Equal(t, http.StatusOK, failed.Status, string(failed.Raw))
	require.Equal(t, "failed", failed.data()["status"])
	freed := h.refund(s, orderID, "cap-after-failure", map[string]any{"amount": quarter, "method": "cash", "reason": "goodwill"})
	require.Equal(t, http.StatusCreated, freed.Status, "a failed refund frees its amount: %s", freed.Raw)
	created = append(created[1:], freed.data()["id"].(string))

	ok := h.settle(s, created[0], "settle-1", map[string]any{"status": "succeeded", "reference": "CASH-1"})
	require.Equal(t, http.StatusOK, ok.Status, string(ok.Raw))
	require.Equal(t, "partially_refunded", h.getOrder(s, orderID)["payment_status"])
	again := h.settle(s, created[0], "settle-1-again", map[string]any{"status": "succeeded"})
	require.Equal(t, http.StatusConflict, again.Status)
	require.Equal(t, "REFUND_NOT_PENDING", again.errorCode())
	for i, id := range created[1:] {
		require.Equal(t, http.StatusOK, h.settle(s, id, fmt.Sprintf("settle-rest-%d", i), map[string]any{"status": "succeeded"}).Status)
	}
	require.Equal(t, "refunded", h.getOrder(s, orderID)["payment_status"], "four quarters are the paid total")
	unmark := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/unmark-paid"), auth: bearer(s.token), body: map[string]any{"reason": "x"}})
	require.Equal(t, "PAYMENT_NOT_REVERSIBLE", unmark.errorCode())
	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/refunds"), auth: bearer(s.token)}).list()
	require.Len(t, list, 5)
}

// The refund body's rules: lines at their value less the discount share,
// shipping up to the fee, payout details per method, Idempotency-Key
// required and replayed.
func TestRefundRules(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "refundrules", 10)
	unpaid := h.placeOrder(s, "bank_transfer", 1)
	notPaid := h.refund(s, unpaid["id"].(string), "unpaid", map[string]any{"amount": 100, "method": "cash", "reason": "x"})
	require.Equal(t, http.StatusConflict, notPaid.Status)
	require.Equal(t, "ORDER_NOT_PAID", notPaid.errorCode())

	order := h.placeOrder(s, "bank_transfer", 3) // 3 × 450.00 + 50.00 shipping − 10.00 discount
	orderID, lineID := order["id"].(string), orderLineID(order)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)}).Status)
	line := func(qty int) []any { return []any{map[string]any{"line_id": lineID, "quantity": qty}} }
	for i, c := range []struct {
		body        map[string]any
		field, code string
	}{
		{map[string]any{"lines": line(4), "method": "cash", "reason": "x"}, "lines[0].quantity", "exceeds_refundable_quantity"},
		{map[string]any{"shipping": 5001, "method": "cash", "reason": "x"}, "shipping", "exceeds_shipping"},
		{map[string]any{"amount": 1000000, "method": "cash", "reason": "x"}, "amount", "exceeds_refundable"},
		{map[string]any{"amount": 100, "method": "wallet", "reason": "x"}, "payout.phone", "required"},
		{map[string]any{"amount": 100, "method": "bank_transfer", "reason": "x", "payout": map[string]any{"iban": "GB82 WEST 1234 5698 7654 33"}}, "payout.iban", "invalid"},
		{map[string]any{"amount": 100, "method": "cheque", "reason": "x"}, "method", "one_of"},
		{map[string]any{"method": "cash", "reason": "x"}, "amount", "exceeds_refundable"},
	} {
		resp := h.refund(s, orderID, fmt.Sprintf("bad-%d", i), c.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%v: %s", c.body, resp.Raw)
		require.Equal(t, c.code, resp.fieldCode(c.field), string(resp.Raw))
		require.NotEmpty(t, resp.fieldMessageAr(c.field))
	}
	noKey := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/refunds"), auth: bearer(s.token),
		body: map[string]any{"amount": 100, "method": "cash", "reason": "x"}})
	require.Equal(t, http.StatusPreconditionRequired, noKey.Status)

	body := map[string]any{"lines": line(1), "shipping": 5000, "method": "bank_transfer", "reason": "one shirt back",
		"payout": map[string]any{"iban": "GB82 WEST 1234 5698 7654 32", "name": "منى عادل"}}
	first := h.refund(s, orderID, "one-shirt", body)
	require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))
	require.EqualValues(t, 45000-333+5000, first.data()["amount"], "the line less its discount share, and the shipping")
	require.Equal(t, "pending", first.data()["status"])
	replay := h.refund(s, orderID, "one-shirt", body)
	require.Equal(t, first.data()["id"], replay.data()["id"], "a retry returns the same refund")
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	require.Equal(t, "exceeds_shipping", h.refund(s, orderID, "shipping-twice", map[string]any{"shipping": 1, "method": "cash", "reason": "x"}).fieldCode("shipping"))
	require.Equal(t, "required", h.settle(s, first.data()["id"].(string), "fail-no-reason", map[string]any{"status": "failed"}).fieldCode("failure_reason"))

	settledNow := h.refund(s, orderID, "goodwill", map[string]any{"amount": 1000, "method": "wallet", "reason": "late delivery",
		"payout": map[string]any{"phone": "+201001112223"}, "settled": true})
	require.Equal(t, http.StatusCreated, settledNow.Status, string(settledNow.Raw))
	require.Equal(t, "succeeded", settledNow.data()["status"])
	require.Equal(t, "partially_refunded", h.getOrder(s, orderID)["payment_status"])
	got := h.do(request{method: "GET", path: storePath(s.m.storeID, "/refunds/"+settledNow.data()["id"].(string)), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, got.Status)
	require.NotNil(t, got.data()["settled_at"])
}

// A void may not leave less paid than is refunded; cancelling a paid order
// makes what was paid due back, which a refund with no amount pays.
func TestRefundsAgainstVoidsAndCancellation(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "refundvoid", 10)
	order := h.placeOrder(s, "cod", 1)
	orderID := order["id"].(string)
	recorded := h.recordPayment(s, orderID, "20000")
	require.Equal(t, http.StatusCreated, recorded.Status, string(recorded.Raw))
	require.Equal(t, http.StatusCreated, h.refund(s, orderID, "part", map[string]any{"amount": 5000, "method": "cash", "reason": "damaged box"}).Status)
	void := h.do(request{method: "POST", path: storePath(s.m.storeID, "/payments/"+recorded.data()["proof"].(map[string]any)["id"].(string)+"/void"),
		auth: bearer(s.token), body: map[string]any{"reason": "wrong order"}})
	require.Equal(t, http.StatusConflict, void.Status, string(void.Raw))
	require.Equal(t, "PAYMENT_NOT_VOIDABLE", void.errorCode())

	paid := h.placeOrder(s, "bank_transfer", 1)
	paidID := paid["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+paidID+"/mark-paid"), auth: bearer(s.token)}).Status)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+paidID), auth: bearer(s.token)}).Status)
	require.EqualValues(t, 49000, h.getOrder(s, paidID)["refund_due"], "a cancelled paid order owes what was paid")
	back := h.refund(s, paidID, "cancelled", map[string]any{"method": "cash", "reason": "cancelled", "settled": true})
	require.Equal(t, http.StatusCreated, back.Status, string(back.Raw))
	require.EqualValues(t, 49000, back.data()["amount"])
	got := h.getOrder(s, paidID)
	require.EqualValues(t, 0, got["refund_due"])
	require.Equal(t, "refunded", got["payment_status"])
	h.requireLedgerBalances(s.m.storeID)
}

// A return received while refunds of the same order arrive: the order's
// lock puts them in a line; the receipt restocks its pieces once, refunds
// stop at the pieces there are, and stock agrees with its movements.
func TestReceiveAndRefundAtOnce(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "receiverefund", 10)
	location := h.defaultLocation(s.m.storeID)
	order := h.placeOrder(s, "bank_transfer", 4)
	orderID, lineID := order["id"].(string), orderLineID(order)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)}).Status)
	for _, status := range []string{"SHIPPED", "DELIVERED"} {
		require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+orderID+"/status"), auth: bearer(s.token),
			body: map[string]any{"status": status}}).Status)
	}
	ret := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/returns"), auth: bearer(s.token),
		body: map[string]any{"lines": []any{map[string]any{"line_id": lineID, "quantity": 2, "reason": "size_or_fit"}}, "approve": true}})
	require.Equal(t, http.StatusCreated, ret.Status, string(ret.Raw))

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
		receipt  response
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/returns/"+ret.data()["id"].(string)+"/receive"), auth: bearer(s.token),
			body: map[string]any{"lines": []any{map[string]any{"line_id": lineID, "received_quantity": 2, "restock": true}}}})
		mu.Lock()
		receipt = resp
		mu.Unlock()
	}()
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := h.refund(s, orderID, fmt.Sprintf("piece-%d", i), map[string]any{"lines": []any{map[string]any{"line_id": lineID, "quantity": 1}},
				"method": "cash", "reason": "returned", "settled": true})
			mu.Lock()
			statuses[resp.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.Equal(t, http.StatusOK, receipt.Status, string(receipt.Raw))
	require.Equal(t, map[int]int{http.StatusCreated: 4, http.StatusUnprocessableEntity: 2}, statuses, "four pieces, four refunds")
	onHand, reserved := h.level(s.variantID, location)
	require.Equal(t, [2]int{8, 0}, [2]int{onHand, reserved}, "10 − 4 shipped + 2 received; refunds never restock")
	require.Equal(t, "partially_refunded", h.getOrder(s, orderID)["payment_status"], "the four pieces, not the shipping")
	h.requireLedgerBalances(s.m.storeID)
}

// A refund of pieces not yet shipped releases their reservation; it never
// restocks (§13).
func TestRefundLinesReleaseUnshippedUnits(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "refundrelease", 10)
	location := h.defaultLocation(s.m.storeID)
	order := h.placeOrder(s, "bank_transfer", 3)
	orderID, lineID := order["id"].(string), orderLineID(order)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)}).Status)
	onHand, reserved := h.level(s.variantID, location)
	require.Equal(t, [2]int{10, 3}, [2]int{onHand, reserved})
	resp := h.refund(s, orderID, "out-of-stock", map[string]any{"lines": []any{map[string]any{"line_id": lineID, "quantity": 1}},
		"method": "cash", "reason": "one piece was out of stock"})
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
	onHand, reserved = h.level(s.variantID, location)
	require.Equal(t, [2]int{10, 2}, [2]int{onHand, reserved}, "the refunded piece's reservation is released, nothing restocked")
	h.requireLedgerBalances(s.m.storeID)
}

// A refund's payout destination (issue 48 §6) is checked for the method
// that takes it and refused on the others, and shown only masked: in the
// refund, its order's refund_created timeline entry and its audit entry.
// Each refusal is a 422 on the field that keeps nothing; the whole IBAN
// and phone are in no answer, timeline or audit entry.
func TestRefundPayoutDestinationIsCheckedAndMasked(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "refundpayout", 10)
	order := h.placeOrder(s, "bank_transfer", 2)
	orderID := order["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)}).Status)
	const (
		iban  = "EG380019000500000000263180002"
		phone = "+201001112223"
	)
	for i, c := range []struct {
		body        map[string]any
		field, code string
	}{
		{map[string]any{"amount": 100, "method": "cash", "reason": "x", "payout": map[string]any{"phone": phone}}, "payout", "not_allowed"},
		{map[string]any{"amount": 100, "method": "original", "reason": "x", "payout": map[string]any{"iban": iban}}, "payout", "not_allowed"},
		{map[string]any{"amount": 100, "method": "wallet", "reason": "x", "payout": map[string]any{"phone": phone, "iban": iban}}, "payout.iban", "not_allowed"},
		{map[string]any{"amount": 100, "method": "wallet", "reason": "x", "payout": map[string]any{"phone": "call me"}}, "payout.phone", "invalid"},
		{map[string]any{"amount": 100, "method": "bank_transfer", "reason": "x", "payout": map[string]any{"iban": iban, "phone": phone}}, "payout.phone", "not_allowed"},
		{map[string]any{"amount": 100, "method": "bank_transfer", "reason": "x", "payout": map[string]any{"name": "Mona"}}, "payout.iban", "required"},
		// The check digits agree, but an Egyptian IBAN has 29 characters.
		{map[string]any{"amount": 100, "method": "bank_transfer", "reason": "x", "payout": map[string]any{"iban": "EG96001900050000000026318000"}}, "payout.iban", "invalid"},
		{map[string]any{"amount": 100, "method": "bank_transfer", "reason": "x", "payout": map[string]any{"iban": "US5112345678901234567890"}}, "payout.iban", "invalid"},
	} {
		resp := h.refund(s, orderID, fmt.Sprintf("payout-bad-%d", i), c.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%v: %s", c.body, resp.Raw)
		require.Equal(t, c.code, resp.fieldCode(c.field), string(resp.Raw))
		require.NotEmpty(t, resp.fieldMessageAr(c.field))
	}
	list := func() response {
		return h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/refunds"), auth: bearer(s.token)})
	}
	require.Empty(t, list().list(), "a refused refund keeps nothing")

	bank := h.refund(s, orderID, "payout-bank", map[string]any{"amount": 1000, "method": "bank_transfer", "reason": "torn hem",
		"payout": map[string]any{"iban": "eg38 0019 0005 0000 0000 2631 8000 2", "name": "منى عادل"}})
	require.Equal(t, http.StatusCreated, bank.Status, string(bank.Raw))
	maskedIBAN := map[string]any{"phone": nil, "iban": "EG** **** … 0002", "name": "منى عادل"}
	require.Equal(t, maskedIBAN, bank.data()["payout"])
	wallet := h.refund(s, orderID, "payout-wallet", map[string]any{"amount": 500, "method": "wallet", "reason": "late",
		"payout": map[string]any{"phone": "+20 100 111 2223"}, "settled": true})
	require.Equal(t, http.StatusCreated, wallet.Status, string(wallet.Raw))
	maskedPhone := map[string]any{"phone": "+*** … 2223", "iban": nil, "name": nil}
	require.Equal(t, maskedPhone, wallet.data()["payout"])
	cash := h.refund(s, orderID, "payout-cash", map[string]any{"amount": 200, "method": "cash", "reason": "goodwill"})
	require.Equal(t, http.StatusCreated, cash.Status, string(cash.Raw))
	require.Nil(t, cash.data()["payout"])

	// The whole destination is kept, normalised, for the payout alone.
	var stored string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT payout->>'iban' FROM order_refunds WHERE id = $1`,
		bank.data()["id"]).Scan(&stored))
	require.Equal(t, iban, stored)

	leaks := func(what string, raw []byte) {
		t.Helper()
		for _, whole := range []string{iban, "0019 0005", phone, "1001112223"} {
			require.NotContains(t, string(raw), whole, "%s shows the whole destination", what)
		}
	}
	one := h.do(request{method: "GET", path: storePath(s.m.storeID, "/refunds/"+bank.data()["id"].(string)), auth: bearer(s.token)})
	require.Equal(t, maskedIBAN, one.data()["payout"])
	all := list()
	require.Len(t, all.list(), 3)
	for _, r := range []response{bank, wallet, one, all} {
		leaks("a refund answer", r.Raw)
	}

	acts := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/activities"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, acts.Status, string(acts.Raw))
	payouts := map[string]any{}
	for _, a := range acts.data()["items"].([]any) {
		entry := a.(map[string]any)
		if entry["kind"] == "refund_created" {
			data := entry["data"].(map[string]any)
			payouts[data["method"].(string)] = data["payout"]
		}
	}
	require.Equal(t, map[string]any{"bank_transfer": maskedIBAN, "wallet": maskedPhone, "cash": nil}, payouts)
	leaks("the activities", acts.Raw)
	timeline := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/timeline"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, timeline.Status, string(timeline.Raw))
	require.Contains(t, string(timeline.Raw), `"iban":"EG** **** … 0002"`)
	leaks("the timeline", timeline.Raw)

	entries := auditEntries(t, h, s.m, "?action=refund.created")
	require.Len(t, entries, 3)
	byID := map[string]map[string]any{}
	for _, e := range entries {
		byID[e["resource"].(map[string]any)["id"].(string)] = e["changes"].(map[string]any)
	}
	require.Equal(t, map[string]any{"from": nil, "to": maskedIBAN}, byID[bank.data()["id"].(string)]["payout"])
	require.Equal(t, map[string]any{"from": nil, "to": "bank_transfer"}, byID[bank.data()["id"].(string)]["method"])
	require.Equal(t, map[string]any{"from": nil, "to": float64(1000)}, byID[bank.data()["id"].(string)]["amount"])
	require.Equal(t, map[string]any{"from": nil, "to": maskedPhone}, byID[wallet.data()["id"].(string)]["payout"])
	require.NotContains(t, byID[cash.data()["id"].(string)], "payout", "a cash refund has no destination to log")
	log := h.do(request{method: "GET", path: storePath(s.m.storeID, "/audit-log?format=csv"), auth: s.m.auth()})
	require.Equal(t, http.StatusOK, log.Status)
	leaks("the audit log", log.Raw)
	leaks("the audit log", h.do(request{method: "GET", path: storePath(s.m.storeID, "/audit-log"), auth: s.m.auth()}).Raw)
}
