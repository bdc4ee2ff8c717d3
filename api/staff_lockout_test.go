package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// lockoutHarness is a harness whose requests may say, through
// X-Forwarded-For from loopback, which network they come from; without the
// header a request comes from 127.0.0.1, the network every signup and its
// session come from.
func lockoutHarness(t *testing.T, limits api.PasswordLimits) *harness {
	limits.Wait = time.Minute // the bursts queue on bcrypt rather than shed
	h := newHarness(t, api.Config{Passwords: limits, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	h.startWorker(nil)
	return h
}

// loginFrom signs in from network ("" for the signup's loopback).
func (h *harness) loginFrom(network, email, password string) response {
	h.t.Helper()
	req := request{method: "POST", path: "/api/v1/auth/login", body: map[string]any{"email": email, "password": password}}
	if network != "" {
		req.headers = map[string]string{"X-Forwarded-For": network}
	}
	return h.do(req)
}

// lockNotices counts the sign-in lock notices written for email.
func (h *harness) lockNotices(email string) int {
	h.t.Helper()
	var n int
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(),
		`SELECT count(*) FROM account_mails a JOIN users u ON u.id = a.user_id WHERE u.email = $1 AND a.kind = 'sign_in_lock'`, email).Scan(&n))
	return n
}

// requireLocked checks a refusal of the lock: 429 RATE_LIMITED with
// Retry-After within the window, no session.
func requireLocked(t *testing.T, r response, window time.Duration) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.Status, string(r.Raw))
	require.Equal(t, "RATE_LIMITED", r.errorCode())
	require.NotEmpty(t, r.errorField("message_ar"))
	wait, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, wait >= 1 && time.Duration(wait)*time.Second <= window+time.Second, "Retry-After %d", wait)
	require.Empty(t, r.Header.Values("Set-Cookie"), "no session")
}

// A stranger's ten wrong guesses lock the account for new networks only:
// the owner still signs in from a network they signed in from before (the
// signup's), while from any other network the right password gets the same
// 429 as a wrong one, before any check. An address with no account locks
// the same way, and a known network older than 30 days is a new one.
func TestLockedAccountStillLetsItsKnownNetworksIn(t *testing.T) {
	h := lockoutHarness(t, api.PasswordLimits{})
	m := h.signup("lockowner")
	const attacker, traveller = "203.0.113.7", "198.51.100.9"
	for i := range 10 {
		require.Equal(t, http.StatusUnauthorized, h.loginFrom(attacker, m.email, "wrong password "+strconv.Itoa(i)).Status, "failure %d", i+1)
		require.Equal(t, http.StatusUnauthorized, h.loginFrom(attacker, "nobody-lock@example.com", "wrong password "+strconv.Itoa(i)).Status)
	}
	for _, email := range []string{m.email, "nobody-lock@example.com"} {
		right, wrong := h.loginFrom(traveller, email, "correct horse battery"), h.loginFrom(traveller, email, "wrong again!")
		requireLocked(t, right, 15*time.Minute)
		requireLocked(t, wrong, 15*time.Minute)
		require.Equal(t, wrong.errorField("message"), right.errorField("message"), "the refusal does not tell whether the password was right")
		requireLocked(t, h.loginFrom(attacker, email, "correct horse battery"), 15*time.Minute)
	}

	// From the signup's network the owner gets in, and a typo there is an
	// ordinary failure.
	require.Equal(t, http.StatusUnauthorized, h.loginFrom("", m.email, "a typo of mine").Status)
	home := h.loginFrom("", m.email, "correct horse battery")
	require.Equal(t, http.StatusOK, home.Status, string(home.Raw))
	require.NotEmpty(t, sessionCookie(t, home))

	// Thirty days without a sign-in from it, a network is new again.
	h.exec(`UPDATE sign_in_networks SET last_signed_in_at = now() - interval '31 days'`)
	requireLocked(t, h.loginFrom("", m.email, "correct horse battery"), 15*time.Minute)
	require.Zero(t, h.lockNotices("nobody-lock@example.com"))

	// A known network gets the account's ten failures of its own, no more:
	// someone who shares it cannot guess on without limit.
	h.exec(`UPDATE sign_in_networks SET last_signed_in_at = now()`)
	for i := range 9 { // the typo above was the first
		require.Equal(t, http.StatusUnauthorized, h.loginFrom("", m.email, "another typo "+strconv.Itoa(i)).Status, "failure %d", i+2)
	}
	requireLocked(t, h.loginFrom("", m.email, "correct horse battery"), 15*time.Minute)
}

