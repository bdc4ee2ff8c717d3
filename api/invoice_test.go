package api_test

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/api"
)

// sumLines checks an invoice's lines sum to its totals and returns them.
func sumLines(t *testing.T, inv map[string]any) map[string]any {
	t.Helper()
	totals := inv["totals"].(map[string]any)
	var tax, total float64
	for _, l := range inv["lines"].([]any) {
		line := l.(map[string]any)
		tax += line["tax"].(float64)
		total += line["total_incl"].(float64)
	}
	require.Equal(t, totals["tax"], tax)
	require.Equal(t, totals["total"], total)
	require.Equal(t, totals["net"], total-tax)
	return totals
}

// An e-invoicing store's paid orders get one invoice each, numbered from a
// gapless series per store and year; its tax comes from the inclusive
// prices (EGP: 14 %); a prepaid partial acceptance writes a credit note and
// the refund of what it left due writes none; a cancel credits the rest
// and cancels the invoice; the list filters by order, kind, status and
// dates, and refuses what it cannot read.
func TestInvoicesOfPaidOrders(t *testing.T) {
	h := newHarness(t, api.Config{})
	authority := &fakeAuthority{}
	h.authority = &einvoice.HTTP{BaseURL: authority.serve(t).URL, Token: "authority-token"}
	h.startWorker(nil)
	s := newShop(t, h, "invoices", 200)
	require.Equal(t, true, h.settings(s, map[string]any{"e_invoicing": true}).data()["e_invoicing"])
	year := time.Now().In(time.FixedZone("Cairo", 2*3600)).Year() // close enough away from New Year's Eve
	number := func(n int) string { return fmt.Sprintf("INV-%d-%06d", year, n) }

	order := h.placeOrder(s, "bank_transfer", 3) // 3 × 450.00 + 50.00 − 10.00
	id := order["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/mark-paid"), auth: bearer(s.token)}).Status)
	invoice := h.invoicesSettled(s, id, 1)[0]
	require.Equal(t, number(1), invoice["number"])
	require.Equal(t, "invoice", invoice["kind"])
	require.Equal(t, "simplified", invoice["type"])
	require.Equal(t, "EGP", invoice["currency"])
	require.Equal(t, "Mona Adel", invoice["buyer"].(map[string]any)["name"])
	totals := sumLines(t, invoice)
	require.EqualValues(t, 139000, totals["total"])
	require.EqualValues(t, 139000-121930, totals["tax"], "139000 × 10000 ÷ 11400 = 121929.8 → 121930")
	require.Contains(t, invoice["amount_in_words"].(map[string]any)["en"], "One thousand three hundred ninety Egyptian pounds")
	for _, l := range invoice["lines"].([]any) {
		require.EqualValues(t, 1400, l.(map[string]any)["tax_rate_bp"])
	}
	got := h.do(request{method: "GET", path: storePath(s.m.storeID, "/invoices/"+invoice["id"].(string)), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	require.Equal(t, invoice["number"], got.data()["number"])

	// Delivered, one piece of three kept: the note credits the two others.
	require.Equal(t, http.StatusOK, h.moveStatus(s, id, "SHIPPED").Status)
	acc := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/partial-acceptance"), auth: bearer(s.token),
		body: map[string]any{"lines": []any{map[string]any{"line_id": h.firstLineID(order), "accepted_quantity": 1}}}})
	require.Equal(t, http.StatusOK, acc.Status, string(acc.Raw))
	due := acc.data()["refund_due"].(float64)
	require.Positive(t, due)
	list := h.invoicesSettled(s, id, 2)
	note := list[1]
	require.Equal(t, number(2), note["number"])
	require.Equal(t, "credit_note", note["kind"])
	require.Equal(t, "partial_acceptance", note["reason"])
	require.Equal(t, due, sumLines(t, note)["total"])
	require.Equal(t, "reported", list[0]["status"], "a part credited cancels nothing")

	// The refund of refund_due credits nothing more.
	refund := h.refund(s, id, "inv-refund", map[string]any{"amount": due, "method": "cash", "reason": "returned", "settled": true})
	require.Equal(t, http.StatusCreated, refund.Status, string(refund.Raw))
	require.Len(t, h.invoices(s, "order_id="+id), 2)

	// A paid COD order, cancelled: the next number, then a note for all of it.
	cod := h.placeOrder(s, "cod", 1)
	codID := cod["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+codID+"/mark-paid"), auth: bearer(s.token)}).Status)
	require.Equal(t, number(3), h.invoicesSettled(s, codID, 1)[0]["number"])
	cancel := h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+codID), auth: bearer(s.token), body: map[string]any{"reason": "customer"}})
	require.Equal(t, http.StatusNoContent, cancel.Status, string(cancel.Raw))
	codDocs := h.invoicesSettled(s, codID, 2)
	require.Equal(t, "cancellation", codDocs[1]["reason"])
	require.Equal(t, codDocs[0]["totals"], codDocs[1]["totals"])
	require.Eventually(t, func() bool { return h.invoices(s, "order_id="+codID)[0]["status"] == "cancelled" }, 20*time.Second, 50*time.Millisecond)

	// Filters.
	require.Len(t, h.invoices(s, "kind=credit_note"), 2)
	require.Len(t, h.invoices(s, "kind=invoice&status=cancelled"), 1)
	today := time.Now().In(time.FixedZone("Cairo", 2*3600))
	require.Len(t, h.invoices(s, "date_from="+today.AddDate(0, 0, -1).Format("2006-01-02")), 4)
	require.Empty(t, h.invoices(s, "date_to="+today.AddDate(0, 0, -2).Format("2006-01-02")))
	bad := h.do(request{method: "GET", path: storePath(s.m.storeID, "/invoices?kind=receipt&date_from=yesterday&order_id=x"), auth: bearer(s.token)})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
	require.ElementsMatch(t, []string{"kind", "date_from", "order_id"}, bad.fieldNames())

	// A store without invoicing issues none.
	plain := newShop(t, h, "noinvoices", 5)
	o := h.placeOrder(plain, "cod", 1)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(plain.m.storeID, "/orders/"+o["id"].(string)+"/mark-paid"), auth: bearer(plain.token)}).Status)
	require.Empty(t, h.invoices(plain, ""))
}

// Numbers come from a counter row locked by the issuing transaction: paid
// at once, twenty orders get twenty numbers without a gap or a repeat.
func TestInvoiceNumbersHaveNoGapUnderConcurrency(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "invoicegap", 100)
	require.Equal(t, true, h.settings(s, map[string]any{"e_invoicing": true}).data()["e_invoicing"])
	var ids []string
	for range 20 {
		ids = append(ids, h.placeOrder(s, "cod", 1)["id"].(string))
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/mark-paid"), auth: bearer(s.token)})
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		}()
	}
	wg.Wait()
	list := h.invoices(s, "")
	require.Len(t, list, 20)
	var numbers []string
	for _, inv := range list {
		numbers = append(numbers, inv["number"].(string))
	}
	sort.Strings(numbers)
	for i, n := range numbers {
		require.Regexp(t, regexp.MustCompile(fmt.Sprintf(`^INV-\d{4}-%06d$`, i+1)), n)
	}
}
