package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/mailsink"
	"github.com/merchantsvc/svc/internal/testenv"
)

// accountEvents counts a store's audit entries of one action.
func (h *harness) accountEvents(storeID, action string) int {
	h.t.Helper()
	var n int
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(),
		`SELECT count(*) FROM audit_entries WHERE store_id = $1 AND action = $2`, storeID, action).Scan(&n))
	return n
}

// A signed-in user changes the password knowing the current one: the other
// browsers are signed out, this one stays, and only the new password signs
// in from now on.
func TestChangePasswordEndsOtherSessions(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("changer")
	other := sessionCookie(t, h.login(m.email, "correct horse battery"))
	me := func(session string) int {
		return h.do(request{method: "GET", path: "/api/v1/auth/me", auth: auth{session: session}}).Status
	}

	wrong := h.do(request{method: "POST", path: "/api/v1/auth/password", auth: m.auth(),
		body: map[string]any{"current_password": "not the password", "new_password": "a brand new passphrase"}})
	require.Equal(t, http.StatusForbidden, wrong.Status, string(wrong.Raw))
	require.Equal(t, "CURRENT_PASSWORD_WRONG", wrong.errorCode())
	short := h.do(request{method: "POST", path: "/api/v1/auth/password", auth: m.auth(),
		body: map[string]any{"current_password": "correct horse battery", "new_password": "short"}})
	require.Equal(t, http.StatusUnprocessableEntity, short.Status)
	require.Equal(t, []string{"new_password"}, short.fieldNames())
	token := h.pat(m, "catalog:read")
	byToken := h.do(request{method: "POST", path: "/api/v1/auth/password", auth: bearer(token),
		body: map[string]any{"current_password": "correct horse battery", "new_password": "a brand new passphrase"}})
	require.Equal(t, http.StatusForbidden, byToken.Status, "a token cannot change its minter's password")
	require.Equal(t, http.StatusOK, me(other), "a refused change signs no one out")

	changed := h.do(request{method: "POST", path: "/api/v1/auth/password", auth: m.auth(),
		body: map[string]any{"current_password": "correct horse battery", "new_password": "a brand new passphrase"}})
	require.Equal(t, http.StatusNoContent, changed.Status, string(changed.Raw))
	require.Equal(t, http.StatusOK, me(m.session), "the browser that changed it stays signed in")
	require.Equal(t, http.StatusUnauthorized, me(other), "every other browser is signed out")
	require.Equal(t, http.StatusUnauthorized, h.login(m.email, "correct horse battery").Status)
	require.Equal(t, http.StatusOK, h.login(m.email, "a brand new passphrase").Status)
	require.Equal(t, 1, h.accountEvents(m.storeID, "staff.password_changed"))
}

// Signing out everywhere ends every session of the user, the caller's too,
// and no one else's.
func TestLogoutEverywhereEndsEverySession(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("everywhere")
	bystander := h.signup("bystander")
	other := sessionCookie(t, h.login(m.email, "correct horse battery"))
	me := func(session string) int {
		return h.do(request{method: "GET", path: "/api/v1/auth/me", auth: auth{session: session}}).Status
	}

	byToken := h.do(request{method: "POST", path: "/api/v1/auth/logout-everywhere", auth: bearer(h.pat(m, "catalog:read"))})
	require.Equal(t, http.StatusForbidden, byToken.Status)
	out := h.do(request{method: "POST", path: "/api/v1/auth/logout-everywhere", auth: m.auth()})
	require.Equal(t, http.StatusNoContent, out.Status, string(out.Raw))
	require.Equal(t, http.StatusUnauthorized, me(m.session))
	require.Equal(t, http.StatusUnauthorized, me(other))
	require.Equal(t, http.StatusOK, me(bystander.session), "another user's session lives on")
	require.Equal(t, 1, h.accountEvents(m.storeID, "staff.signed_out_everywhere"))
	require.Equal(t, http.StatusOK, h.login(m.email, "correct horse battery").Status, "the password still signs in")
}

// accountLinks reads the tokens of the account mails to email whose link
// opens page (/password-reset, /verify-email), oldest first, once there
// are at least n.
func (h *harness) accountLinks(email, page string, n int) []string {
	h.t.Helper()
	return h.mailedTokens(email, `href="[^"]+`+page+`#token=(svc_[a-z]+_[A-Za-z0-9_-]+)"`, n)
}

