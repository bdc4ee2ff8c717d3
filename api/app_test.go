package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/webhook"
)

// verifyHMAC is how an app checks a redirect or launch (docs/apps.md),
// written independently of the server's code.
func verifyHMAC(secret string, q url.Values, now time.Time) bool {
	ts, err := strconv.ParseInt(q.Get("timestamp"), 10, 64)
	if err != nil || now.Sub(time.Unix(ts, 0)) > 5*time.Minute || time.Unix(ts, 0).Sub(now) > time.Minute {
		return false
	}
	var names []string
	for k := range q {
		if k != "hmac" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var pairs []string
	for _, k := range names {
		pairs = append(pairs, k+"="+q.Get(k))
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strings.Join(pairs, "&")))
	want := hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(want), []byte(q.Get("hmac")))
}

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	h      *harness
	client *http.Client
}

func (h *harness) newBrowser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{h: h, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) (*http.Response, string) {
	b.h.t.Helper()
	resp, err := b.client.Get(b.h.url + path)
	require.NoError(b.h.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.h.t.Helper()
	resp, err := b.client.PostForm(b.h.url+path, form)
	require.NoError(b.h.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, page string) string {
	m := csrfField.FindStringSubmatch(page)
	require.NotNil(t, m, page)
	return m[1]
}

// signIn uses the sign-in page.
func (b *browser) signIn(email string) {
	b.h.t.Helper()
	_, page := b.get("/login")
	resp, _ := b.post("/login", url.Values{"csrf": {csrfOf(b.h.t, page)}, "email": {email}, "password": {"correct horse battery"}, "next": {"/"}})
	require.Equal(b.h.t, http.StatusSeeOther, resp.StatusCode)
}

type partnerApp struct {
	id, clientID, secret, slug string
}

func (h *harness) registerApp(m merchant, slug string, extra map[string]any) partnerApp {
	h.t.Helper()
	body := map[string]any{"name": "Bosta Shipping", "slug": slug, "app_url": "https://app.example.com/launch",
		"oauth": map[string]any{"scopes": []string{"orders:read", "orders:write"}, "optional_scopes": []string{"catalog:read"},
			"redirect_urls": []string{"https://app.example.com/oauth/callback", "https://app.example.com/other"}}}
	for k, v := range extra {
		body[k] = v
	}
	resp := h.do(request{method: "POST", path: "/api/v1/apps", auth: m.auth(), body: body})
	require.Equal(h.t, http.StatusCreated, resp.Status, string(resp.Raw))
	d := resp.data()
	return partnerApp{id: d["app"].(map[string]any)["id"].(string), clientID: d["client_id"].(string), secret: d["client_secret"].(string), slug: slug}
}

func consentQuery(app partnerApp, storeID, redirect, scope, state string) string {
	return "/oauth/authorize?" + url.Values{"client_id": {app.clientID}, "store_id": {storeID}, "redirect_uri": {redirect},
		"scope": {scope}, "state": {state}}.Encode()
}

// allow goes through the consent page and returns the redirect's query.
func (b *browser) allow(app partnerApp, storeID, scope, state, decision string) url.Values {
	b.h.t.Helper()
	resp, page := b.get(consentQuery(app, storeID, "https://app.example.com/oauth/callback", scope, state))
	require.Equal(b.h.t, http.StatusOK, resp.StatusCode, page)
	form := url.Values{"csrf": {csrfOf(b.h.t, page)}, "client_id": {app.clientID}, "store_id": {storeID},
		"redirect_uri": {"https://app.example.com/oauth/callback"}, "scope": {scope}, "state": {state}, "decision": {decision}}
	resp, _ = b.post("/oauth/authorize", form)
	require.Equal(b.h.t, http.StatusFound, resp.StatusCode)
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(b.h.t, err)
	require.Equal(b.h.t, "https://app.example.com/oauth/callback", loc.Scheme+"://"+loc.Host+loc.Path)
	return loc.Query()
}

func (h *harness) exchange(app partnerApp, code string, body map[string]any) response {
	h.t.Helper()
	req := map[string]any{"client_id": app.clientID, "client_secret": app.secret, "code": code}
	for k, v := range body {
		req[k] = v
	}
	return h.do(request{method: "POST", path: "/api/v1/oauth/token", body: req})
}

func TestAppManifestValidation(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("dev")
	app := h.registerApp(m, "bosta-shipping", nil)
	require.True(t, strings.HasPrefix(app.clientID, "svc_ci_"))
	for _, tc := range []struct {
		name  string
		patch map[string]any
		field string
	}{
		{"no scopes", map[string]any{"oauth": map[string]any{"scopes": []string{}, "redirect_urls": []string{"https://a.example.com/cb"}}}, "oauth.scopes"},
		{"unknown scope", map[string]any{"oauth": map[string]any{"scopes": []string{"orders:delete"}, "redirect_urls": []string{"https://a.example.com/cb"}}}, "oauth.scopes[0]"},
		{"http redirect", map[string]any{"oauth": map[string]any{"scopes": []string{"orders:read"}, "redirect_urls": []string{"http://a.example.com/cb"}}}, "oauth.redirect_urls[0]"},
		{"app_url with query", map[string]any{"app_url": "https://a.example.com/launch?x=1"}, "app_url"},
		{"bad slug", map[string]any{"slug": "Not A Slug"}, "slug"},
		{"unknown optional", map[string]any{"oauth": map[string]any{"scopes": []string{"orders:read"}, "optional_scopes": []string{"wallet:read"},
			"redirect_urls": []string{"https://a.example.com/cb"}}}, "oauth.optional_scopes[0]"},
	} {
		body := map[string]any{"name": "X", "slug": "x-app-" + strconv.Itoa(len(tc.name)), "app_url": "https://a.example.com/",
			"oauth": map[string]any{"scopes": []string{"orders:read"}, "redirect_urls": []string{"https://a.example.com/cb"}}}
		for k, v := range tc.patch {
			body[k] = v
		}
		resp := h.do(request{method: "POST", path: "/api/v1/apps", auth: m.auth(), body: body})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, tc.name)
		require.Contains(t, resp.fieldNames(), tc.field, tc.name)
	}
	dup := h.do(request{method: "POST", path: "/api/v1/apps", auth: m.auth(), body: map[string]any{"name": "Again", "slug": "bosta-shipping",
		"app_url": "https://a.example.com/", "oauth": map[string]any{"scopes": []string{"orders:read"}, "redirect_urls": []string{"https://a.example.com/cb"}}}})
	require.Equal(t, http.StatusConflict, dup.Status)
	token := h.pat(m, "settings:write")
	require.Equal(t, http.StatusForbidden, h.do(request{method: "POST", path: "/api/v1/apps", auth: bearer(token), body: map[string]any{}}).Status)
}

func TestConsentLinkRefusals(t *testing.T) {
	h := newHarness(t, api.Config{})
	dev := h.signup("devr")
	app := h.registerApp(dev, "refusals-app", nil)
	owner := h.signup("ownerr")
	b := h.newBrowser()

	// Not signed in: sent to sign in and back.
	resp, _ := b.get(consentQuery(app, owner.storeID, "https://app.example.com/oauth/callback", "orders:read orders:write", "s1"))
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Location"), "/login?next="))

	b.signIn(owner.email)
	for _, tc := range []struct{ name, redirect, scope, state string }{
		{"redirect differs by a byte", "https://app.example.com/oauth/callback/", "orders:read orders:write", "s1"},
		{"redirect differs in case", "https://APP.example.com/oauth/callback", "orders:read orders:write", "s1"},
		{"missing required scope", "https://app.example.com/oauth/callback", "orders:read", "s1"},
		{"unknown optional scope", "https://app.example.com/oauth/callback", "orders:read orders:write settings:write", "s1"},
		{"no state", "https://app.example.com/oauth/callback", "orders:read orders:write", ""},
		{"state with other characters", "https://app.example.com/oauth/callback", "orders:read orders:write", "a&b=c"},
	} {
		resp, page := b.get(consentQuery(app, owner.storeID, tc.redirect, tc.scope, tc.state))
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, tc.name)
		require.Empty(t, resp.Header.Get("Location"), "%s: never redirects to an unchecked URL", tc.name)
		require.Contains(t, page, `id="error"`, tc.name)
	}
	resp, _ = b.get("/oauth/authorize?" + url.Values{"client_id": {"svc_ci_nope"}, "store_id": {owner.storeID},
		"redirect_uri": {"https://app.example.com/oauth/callback"}, "scope": {"orders:read"}, "state": {"s"}}.Encode())
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// Another merchant's store: sent to sign in as its owner.
	other := h.signup("otherr")
	resp, _ = b.get(consentQuery(app, other.storeID, "https://app.example.com/oauth/callback", "orders:read orders:write", "s1"))
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Location"), "/login"))

	// The form refuses a missing or wrong CSRF token.
	resp, page := b.get(consentQuery(app, owner.storeID, "https://app.example.com/oauth/callback", "orders:read orders:write", "s1"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
	require.Contains(t, page, `dir="rtl"`, "Arabic by default")
	form := url.Values{"client_id": {app.clientID}, "store_id": {owner.storeID}, "redirect_uri": {"https://app.example.com/oauth/callback"},
		"scope": {"orders:read orders:write"}, "state": {"s1"}, "decision": {"allow"}, "csrf": {"forged-forged-forged-forged-forged-forged"}}
	resp, _ = b.post("/oauth/authorize", form)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	form.Set("csrf", csrfOf(t, page))
	form.Set("redirect_uri", "https://evil.example.com/cb")
	resp, _ = b.post("/oauth/authorize", form)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "the form's values are checked again")

	// Deny: error and state only, no code, no signature.
	denied := b.allow(app, owner.storeID, "orders:read orders:write", "deny-1", "deny")
	require.Equal(t, url.Values{"error": {"access_denied"}, "state": {"deny-1"}}, denied)
}

func TestCodeExchangeTokensAndRevoke(t *testing.T) {
	h := newHarness(t, api.Config{})
	dev := h.signup("devx")
	app := h.registerApp(dev, "exchange-app", nil)
	owner := h.signup("ownerx")
	b := h.newBrowser()
	b.signIn(owner.email)

	q := b.allow(app, owner.storeID, "orders:read orders:write catalog:read", "st-1", "allow")
	require.True(t, strings.HasPrefix(q.Get("code"), "svc_code_"))
	require.Equal(t, "st-1", q.Get("state"))
	require.Equal(t, owner.storeID, q.Get("store_id"))
	require.True(t, verifyHMAC(app.secret, q, time.Now()), "the app can verify the redirect")
	tampered := url.Values{}
	for k, v := range q {
		tampered[k] = v
	}
	tampered.Set("store_id", dev.storeID)
	require.False(t, verifyHMAC(app.secret, tampered, time.Now()), "a tampered parameter breaks the signature")
	require.False(t, verifyHMAC(app.secret, q, time.Now().Add(6*time.Minute)), "older than 5 minutes")

	grant := h.exchange(app, q.Get("code"), map[string]any{"grant_type": "client_credentials"})
	require.Equal(t, http.StatusBadRequest, grant.Status)
	require.Equal(t, "UNSUPPORTED_GRANT_TYPE", grant.errorCode())
	require.Contains(t, grant.errorField("message"), "authorization_code")

	ok := h.exchange(app, q.Get("code"), map[string]any{"grant_type": "authorization_code"})
	require.Equal(t, http.StatusOK, ok.Status, string(ok.Raw))
	token := ok.data()["access_token"].(string)
	require.True(t, strings.HasPrefix(token, "svc_app_"))
	require.ElementsMatch(t, []any{"orders:read", "orders:write", "catalog:read"}, ok.data()["scopes"])
	require.Equal(t, owner.storeID, ok.data()["store_id"])

	used := h.exchange(app, q.Get("code"), nil)
	require.Equal(t, http.StatusBadRequest, used.Status)
	require.Equal(t, "INVALID_GRANT", used.errorCode())
	require.Contains(t, used.errorField("message"), "already used")
	unknown := h.exchange(app, "svc_code_never-issued", nil)
	require.Contains(t, unknown.errorField("message"), "invalid")

	// A wrong secret is 401, and burns the code all the same.
	q2 := b.allow(app, owner.storeID, "orders:read orders:write", "st-2", "allow")
	wrong := h.exchange(app, q2.Get("code"), map[string]any{"client_secret": "svc_cs_wrong"})
	require.Equal(t, http.StatusUnauthorized, wrong.Status)
	require.Equal(t, "INVALID_CLIENT", wrong.errorCode())
	require.Contains(t, h.exchange(app, q2.Get("code"), nil).errorField("message"), "already used")

	// Expired: ten minutes later (the storage clock is injected).
	q3 := b.allow(app, owner.storeID, "orders:read orders:write", "st-3", "allow")
	h.db.SetClock(func() time.Time { return time.Now().Add(10*time.Minute + time.Second) })
	expired := h.exchange(app, q3.Get("code"), nil)
	h.db.SetClock(time.Now)
	require.Equal(t, http.StatusBadRequest, expired.Status)
	require.Contains(t, expired.errorField("message"), "expired")

	// The app token: token info, its own store only, its scopes only.
	info := h.do(request{method: "GET", path: "/api/v1/auth/api-key/me", auth: bearer(token)})
	require.Equal(t, http.StatusOK, info.Status)
	for _, f := range []string{"app_slug", "store_id", "store_name", "subdomain", "currency", "default_language", "scopes"} {
		require.Contains(t, info.data(), f)
	}
	require.Equal(t, "exchange-app", info.data()["app_slug"])
	require.Equal(t, "app", info.data()["token_type"])
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(owner.storeID, "/orders"), auth: bearer(token)}).Status)
	require.Equal(t, http.StatusForbidden, h.do(request{method: "GET", path: storePath(dev.storeID, "/orders"), auth: bearer(token)}).Status)
	require.Equal(t, "SCOPE_MISSING", h.do(request{method: "GET", path: storePath(owner.storeID, "/customers"), auth: bearer(token)}).errorCode())

	// Rotation: the old secret is dead at once.
	rot := h.do(request{method: "POST", path: "/api/v1/apps/" + app.id + "/rotate-secret", auth: dev.auth()})
	require.Equal(t, http.StatusOK, rot.Status)
	old := app
	app.secret = rot.data()["client_secret"].(string)
	q4 := b.allow(app, owner.storeID, "orders:read orders:write", "st-4", "allow")
	require.False(t, verifyHMAC(old.secret, q4, time.Now()))
	require.True(t, verifyHMAC(app.secret, q4, time.Now()))
	require.Equal(t, http.StatusUnauthorized, h.exchange(old, q4.Get("code"), nil).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "POST", path: "/api/v1/apps/" + app.id + "/rotate-secret", auth: owner.auth()}).Status,
		"only the developer rotates")

	// Revoke: the same answer for any token; a revoked token is 401 INVALID_TOKEN.
	revoke := func(tok string) response {
		return h.do(request{method: "POST", path: "/api/v1/oauth/revoke", body: map[string]any{"client_id": app.clientID, "client_secret": app.secret, "token": tok}})
	}
	for _, tok := range []string{"svc_app_unknown", token} {
		r := revoke(tok)
		require.Equal(t, http.StatusOK, r.Status)
		require.Equal(t, true, r.data()["revoked"])
	}
	gone := h.do(request{method: "GET", path: storePath(owner.storeID, "/orders"), auth: bearer(token)})
	require.Equal(t, http.StatusUnauthorized, gone.Status)
	require.Equal(t, "INVALID_TOKEN", gone.errorCode())
	require.Equal(t, "Invalid or revoked app token", gone.errorField("message"))

	// Uninstall revokes the store's remaining tokens of the app.
	q5 := b.allow(app, owner.storeID, "orders:read orders:write", "st-5", "allow")
	token5 := h.exchange(app, q5.Get("code"), nil).data()["access_token"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(owner.storeID, "/orders"), auth: bearer(token5)}).Status)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(owner.storeID, "/apps/"+app.id), auth: owner.auth()}).Status)
	require.Equal(t, "INVALID_TOKEN", h.do(request{method: "GET", path: storePath(owner.storeID, "/orders"), auth: bearer(token5)}).errorCode())

	// The store's audit log keeps each installation (not under /stores/{id}:
	// the app exchanges the owner's consent), newest first, with the scopes
	// held before; the refused exchanges wrote none.
	installs := auditEntries(t, h, owner, "?action=app.installed")
	require.Len(t, installs, 2)
	ownerID := h.do(request{method: "GET", path: "/api/v1/auth/me", auth: owner.auth()}).data()["user"].(map[string]any)["id"]
	for _, e := range installs {
		actor := e["actor"].(map[string]any)
		require.Equal(t, "app", actor["type"])
		require.Equal(t, app.id, actor["id"])
		require.Equal(t, ownerID, actor["user_id"], "on the owner's consent")
		require.Equal(t, map[string]any{"type": "app", "id": app.id, "label": "Bosta Shipping"}, e["resource"])
	}
	require.Equal(t, map[string]any{"from": []any{"orders:read", "orders:write", "catalog:read"}, "to": []any{"orders:read", "orders:write"}},
		installs[0]["changes"].(map[string]any)["scopes"])
	require.Equal(t, map[string]any{"from": nil, "to": []any{"orders:read", "orders:write", "catalog:read"}},
		installs[1]["changes"].(map[string]any)["scopes"])
	require.Empty(t, auditEntries(t, h, dev, "?action=app.installed"), "the developer's own store saw nothing")
}

