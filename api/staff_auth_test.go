package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

func TestSignupLoginLogoutMe(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("alpha")

	me := h.do(request{method: "GET", path: "/api/v1/auth/me", auth: m.auth()})
	require.Equal(t, http.StatusOK, me.Status)
	require.Equal(t, m.email, me.data()["user"].(map[string]any)["email"])
	tenant := me.data()["tenant"].(map[string]any)
	require.Equal(t, m.storeID, tenant["store_id"])
	require.Equal(t, "trial", tenant["lifecycle_state"])

	login := h.do(request{method: "POST", path: "/api/v1/auth/login", body: map[string]any{"email": m.email, "password": "correct horse battery"}})
	require.Equal(t, http.StatusOK, login.Status)
	require.Len(t, login.data()["stores"], 1)
	require.Contains(t, login.Header.Get("Set-Cookie"), "HttpOnly")
	require.Contains(t, login.Header.Get("Set-Cookie"), "SameSite=Lax")

	for _, bad := range []map[string]any{
		{"email": m.email, "password": "wrong password!"},
		{"email": "nobody@example.com", "password": "correct horse battery"},
	} {
		resp := h.do(request{method: "POST", path: "/api/v1/auth/login", body: bad})
		require.Equal(t, http.StatusUnauthorized, resp.Status)
		require.Equal(t, "Invalid email or password", resp.errorField("message"))
		require.NotEmpty(t, resp.errorField("message_ar"))
	}

	long := h.do(request{method: "POST", path: "/api/v1/auth/login", body: map[string]any{"email": m.email, "password": strings.Repeat("x", 73)}})
	require.Equal(t, http.StatusUnprocessableEntity, long.Status, "a password bcrypt cannot read is bad input, not a 500")
	require.Equal(t, []string{"password"}, long.fieldNames())

	logout := h.do(request{method: "POST", path: "/api/v1/auth/logout", auth: m.auth()})
	require.Equal(t, http.StatusNoContent, logout.Status)
	after := h.do(request{method: "GET", path: "/api/v1/auth/me", auth: m.auth()})
	require.Equal(t, http.StatusUnauthorized, after.Status)
	require.Equal(t, "UNAUTHENTICATED", after.errorCode())
}

func TestSignupRefusals(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("taken")
	valid := func() map[string]any {
		return map[string]any{"email": "new@example.com", "password": "correct horse battery", "name": "N",
			"store": map[string]any{"name": "S", "subdomain": "fresh-store", "currency": "SAR", "default_language": "en"}}
	}
	cases := []struct {
		name   string
		mutate func(map[string]any)
		status int
		fields []string
	}{
		{"short password", func(b map[string]any) { b["password"] = "short" }, 422, []string{"password"}},
		{"password over bcrypt's 72 bytes", func(b map[string]any) { b["password"] = strings.Repeat("كلمة", 10) }, 422, []string{"password"}},
		{"bad email", func(b map[string]any) { b["email"] = "not-an-email" }, 422, []string{"email"}},
		{"bad currency and language", func(b map[string]any) {
			b["store"].(map[string]any)["currency"] = "XXX"
			b["store"].(map[string]any)["default_language"] = "fr"
		}, 422, []string{"store.currency", "store.default_language"}},
		{"bad subdomain", func(b map[string]any) { b["store"].(map[string]any)["subdomain"] = "-Bad_" }, 422, []string{"store.subdomain"}},
		{"email taken", func(b map[string]any) { b["email"] = m.email }, 409, []string{"email"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := valid()
			tc.mutate(body)
			resp := h.do(request{method: "POST", path: "/api/v1/auth/signup", body: body})
			require.Equal(t, tc.status, resp.Status, string(resp.Raw))
			require.ElementsMatch(t, tc.fields, resp.fieldNames())
		})
	}
	// The refused sign-ups created nothing: the fresh subdomain is still free.
	ok := h.do(request{method: "POST", path: "/api/v1/auth/signup", body: valid()})
	require.Equal(t, http.StatusCreated, ok.Status, string(ok.Raw))
	again := valid()
	again["email"] = "other@example.com"
	dup := h.do(request{method: "POST", path: "/api/v1/auth/signup", body: again})
	require.Equal(t, http.StatusConflict, dup.Status)
	require.Equal(t, "CONFLICT", dup.errorCode())
}

