package api_test

import (
	"bytes"
	"context"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// buyer calls the storefront of a shop without a bearer token.
func (h *harness) buyer(s shop, method, rest string, body any, cartToken string) response {
	h.t.Helper()
	headers := map[string]string{}
	if cartToken != "" {
		headers["X-Cart-Token"] = cartToken
	}
	return h.do(request{method: method, path: "/api/v1/storefront/" + h.subdomain(s) + rest, body: body, headers: headers})
}

// openCart creates a cart with lines and contact and returns its id and token.
func (h *harness) openCart(s shop, qty int, email string) (string, string) {
	h.t.Helper()
	body := map[string]any{"lines": []map[string]any{{"variant_id": s.variantID, "quantity": qty}}}
	if email != "" {
		body["email"] = email
	}
	resp := h.buyer(s, "POST", "/carts", body, "")
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	return resp.data()["cart"].(map[string]any)["id"].(string), resp.data()["cart_token"].(string)
}

func checkoutBody(method string) map[string]any {
	return map[string]any{"payment_method": method,
		"customer":         map[string]any{"name": "Salma Hassan", "phone": "+201005556667", "email": "salma@example.com"},
		"shipping_address": map[string]any{"name": "Salma Hassan", "phone": "+201005556667", "line1": "5 Nile St", "city": "Giza", "country": "EG"}}
}

func TestStorefrontCartCheckoutAndProofUpload(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "storefront", 10)

	products := h.buyer(s, "GET", "/products", nil, "")
	require.Equal(t, http.StatusOK, products.Status, string(products.Raw))
	items := products.data()["items"].([]any)
	require.Len(t, items, 1)
	require.Nil(t, items[0].(map[string]any)["cost_price"], "buyers never see costs")
	detail := h.buyer(s, "GET", "/products/"+items[0].(map[string]any)["id"].(string), nil, "")
	require.Equal(t, s.variantID, detail.data()["variants"].([]any)[0].(map[string]any)["id"])
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: "/api/v1/storefront/no-such-shop/products"}).Status)

	cartID, token := h.openCart(s, 2, "")
	cart := h.buyer(s, "GET", "/carts/"+cartID, nil, token)
	require.Equal(t, http.StatusOK, cart.Status)
	require.EqualValues(t, 90000, cart.data()["subtotal"])
	require.Equal(t, "EGP", cart.data()["currency"])

	// Wrong, missing or another cart's token: 404, never the cart.
	otherCart, otherToken := h.openCart(s, 1, "")
	for _, tok := range []string{"", "svc_ct_guess", otherToken} {
		require.Equal(t, http.StatusNotFound, h.buyer(s, "GET", "/carts/"+cartID, nil, tok).Status, "token %q", tok)
	}
	// Another store's storefront never opens this cart, even with its token.
	other := newShop(t, h, "storefront2", 5)
	require.Equal(t, http.StatusNotFound, h.buyer(other, "GET", "/carts/"+cartID, nil, token).Status)

	// Stock is checked; bad lines are 422; nothing changes on refusal.
	tooMany := h.buyer(s, "PUT", "/carts/"+cartID, map[string]any{"lines": []map[string]any{{"variant_id": s.variantID, "quantity": 11}}}, token)
	require.Equal(t, http.StatusConflict, tooMany.Status)
	require.Equal(t, "INSUFFICIENT_STOCK", tooMany.errorCode())
	foreign := h.buyer(s, "PUT", "/carts/"+cartID, map[string]any{"lines": []map[string]any{{"variant_id": other.variantID, "quantity": 1}}}, token)
	require.Equal(t, http.StatusUnprocessableEntity, foreign.Status)
	require.Equal(t, []string{"lines[0].variant_id"}, foreign.fieldNames())
	require.EqualValues(t, 90000, h.buyer(s, "GET", "/carts/"+cartID, nil, token).data()["subtotal"])
	updated := h.buyer(s, "PUT", "/carts/"+cartID, map[string]any{"lines": []map[string]any{{"variant_id": s.variantID, "quantity": 3}},
		"email": "salma@example.com", "phone": "+20 100 555 6667"}, token)
	require.Equal(t, http.StatusOK, updated.Status, string(updated.Raw))
	require.Equal(t, "+201005556667", updated.data()["phone"])
	require.EqualValues(t, 135000, updated.data()["subtotal"])

	// A variant in an open cart cannot be deleted, nor its product.
	var productID string
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT product_id FROM variants WHERE id = $1`, s.variantID).Scan(&productID))
	del := h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/products/"+productID+"/variants/"+s.variantID), auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, del.Status, string(del.Raw))
	require.Equal(t, "VARIANT_IN_USE", del.errorCode())
	require.NotEmpty(t, del.errorField("message_ar"))
	delProduct := h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/products/"+productID), auth: bearer(s.token)})
	require.Equal(t, "VARIANT_IN_USE", delProduct.errorCode())

	// Checkout: a PENDING order through the admin path, and an order token.
	bad := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", map[string]any{"payment_method": "paypal"}, token)
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
	require.ElementsMatch(t, []string{"payment_method", "shipping_address", "customer.name", "customer.phone"}, bad.fieldNames())
	out := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("instapay"), token)
	require.Equal(t, http.StatusCreated, out.Status, string(out.Raw))
	order := out.data()["order"].(map[string]any)
	require.Equal(t, "PENDING", order["status"])
	require.EqualValues(t, 135000, order["total"])
	require.Nil(t, order["notes"], "the buyer's view has no merchant fields")
	orderToken := out.data()["order_token"].(string)
	require.True(t, strings.HasPrefix(orderToken, "svc_ot_"))
	require.Equal(t, 7, h.variantQuantity(s), "stock reserved")
	require.Len(t, h.events(s.m.storeID, "order.created"), 1)
	waitFor(t, "the order-placed workflow", func() bool { return len(h.sideEffects(order["id"].(string))) == 3 })

	again := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("instapay"), token)
	require.Equal(t, http.StatusConflict, again.Status)
	require.Equal(t, "CART_CHECKED_OUT", again.errorCode())
	require.Equal(t, "CART_CHECKED_OUT", h.buyer(s, "PUT", "/carts/"+cartID, map[string]any{"lines": []any{}}, token).errorCode())
	require.Equal(t, "checked_out", h.do(request{method: "GET", path: storePath(s.m.storeID, "/abandoned-checkouts/"+cartID), auth: bearer(s.token)}).data()["status"])

	// The order token opens the proof upload (payments issue), end to end.
	proof := h.uploadProof(s, order["id"].(string), orderToken, photo(t, "coffee.jpg"))
	require.Equal(t, http.StatusCreated, proof.Status, string(proof.Raw))
	pending := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders/pending-manual-review"), auth: bearer(s.token)})
	require.EqualValues(t, 1, pending.data()["pagination"].(map[string]any)["total"])

	// The checked-out cart no longer holds the variant; the other open cart
	// still does until it is emptied.
	variantPath := storePath(s.m.storeID, "/products/"+productID+"/variants/"+s.variantID)
	require.Equal(t, "VARIANT_IN_USE", h.do(request{method: "DELETE", path: variantPath, auth: bearer(s.token)}).errorCode())
	require.Equal(t, http.StatusOK, h.buyer(s, "PUT", "/carts/"+otherCart, map[string]any{"lines": []any{}}, otherToken).Status)
	// The order still holds its reservation (decisions §11), and the product
	// keeps at least one variant.
	require.Equal(t, "VARIANT_IN_USE", h.do(request{method: "DELETE", path: variantPath, auth: bearer(s.token)}).errorCode())
	cancelled := h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+order["id"].(string)), auth: bearer(s.token)})
	require.Equal(t, http.StatusNoContent, cancelled.Status, string(cancelled.Raw))
	last := h.do(request{method: "DELETE", path: variantPath, auth: bearer(s.token)})
	require.Equal(t, "LAST_VARIANT", last.errorCode(), string(last.Raw))
	require.NotEmpty(t, last.errorField("message_ar"))
	require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: storePath(s.m.storeID, "/products/"+productID+"/variants"),
		auth: bearer(s.token), body: map[string]any{"options": map[string]any{"size": "L"}}}).Status)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: variantPath, auth: bearer(s.token)}).Status)
}

// mailHTML decodes a message's quoted-printable HTML body.
func mailHTML(t *testing.T, raw []byte) string {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	require.NoError(t, err)
	return string(body)
}

func (h *harness) checkouts(s shop, query string) response {
	h.t.Helper()
	return h.do(request{method: "GET", path: storePath(s.m.storeID, "/abandoned-checkouts"+query), auth: bearer(s.token)})
}

func checkoutIDs(t *testing.T, r response) []string {
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	var ids []string
	for _, it := range r.data()["items"].([]any) {
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	return ids
}

func (h *harness) age(cartID string, d time.Duration) {
	h.exec(`UPDATE carts SET last_activity_at = now() - $2::interval WHERE id = $1`, cartID, d.String())
}

func TestAbandonedCheckoutsListFiltersAndRecovery(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "abandoned", 100)

	withEmail, withEmailToken := h.openCart(s, 1, "reem@example.com")
	withPhoneOnly, phoneToken := h.openCart(s, 2, "")
	require.Equal(t, http.StatusOK, h.buyer(s, "PUT", "/carts/"+withPhoneOnly, map[string]any{"phone": "+201007778889"}, phoneToken).Status)
	noContact, _ := h.openCart(s, 1, "")
	fresh, _ := h.openCart(s, 1, "fresh@example.com")
	h.age(withEmail, 2*time.Hour)
	h.age(withPhoneOnly, 90*time.Minute)
	h.age(noContact, 61*time.Minute)
	h.age(fresh, 10*time.Minute)

	// Lazily marked on load, with the default threshold (60 minutes).
	require.ElementsMatch(t, []string{withEmail, withPhoneOnly, noContact}, checkoutIDs(t, h.checkouts(s, "")))
	require.ElementsMatch(t, []string{withEmail, withPhoneOnly}, checkoutIDs(t, h.checkouts(s, "?has_contact=true")))
	require.ElementsMatch(t, []string{noContact}, checkoutIDs(t, h.checkouts(s, "?has_contact=false")))
	// A shorter threshold on the request marks the fresh cart too.
	require.ElementsMatch(t, []string{withEmail, withPhoneOnly, noContact, fresh}, checkoutIDs(t, h.checkouts(s, "?abandonment_threshold_minutes=5")))
	for _, bad := range []string{"?abandonment_threshold_minutes=4", "?abandonment_threshold_minutes=2881", "?has_contact=maybe",
		"?include_recovered=yes", "?only_recovered=2", "?limit=0", "?page=0", "?abandonment_threshold_minutes=ten"} {
		resp := h.checkouts(s, bad)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, bad)
		require.Equal(t, "VALIDATION_FAILED", resp.errorCode())
	}

	// mark-recovered: 409 on an active cart, idempotent on a recovered one.
	active, _ := h.openCart(s, 1, "")
	notYet := h.do(request{method: "POST", path: storePath(s.m.storeID, "/abandoned-checkouts/"+active+"/mark-recovered"), auth: bearer(s.token)})
	require.Equal(t, http.StatusConflict, notYet.Status)
	require.Equal(t, "CHECKOUT_NOT_ABANDONED", notYet.errorCode())
	mark := func() response {
		return h.do(request{method: "POST", path: storePath(s.m.storeID, "/abandoned-checkouts/"+noContact+"/mark-recovered"), auth: bearer(s.token),
			body: map[string]any{"note": "ordered by phone"}})
	}
	first := mark()
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	require.Equal(t, "recovered", first.data()["status"])
	require.Equal(t, "manual", first.data()["recovery_source"])
	require.NotNil(t, first.data()["recovered_at"])
	second := mark()
	require.Equal(t, http.StatusOK, second.Status)
	require.Equal(t, first.data()["recovered_at"], second.data()["recovered_at"], "unchanged the second time")
	badOrder := h.do(request{method: "POST", path: storePath(s.m.storeID, "/abandoned-checkouts/"+withPhoneOnly+"/mark-recovered"), auth: bearer(s.token),
		body: map[string]any{"order_id": "01a20189-3070-745d-87f0-c0a005dabd7e"}})
	require.Equal(t, http.StatusUnprocessableEntity, badOrder.Status)
	require.Equal(t, []string{"order_id"}, badOrder.fieldNames())

	require.ElementsMatch(t, []string{withEmail, withPhoneOnly, fresh}, checkoutIDs(t, h.checkouts(s, "")))
	require.ElementsMatch(t, []string{noContact}, checkoutIDs(t, h.checkouts(s, "?only_recovered=true")))
	require.ElementsMatch(t, []string{withEmail, withPhoneOnly, fresh, noContact}, checkoutIDs(t, h.checkouts(s, "?include_recovered=true")))
	require.ElementsMatch(t, []string{}, checkoutIDs(t, h.checkouts(s, "?only_recovered=true&has_contact=true")))
	require.ElementsMatch(t, []string{withPhoneOnly}, checkoutIDs(t, h.checkouts(s, "?include_recovered=false&has_contact=true&limit=1&page=2")), "paged newest-abandoned first")

	// The recovery email really goes out over SMTP, with a link back to the cart.
	noEmail := h.do(request{method: "POST", path: storePath(s.m.storeID, "/abandoned-checkouts/"+withPhoneOnly+"/send-recovery-email"), auth: bearer(s.token)})
	require.Equal(t, http.StatusUnprocessableEntity, noEmail.Status)
	require.Equal(t, []string{"email"}, noEmail.fieldNames())
	sendPath := storePath(s.m.storeID, "/abandoned-checkouts/"+withEmail+"/send-recovery-email")
	sent := h.do(request{method: "POST", path: sendPath, auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, sent.Status, string(sent.Raw))
	require.Equal(t, "reem@example.com", sent.data()["to"])
	firstSentAt := sent.data()["recovery_email_sent_at"].(string)
	msgs := h.messagesTo("reem@example.com")
	require.Len(t, msgs, 1)
	require.Equal(t, []string{"reem@example.com"}, msgs[0].To)
	html := mailHTML(t, msgs[0].Data)
	require.Contains(t, html, `dir="rtl"`, "the store's language: Arabic, right to left")
	require.Contains(t, html, "أكمل طلبك")
	link := regexp.MustCompile(`href="([^"]+/cart/[^"]+)"`).FindStringSubmatch(html)
	require.NotNil(t, link, html)
	u, err := url.Parse(strings.ReplaceAll(link[1], "&amp;", "&"))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(u.Path, "/cart/"+withEmail))
	reopened := h.buyer(s, "GET", "/carts/"+withEmail, nil, u.Query().Get("token"))
	require.Equal(t, http.StatusOK, reopened.Status, "the link's token opens the cart")
	require.Equal(t, "active", reopened.data()["status"], "the buyer sees the cart as open")

	time.Sleep(10 * time.Millisecond)
	resent := h.do(request{method: "POST", path: sendPath, auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, resent.Status)
	require.NotEqual(t, firstSentAt, resent.data()["recovery_email_sent_at"], "a second send overwrites the time")
	require.Len(t, h.messagesTo("reem@example.com"), 2)
	got := h.do(request{method: "GET", path: storePath(s.m.storeID, "/abandoned-checkouts/"+withEmail), auth: bearer(s.token)})
	require.Equal(t, resent.data()["recovery_email_sent_at"], got.data()["recovery_email_sent_at"])

	// Checking out an abandoned cart recovers it (recovery_source order).
	out := h.buyer(s, "POST", "/carts/"+withEmail+"/checkout", checkoutBody("cod"), withEmailToken)
	require.Equal(t, http.StatusCreated, out.Status, string(out.Raw))
	got = h.do(request{method: "GET", path: storePath(s.m.storeID, "/abandoned-checkouts/"+withEmail), auth: bearer(s.token)})
	require.Equal(t, "recovered", got.data()["status"])
	require.Equal(t, "order", got.data()["recovery_source"])
	require.Equal(t, out.data()["order"].(map[string]any)["id"], got.data()["order_id"])
	done := h.do(request{method: "POST", path: sendPath, auth: bearer(s.token)})
	require.Equal(t, "CHECKOUT_COMPLETED", done.errorCode())

	// Summary: abandoned now (withPhoneOnly, fresh), recovered (noContact
	// by hand, withEmail by an order after an email).
	sum := h.do(request{method: "GET", path: storePath(s.m.storeID, "/abandoned-checkouts/summary"), auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, sum.Status, string(sum.Raw))
	require.Equal(t, map[string]any{"count": float64(2), "value": float64(3 * 45000)}, sum.data()["abandoned"])
	require.Equal(t, map[string]any{"count": float64(2), "value": float64(2 * 45000)}, sum.data()["recovered"])
	require.Equal(t, 0.5, sum.data()["recovery_rate"])
	require.Equal(t, map[string]any{"emails_sent": float64(1), "recovered_after_email": map[string]any{"count": float64(1), "value": float64(45000)}},
		sum.data()["payback"])
	future := h.do(request{method: "GET", path: storePath(s.m.storeID, "/abandoned-checkouts/summary?date_from=2099-01-01T00:00:00Z"), auth: bearer(s.token)})
	require.Equal(t, float64(0), future.data()["abandoned"].(map[string]any)["count"])
	badRange := h.do(request{method: "GET", path: storePath(s.m.storeID, "/abandoned-checkouts/summary?date_from=2026-02-01T00:00:00Z&date_to=2026-01-01T00:00:00Z"), auth: bearer(s.token)})
	require.Equal(t, http.StatusUnprocessableEntity, badRange.Status)

	// Scopes and isolation.
	other := newShop(t, h, "abandoned2", 1)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(other.m.storeID, "/abandoned-checkouts/"+withPhoneOnly), auth: bearer(other.token)}).Status)
	catalogOnly := h.pat(s.m, "catalog:read")
	require.Equal(t, http.StatusForbidden, h.do(request{method: "GET", path: storePath(s.m.storeID, "/abandoned-checkouts"), auth: bearer(catalogOnly)}).Status)
}

// Buyers carry no token: the storefront is limited per client address.
func TestStorefrontRateLimitPerClientAddress(t *testing.T) {
	h := newHarness(t, api.Config{StorefrontRateLimitPerMinute: 3})
	s := newShop(t, h, "limited", 1)
	awayFromWindowEdge()
	for i := range 3 {
		require.Equal(t, http.StatusOK, h.buyer(s, "GET", "/products", nil, "").Status, "request %d", i+1)
	}
	over := h.buyer(s, "GET", "/products", nil, "")
	require.Equal(t, http.StatusTooManyRequests, over.Status)
	require.Equal(t, "RATE_LIMITED", over.errorCode())
	require.NotEmpty(t, over.Header.Get("Retry-After"))
	require.NotEmpty(t, over.errorField("message_ar"))
	// The merchant API is not affected: it counts per token.
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(s.m.storeID, "/products"), auth: bearer(s.token)}).Status)
}

// Behind a trusted load balancer each buyer is limited by the address the
// balancer heard from, not the balancer's own; what the client wrote into
// X-Forwarded-For itself is ignored.
func TestStorefrontRateLimitBehindATrustedProxy(t *testing.T) {
	h := newHarness(t, api.Config{StorefrontRateLimitPerMinute: 2, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	s := newShop(t, h, "proxied", 1)
	from := func(forwardedFor string) int {
		return h.do(request{method: "GET", path: "/api/v1/storefront/" + h.subdomain(s) + "/products",
			headers: map[string]string{"X-Forwarded-For": forwardedFor}}).Status
	}
	awayFromWindowEdge()
	require.Equal(t, http.StatusOK, from("203.0.113.7"))
	require.Equal(t, http.StatusOK, from("198.51.100.1, 203.0.113.7"), "the client's own entry is not believed")
	require.Equal(t, http.StatusTooManyRequests, from("203.0.113.7"))
	require.Equal(t, http.StatusOK, from("203.0.113.8"), "another buyer behind the same balancer has a limit of its own")
}
