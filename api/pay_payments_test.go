package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"golang.org/x/image/draw"

	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// photo reads one of the real test photographs.
func photo(t *testing.T, name string) []byte {
	data, err := os.ReadFile("../activities/imaging/testdata/" + name)
	require.NoError(t, err)
	return data
}

// resizedJPEG is the photo as a messenger would pass it on: scaled and
// re-compressed.
func resizedJPEG(t *testing.T, data []byte, scale float64, quality int) []byte {
	img, _, err := image.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, int(float64(b.Dx())*scale), int(float64(b.Dy())*scale)))
	draw.CatmullRom.Scale(out, out.Bounds(), img, b, draw.Src, nil)
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, out, &jpeg.Options{Quality: quality}))
	return buf.Bytes()
}

// multipartBody builds a form with one file field and text fields.
func multipartBody(t *testing.T, field string, data []byte, extra map[string]string) ([]byte, string) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range extra {
		require.NoError(t, mw.WriteField(k, v))
	}
	part, err := mw.CreateFormFile(field, "receipt.jpg")
	require.NoError(t, err)
	_, _ = part.Write(data)
	require.NoError(t, mw.Close())
	return body.Bytes(), mw.FormDataContentType()
}

// placeOrder creates an order with the payment method and returns it.
func (h *harness) placeOrder(s shop, method string, qty int) map[string]any {
	h.t.Helper()
	body := orderBody(s.variantID, qty, fmt.Sprintf("+2010%08d", time.Now().UnixNano()%100000000))
	body["payment_method"] = method
	resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	return resp.data()
}

func (h *harness) getOrder(s shop, orderID string) map[string]any {
	h.t.Helper()
	resp := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID), auth: bearer(s.token)})
	require.Equal(h.t, http.StatusOK, resp.Status, string(resp.Raw))
	return resp.data()
}

// orderToken mints the buyer's proof-upload key, as storefront checkout does.
func (h *harness) orderToken(s shop, orderID string) string {
	h.t.Helper()
	var token string
	require.NoError(h.t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
		var err error
		token, err = tx.IssueOrderToken(context.Background(), uuid.MustParse(s.m.storeID), uuid.MustParse(orderID))
		return err
	}))
	return token
}