func TestAppLaunchIsSignedWithTheMerchantsLocale(t *testing.T) {
	h := newHarness(t, api.Config{})
	dev := h.signup("devl")
	app := h.registerApp(dev, "launch-app", nil)
	owner := h.signup("ownerl")
	b := h.newBrowser()
	b.signIn(owner.email)

	resp, _ := b.get("/apps/launch-app/launch?store_id=" + owner.storeID)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "not installed yet")

	// Install from the app store listing: the service picks state and the
	// first redirect URL receives the code.
	resp, _ = b.get("/apps/launch-app/install?store_id=" + owner.storeID)
	require.Equal(t, http.StatusFound, resp.StatusCode)
	consent, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	state := consent.Query().Get("state")
	require.Regexp(t, `^[A-Za-z0-9_-]+$`, state)
	resp, page := b.get(consent.RequestURI())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = b.post("/oauth/authorize", url.Values{"csrf": {csrfOf(t, page)}, "client_id": {app.clientID}, "store_id": {owner.storeID},
		"redirect_uri": {"https://app.example.com/oauth/callback"}, "scope": {"orders:read orders:write"}, "state": {state}, "decision": {"allow"}})
	require.Equal(t, http.StatusFound, resp.StatusCode)
	back, _ := url.Parse(resp.Header.Get("Location"))
	require.True(t, verifyHMAC(app.secret, back.Query(), time.Now()))
	require.Equal(t, http.StatusOK, h.exchange(app, back.Query().Get("code"), nil).Status)

	launch := func() url.Values {
		resp, _ := b.get("/apps/launch-app/launch?store_id=" + owner.storeID)
		require.Equal(t, http.StatusFound, resp.StatusCode)
		loc, err := url.Parse(resp.Header.Get("Location"))
		require.NoError(t, err)
		require.Equal(t, "https://app.example.com/launch", loc.Scheme+"://"+loc.Host+loc.Path)
		return loc.Query()
	}
	q := launch()
	require.Equal(t, "ar", q.Get("locale"), "Arabic unless the merchant chose English")
	require.Equal(t, owner.storeID, q.Get("store_id"))
	require.True(t, verifyHMAC(app.secret, q, time.Now()))
	require.ElementsMatch(t, []string{"hmac", "locale", "store_id", "timestamp"}, keysOf(q))

	h.exec(`UPDATE users SET locale = 'en' WHERE email = $1`, owner.email)
	require.Equal(t, "en", launch().Get("locale"))
	resp, page = b.get(consentQuery(app, owner.storeID, "https://app.example.com/oauth/callback", "orders:read orders:write", "en-1"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, page, `dir="ltr"`, "English, left to right, for a merchant who chose it")
	require.Contains(t, page, "View orders and payments")

	// Someone else's store: sent to sign in.
	resp, _ = b.get("/apps/launch-app/launch?store_id=" + dev.storeID)
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Location"), "/login"))
}

