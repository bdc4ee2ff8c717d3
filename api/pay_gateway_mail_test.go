package api_test

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// gatewayMail is the owner's mail about one change to a gateway's keys.
type gatewayMail struct {
	subject, html string
}

// gatewayMails reads the gateway change mails to email, oldest first, once
// there are at least n.
func (h *harness) gatewayMails(email string, n int) []gatewayMail {
	h.t.Helper()
	var out []gatewayMail
	require.Eventually(h.t, func() bool {
		out = nil
		for _, m := range h.messagesTo(email) {
			if html := mailHTML(h.t, m.Data); strings.Contains(html, "data-gateway-change=") {
				msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
				require.NoError(h.t, err)
				subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
				require.NoError(h.t, err)
				out = append(out, gatewayMail{subject: subject, html: html})
			}
		}
		return len(out) >= n
	}, 20*time.Second, 50*time.Millisecond, "%d gateway change mails to %s", n, email)
	return out
}

// Whoever connects, replaces or disconnects a store's gateway keys, the
// owner gets one mail about it (issue 48 §6), in the store's language,
// naming who did it, when and from where (the audit entry's request
// source), and the keys only by the hint the API shows: never the secret
// key or the webhook secret. A refused attempt mails nothing.
func TestGatewayKeyChangesMailTheOwner(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "cardmail", 10)
	admin := h.join(s.m, "admin-cardmail@example.com", h.roleID(s.m, "Admin"))
	path := storePath(s.m.storeID, "/payment-gateways/stripe")
	const replacedKey = "sk_test_replacedkeys9876"

	refused := h.do(request{method: "PUT", path: path, auth: bearer(s.token),
		body: map[string]any{"secret_key": testStripeKey, "webhook_secret": testStripeHook}})
	require.Equal(t, http.StatusForbidden, refused.Status, string(refused.Raw))

	connected := h.do(request{method: "PUT", path: path, auth: admin.auth(),
		headers: map[string]string{"User-Agent": "gateway-mail-test/1.0", "X-Request-Id": "req-gateway-connect"},
		body:    map[string]any{"secret_key": testStripeKey, "webhook_secret": testStripeHook}})
	require.Equal(t, http.StatusOK, connected.Status, string(connected.Raw))
	first := h.gatewayMails(s.m.email, 1)[0]
	require.Equal(t, "تغيّرت مفاتيح بوابة الدفع في متجرك", first.subject, "fixed text in the store's language (Arabic)")
	for _, want := range []string{`dir="rtl"`, `data-gateway-change="connected"`, "رُبطت بوابة الدفع Stripe بمتجرك", "Store cardmail",
		"Staff admin-cardmail@example.com", "admin-cardmail@example.com", "127.0.0.1", "gateway-mail-test/1.0", "req-gateway-connect",
		"…4242", " UTC"} {
		require.Contains(t, first.html, want)
	}
	require.NotContains(t, first.html, "data-previous-hint", "a first connect replaced nothing")

	// The owner replaces the keys: the mail names the keys before and now.
	replaced := h.do(request{method: "PUT", path: path, auth: s.m.auth(), headers: map[string]string{"X-Request-Id": "req-gateway-replace"},
		body: map[string]any{"secret_key": replacedKey, "webhook_secret": testStripeHook}})
	require.Equal(t, http.StatusOK, replaced.Status, string(replaced.Raw))
	second := h.gatewayMails(s.m.email, 2)[1]
	for _, want := range []string{`data-gateway-change="replaced"`, "استُبدلت مفاتيح بوابة الدفع Stripe", "Merchant cardmail", s.m.email,
		"req-gateway-replace", `data-hint>…9876<`, `data-previous-hint>…4242<`} {
		require.Contains(t, second.html, want)
	}

	// In English once the store is, and for a disconnect too.
	h.settings(s, map[string]any{"default_language": "en"})
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: path, auth: admin.auth(),
		headers: map[string]string{"X-Request-Id": "req-gateway-disconnect"}}).Status)
	third := h.gatewayMails(s.m.email, 3)[2]
	require.Equal(t, "Your store's payment gateway keys changed", third.subject)
	for _, want := range []string{`dir="ltr"`, `data-gateway-change="disconnected"`, "The Stripe payment gateway was disconnected",
		"admin-cardmail@example.com", "req-gateway-disconnect", `data-previous-hint>…9876<`} {
		require.Contains(t, third.html, want)
	}
	require.NotContains(t, third.html, "data-hint>", "nothing is connected now")

	for _, m := range []gatewayMail{first, second, third} {
		for _, secret := range []string{testStripeKey, replacedKey, testStripeHook, "cardpayments", "replacedkeys", "sk_test_", "whsec_"} {
			require.NotContains(t, m.subject+m.html, secret, "a gateway mail shows no part of a secret but the hint")
		}
	}
	// A refused disconnect mails nothing either.
	require.Equal(t, http.StatusForbidden, h.do(request{method: "DELETE", path: path, auth: bearer(s.token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "DELETE", path: path, auth: s.m.auth()}).Status, "nothing left to disconnect")
	time.Sleep(time.Second)
	require.Len(t, h.gatewayMails(s.m.email, 3), 3, "one mail per change, none for refusals")
	require.Empty(t, func() []gatewayMail {
		var toAdmin []gatewayMail
		for _, m := range h.messagesTo(admin.email) {
			if strings.Contains(mailHTML(t, m.Data), "data-gateway-change=") {
				toAdmin = append(toAdmin, gatewayMail{})
			}
		}
		return toAdmin
	}(), "the mail goes to the owner, not to whoever made the change")
}

// Connects at once are told apart: each change reads the keys under a lock,
// so of six the owner sends together one is "connected" and five
// "replaced", and each replace names as before the keys another put there.
func TestGatewayConnectsAtOnceMailOneConnect(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "cardrace", 10)
	const n = 6
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp := h.do(request{method: "PUT", path: storePath(s.m.storeID, "/payment-gateways/stripe"), auth: s.m.auth(),
				body: map[string]any{"secret_key": fmt.Sprintf("sk_test_raceconnect%04d", i), "webhook_secret": testStripeHook}})
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		})
	}
	wg.Wait()
	kinds := map[string]int{}
	now, before := map[string]bool{}, []string{}
	hint := regexp.MustCompile(`data-hint>(…[0-9]{4})<`)
	previous := regexp.MustCompile(`data-previous-hint>(…[0-9]{4})<`)
	for _, m := range h.gatewayMails(s.m.email, n) {
		kind := regexp.MustCompile(`data-gateway-change="([a-z]+)"`).FindStringSubmatch(m.html)[1]
		kinds[kind]++
		now[hint.FindStringSubmatch(m.html)[1]] = true
		if p := previous.FindStringSubmatch(m.html); p != nil {
			before = append(before, p[1])
		}
	}
	require.Equal(t, map[string]int{"connected": 1, "replaced": n - 1}, kinds)
	require.Len(t, now, n)
	for _, b := range before {
		require.True(t, now[b], "a replace names keys another change connected")
	}
	require.Len(t, before, n-1)
}
