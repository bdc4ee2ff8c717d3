package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/webhook"
)

// A secret is shown once and never kept beside an Idempotency-Key: the
// replay of a token mint, a webhook subscription or a carrier account answers the resource
// without its secret, and no stored answer holds one (issue 17, finding 5).
func TestIdempotentReplaysKeepNoSecret(t *testing.T) {
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}})
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	m := h.signup("secrets")
	pat := h.pat(m, "settings:write", "orders:read")
	for _, tc := range []struct {
		name, path, field, prefix string
		auth                      auth
		body                      map[string]any
	}{
		{"token", storePath(m.storeID, "/access-tokens"), "token", "svc_pat_", m.auth(),
			map[string]any{"name": "erp", "scopes": []string{"catalog:read"}}},
		{"webhook", storePath(m.storeID, "/webhooks"), "secret", "svc_whsec_", bearer(pat),
			map[string]any{"url": rec.url(), "events": []string{"order.paid"}}},
		{"carrier account", storePath(m.storeID, "/carrier-accounts"), "callback_secret", "csec_", bearer(pat),
			map[string]any{"carrier": "other", "name": "Replayed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireSecretShownOnce(t, h, request{method: "POST", path: tc.path, auth: tc.auth, body: tc.body,
				headers: map[string]string{"Idempotency-Key": "once-" + tc.name}}, http.StatusCreated, tc.field, tc.prefix)
		})
	}
}

// requireSecretShownOnce makes req twice under its Idempotency-Key: the
// first answer shows the secret in field, the replay the same resource with
// field null, and no stored answer holds the secret.
func requireSecretShownOnce(t *testing.T, h *harness, req request, status int, field, prefix string) {
	t.Helper()
	first := h.do(req)
	require.Equal(t, status, first.Status, string(first.Raw))
	secret, _ := first.data()[field].(string)
	require.True(t, strings.HasPrefix(secret, prefix), "shown once: %s", first.Raw)

	replay := h.do(req)
	require.Equal(t, status, replay.Status, string(replay.Raw))
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	require.Equal(t, first.data()["id"], replay.data()["id"], "the same resource")
	require.Contains(t, replay.data(), field, "the secret is null, not left out")
	require.Nil(t, replay.data()[field], "without its secret")
	require.NotContains(t, string(replay.Raw), secret)

	var stored int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(),
		`SELECT count(*) FROM idempotency_keys WHERE position($1::bytea IN body) > 0`, []byte(secret)).Scan(&stored))
	require.Zero(t, stored, "no stored answer holds the secret")
}

// A carrier account's rotation shows its new secret once too: the replay
// answers the account with callback_secret null (issue 48 §5).
func TestIdempotentCarrierRotationKeepsNoSecret(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("rotatesecret")
	pat := h.pat(m, "settings:write")
	account := h.do(request{method: "POST", path: storePath(m.storeID, "/carrier-accounts"), auth: bearer(pat),
		body: map[string]any{"carrier": "other", "name": "Rotated"}})
	require.Equal(t, http.StatusCreated, account.Status, string(account.Raw))
	path := storePath(m.storeID, "/carrier-accounts/"+account.data()["id"].(string)+"/rotate-secret")
	requireSecretShownOnce(t, h, request{method: "POST", path: path, auth: bearer(pat),
		headers: map[string]string{"Idempotency-Key": "rotate-once"}}, http.StatusOK, "callback_secret", "csec_")
}

// A replay is an answer to the credential as it is now: the route's role
// and scope checks run before it, so a member demoted after the first
// request gets 403, not the stored answer (issue 48 §5).
func TestIdempotentReplayChecksAuthorization(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	owner := h.signup("replayauth")
	as := func(m merchant, method, rest string, body any, key string) response {
		req := request{method: method, path: storePath(owner.storeID, rest), auth: m.auth(), body: body}
		if key != "" {
			req.headers = map[string]string{"Idempotency-Key": key}
		}
		return h.do(req)
	}
	settings := as(owner, "POST", "/roles", map[string]any{"name": "Settings", "scopes": []string{"settings:write"}}, "")
	require.Equal(t, http.StatusCreated, settings.Status, string(settings.Raw))
	reader := as(owner, "POST", "/roles", map[string]any{"name": "Reader", "scopes": []string{"orders:read"}}, "")
	require.Equal(t, http.StatusCreated, reader.Status, string(reader.Raw))
	member := h.join(owner, "demoted@example.com", h.roleID(owner, "Admin"))
	staff := as(owner, "GET", "/staff", nil, "")
	require.Equal(t, http.StatusOK, staff.Status, string(staff.Raw))
	var memberID string
	for _, s := range staff.list() {
		if user := s.(map[string]any)["user"].(map[string]any); user["email"] == member.email {
			memberID = user["id"].(string)
		}
	}
	require.NotEmpty(t, memberID)
	demote := func(roleID string) {
		t.Helper()
		changed := as(owner, "PATCH", "/staff/"+memberID, map[string]any{"role_id": roleID}, "")
		require.Equal(t, http.StatusOK, changed.Status, string(changed.Raw))
	}

	// A role check: minting a token is the owner's and admins'.
	mint := map[string]any{"name": "erp", "scopes": []string{"orders:read"}}
	require.Equal(t, http.StatusCreated, as(member, "POST", "/access-tokens", mint, "mint").Status)
	demote(settings.data()["id"].(string))
	refused := as(member, "POST", "/access-tokens", mint, "mint")
	require.Equal(t, http.StatusForbidden, refused.Status, string(refused.Raw))
	require.Equal(t, "ROLE_NOT_ALLOWED", refused.errorCode())
	require.Empty(t, refused.Header.Get("Idempotent-Replayed"))

	// A scope check: carrier accounts are settings:write.
	account := map[string]any{"carrier": "other", "name": "Demoted"}
	require.Equal(t, http.StatusCreated, as(member, "POST", "/carrier-accounts", account, "carrier").Status)
	demote(reader.data()["id"].(string))
	refused = as(member, "POST", "/carrier-accounts", account, "carrier")
	require.Equal(t, http.StatusForbidden, refused.Status, string(refused.Raw))
	require.Equal(t, "SCOPE_MISSING", refused.errorCode())

	// A key a refused request carried is not spent: once allowed again, the
	// same key makes the change.
	require.Equal(t, "SCOPE_MISSING", as(member, "POST", "/carrier-accounts",
		map[string]any{"carrier": "other", "name": "Later"}, "later").errorCode())
	demote(settings.data()["id"].(string))
	later := as(member, "POST", "/carrier-accounts", map[string]any{"carrier": "other", "name": "Later"}, "later")
	require.Equal(t, http.StatusCreated, later.Status, string(later.Raw))
	require.Empty(t, later.Header.Get("Idempotent-Replayed"))

	// And an allowed replay still replays.
	replay := as(member, "POST", "/carrier-accounts", map[string]any{"carrier": "other", "name": "Later"}, "later")
	require.Equal(t, http.StatusCreated, replay.Status, string(replay.Raw))
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	require.Equal(t, later.data()["id"], replay.data()["id"])
}