func keysOf(q url.Values) []string {
	var out []string
	for k := range q {
		out = append(out, k)
	}
	return out
}

// An installed app's manifest subscription receives the store's events,
// signed with the app's client secret; a rotation switches at once.
func TestManifestWebhooksAreSignedWithTheClientSecret(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}})
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.startWorker(httpClient)
	dev := h.signup("devw")
	app := h.registerApp(dev, "hooks-app", map[string]any{"webhooks": map[string]any{"url": rec.url(), "events": []string{"order.created"}}})
	s := newShop(t, h, "hookshop", 10)
	b := h.newBrowser()
	b.signIn(s.m.email)
	q := b.allow(app, s.m.storeID, "orders:read orders:write", "hooks", "allow")
	require.Equal(t, http.StatusOK, h.exchange(app, q.Get("code"), nil).Status)

	// The merchant's own webhook API does not see or change it.
	list := h.do(request{method: "GET", path: storePath(s.m.storeID, "/webhooks"), auth: bearer(s.token)})
	require.Empty(t, list.Body["data"])

	h.placeOrder(s, "cod", 1)
	waitFor(t, "the app's delivery", func() bool { return len(rec.requests()) == 1 })
	got := rec.requests()[0]
	require.Equal(t, "order.created", got.header.Get("X-SVC-Event"))
	require.NoError(t, webhook.Verify(app.secret, got.body, got.header.Get("X-SVC-Signature-V1"), 5*time.Minute, time.Now()))

	rot := h.do(request{method: "POST", path: "/api/v1/apps/" + app.id + "/rotate-secret", auth: dev.auth()})
	newSecret := rot.data()["client_secret"].(string)
	h.placeOrder(s, "cod", 1)
	waitFor(t, "the second delivery", func() bool { return len(rec.requests()) == 2 })
	second := rec.requests()[1]
	require.NoError(t, webhook.Verify(newSecret, second.body, second.header.Get("X-SVC-Signature-V1"), 5*time.Minute, time.Now()))
	require.Error(t, webhook.Verify(app.secret, second.body, second.header.Get("X-SVC-Signature-V1"), 5*time.Minute, time.Now()))

	// Uninstalled: no more deliveries.
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/apps/"+app.id), auth: s.m.auth()}).Status)
	h.placeOrder(s, "cod", 1)
	time.Sleep(1500 * time.Millisecond)
	require.Len(t, rec.requests(), 2)
}

