package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
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