// subdomain reads the shop's storefront address.
func (h *harness) subdomain(s shop) string {
	var sub string
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT subdomain FROM stores WHERE id = $1`, s.m.storeID).Scan(&sub))
	return sub
}

// uploadProof sends a buyer's proof through the storefront.
func (h *harness) uploadProof(s shop, orderID, token string, data []byte) response {
	h.t.Helper()
	body, contentType := multipartBody(h.t, "file", data, nil)
	return h.do(request{method: "POST", path: "/api/v1/storefront/" + h.subdomain(s) + "/orders/" + orderID + "/payment-proofs",
		body: body, headers: map[string]string{"Content-Type": contentType, "X-Order-Token": token}})
}

// recordPayment records a receipt with an amount.
func (h *harness) recordPayment(s shop, orderID string, amount string) response {
	h.t.Helper()
	body, contentType := multipartBody(h.t, "receipt", photo(h.t, "coffee.jpg"), map[string]string{"amount": amount})
	return h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+orderID+"/payments"), auth: bearer(s.token),
		body: body, headers: map[string]string{"Content-Type": contentType}})
}

// hashedProof waits for the worker to hash a proof and returns it.
func (h *harness) hashedProof(s shop, orderID, proofID string) map[string]any {
	h.t.Helper()
	var found map[string]any
	require.Eventually(h.t, func() bool {
		resp := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+orderID+"/payment-proofs"), auth: bearer(s.token)})
		require.Equal(h.t, http.StatusOK, resp.Status, string(resp.Raw))
		for _, p := range resp.Body["data"].([]any) {
			p := p.(map[string]any)
			if p["id"] == proofID && p["perceptual_hash"] != nil {
				found = p
				return true
			}
		}
		return false
	}, 30*time.Second, 200*time.Millisecond)
	return found
}

func (h *harness) similar(s shop, proofID string) []map[string]any {
	h.t.Helper()
	resp := h.do(request{method: "GET", path: storePath(s.m.storeID, "/payment-proofs/"+proofID+"/similar"), auth: bearer(s.token)})
	require.Equal(h.t, http.StatusOK, resp.Status, string(resp.Raw))
	var out []map[string]any
	for _, p := range resp.Body["data"].([]any) {
		out = append(out, p.(map[string]any))
	}
	return out
}

func (h *harness) walletEntries(storeID string) []int64 {
	rows, err := testenv.SQL(h.t, h.db).Query(context.Background(), `SELECT amount FROM wallet_entries WHERE store_id = $1 ORDER BY created_at, kind`, storeID)
	require.NoError(h.t, err)
	var out []int64
	for rows.Next() {
		var a int64
		require.NoError(h.t, rows.Scan(&a))
		out = append(out, a)
	}
	return out
}

func TestMarkPaidAndUnmarkPaid(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "markpaid", 50)
	order := h.placeOrder(s, "cod", 1) // 450.00 + 50.00 shipping − 10.00 discount
	id := order["id"].(string)
	path := func(rest string) string { return storePath(s.m.storeID, "/orders/"+id+rest) }

	resp := h.do(request{method: "POST", path: path("/mark-paid"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.Equal(t, "paid", resp.data()["payment_status"])
	require.EqualValues(t, 49000, resp.data()["paid_total"])
	require.EqualValues(t, 0, resp.data()["balance_due"])

	paid := h.events(s.m.storeID, "order.paid")
	require.Len(t, paid, 1)
	require.Equal(t, map[string]any{"store_id": s.m.storeID, "order_id": id, "order_number": order["order_number"],
		"payment_method": "cod", "total": "490.00"}, paid[0], "exactly the spec's sample fields")

	again := h.do(request{method: "POST", path: path("/mark-paid"), auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, again.Status)
	require.Equal(t, "ORDER_ALREADY_PAID", again.errorCode())
	require.NotEmpty(t, again.errorField("message_ar"))
	require.Len(t, h.events(s.m.storeID, "order.paid"), 1)
	require.Equal(t, []int64{-490}, h.walletEntries(s.m.storeID), "1% commission charged to the wallet")

	missing := h.do(request{method: "POST", path: path("/unmark-paid"), auth: bearer(s.token), body: map[string]any{}})
	require.Equal(t, http.StatusUnprocessableEntity, missing.Status)
	require.Equal(t, []string{"reason"}, missing.fieldNames())

	resp = h.do(request{method: "POST", path: path("/unmark-paid"), auth: bearer(s.token), body: map[string]any{"reason": "courier kept the cash"}})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.Equal(t, "pending", resp.data()["payment_status"])
	require.EqualValues(t, 0, resp.data()["paid_total"])
	require.EqualValues(t, 49000, resp.data()["balance_due"])
	require.Equal(t, []int64{-490, 490}, h.walletEntries(s.m.storeID), "reversed by a new entry, never deleted")
	var reversed, ledger int
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE status = 'reversed'), count(*)
		FROM order_payments WHERE order_id = $1`, id).Scan(&reversed, &ledger))
	require.Equal(t, 1, reversed)
	require.Equal(t, 1, ledger)
	acts := h.do(request{method: "GET", path: path("/activities"), auth: bearer(s.token)})
	require.Equal(t, "payment_unmarked", acts.data()["items"].([]any)[0].(map[string]any)["kind"])
	require.Equal(t, "courier kept the cash", acts.data()["items"].([]any)[0].(map[string]any)["body"])

	notPaid := h.do(request{method: "POST", path: path("/unmark-paid"), auth: bearer(s.token), body: map[string]any{"reason": "again"}})
	require.Equal(t, http.StatusConflict, notPaid.Status)
	require.Equal(t, "ORDER_NOT_PAID", notPaid.errorCode())

	// Paid again: a second payment transition, a second order.paid.
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: path("/mark-paid"), auth: bearer(s.token)}).Status)
	require.Len(t, h.events(s.m.storeID, "order.paid"), 2)

	// A successful gateway charge makes the payment final.
	h.exec(`INSERT INTO order_payments (id, store_id, order_id, source, amount, status) VALUES ($1, $2, $3, 'gateway', 100, 'succeeded')`,
		uuid.New(), s.m.storeID, id)
	final := h.do(request{method: "POST", path: path("/unmark-paid"), auth: bearer(s.token), body: map[string]any{"reason": "mistake"}})
	require.Equal(t, http.StatusConflict, final.Status)
	require.Equal(t, "PAYMENT_NOT_REVERSIBLE", final.errorCode())

	// A pending refund holds it (decisions §13: REFUND_PENDING); a
	// succeeded one makes it final.
	other := h.placeOrder(s, "bank_transfer", 1)
	otherPath := storePath(s.m.storeID, "/orders/"+other["id"].(string))
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: otherPath + "/mark-paid", auth: bearer(s.token)}).Status)
	h.exec(`INSERT INTO order_refunds (id, store_id, order_id, amount, status) VALUES ($1, $2, $3, 100, 'pending')`, uuid.New(), s.m.storeID, other["id"])
	pending := h.do(request{method: "POST", path: otherPath + "/unmark-paid", auth: bearer(s.token), body: map[string]any{"reason": "mistake"}})
	require.Equal(t, http.StatusConflict, pending.Status)
	require.Equal(t, "REFUND_PENDING", pending.errorCode())
	h.exec(`INSERT INTO order_refunds (id, store_id, order_id, amount, status) VALUES ($1, $2, $3, 100, 'succeeded')`, uuid.New(), s.m.storeID, other["id"])
	refunded := h.do(request{method: "POST", path: otherPath + "/unmark-paid", auth: bearer(s.token), body: map[string]any{"reason": "mistake"}})
	require.Equal(t, http.StatusConflict, refunded.Status)
	require.Equal(t, "PAYMENT_NOT_REVERSIBLE", refunded.errorCode())
	require.Equal(t, "paid", h.getOrder(s, other["id"].(string))["payment_status"], "a refusal changes nothing")

	// Scopes: orders:write is needed.
	reader := h.pat(s.m, "orders:read")
	require.Equal(t, http.StatusForbidden, h.do(request{method: "POST", path: otherPath + "/mark-paid", auth: bearer(reader)}).Status)
	// Drafts take no payment.
	draftBody := orderBody(s.variantID, 1, "+201000000001")
	draft := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token), body: draftBody})
	closed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+draft.data()["id"].(string)+"/mark-paid"), auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, closed.Status)
	require.Equal(t, "ORDER_CLOSED", closed.errorCode())
}