// mailsTo counts the mails sent to email.
func (h *harness) mailsTo(email string) int {
	return len(h.messagesTo(email))
}

// messagesTo answers the mails sent to email alone, oldest first: a test
// that counts its own mails is not thrown by others, such as the
// verification mail every signup sends its merchant.
func (h *harness) messagesTo(email string) []mailsink.Message {
	var to []mailsink.Message
	for _, m := range h.mail.Messages() {
		if len(m.To) == 1 && m.To[0] == email {
			to = append(to, m)
		}
	}
	return to
}

// A forgotten password is reset by a mailed single-use link: the request
// answers the same for every email, the link lives thirty minutes, and
// using it sets the password, ends every session and signs this browser in.
func TestPasswordResetByEmail(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("forgetful")
	other := sessionCookie(t, h.login(m.email, "correct horse battery"))
	me := func(session string) int {
		return h.do(request{method: "GET", path: "/api/v1/auth/me", auth: auth{session: session}}).Status
	}
	reset := func(email string) response {
		return h.do(request{method: "POST", path: "/api/v1/auth/password-reset", body: map[string]any{"email": email}})
	}
	confirm := func(token, password string) response {
		return h.do(request{method: "POST", path: "/api/v1/auth/password-reset/confirm", body: map[string]any{"token": token, "password": password}})
	}

	known, unknown := reset(m.email), reset("nobody-here@example.com")
	require.Equal(t, http.StatusAccepted, known.Status, string(known.Raw))
	require.Equal(t, http.StatusAccepted, unknown.Status)
	require.Equal(t, known.Raw, unknown.Raw, "the answer does not tell which emails have accounts")
	require.Equal(t, http.StatusAccepted, reset(m.email).Status, "pressed twice")
	links := h.accountLinks(m.email, "/password-reset", 1)
	require.Len(t, links, 1, "a reset asked for twice within a minute sends one mail")
	token := links[0]
	require.Zero(t, h.mailsTo("nobody-here@example.com"))
	for _, msg := range h.mail.Messages() {
		if html := mailHTML(t, msg.Data); msg.To[0] == m.email && strings.Contains(html, "/password-reset#") {
			require.Contains(t, html, "اختر كلمة مرور جديدة", "the account's language, Arabic")
		}
	}

	unknownToken := confirm("svc_pwr_not-a-token", "a brand new passphrase")
	require.Equal(t, http.StatusBadRequest, unknownToken.Status, string(unknownToken.Raw))
	require.Equal(t, "LINK_INVALID", unknownToken.errorCode())
	// The verification link signup mailed lives a week: it is no reset link.
	verification := h.accountLinks(m.email, "/verify-email", 1)[0]
	otherKind := confirm(verification, "a brand new passphrase")
	require.Equal(t, http.StatusBadRequest, otherKind.Status, string(otherKind.Raw))
	require.Equal(t, "LINK_INVALID", otherKind.errorCode())
	require.Equal(t, []string{"password"}, confirm(token, "short").fieldNames())
	require.Equal(t, http.StatusOK, me(m.session), "a refused confirmation changes nothing")

	done := confirm(token, "a brand new passphrase")
	require.Equal(t, http.StatusOK, done.Status, string(done.Raw))
	require.Equal(t, m.email, done.data()["user"].(map[string]any)["email"])
	require.Equal(t, http.StatusOK, me(sessionCookie(t, done)), "the reset signs this browser in")
	require.Equal(t, http.StatusUnauthorized, me(m.session), "every earlier session ends")
	require.Equal(t, http.StatusUnauthorized, me(other))
	require.Equal(t, http.StatusUnauthorized, h.login(m.email, "correct horse battery").Status)
	require.Equal(t, http.StatusOK, h.login(m.email, "a brand new passphrase").Status)
	require.Equal(t, 1, h.accountEvents(m.storeID, "staff.password_reset"))
	again := confirm(token, "yet another passphrase")
	require.Equal(t, http.StatusBadRequest, again.Status, "the link works once")
	require.Equal(t, "LINK_INVALID", again.errorCode())

	// A link past its thirty minutes answers 410.
	h.exec(`UPDATE account_mails SET created_at = created_at - interval '31 minutes', expires_at = expires_at - interval '31 minutes'`)
	require.Equal(t, http.StatusAccepted, reset(m.email).Status)
	late := h.accountLinks(m.email, "/password-reset", 2)[1]
	h.exec(`UPDATE account_mails SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`)
	expired := confirm(late, "yet another passphrase")
	require.Equal(t, http.StatusGone, expired.Status, string(expired.Raw))
	require.Equal(t, "LINK_EXPIRED", expired.errorCode())
	require.Equal(t, http.StatusOK, h.login(m.email, "a brand new passphrase").Status)
}