// Thirty wrong guesses at once lock the account and send its owner one
// notice, whose link signs in from the stranger's network; that network is
// known from then on.
func TestOneLockNoticeAfterABurstAndItsLinkSignsIn(t *testing.T) {
	h := lockoutHarness(t, api.PasswordLimits{})
	m := h.signup("lockburst")
	const traveller = "198.51.100.20"
	statuses := burst(30, func(i int) int {
		return h.loginFrom(fmt.Sprintf("203.0.113.%d", i+1), m.email, "guess "+strconv.Itoa(i)).Status
	})
	require.Equal(t, map[int]int{http.StatusUnauthorized: 10, http.StatusTooManyRequests: 20}, statuses)
	links := h.accountLinks(m.email, "/password-reset", 1)
	require.Len(t, links, 1)
	requireLocked(t, h.loginFrom(traveller, m.email, "correct horse battery"), 15*time.Minute)
	requireLocked(t, h.loginFrom("203.0.113.1", m.email, "another guess"), 15*time.Minute)
	time.Sleep(500 * time.Millisecond) // a second mail would have gone by now
	require.Equal(t, 1, h.lockNotices(m.email), "one notice for the lock, not one for each refusal")
	require.Len(t, h.accountLinks(m.email, "/password-reset", 1), 1)
	for _, msg := range h.messagesTo(m.email) {
		if html := mailHTML(t, msg.Data); strings.Contains(html, "/password-reset#") {
			require.Contains(t, html, "الشبكات التي دخلت منها من قبل", "the lock notice, in the account's language")
		}
	}

	confirmed := h.do(request{method: "POST", path: "/api/v1/auth/password-reset/confirm", headers: map[string]string{"X-Forwarded-For": traveller},
		body: map[string]any{"token": links[0], "password": "a brand new passphrase"}})
	require.Equal(t, http.StatusOK, confirmed.Status, string(confirmed.Raw))
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: "/api/v1/auth/me", auth: auth{session: sessionCookie(t, confirmed)}}).Status)
	again := h.loginFrom(traveller, m.email, "a brand new passphrase")
	require.Equal(t, http.StatusOK, again.Status, "the link's network is known now: %s", again.Raw)
	requireLocked(t, h.loginFrom("198.51.100.21", m.email, "a brand new passphrase"), 15*time.Minute)
}

// A lock in a later window sends a second notice.
func TestEachLockWindowSendsItsNotice(t *testing.T) {
	const window = 4 * time.Second
	h := lockoutHarness(t, api.PasswordLimits{FailuresPerAccount: 3, Window: window})
	m := h.signup("lockagain")
	lock := func() {
		for i := range 3 {
			require.Equal(t, http.StatusUnauthorized, h.loginFrom("203.0.113.50", m.email, "guess "+strconv.Itoa(i)).Status)
		}
		requireLocked(t, h.loginFrom("203.0.113.50", m.email, "correct horse battery"), window)
		time.Sleep(window + 300*time.Millisecond) // every failure leaves the window
	}
	lock()
	require.Len(t, h.accountLinks(m.email, "/password-reset", 1), 1)
	require.Equal(t, 1, h.lockNotices(m.email))
	lock()
	require.Len(t, h.accountLinks(m.email, "/password-reset", 2), 2)
	require.Equal(t, 2, h.lockNotices(m.email))
}