// fakeAuthority is a tax authority on loopback that records what it is told.
type fakeAuthority struct {
	mu       sync.Mutex
	issued   []map[string]any
	canceled []string
	refuse   bool
	// invoiceDelay holds the first issue this long before the authority
	// answers (a slow authority while later work queues up).
	invoiceDelay time.Duration
	delayed      atomic.Bool
}

func (f *fakeAuthority) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.invoiceDelay > 0 && r.URL.Path == "/invoices" && f.delayed.CompareAndSwap(false, true) {
			time.Sleep(f.invoiceDelay)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		require.Equal(t, "Bearer authority-token", r.Header.Get("Authorization"))
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if f.refuse {
			http.Error(w, `{"error":"taxpayer not registered"}`, http.StatusUnprocessableEntity)
			return
		}
		if r.URL.Path == "/invoices" {
			f.issued = append(f.issued, body)
			fmt.Fprintf(w, `{"reference":"ETA-%d"}`, len(f.issued))
			return
		}
		f.canceled = append(f.canceled, r.URL.Path)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// invoices lists a store's invoices through the API (query as in
// "order_id=…"), oldest first.
func (h *harness) invoices(s shop, query string) []map[string]any {
	h.t.Helper()
	resp := h.do(request{method: "GET", path: storePath(s.m.storeID, "/invoices?limit=100&"+query), auth: bearer(s.token)})
	require.Equal(h.t, http.StatusOK, resp.Status, string(resp.Raw))
	var out []map[string]any
	for _, it := range resp.data()["items"].([]any) {
		out = append([]map[string]any{it.(map[string]any)}, out...)
	}
	return out
}

// invoicesSettled waits until the order's documents number n and none is
// pending at the authority.
func (h *harness) invoicesSettled(s shop, orderID string, n int) []map[string]any {
	h.t.Helper()
	var list []map[string]any
	require.Eventually(h.t, func() bool {
		list = h.invoices(s, "order_id="+orderID)
		if len(list) != n {
			return false
		}
		for _, inv := range list {
			if inv["status"] == "pending" {
				return false
			}
		}
		return true
	}, 20*time.Second, 50*time.Millisecond)
	return list
}

// Unmark-paid writes a credit note for the whole invoice, which the
// authority is told of like an invoice; once it is accepted the invoice is
// cancelled by it (decisions §27: no cancel at the authority). Paying again
// issues a new invoice.
func TestUnmarkPaidCreditsTheInvoice(t *testing.T) {
	h := newHarness(t, api.Config{})
	authority := &fakeAuthority{}
	srv := authority.serve(t)
	h.authority = &einvoice.HTTP{BaseURL: srv.URL, Token: "authority-token"}
	h.startWorker(nil)
	s := newShop(t, h, "einvoice", 50)
	require.Equal(t, true, h.settings(s, map[string]any{"e_invoicing": true}).data()["e_invoicing"])

	order := h.placeOrder(s, "instapay", 2)
	id := order["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/mark-paid"), auth: bearer(s.token)}).Status)
	list := h.invoicesSettled(s, id, 1)
	invoice := list[0]
	require.Equal(t, "reported", invoice["status"])
	require.Equal(t, "ETA-1", invoice["authority"].(map[string]any)["reference"])
	require.EqualValues(t, 94000, invoice["totals"].(map[string]any)["total"], "2 × 450.00 + 50.00 − 10.00")
	authority.mu.Lock()
	require.Equal(t, "940.00", authority.issued[0]["amount"])
	require.Equal(t, invoice["number"], authority.issued[0]["number"])
	require.Equal(t, order["order_number"], authority.issued[0]["order_number"])
	authority.mu.Unlock()

	resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/unmark-paid"), auth: bearer(s.token),
		body: map[string]any{"reason": "transfer bounced"}})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	list = h.invoicesSettled(s, id, 2)
	note := list[1]
	require.Equal(t, "credit_note", note["kind"])
	require.Equal(t, "unmark_paid", note["reason"])
	require.Equal(t, invoice["id"], note["credits_invoice_id"])
	require.Equal(t, invoice["totals"], note["totals"])
	require.Equal(t, "reported", note["status"])
	require.Eventually(t, func() bool { return h.invoices(s, "order_id="+id)[0]["status"] == "cancelled" }, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, note["id"], h.invoices(s, "order_id="+id)[0]["cancelled_by_credit_note_id"])
	authority.mu.Lock()
	require.Empty(t, authority.canceled)
	require.Equal(t, "credit_note", authority.issued[1]["kind"])
	require.Equal(t, "ETA-1", authority.issued[1]["credits_reference"])
	authority.mu.Unlock()

	// Paid again: a new invoice, the next number.
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/mark-paid"), auth: bearer(s.token)}).Status)
	list = h.invoicesSettled(s, id, 3)
	require.Equal(t, "invoice", list[2]["kind"])
	require.Equal(t, "reported", list[2]["status"])
	require.Nil(t, list[2]["cancelled_by_credit_note_id"])

	// An authority that refuses leaves the invoice rejected with its reason.
	authority.mu.Lock()
	authority.refuse = true
	authority.mu.Unlock()
	second := h.placeOrder(s, "cod", 1)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+second["id"].(string)+"/mark-paid"), auth: bearer(s.token)}).Status)
	refused := h.invoicesSettled(s, second["id"].(string), 1)[0]
	require.Equal(t, "rejected", refused["status"])
	require.Contains(t, refused["authority"].(map[string]any)["errors"].([]any)[0], "taxpayer not registered")

	// Fixed at the authority, retried: the same number, reported. A
	// reported invoice is not retried.
	authority.mu.Lock()
	authority.refuse = false
	authority.mu.Unlock()
	retryPath := storePath(s.m.storeID, "/invoices/"+refused["id"].(string)+"/retry")
	retried := h.do(request{method: "POST", path: retryPath, auth: bearer(s.token)})
	require.Equal(t, http.StatusAccepted, retried.Status, string(retried.Raw))
	require.Equal(t, "pending", retried.data()["status"])
	again := h.invoicesSettled(s, second["id"].(string), 1)[0]
	require.Equal(t, "reported", again["status"])
	require.Equal(t, refused["number"], again["number"])
	require.Empty(t, again["authority"].(map[string]any)["errors"])
	notRetryable := h.do(request{method: "POST", path: retryPath, auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, notRetryable.Status)
	require.Equal(t, "INVOICE_NOT_RETRYABLE", notRetryable.errorCode())
}

