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
// replay of a token mint or a webhook subscription answers the resource
// without its secret, and no stored answer holds one (issue 17, finding 5).
func TestIdempotentReplaysKeepNoSecret(t *testing.T) {
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}})
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	m := h.signup("secrets")
	pat := h.pat(m, "settings:write")
	for _, tc := range []struct {
		name, path, field, prefix string
		auth                      auth
		body                      map[string]any
	}{
		{"token", storePath(m.storeID, "/access-tokens"), "token", "svc_pat_", m.auth(),
			map[string]any{"name": "erp", "scopes": []string{"catalog:read"}}},
		{"webhook", storePath(m.storeID, "/webhooks"), "secret", "svc_whsec_", bearer(pat),
			map[string]any{"url": rec.url(), "events": []string{"order.paid"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := map[string]string{"Idempotency-Key": "once-" + tc.name}
			first := h.do(request{method: "POST", path: tc.path, auth: tc.auth, body: tc.body, headers: key})
			require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))
			secret, _ := first.data()[tc.field].(string)
			require.True(t, strings.HasPrefix(secret, tc.prefix), "shown once: %s", first.Raw)

			replay := h.do(request{method: "POST", path: tc.path, auth: tc.auth, body: tc.body, headers: key})
			require.Equal(t, http.StatusCreated, replay.Status, string(replay.Raw))
			require.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
			require.Equal(t, first.data()["id"], replay.data()["id"], "the same resource")
			require.Empty(t, replay.data()[tc.field], "without its secret")
			require.NotContains(t, string(replay.Raw), secret)

			var stored int
			require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(),
				`SELECT count(*) FROM idempotency_keys WHERE position($1::bytea IN body) > 0`, []byte(secret)).Scan(&stored))
			require.Zero(t, stored, "no stored answer holds the secret")
		})
	}
}
