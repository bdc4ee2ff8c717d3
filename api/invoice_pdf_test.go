package api_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/storage/zatca"
)

// Once ZATCA took an invoice its PDFs are printed (A4 and receipt), served
// private and uncached to the merchant and, with the order token, to the
// buyer from the storefront; before, 409 INVOICE_NOT_READY; the document
// route answers the signed UBL that verifies.
func TestInvoicePDFsAndDocument(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "invoicepdf", 20)
	cert, key := csid(t, "EGS1-PDF")
	body := saudiTaxBody()
	body["zatca"] = map[string]any{"certificate": cert, "private_key": key}
	resp := h.do(request{method: "PUT", path: storePath(s.m.storeID, "/settings/tax"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	order := h.placeOrder(s, "bank_transfer", 2)
	id := order["id"].(string)
	token := h.orderToken(s, id)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/mark-paid"), auth: bearer(s.token)}).Status)
	inv := h.invoices(s, "order_id="+id)[0]
	invPath := storePath(s.m.storeID, "/invoices/"+inv["id"].(string))
	storefront := "/api/v1/storefront/" + h.subdomain(s) + "/orders/" + id + "/invoice"

	// No worker yet: pending at the authority, nothing printed.
	require.Equal(t, "pending", inv["pdf"].(map[string]any)["status"])
	notReady := h.do(request{method: "GET", path: invPath + "/pdf", auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, notReady.Status)
	require.Equal(t, "INVOICE_NOT_READY", notReady.errorCode())
	require.Equal(t, "2", notReady.Header.Get("Retry-After"))
	require.Equal(t, "INVOICE_NOT_READY", h.do(request{method: "GET", path: invPath + "/document", auth: bearer(s.token)}).errorCode())
	require.Equal(t, http.StatusConflict, h.do(request{method: "GET", path: storefront, headers: map[string]string{"X-Order-Token": token}}).Status)

	h.startWorker(nil)
	require.Eventually(t, func() bool {
		got := h.do(request{method: "GET", path: invPath, auth: bearer(s.token)})
		return got.data()["pdf"].(map[string]any)["status"] == "ready"
	}, 60*time.Second, 100*time.Millisecond)
	for _, format := range []string{"a4", "receipt"} {
		pdf := h.do(request{method: "GET", path: invPath + "/pdf?format=" + format, auth: bearer(s.token)})
		require.Equal(t, http.StatusOK, pdf.Status, string(pdf.Raw))
		require.Equal(t, "application/pdf", pdf.Header.Get("Content-Type"))
		require.Equal(t, "private, no-store", pdf.Header.Get("Cache-Control"))
		require.True(t, bytes.HasPrefix(pdf.Raw, []byte("%PDF-")), format)
	}
	require.Equal(t, http.StatusUnprocessableEntity, h.do(request{method: "GET", path: invPath + "/pdf?format=letter", auth: bearer(s.token)}).Status)

	buyer := h.do(request{method: "GET", path: storefront + "?format=receipt", headers: map[string]string{"X-Order-Token": token}})
	require.Equal(t, http.StatusOK, buyer.Status, string(buyer.Raw))
	require.True(t, bytes.HasPrefix(buyer.Raw, []byte("%PDF-")))
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storefront, headers: map[string]string{"X-Order-Token": "wrong"}}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storefront}).Status)

	doc := h.do(request{method: "GET", path: invPath + "/document", auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, doc.Status, string(doc.Raw))
	require.Equal(t, "application/xml", doc.Header.Get("Content-Type"))
	hash, _, err := zatca.Verify(doc.Raw)
	require.NoError(t, err)
	require.Equal(t, h.invoices(s, "order_id="+id)[0]["authority"].(map[string]any)["hash"], hash)
}