func TestRecordedPaymentsAndVoid(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "recorded", 50)
	order := h.placeOrder(s, "cod", 1) // 49000 collectible
	id := order["id"].(string)

	first := h.recordPayment(s, id, "20000")
	require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))
	proof := first.data()["proof"].(map[string]any)
	require.Equal(t, "recorded", proof["status"])
	require.Equal(t, "recorded", proof["kind"])
	require.EqualValues(t, 20000, proof["amount"])
	require.Nil(t, proof["perceptual_hash"], "nothing reads a recorded receipt")
	require.Equal(t, "partially_paid", first.data()["order"].(map[string]any)["payment_status"])
	require.EqualValues(t, 29000, first.data()["order"].(map[string]any)["balance_due"])

	// Bad input: a clear 4xx and nothing changes.
	for _, tc := range []struct {
		amount string
		status int
		field  string
	}{
		{"0", 422, "amount"}, {"-5", 422, "amount"}, {"12.50", 422, "amount"}, {"", 422, "amount"},
		{"29001", 422, "amount"}, // more than the balance
	} {
		resp := h.recordPayment(s, id, tc.amount)
		require.Equal(t, tc.status, resp.Status, "amount %q: %s", tc.amount, resp.Raw)
		require.Equal(t, []string{tc.field}, resp.fieldNames())
	}
	notImage, contentType := multipartBody(t, "receipt", []byte("plain text"), map[string]string{"amount": "100"})
	resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/payments"), auth: bearer(s.token), body: notImage,
		headers: map[string]string{"Content-Type": contentType}})
	require.Equal(t, http.StatusUnsupportedMediaType, resp.Status)
	noReceipt, contentType := multipartBody(t, "file", photo(t, "coffee.jpg"), map[string]string{"amount": "100"})
	resp = h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/payments"), auth: bearer(s.token), body: noReceipt,
		headers: map[string]string{"Content-Type": contentType}})
	require.Equal(t, http.StatusUnprocessableEntity, resp.Status)
	require.Equal(t, []string{"receipt"}, resp.fieldNames())
	require.EqualValues(t, 29000, h.getOrder(s, id)["balance_due"])

	// Void: the balance rises again.
	voidPath := storePath(s.m.storeID, "/payments/"+proof["id"].(string)+"/void")
	resp = h.do(request{method: "POST", path: voidPath, auth: bearer(s.token), body: map[string]any{"reason": "wrong order"}})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.Equal(t, "voided", resp.data()["proof"].(map[string]any)["status"])
	require.EqualValues(t, 49000, resp.data()["order"].(map[string]any)["balance_due"])
	require.Equal(t, "pending", resp.data()["order"].(map[string]any)["payment_status"])
	twice := h.do(request{method: "POST", path: voidPath, auth: bearer(s.token), body: map[string]any{"reason": "again"}})
	require.Equal(t, http.StatusConflict, twice.Status)
	require.Equal(t, "PAYMENT_NOT_VOIDABLE", twice.errorCode())

	// Reaching the collectible total pays the order through the shared routine.
	second := h.recordPayment(s, id, "30000")
	require.Equal(t, http.StatusCreated, second.Status)
	third := h.recordPayment(s, id, "19000")
	require.Equal(t, http.StatusCreated, third.Status)
	require.Equal(t, "paid", third.data()["order"].(map[string]any)["payment_status"])
	require.Len(t, h.events(s.m.storeID, "order.paid"), 1)

	paidVoid := h.do(request{method: "POST", path: storePath(s.m.storeID, "/payments/"+second.data()["proof"].(map[string]any)["id"].(string)+"/void"),
		auth: bearer(s.token), body: map[string]any{"reason": "no"}})
	require.Equal(t, http.StatusConflict, paidVoid.Status)
	require.Equal(t, "ORDER_ALREADY_PAID", paidVoid.errorCode())
	require.Equal(t, http.StatusConflict, h.recordPayment(s, id, "1").Status)

	// The list shows every proof, newest first; the image comes back inline.
	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/"+id+"/payment-proofs"), auth: bearer(s.token)})
	require.Len(t, list.Body["data"], 3)
	require.Equal(t, third.data()["proof"].(map[string]any)["id"], list.Body["data"].([]any)[0].(map[string]any)["id"])
	img := h.do(request{method: "GET", path: storePath(s.m.storeID, "/payment-proofs/"+proof["id"].(string)+"/image"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, img.Status)
	require.Equal(t, photo(t, "coffee.jpg"), img.Raw)
	require.Equal(t, "image/jpeg", img.Header.Get("Content-Type"))
	require.Equal(t, "private, max-age=60", img.Header.Get("Cache-Control"))
	require.Equal(t, "inline", img.Header.Get("Content-Disposition"))

	// Another store cannot reach the proof, even with its own valid token.
	other := newShop(t, h, "recorded2", 5)
	cross := h.do(request{method: "GET", path: storePath(other.m.storeID, "/payment-proofs/"+proof["id"].(string)+"/image"), auth: bearer(other.token)})
	require.Equal(t, http.StatusNotFound, cross.Status)
	// Proof review and voids need the settings scopes.
	ordersOnly := h.pat(s.m, "orders:write")
	require.Equal(t, http.StatusForbidden, h.do(request{method: "GET", path: storePath(s.m.storeID, "/payment-proofs/"+proof["id"].(string)+"/image"),
		auth: bearer(ordersOnly)}).Status)
}

// Concurrent recordings queue on the order row: the sum never exceeds the
// collectible total and the order is paid exactly once.
func TestConcurrentRecordedPaymentsNeverOverpay(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "concurrent", 50)
	order := h.placeOrder(s, "cod", 1) // 49000 = 7 × 7000
	id := order["id"].(string)
	const attempts = 12
	statuses := make([]int, attempts)
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = h.recordPayment(s, id, "7000").Status
		}()
	}
	wg.Wait()
	created := 0
	for _, st := range statuses {
		if st == http.StatusCreated {
			created++
		} else {
			require.Contains(t, []int{http.StatusConflict, http.StatusUnprocessableEntity}, st)
		}
	}
	require.Equal(t, 7, created)
	got := h.getOrder(s, id)
	require.EqualValues(t, 49000, got["paid_total"])
	require.Equal(t, "paid", got["payment_status"])
	require.Len(t, h.events(s.m.storeID, "order.paid"), 1)
}

