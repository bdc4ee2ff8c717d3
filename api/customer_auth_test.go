package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// account calls a storefront account route with the buyer's session cookie.
func (h *harness) account(s shop, method, rest string, body any, session string) response {
	h.t.Helper()
	headers := map[string]string{}
	if session != "" {
		headers["Cookie"] = "svc_customer=" + session
	}
	return h.do(request{method: method, path: "/api/v1/storefront/" + h.subdomain(s) + rest, body: body, headers: headers})
}

// sessionOf is the svc_customer cookie an answer sets.
func sessionOf(t *testing.T, resp response) string {
	t.Helper()
	for _, c := range (&http.Response{Header: resp.Header}).Cookies() {
		if c.Name == "svc_customer" {
			require.True(t, c.HttpOnly, "the session cookie is HttpOnly")
			require.Equal(t, http.SameSiteLaxMode, c.SameSite)
			require.Equal(t, 30*24*3600, c.MaxAge)
			return c.Value
		}
	}
	t.Fatalf("no svc_customer cookie in %v", resp.Header)
	return ""
}

// A returning buyer signs in by a code sent by WhatsApp from the store's
// number (decisions §24): the answer to start is the same for known and
// unknown identifiers; a second start within a minute is 429; a wrong code
// counts down its attempts; the right one claims the guest customer (no
// duplicate; the guest order is in the account) and sets the session
// cookie; the profile's consent changes; another buyer's order and another
// store are out of reach; logout ends the session on the server; a used
// code is 410; five misses kill a challenge.
func TestBuyerSignsInByACode(t *testing.T) {
	h := newHarness(t, api.Config{Secrets: testenv.Sealer(t)})
	h.startWorker(nil)
	s := newShop(t, h, "buyeraccount", 10)
	phoneNumberID := fmt.Sprintf("4%014d", time.Now().UnixNano()%1e14)
	connected := h.do(request{method: "PUT", path: storePath(s.m.storeID, "/messaging/channels/whatsapp"), auth: bearer(s.token),
		body: map[string]any{"phone_number_id": phoneNumberID, "waba_id": "7770001", "access_token": "EAAG" + strings.Repeat("z", 20),
			"app_secret": "account-app-secret-00000"}})
	require.Equal(t, http.StatusOK, connected.Status, string(connected.Raw))

	phone := fmt.Sprintf("+2011%08d", time.Now().UnixNano()%1e8)
	guest := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, phone)})
	require.Equal(t, http.StatusCreated, guest.Status, string(guest.Raw))
	other := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(s.variantID, 1, "+201119990001")})
	require.Equal(t, http.StatusCreated, other.Status, string(other.Raw))

	start := h.account(s, "POST", "/customer-auth/start", map[string]any{"phone": phone}, "")
	require.Equal(t, http.StatusAccepted, start.Status, string(start.Raw))
	challenge := start.data()
	require.Equal(t, "whatsapp", challenge["channel"])
	require.EqualValues(t, 300, challenge["expires_in"])
	require.EqualValues(t, 60, challenge["resend_after"])
	unknown := h.account(s, "POST", "/customer-auth/start", map[string]any{"email": "nobody-yet@example.com"}, "")
	require.Equal(t, http.StatusAccepted, unknown.Status, string(unknown.Raw))
	require.ElementsMatch(t, mapKeys(challenge), mapKeys(unknown.data()), "known and unknown identifiers get the same answer")
	again := h.account(s, "POST", "/customer-auth/start", map[string]any{"phone": phone}, "")
	require.Equal(t, http.StatusTooManyRequests, again.Status, string(again.Raw))
	require.NotEmpty(t, again.Header.Get("Retry-After"))
	bad := h.account(s, "POST", "/customer-auth/start", map[string]any{"phone": phone, "email": "x@example.com"}, "")
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status, string(bad.Raw))

	// The code arrives from the store's number, in the sign_in_code template.
	var code string
	require.Eventually(t, func() bool {
		for _, m := range whatsAppSent(t, phoneNumberID) {
			if name, params := templateOf(t, m); name == "sign_in_code" && m.To == phone {
				code = params[0]
			}
		}
		return code != ""
	}, 20*time.Second, 50*time.Millisecond)
	require.Len(t, code, 6)

	verify := func(id, code string) response {
		return h.account(s, "POST", "/customer-auth/verify", map[string]any{"challenge_id": id, "code": code}, "")
	}
	wrong := fmt.Sprintf("%06d", (atoi(code)+1)%1_000_000)
	miss := verify(challenge["challenge_id"].(string), wrong)
	require.Equal(t, http.StatusUnprocessableEntity, miss.Status, string(miss.Raw))
	require.Equal(t, "wrong_code", miss.fieldCode("code"))
	require.EqualValues(t, 4, miss.Body["error"].(map[string]any)["details"].(map[string]any)["attempts_left"])

	signedIn := verify(challenge["challenge_id"].(string), toArabicDigits(code))
	require.Equal(t, http.StatusOK, signedIn.Status, string(signedIn.Raw))
	customer := signedIn.data()["customer"].(map[string]any)
	require.Equal(t, guest.data()["customer_id"], customer["id"], "the guest customer is claimed, not duplicated")
	require.Equal(t, true, customer["has_account"])
	session := sessionOf(t, signedIn)
	require.Equal(t, http.StatusGone, verify(challenge["challenge_id"].(string), code).Status, "a code works once")

	require.Equal(t, http.StatusUnauthorized, h.account(s, "GET", "/account", nil, "").Status)
	me := h.account(s, "GET", "/account", nil, session)
	require.Equal(t, http.StatusOK, me.Status, string(me.Raw))
	require.Equal(t, "private, no-store", me.Header.Get("Cache-Control"))
	orders := h.account(s, "GET", "/account/orders", nil, session)
	require.Equal(t, http.StatusOK, orders.Status, string(orders.Raw))
	items := orders.data()["items"].([]any)
	require.Len(t, items, 1)
	require.Equal(t, guest.data()["order_number"], items[0].(map[string]any)["order_number"])
	require.EqualValues(t, guest.data()["total"], items[0].(map[string]any)["cod_amount_due"], "a COD order's balance is what the courier collects")
	one := h.account(s, "GET", "/account/orders/"+guest.data()["order_number"].(string), nil, session)
	require.Equal(t, http.StatusOK, one.Status, string(one.Raw))
	require.Len(t, one.data()["lines"], 1)
	require.Equal(t, http.StatusNotFound, h.account(s, "GET", "/account/orders/"+other.data()["order_number"].(string), nil, session).Status)

	patched := h.account(s, "PATCH", "/account", map[string]any{"name": "منى عادل", "language": "ar",
		"marketing": map[string]any{"whatsapp": map[string]any{"state": "subscribed"}}}, session)
	require.Equal(t, http.StatusOK, patched.Status, string(patched.Raw))
	consent := patched.data()["marketing"].(map[string]any)["whatsapp"].(map[string]any)
	require.Equal(t, "subscribed", consent["state"])
	require.Equal(t, "account", consent["source"])
	require.Equal(t, http.StatusUnprocessableEntity, h.account(s, "PATCH", "/account", map[string]any{"language": "fr"}, session).Status)

	elsewhere := newShop(t, h, "buyeraccountother", 5)
	require.Equal(t, http.StatusUnauthorized, h.account(elsewhere, "GET", "/account", nil, session).Status, "a session opens one store")

	require.Equal(t, http.StatusNoContent, h.account(s, "POST", "/customer-auth/logout", nil, session).Status)
	require.Equal(t, http.StatusUnauthorized, h.account(s, "GET", "/account", nil, session).Status, "logout ends the session on the server")

	// Five misses kill a challenge: the right code is refused after.
	dying := unknown.data()["challenge_id"].(string)
	for i := range 4 {
		require.Equal(t, http.StatusUnprocessableEntity, verify(dying, "000000").Status, "miss %d", i+1)
	}
	require.Equal(t, http.StatusTooManyRequests, verify(dying, "000000").Status, "the fifth miss")
	require.Equal(t, http.StatusTooManyRequests, verify(dying, "123456").Status, "and every attempt after")
}

func mapKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

func toArabicDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '٠' + (r - '0')
		}
		return r
	}, s)
}