// verifyEmail uses the verification link mailed at m's signup.
func (h *harness) verifyEmail(m merchant) {
	h.t.Helper()
	token := h.accountLinks(m.email, "/verify-email", 1)[0]
	verified := h.do(request{method: "POST", path: "/api/v1/auth/verify-email", body: map[string]any{"token": token}})
	require.Equal(h.t, http.StatusNoContent, verified.Status, string(verified.Raw))
}

// Signup mails a verification link; until it is used the account cannot
// accept an invitation for its address. An account created by accepting an
// invitation is verified already.
func TestEmailVerificationAtSignup(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	owner, newcomer := h.signup("verifyowner"), h.signup("verifynew")
	verified := func(m merchant) any {
		return h.do(request{method: "GET", path: "/api/v1/auth/me", auth: m.auth()}).data()["user"].(map[string]any)["email_verified"]
	}
	require.Equal(t, false, verified(newcomer))

	role := h.do(request{method: "POST", path: storePath(owner.storeID, "/roles"), auth: owner.auth(),
		body: map[string]any{"name": "Viewer", "scopes": []string{"orders:read"}}}).data()["id"].(string)
	inv := h.do(request{method: "POST", path: storePath(owner.storeID, "/staff/invitations"), auth: owner.auth(),
		body: map[string]any{"email": newcomer.email, "role_id": role}})
	require.Equal(t, http.StatusCreated, inv.Status, string(inv.Raw))
	invitation := h.invitationToken(newcomer.email, 1)
	accept := func() response {
		return h.do(request{method: "POST", path: "/api/v1/staff-invitations/accept", body: map[string]any{"token": invitation}, auth: newcomer.auth()})
	}
	refused := accept()
	require.Equal(t, http.StatusConflict, refused.Status, string(refused.Raw))
	require.Equal(t, "EMAIL_NOT_VERIFIED", refused.errorCode())
	require.NotEmpty(t, refused.errorField("message_ar"))

	// A password reset link is not a verification link: it verifies nothing.
	asked := h.do(request{method: "POST", path: "/api/v1/auth/password-reset", body: map[string]any{"email": newcomer.email}})
	require.Equal(t, http.StatusAccepted, asked.Status, string(asked.Raw))
	resetLink := h.accountLinks(newcomer.email, "/password-reset", 1)[0]
	otherKind := h.do(request{method: "POST", path: "/api/v1/auth/verify-email", body: map[string]any{"token": resetLink}})
	require.Equal(t, http.StatusBadRequest, otherKind.Status, string(otherKind.Raw))
	require.Equal(t, "LINK_INVALID", otherKind.errorCode())
	require.Equal(t, false, verified(newcomer))

	token := h.accountLinks(newcomer.email, "/verify-email", 1)[0]
	done := h.do(request{method: "POST", path: "/api/v1/auth/verify-email", body: map[string]any{"token": token}})
	require.Equal(t, http.StatusNoContent, done.Status, string(done.Raw))
	require.Equal(t, true, verified(newcomer))
	again := h.do(request{method: "POST", path: "/api/v1/auth/verify-email", body: map[string]any{"token": token}})
	require.Equal(t, http.StatusBadRequest, again.Status, "the link works once")
	require.Equal(t, "LINK_INVALID", again.errorCode())
	require.Equal(t, http.StatusCreated, accept().Status)

	// A new account made through an invitation: its mail proved the address.
	clerk := h.join(owner, "verified-clerk@example.com", role)
	require.Equal(t, true, verified(clerk))
}