func TestPaymentProofsDuplicateGateSimilarAndReview(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "proofs", 50)
	chelsea := photo(t, "chelsea.jpg")

	orderA := h.placeOrder(s, "instapay", 1)
	orderB := h.placeOrder(s, "mobile_wallet", 1)
	orderC := h.placeOrder(s, "instapay", 1)
	orderD := h.placeOrder(s, "bank_transfer", 1)
	idA, idB, idC, idD := orderA["id"].(string), orderB["id"].(string), orderC["id"].(string), orderD["id"].(string)

	// The upload opens only with the order's own token; anything else is 404.
	tokenA := h.orderToken(s, idA)
	for _, token := range []string{"", "svc_ot_wrong", h.orderToken(s, idB)} {
		resp := h.uploadProof(s, idA, token, chelsea)
		require.Equal(t, http.StatusNotFound, resp.Status, "token %q", token)
	}
	cod := h.placeOrder(s, "cod", 1)
	require.Equal(t, "PROOFS_NOT_ACCEPTED", h.uploadProof(s, cod["id"].(string), h.orderToken(s, cod["id"].(string)), chelsea).errorCode())
	require.Equal(t, http.StatusUnsupportedMediaType, h.uploadProof(s, idA, tokenA, []byte("%PDF-1.4 not an image")).Status)

	upA := h.uploadProof(s, idA, tokenA, chelsea)
	require.Equal(t, http.StatusCreated, upA.Status, string(upA.Raw))
	require.Equal(t, "awaiting_review", upA.data()["status"])
	require.Nil(t, upA.data()["perceptual_hash"], "the buyer sees no review data")
	proofA := h.hashedProof(s, idA, upA.data()["id"].(string))
	require.Equal(t, false, proofA["duplicate_suspected"])
	require.Len(t, proofA["perceptual_hash"], 16)
	require.Equal(t, "awaiting_review", h.getOrder(s, idA)["payment_status"])

	// The same photo, resized and re-compressed, on another order: flagged.
	upB := h.uploadProof(s, idB, h.orderToken(s, idB), resizedJPEG(t, chelsea, 0.6, 60))
	require.Equal(t, http.StatusCreated, upB.Status)
	proofB := h.hashedProof(s, idB, upB.data()["id"].(string))
	require.Equal(t, true, proofB["duplicate_suspected"])
	require.Equal(t, proofA["id"], proofB["duplicate_of"])

	// A different photo is neither a duplicate nor similar.
	upC := h.uploadProof(s, idC, h.orderToken(s, idC), photo(t, "astronaut.jpg"))
	proofC := h.hashedProof(s, idC, upC.data()["id"].(string))
	require.Equal(t, false, proofC["duplicate_suspected"])
	require.Empty(t, h.similar(s, proofC["id"].(string)))

	similar := h.similar(s, proofB["id"].(string))
	require.Len(t, similar, 1)
	require.Equal(t, proofA["id"], similar[0]["id"])
	require.LessOrEqual(t, similar[0]["distance"].(float64), 5.0)

	// Another store's identical photo is invisible to this store, and this
	// store's to it.
	other := newShop(t, h, "proofs2", 5)
	otherOrder := h.placeOrder(other, "instapay", 1)
	upOther := h.uploadProof(other, otherOrder["id"].(string), h.orderToken(other, otherOrder["id"].(string)), chelsea)
	proofOther := h.hashedProof(other, otherOrder["id"].(string), upOther.data()["id"].(string))
	require.Equal(t, false, proofOther["duplicate_suspected"])
	require.Empty(t, h.similar(other, proofOther["id"].(string)))
	require.Len(t, h.similar(s, proofB["id"].(string)), 1)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(other.m.storeID, "/payment-proofs/"+proofA["id"].(string)+"/similar"),
		auth: bearer(other.token)}).Status)

	// A recorded receipt has no hash: its similar list is empty.
	rec := h.recordPayment(s, idD, "100")
	require.Empty(t, h.similar(s, rec.data()["proof"].(map[string]any)["id"].(string)))

	// The pending-review list: manual wallet rails whose latest proof waits.
	upD := h.uploadProof(s, idD, h.orderToken(s, idD), photo(t, "coffee.jpg")) // bank transfer: not a wallet rail
	require.Equal(t, http.StatusCreated, upD.Status)
	pending := func() []string {
		resp := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/pending-manual-review?limit=10"), auth: bearer(s.token)})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		var ids []string
		for _, o := range resp.data()["items"].([]any) {
			ids = append(ids, o.(map[string]any)["id"].(string))
		}
		return ids
	}
	require.ElementsMatch(t, []string{idA, idB, idC}, pending())
	require.Equal(t, http.StatusUnprocessableEntity, h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/pending-manual-review?limit=101"),
		auth: bearer(s.token)}).Status)

	// Approve pays through the shared routine, once.
	approve := h.do(request{method: "POST", path: storePath(s.m.storeID, "/payment-proofs/"+proofA["id"].(string)+"/approve"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, approve.Status, string(approve.Raw))
	require.Equal(t, "approved", approve.data()["status"])
	require.EqualValues(t, 49000, approve.data()["amount"])
	require.Equal(t, "paid", h.getOrder(s, idA)["payment_status"])
	paid := h.events(s.m.storeID, "order.paid")
	require.Len(t, paid, 1)
	require.Equal(t, idA, paid[0]["order_id"])
	require.Equal(t, "instapay", paid[0]["payment_method"])

	reject := h.do(request{method: "POST", path: storePath(s.m.storeID, "/payment-proofs/"+proofB["id"].(string)+"/reject"), auth: bearer(s.token),
		body: map[string]any{"reason": "same screenshot as order " + orderA["order_number"].(string)}})
	require.Equal(t, http.StatusOK, reject.Status, string(reject.Raw))
	require.Equal(t, "rejected", reject.data()["status"])
	require.Equal(t, "pending", h.getOrder(s, idB)["payment_status"])
	require.Equal(t, []string{idC}, pending())

	for _, proofID := range []string{proofA["id"].(string), proofB["id"].(string)} {
		again := h.do(request{method: "POST", path: storePath(s.m.storeID, "/payment-proofs/"+proofID+"/approve"), auth: bearer(s.token)})
		require.Equal(t, http.StatusConflict, again.Status)
		require.Equal(t, "PROOF_ALREADY_REVIEWED", again.errorCode())
	}
	require.Len(t, h.events(s.m.storeID, "order.paid"), 1)
	noReason := h.do(request{method: "POST", path: storePath(s.m.storeID, "/payment-proofs/"+proofC["id"].(string)+"/reject"), auth: bearer(s.token),
		body: map[string]any{"reason": "  "}})
	require.Equal(t, http.StatusUnprocessableEntity, noReason.Status)
	// A paid order takes no more proofs.
	require.Equal(t, "ORDER_ALREADY_PAID", h.uploadProof(s, idA, tokenA, chelsea).errorCode())

	// The 90-day window: a proof older than that is no longer similar.
	h.exec(`UPDATE payment_proofs SET created_at = now() - interval '91 days' WHERE id = $1`, proofA["id"])
	require.Empty(t, h.similar(s, proofB["id"].(string)))
	h.exec(`UPDATE payment_proofs SET created_at = now() - interval '89 days' WHERE id = $1`, proofA["id"])
	require.Len(t, h.similar(s, proofB["id"].(string)), 1)
}

func TestPartialAcceptance(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "partial", 20)
	advance := func(id string, statuses ...string) {
		for _, st := range statuses {
			resp := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+id+"/status"), auth: bearer(s.token), body: map[string]any{"status": st}})
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		}
	}
	accept := func(id string, body map[string]any) response {
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/partial-acceptance"), auth: bearer(s.token), body: body})
	}

	// Cash on delivery: 3 pieces at 450.00, the customer keeps 1.
	cod := h.placeOrder(s, "cod", 3)
	codID := cod["id"].(string)
	line := cod["lines"].([]any)[0].(map[string]any)["id"].(string)
	early := accept(codID, map[string]any{"lines": []map[string]any{{"line_id": line, "accepted_quantity": 1}}})
	require.Equal(t, http.StatusConflict, early.Status, "PENDING cannot be partially accepted")
	require.Equal(t, "INVALID_STATUS_TRANSITION", early.errorCode())

	advance(codID, "CONFIRMED", "SHIPPED")
	stock := h.variantQuantity(s)
	for _, bad := range []map[string]any{
		{"lines": []map[string]any{{"line_id": line, "accepted_quantity": 4}}},
		{"lines": []map[string]any{{"line_id": uuid.NewString(), "accepted_quantity": 1}}},
		{"lines": []map[string]any{{"line_id": line, "accepted_quantity": -1}}},
		{"lines": []map[string]any{{"line_id": line}}},
		{"lines": []map[string]any{}},
	} {
		resp := accept(codID, bad)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%v: %s", bad, resp.Raw)
	}
	require.Equal(t, stock, h.variantQuantity(s), "refusals change nothing")

	resp := accept(codID, map[string]any{"lines": []map[string]any{{"line_id": line, "accepted_quantity": 1}}, "note": "kept one"})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	result := resp.data()
	// Decisions §14: the kept piece carries its share of the line's 10.00 discount (3.33, half up).
	require.EqualValues(t, 45000-333+5000, result["collected_total"], "450.00 − 3.33 + 50.00 shipping")
	require.EqualValues(t, 0, result["refund_due"])
	require.Equal(t, true, result["auto_marked_paid"])
	require.Equal(t, []any{map[string]any{"variant_id": s.variantID, "quantity": float64(2)}}, result["restocked"])
	o := result["order"].(map[string]any)
	require.Equal(t, "DELIVERED", o["status"])
	require.Equal(t, "partially_delivered", o["fulfillment_status"])
	require.Equal(t, "paid", o["payment_status"])
	require.EqualValues(t, 49667, o["collected_total"])
	require.EqualValues(t, 2, o["lines"].([]any)[0].(map[string]any)["returned_quantity"])
	require.Equal(t, stock+2, h.variantQuantity(s))
	require.Len(t, h.events(s.m.storeID, "order.paid"), 1)
	changed := h.events(s.m.storeID, "order.status_changed")
	require.Equal(t, "DELIVERED", changed[len(changed)-1]["new_status"])

	// Prepaid: paid in full, the customer keeps 2 of 3 — the refund is due.
	prepaid := h.placeOrder(s, "instapay", 3) // 3 × 450.00 + 50.00 − 10.00 = 1390.00
	prepaidID := prepaid["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+prepaidID+"/mark-paid"), auth: bearer(s.token)}).Status)
	advance(prepaidID, "CONFIRMED")
	pline := prepaid["lines"].([]any)[0].(map[string]any)["id"].(string)
	resp = accept(prepaidID, map[string]any{"lines": []map[string]any{{"line_id": pline, "accepted_quantity": 2}}})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.EqualValues(t, 0, resp.data()["collected_total"])
	// Kept: 900.00 − 6.67 (two thirds of the discount, half up) + 50.00 = 943.33 of the 1390.00 paid.
	require.EqualValues(t, 139000-94333, resp.data()["refund_due"])
	require.Equal(t, false, resp.data()["auto_marked_paid"])
	require.EqualValues(t, 139000-94333, resp.data()["order"].(map[string]any)["refund_due"])
	require.Len(t, h.events(s.m.storeID, "order.paid"), 2, "only the mark-paid")

	// Prepaid but not yet paid: only the kept pieces remain to be paid.
	unpaid := h.placeOrder(s, "mobile_wallet", 3)
	advance(unpaid["id"].(string), "CONFIRMED")
	resp = accept(unpaid["id"].(string), map[string]any{"lines": []map[string]any{{"line_id": unpaid["lines"].([]any)[0].(map[string]any)["id"], "accepted_quantity": 1}}})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.EqualValues(t, 0, resp.data()["refund_due"])
	require.EqualValues(t, 49667, resp.data()["order"].(map[string]any)["balance_due"])
	require.Equal(t, "pending", resp.data()["order"].(map[string]any)["payment_status"])

	// Lines not listed are accepted whole.
	whole := h.placeOrder(s, "cod", 2)
	advance(whole["id"].(string), "CONFIRMED")
	resp = accept(whole["id"].(string), map[string]any{"lines": []map[string]any{{"line_id": whole["lines"].([]any)[0].(map[string]any)["id"], "accepted_quantity": 2}}})
	require.Equal(t, http.StatusOK, resp.Status)
	require.Equal(t, "delivered", resp.data()["order"].(map[string]any)["fulfillment_status"])
	require.EqualValues(t, 94000, resp.data()["collected_total"])
	again := accept(whole["id"].(string), map[string]any{"lines": []map[string]any{{"line_id": whole["lines"].([]any)[0].(map[string]any)["id"], "accepted_quantity": 1}}})
	require.Equal(t, http.StatusConflict, again.Status)
}

