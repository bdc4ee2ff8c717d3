package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// The returns page in headless Chromium, in Arabic and English, wide and
// on a phone: an order's figures, its return and refund and their history
// with who did each step; the return is received line by line from the
// page (one line restocked, the other not), a bad quantity answered with
// the API's Arabic message, and stock and the order follow.
func TestReturnsPageInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "returnspage", 10)
	location := h.defaultLocation(s.m.storeID)
	scarf := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "وشاح حرير", "price": 12000})
	v := h.do(request{method: "POST", path: storePath(s.m.storeID, "/products/"+scarf["id"].(string)+"/variants"), auth: bearer(s.token),
		body: map[string]any{"sku": "SCARF-1", "quantity": 5, "options": map[string]any{"color": "red"}}})
	require.Equal(t, http.StatusCreated, v.Status, string(v.Raw))
	scarfVariant := v.Body["id"].(string)

	body := arabicOrderBody(s.variantID, 2, "+201007778881")
	body["lines"] = []map[string]any{{"variant_id": s.variantID, "quantity": 2}, {"variant_id": scarfVariant, "quantity": 1}}
	body["payment_method"] = "instapay"
	placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
	orderID := placed.data()["id"].(string)
	lines := placed.data()["lines"].([]any)
	abayaLine, scarfLine := lines[0].(map[string]any)["id"].(string), lines[1].(map[string]any)["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/mark-paid"), auth: bearer(s.token)}).Status)
	shipped := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/shipments"), auth: bearer(s.token),
		body: map[string]any{"carrier": "aramex", "tracking_number": "AWB-RET-1"}})
	require.Equal(t, http.StatusCreated, shipped.Status, string(shipped.Raw))
	require.Equal(t, http.StatusOK, h.shipmentEvent(s, shipped.data()["id"].(string), map[string]any{"status": "delivered"}).Status)

	ret := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/returns"), auth: bearer(s.token), body: map[string]any{
		"approve": true, "lines": []any{
			map[string]any{"line_id": abayaLine, "quantity": 2, "reason": "size_or_fit"},
			map[string]any{"line_id": scarfLine, "quantity": 1, "reason": "damaged"}}}})
	require.Equal(t, http.StatusCreated, ret.Status, string(ret.Raw))
	require.Equal(t, "approved", ret.data()["status"])
	refund := h.refund(s, orderID, "page-refund", map[string]any{"lines": []any{map[string]any{"line_id": scarfLine, "quantity": 1}},
		"method": "wallet", "payout": map[string]any{"phone": "+201007778881"}, "reason": "وشاح تالف", "settled": true})
	require.Equal(t, http.StatusCreated, refund.Status, string(refund.Raw))
	abayaBefore, _ := h.level(s.variantID, location)
	scarfBefore, _ := h.level(scarfVariant, location)

	tab, _ := editorBrowser(t, h, s.m.email)
	pagePath := h.url + "/stores/" + s.m.storeID + "/orders/" + orderID + "/returns"
	var dir, summary, returns, refunds, history string
	var inputs int
	require.NoError(t, chromedp.Run(tab,
		chromedp.Navigate(pagePath),
		chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
		chromedp.Text(`#summary`, &summary, chromedp.ByID),
		chromedp.Text(`#returns`, &returns, chromedp.ByID),
		chromedp.Text(`#refunds`, &refunds, chromedp.ByID),
		chromedp.Text(`#history`, &history, chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll('article.return tr.line input.received').length`, &inputs)))
	require.Equal(t, "rtl", dir)
	require.Equal(t, 2, inputs, "each line of the approved return has its own quantity")
	for _, want := range []string{"ORD-1001", "تم التسليم", "مُسترد جزئيًا", "مقبول", "المقاس غير مناسب", "تالف", "وشاح حرير", "استلام المرتجع"} {
		require.Contains(t, summary+returns, want)
	}
	for _, want := range []string{"محفظة إلكترونية", "ناجح", "وشاح تالف"} {
		require.Contains(t, refunds, want)
	}
	for _, want := range []string{"طُلب مرتجع", "قُبل المرتجع", "أُنشئ استرداد", "نجح الاسترداد", "فريق المتجر"} {
		require.Contains(t, history, want)
	}
	checkLayout(t, tab, "returns-ar")

	// Too many pieces: the API's Arabic message, and nothing changes.
	var message string
	require.NoError(t, chromedp.Run(tab,
		chromedp.SetValue(`tr[data-line-id="`+abayaLine+`"] input.received`, "5", chromedp.ByQuery),
		chromedp.Click(`button.receive`, chromedp.ByQuery),
		chromedp.WaitVisible(`.result.error`, chromedp.ByQuery),
		chromedp.Text(`.result`, &message, chromedp.ByQuery)))
	require.Contains(t, message, "خارج")
	require.Equal(t, "approved", h.returnStatus(s, ret.data()["id"].(string)))

	// Line by line: the abayas back to stock, the damaged scarf not.
	require.NoError(t, chromedp.Run(tab,
		chromedp.SetValue(`tr[data-line-id="`+abayaLine+`"] input.received`, "2", chromedp.ByQuery),
		chromedp.Click(`tr[data-line-id="`+scarfLine+`"] input.restock`, chromedp.ByQuery),
		chromedp.Click(`button.receive`, chromedp.ByQuery)))
	waitFor(t, "the receipt", func() bool { return h.returnStatus(s, ret.data()["id"].(string)) == "received" })
	abayaAfter, _ := h.level(s.variantID, location)
	scarfAfter, _ := h.level(scarfVariant, location)
	require.Equal(t, abayaBefore+2, abayaAfter, "restocked")
	require.Equal(t, scarfBefore, scarfAfter, "received, not restocked")
	require.Equal(t, "RETURNED", h.order(s, orderID)["status"], "every delivered piece is back")

	require.NoError(t, chromedp.Run(tab,
		chromedp.WaitVisible(`article.return[data-status="received"]`, chromedp.ByQuery),
		chromedp.Text(`#history`, &history, chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll('button.receive').length`, &inputs)))
	require.Contains(t, history, "استُلم المرتجع")
	require.Zero(t, inputs, "a received return has no receive button")

	h.setLocale(s.m.email, "en")
	require.NoError(t, chromedp.Run(tab, chromedp.Navigate(pagePath),
		chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
		chromedp.Text(`#returns`, &returns, chromedp.ByID),
		chromedp.Text(`#history`, &history, chromedp.ByID)))
	require.Equal(t, "ltr", dir)
	for _, want := range []string{"received", "size or fit", "damaged"} {
		require.Contains(t, returns, want)
	}
	var summaryEn string
	require.NoError(t, chromedp.Run(tab, chromedp.Text(`#summary`, &summaryEn, chromedp.ByID)))
	require.Contains(t, summaryEn, "returned")
	require.Contains(t, summaryEn, "partially refunded")
	require.True(t, strings.Index(history, "return requested") < strings.Index(history, "return received"), "oldest first")
	require.Contains(t, history, "store staff")
	checkLayout(t, tab, "returns-en")

	// Another merchant does not see the order.
	other := newShop(t, h, "returnspage-other", 1)
	resp := h.do(request{method: "GET", path: "/stores/" + s.m.storeID + "/orders/" + orderID + "/returns", auth: other.m.auth()})
	require.NotContains(t, string(resp.Raw), "وشاح حرير")
}

func (h *harness) returnStatus(s shop, id string) string {
	h.t.Helper()
	return h.do(request{method: "GET", path: storePath(s.m.storeID, "/returns/"+id), auth: bearer(s.token)}).data()["status"].(string)
}