func TestAccessTokens(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("tokens")

	created := h.do(request{method: "POST", path: storePath(m.storeID, "/access-tokens"), auth: m.auth(),
		body: map[string]any{"name": "erp", "scopes": []string{"catalog:write", "orders:read"}, "expires_in_days": 30}})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	token := created.data()["token"].(string)
	require.Regexp(t, `^svc_pat_[A-Za-z0-9_-]{43}$`, token)
	require.Equal(t, m.storeID, created.data()["store_id"])
	require.NotNil(t, created.data()["expires_at"])

	// The secret is stored only as a hash.
	var stored int
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(),
		`SELECT count(*) FROM api_tokens WHERE token_hash = sha256(convert_to($1, 'UTF8'))`, token).Scan(&stored))
	require.Equal(t, 1, stored)
	var plain int
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(),
		`SELECT count(*) FROM api_tokens WHERE position(convert_to($1, 'UTF8') in token_hash) > 0 OR name = $1`, token).Scan(&plain))
	require.Zero(t, plain)

	info := h.do(request{method: "GET", path: "/api/v1/auth/api-key/me", auth: bearer(token)})
	require.Equal(t, http.StatusOK, info.Status)
	require.Equal(t, "pat", info.data()["token_type"])
	require.Equal(t, m.storeID, info.data()["store_id"])
	require.Equal(t, "EGP", info.data()["currency"])
	require.ElementsMatch(t, []any{"catalog:write", "orders:read"}, info.data()["scopes"])

	me := h.do(request{method: "GET", path: "/api/v1/auth/me", auth: bearer(token)})
	require.Equal(t, http.StatusOK, me.Status)
	require.Equal(t, m.storeID, me.data()["tenant"].(map[string]any)["store_id"])

	list := h.do(request{method: "GET", path: storePath(m.storeID, "/access-tokens"), auth: m.auth()})
	require.Equal(t, http.StatusOK, list.Status)
	items := list.data()["items"].([]any)
	require.Len(t, items, 1)
	require.NotContains(t, items[0], "token")
	require.NotNil(t, items[0].(map[string]any)["last_used_at"])

	// Tokens cannot manage tokens.
	for _, req := range []request{
		{method: "GET", path: storePath(m.storeID, "/access-tokens")},
		{method: "POST", path: storePath(m.storeID, "/access-tokens"), body: map[string]any{"name": "x", "scopes": []string{"catalog:read"}}},
		{method: "DELETE", path: storePath(m.storeID, "/access-tokens/"+created.data()["id"].(string))},
	} {
		req.auth = bearer(token)
		resp := h.do(req)
		require.Equal(t, http.StatusForbidden, resp.Status, req.method+" "+req.path)
		require.Equal(t, "TOKEN_NOT_ALLOWED", resp.errorCode())
	}

	bad := h.do(request{method: "POST", path: storePath(m.storeID, "/access-tokens"), auth: m.auth(),
		body: map[string]any{"name": "", "scopes": []string{"catalog:admin"}, "expires_in_days": 400}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
	require.ElementsMatch(t, []string{"name", "scopes[0]", "expires_in_days"}, bad.fieldNames())

	revoke := h.do(request{method: "DELETE", path: storePath(m.storeID, "/access-tokens/"+created.data()["id"].(string)), auth: m.auth()})
	require.Equal(t, http.StatusNoContent, revoke.Status)
	after := h.do(request{method: "GET", path: "/api/v1/auth/api-key/me", auth: bearer(token)})
	require.Equal(t, http.StatusUnauthorized, after.Status)
	require.Equal(t, "UNAUTHENTICATED", after.errorCode())
}

func TestExpiredTokenIsRefused(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("expiry")
	token := h.pat(m, "catalog:read")
	_, err := testenv.SQL(h.t, h.db).Exec(context.Background(), `UPDATE api_tokens SET expires_at = $1`, time.Now().Add(-time.Second))
	require.NoError(t, err)
	resp := h.do(request{method: "GET", path: storePath(m.storeID, "/products"), auth: bearer(token)})
	require.Equal(t, http.StatusUnauthorized, resp.Status)
	require.Equal(t, "UNAUTHENTICATED", resp.errorCode())
}

func TestUnknownAndMalformedCredentials(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("creds")
	for name, a := range map[string]auth{
		"none":        {},
		"unknown pat": bearer("svc_pat_doesnotexist"),
		"garbage":     bearer("hello"),
		"bad cookie":  {session: "nope"},
	} {
		resp := h.do(request{method: "GET", path: storePath(m.storeID, "/products"), auth: a})
		require.Equal(t, http.StatusUnauthorized, resp.Status, name)
		require.Equal(t, "UNAUTHENTICATED", resp.errorCode(), name)
	}
	app := h.do(request{method: "GET", path: storePath(m.storeID, "/products"), auth: bearer("svc_app_unknown")})
	require.Equal(t, http.StatusUnauthorized, app.Status)
	require.Equal(t, "INVALID_TOKEN", app.errorCode())
	require.Equal(t, "Invalid or revoked app token", app.errorField("message"))
}

func TestScopes(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("scopes")
	readOnly := h.pat(m, "catalog:read")
	writer := h.pat(m, "catalog:write")
	other := h.pat(m, "orders:write")

	created := h.createProduct(writer, m.storeID, map[string]any{"name": "Lamp", "price": 1000})

	// write implies read
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(m.storeID, "/products"), auth: bearer(writer)}).Status)
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(m.storeID, "/products"), auth: bearer(readOnly)}).Status)

	for _, tc := range []struct {
		token string
		req   request
	}{
		{readOnly, request{method: "POST", path: storePath(m.storeID, "/products"), body: map[string]any{"name": "x", "price": 1}}},
		{readOnly, request{method: "DELETE", path: storePath(m.storeID, "/products/"+created["id"].(string))}},
		{other, request{method: "GET", path: storePath(m.storeID, "/products")}},
		{other, request{method: "GET", path: storePath(m.storeID, "/categories")}},
	} {
		tc.req.auth = bearer(tc.token)
		resp := h.do(tc.req)
		require.Equal(t, http.StatusForbidden, resp.Status, tc.req.method+" "+tc.req.path)
		require.Equal(t, "SCOPE_MISSING", resp.errorCode())
		require.NotEmpty(t, resp.errorField("message_ar"))
	}
	// The refused delete changed nothing.
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+created["id"].(string)), auth: bearer(readOnly)}).Status)
}