// The order's figures after every step of a payment sequence. Collectible
// total 49000 (450.00 + 50.00 shipping − 10.00 discount), instapay.
func TestPaymentArithmeticSequences(t *testing.T) {
	type step struct {
		do        string // record N | void K (K-th recorded payment, from 0) | proof | approve | reject | mark | unmark
		arg       int
		status    int
		paid      int64
		payStatus string
		paidEvts  int
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"record in parts until paid", []step{
			{"record", 10000, 201, 10000, "partially_paid", 0},
			{"record", 39000, 201, 49000, "paid", 1},
			{"record", 1, 409, 49000, "paid", 1},
		}},
		{"record, void, record", []step{
			{"record", 30000, 201, 30000, "partially_paid", 0},
			{"void", 0, 200, 0, "pending", 0},
			{"void", 0, 409, 0, "pending", 0},
			{"record", 49000, 201, 49000, "paid", 1},
			{"void", 1, 409, 49000, "paid", 1},
		}},
		{"overpay refused, exact pays", []step{
			{"record", 49001, 422, 0, "pending", 0},
			{"record", 48999, 201, 48999, "partially_paid", 0},
			{"record", 2, 422, 48999, "partially_paid", 0},
			{"record", 1, 201, 49000, "paid", 1},
		}},
		{"mark after a part payment credits the rest", []step{
			{"record", 9000, 201, 9000, "partially_paid", 0},
			{"mark", 0, 200, 49000, "paid", 1},
			{"mark", 0, 409, 49000, "paid", 1},
		}},
		{"unmark reverses every manual payment, mark again pays again", []step{
			{"record", 9000, 201, 9000, "partially_paid", 0},
			{"mark", 0, 200, 49000, "paid", 1},
			{"unmark", 0, 200, 0, "pending", 1},
			{"void", 0, 409, 0, "pending", 1}, // the recorded payment was voided by the unmark
			{"unmark", 0, 409, 0, "pending", 1},
			{"record", 49000, 201, 49000, "paid", 2},
		}},
		{"proof approval covers the balance", []step{
			{"record", 4000, 201, 4000, "partially_paid", 0},
			{"proof", 0, 201, 4000, "awaiting_review", 0},
			{"approve", 0, 200, 49000, "paid", 1},
			{"unmark", 0, 200, 0, "pending", 1},
		}},
		{"rejected proof leaves the figures", []step{
			{"record", 4000, 201, 4000, "partially_paid", 0},
			{"proof", 0, 201, 4000, "awaiting_review", 0},
			{"reject", 0, 200, 4000, "partially_paid", 0},
			{"approve", 0, 409, 4000, "partially_paid", 0},
			{"proof", 0, 201, 4000, "awaiting_review", 0},
			{"record", 45000, 201, 49000, "paid", 1},
			{"approve", 0, 409, 49000, "paid", 1},
		}},
		{"unmark on an unpaid order", []step{
			{"unmark", 0, 409, 0, "pending", 0},
			{"record", 100, 201, 100, "partially_paid", 0},
			{"unmark", 0, 409, 100, "partially_paid", 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, api.Config{})
			s := newShop(t, h, "sequence", 10)
			order := h.placeOrder(s, "instapay", 1)
			id := order["id"].(string)
			token := h.orderToken(s, id)
			var recorded []string
			var proof string
			for i, st := range tc.steps {
				var resp response
				switch st.do {
				case "record":
					resp = h.recordPayment(s, id, fmt.Sprint(st.arg))
					if resp.Status == http.StatusCreated {
						recorded = append(recorded, resp.data()["proof"].(map[string]any)["id"].(string))
					}
				case "void":
					resp = h.do(request{method: "POST", path: storePath(s.m.storeID, "/payments/"+recorded[st.arg]+"/void"), auth: bearer(s.token),
						body: map[string]any{"reason": "test"}})
				case "proof":
					resp = h.uploadProof(s, id, token, photo(t, "chelsea.jpg"))
					if resp.Status == http.StatusCreated {
						proof = resp.data()["id"].(string)
					}
				case "approve", "reject":
					var body any
					if st.do == "reject" {
						body = map[string]any{"reason": "unreadable"}
					}
					resp = h.do(request{method: "POST", path: storePath(s.m.storeID, "/payment-proofs/"+proof+"/"+st.do), auth: bearer(s.token), body: body})
				case "mark":
					resp = h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/mark-paid"), auth: bearer(s.token)})
				case "unmark":
					resp = h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/unmark-paid"), auth: bearer(s.token),
						body: map[string]any{"reason": "test"}})
				}
				require.Equal(t, st.status, resp.Status, "step %d (%s %d): %s", i, st.do, st.arg, resp.Raw)
				o := h.getOrder(s, id)
				require.EqualValues(t, st.paid, o["paid_total"], "step %d paid_total", i)
				require.EqualValues(t, 49000-st.paid, o["balance_due"], "step %d balance_due", i)
				require.Equal(t, st.payStatus, o["payment_status"], "step %d payment_status", i)
				require.Len(t, h.events(s.m.storeID, "order.paid"), st.paidEvts, "step %d order.paid count", i)
				var ledger int64
				require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT COALESCE(sum(amount), 0) FROM order_payments
					WHERE order_id = $1 AND status = 'succeeded'`, id).Scan(&ledger))
				require.Equal(t, st.paid, ledger, "step %d: paid_total is the ledger's sum", i)
			}
		})
	}
}