// An app receives only the events its granted scopes can read, and the
// consent page lists exactly those.
func TestManifestWebhooksFollowGrantedScopes(t *testing.T) {
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}})
	httpClient, err := webhook.Guard{AllowPrivate: true}.NewClient(rec.caFile)
	require.NoError(t, err)
	h.startWorker(httpClient)
	dev := h.signup("devs")
	app := h.registerApp(dev, "themes-app", map[string]any{
		"oauth": map[string]any{"scopes": []string{"themes:read"}, "optional_scopes": []string{"catalog:read"},
			"redirect_urls": []string{"https://app.example.com/oauth/callback"}},
		"webhooks": map[string]any{"url": rec.url(), "events": []string{"order.created", "product.created", "product.updated"}}})
	s := newShop(t, h, "scopeshop", 10)
	b := h.newBrowser()
	b.signIn(s.m.email)

	_, page := b.get(consentQuery(app, s.m.storeID, "https://app.example.com/oauth/callback", "themes:read", "a"))
	require.NotContains(t, page, `id="events"`, "themes:read reads no event")
	q := b.allow(app, s.m.storeID, "themes:read", "a", "allow")
	require.Equal(t, http.StatusOK, h.exchange(app, q.Get("code"), nil).Status)
	h.placeOrder(s, "cod", 1)
	h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Unseen", "price": 100})
	waitFor(t, "the events to be fanned out under the first grant", func() bool {
		var pending int
		require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM outbox WHERE dispatched_at IS NULL`).Scan(&pending))
		return pending == 0
	})

	_, page = b.get(consentQuery(app, s.m.storeID, "https://app.example.com/oauth/callback", "themes:read catalog:read", "b"))
	require.Contains(t, page, `data-event="product.created"`)
	require.Contains(t, page, `data-event="product.updated"`)
	require.NotContains(t, page, `data-event="order.created"`)
	q = b.allow(app, s.m.storeID, "themes:read catalog:read", "b", "allow")
	require.Equal(t, http.StatusOK, h.exchange(app, q.Get("code"), nil).Status)
	h.placeOrder(s, "cod", 1)
	seen := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Seen", "price": 100})
	waitFor(t, "the product delivery", func() bool { return len(rec.requests()) >= 1 })
	time.Sleep(1500 * time.Millisecond)
	got := rec.requests()
	require.Len(t, got, 1, "only the product event of the second grant")
	require.Equal(t, "product.created", got[0].header.Get("X-SVC-Event"))
	require.Contains(t, string(got[0].body), seen["id"].(string))
}
