package api_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// pageToken is the CSRF token a store page hands its scripts (its
// csrf-token meta), read with the merchant's session.
func (h *harness) pageToken(m merchant) string {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.url+"/stores/"+m.storeID+"/imports", nil)
	require.NoError(h.t, err)
	req.AddCookie(&http.Cookie{Name: "svc_session", Value: m.session})
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	require.Equal(h.t, http.StatusOK, resp.StatusCode, string(page))
	found := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindSubmatch(page)
	require.NotNil(h.t, found, "the page carries its CSRF token")
	return string(found[1])
}

// A write made with the session cookie is refused (403 CROSS_SITE_REQUEST,
// nothing changes) unless the browser says it comes from the merchant's
// own pages (Sec-Fetch-Site: same-origin, or Origin the merchant URL or the
// API's own), or, when it says nothing, it carries the page's CSRF token
// of that same session. Bearer tokens are not cookies: they pass from anywhere.
func TestCookieWritesCheckWhereTheyComeFrom(t *testing.T) {
	h := newHarness(t, api.Config{MerchantURL: "https://merchant.example"})
	m := h.signup("xsite")
	token := h.pat(m, "catalog:write", "themes:write")
	products := storePath(m.storeID, "/products")
	countProducts := func() int {
		resp := h.do(request{method: "GET", path: products, auth: bearer(token)})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		return len(resp.list())
	}
	refused := func(resp response, what string) {
		t.Helper()
		require.Equal(t, http.StatusForbidden, resp.Status, "%s: %s", what, resp.Raw)
		require.Equal(t, "CROSS_SITE_REQUEST", resp.errorCode(), what)
		require.NotEmpty(t, resp.errorField("message"), what)
		require.Regexp(t, `\p{Arabic}`, resp.errorField("message_ar"), what)
	}
	product := map[string]any{"name": "Lamp", "price": 1000}
	foreign := map[string]map[string]string{
		"Origin: https://evil.example":   {"Sec-Fetch-Site": "", "Origin": "https://evil.example"},
		"Sec-Fetch-Site: cross-site":     {"Sec-Fetch-Site": "cross-site"},
		"Sec-Fetch-Site: same-site":      {"Sec-Fetch-Site": "same-site"},
		"same-site from a sibling":       {"Sec-Fetch-Site": "same-site", "Origin": "https://shop.merchant.example"},
		"Origin: null with no fetch tag": {"Sec-Fetch-Site": "", "Origin": "null"},
	}
	for name, headers := range foreign {
		// A JSON write.
		refused(h.do(request{method: "POST", path: products, auth: m.auth(), body: product, headers: headers}), name)
		// A multipart upload, the CSV import.
		csv, contentType := multipartBody(t, "file", []byte("name,price\nLamp,10\n"), nil)
		withType := map[string]string{"Content-Type": contentType}
		for k, v := range headers {
			withType[k] = v
		}
		refused(h.do(request{method: "POST", path: products + "/import", auth: m.auth(), body: csv, headers: withType}), name+" import")
		// A bodiless POST: publishing the theme, and signing out.
		refused(h.do(request{method: "POST", path: storePath(m.storeID, "/themes/v3/customization/publish"), auth: m.auth(),
			headers: headers}), name+" publish")
		refused(h.do(request{method: "POST", path: "/api/v1/auth/logout", auth: m.auth(), headers: headers}), name+" logout")
	}
	require.Zero(t, countProducts(), "nothing was created or imported")
	published := func() int {
		resp := h.do(request{method: "GET", path: storePath(m.storeID, "/themes/v3/versions"), auth: bearer(token)})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		versions, ok := resp.Body["data"].([]any)
		require.True(t, ok, string(resp.Raw))
		return len(versions)
	}
	require.Zero(t, published(), "nothing was published")
	me := h.do(request{method: "GET", path: "/api/v1/auth/me", auth: m.auth()})
	require.Equal(t, http.StatusOK, me.Status, "the session was not ended")

	// The merchant's own pages: same-origin, or the merchant URL or the
	// API's own origin as Origin.
	own := map[string]map[string]string{
		"Sec-Fetch-Site: same-origin":   {"Sec-Fetch-Site": "same-origin"},
		"same-origin with Origin: null": {"Sec-Fetch-Site": "same-origin", "Origin": "null"},
		"Origin: the merchant URL":      {"Sec-Fetch-Site": "same-site", "Origin": "https://merchant.example"},
		"Origin: the API's own, no tag": {"Sec-Fetch-Site": "", "Origin": h.url},
	}
	for name, headers := range own {
		resp := h.do(request{method: "POST", path: products, auth: m.auth(), body: product, headers: headers})
		require.Equal(t, http.StatusCreated, resp.Status, "%s: %s", name, resp.Raw)
	}
	resp := h.do(request{method: "POST", path: storePath(m.storeID, "/themes/v3/customization/publish"), auth: m.auth()})
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
	require.Equal(t, 1, published())
	csv, contentType := multipartBody(t, "file", []byte("name,price\nDesk,10\n"), nil)
	resp = h.do(request{method: "POST", path: products + "/import", auth: m.auth(), body: csv,
		headers: map[string]string{"Content-Type": contentType, "Prefer": "respond-async"}})
	require.NotEqual(t, http.StatusForbidden, resp.Status, string(resp.Raw))

	// Neither header (an old browser, or a script): the page's CSRF token
	// of this very session, or nothing.
	pageToken := h.pageToken(m)
	other := h.signup("xsite-other")
	otherToken := h.pageToken(other)
	require.NotEqual(t, pageToken, otherToken)
	before := countProducts()
	untagged := func(csrf string) response {
		headers := map[string]string{"Sec-Fetch-Site": ""}
		if csrf != "" {
			headers["X-CSRF-Token"] = csrf
		}
		return h.do(request{method: "POST", path: products, auth: m.auth(), body: product, headers: headers})
	}
	refused(untagged(""), "no header and no token")
	refused(untagged("forged-forged-forged-forged-forged-forged-xx"), "a wrong token")
	refused(untagged(otherToken), "another session's token")
	require.Equal(t, before, countProducts())
	resp = untagged(pageToken)
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))

	// A bearer token is no cookie: it writes from anywhere.
	for name, headers := range foreign {
		resp := h.do(request{method: "POST", path: products, auth: bearer(token), body: product, headers: headers})
		require.Equal(t, http.StatusCreated, resp.Status, "%s: %s", name, resp.Raw)
	}
}

// The pages' own posts: the sign-in form, the consent form and the
// preview render refuse another site, and the pages' CSP lets forms post
// only to this origin and allows no <base>.
func TestPagePostsCheckWhereTheyComeFrom(t *testing.T) {
	h := newHarness(t, api.Config{})
	owner := h.signup("xpages")
	dev := h.signup("xpagesdev")
	app := h.registerApp(dev, "xpages-app", nil)
	b := h.newBrowser()

	// The sign-in page: its CSP, then a post from another site.
	resp, page := b.get("/login")
	csp := resp.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "form-action 'self'")
	require.Contains(t, csp, "base-uri 'none'")
	form := url.Values{"csrf": {csrfOf(t, page)}, "email": {owner.email}, "password": {"correct horse battery"}, "next": {"/"}}
	post := func(path string, form url.Values, headers map[string]string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, h.url+path, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := b.client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	require.Equal(t, http.StatusForbidden, post("/login", form, map[string]string{"Origin": "https://evil.example"}).StatusCode)
	require.Equal(t, http.StatusSeeOther, post("/login", form, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "null"}).StatusCode)

	// The consent page: forms go to this origin and to the app's redirect
	// (Chromium checks form-action on the redirect after the post too).
	query := consentQuery(app, owner.storeID, "https://app.example.com/oauth/callback", "orders:read orders:write", "x1")
	resp, page = b.get(query)
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	csp = resp.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "form-action 'self' https://app.example.com;")
	require.Contains(t, csp, "base-uri 'none'")
	consent := url.Values{"csrf": {csrfOf(t, page)}, "client_id": {app.clientID}, "store_id": {owner.storeID},
		"redirect_uri": {"https://app.example.com/oauth/callback"}, "scope": {"orders:read orders:write"}, "state": {"x1"}, "decision": {"allow"}}
	require.Equal(t, http.StatusForbidden, post("/oauth/authorize", consent, map[string]string{"Sec-Fetch-Site": "cross-site"}).StatusCode)
	require.Equal(t, http.StatusForbidden, post("/oauth/authorize", consent, map[string]string{"Origin": "https://evil.example"}).StatusCode)
	var codes int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(t.Context(), `SELECT count(*) FROM oauth_codes WHERE store_id = $1`, owner.storeID).Scan(&codes))
	require.Zero(t, codes, "no code was issued")
	require.Equal(t, http.StatusFound, post("/oauth/authorize", consent, map[string]string{"Sec-Fetch-Site": "same-origin"}).StatusCode)

	// A store page's CSP, and the preview render.
	resp, _ = b.get("/stores/" + owner.storeID + "/imports")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	csp = resp.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "form-action 'self'")
	require.Contains(t, csp, "base-uri 'none'")
	render := h.do(request{method: "POST", path: "/stores/" + owner.storeID + "/themes/preview/render", auth: owner.auth(),
		body:    map[string]any{"document": map[string]any{"settings": map[string]any{}, "templates": map[string]any{}}, "page": "index"},
		headers: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}})
	require.Equal(t, http.StatusForbidden, render.Status, string(render.Raw))
	require.Equal(t, "CROSS_SITE_REQUEST", render.errorCode())
	render = h.do(request{method: "POST", path: "/stores/" + owner.storeID + "/themes/preview/render", auth: owner.auth(),
		body:    map[string]any{"document": map[string]any{"settings": map[string]any{}, "templates": map[string]any{}}, "page": "index"},
		headers: map[string]string{"Sec-Fetch-Site": "same-origin"}})
	require.Equal(t, http.StatusOK, render.Status, string(render.Raw))
}

// Host-only cookies carry the __Host- prefix where they are Secure (so a
// sibling subdomain cannot plant one); over plain http, in development and
// these tests, browsers refuse the prefix, so the names are bare there. A
// secure server reads only the prefixed session cookie.
func TestCookieNames(t *testing.T) {
	for _, secure := range []bool{false, true} {
		h := newHarness(t, api.Config{SecureCookies: secure})
		prefix := map[bool]string{true: "__Host-"}[secure]
		resp := h.do(request{method: "POST", path: "/api/v1/auth/signup", body: map[string]any{
			"email": "names@example.com", "password": "correct horse battery", "name": "Names",
			"store": map[string]any{"name": "Names", "subdomain": "names-" + map[bool]string{true: "s", false: "p"}[secure],
				"currency": "EGP", "default_language": "ar"}}})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
		cookies := (&http.Response{Header: resp.Header}).Cookies()
		require.Len(t, cookies, 1)
		c := cookies[0]
		require.Equal(t, prefix+"svc_session", c.Name)
		require.Equal(t, secure, c.Secure)
		require.Equal(t, "/", c.Path)
		require.Empty(t, c.Domain)
		require.True(t, c.HttpOnly)

		me := func(name string) int {
			req, err := http.NewRequest(http.MethodGet, h.url+"/api/v1/auth/me", nil)
			require.NoError(t, err)
			req.AddCookie(&http.Cookie{Name: name, Value: c.Value})
			r, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			r.Body.Close()
			return r.StatusCode
		}
		require.Equal(t, http.StatusOK, me(prefix+"svc_session"))
		if secure {
			require.Equal(t, http.StatusUnauthorized, me("svc_session"), "a secure server reads only the prefixed cookie")
		}

		page, err := http.Get(h.url + "/login")
		require.NoError(t, err)
		page.Body.Close()
		csrf := page.Cookies()
		require.Len(t, csrf, 1)
		require.Equal(t, prefix+"svc_csrf", csrf[0].Name)
		require.Equal(t, secure, csrf[0].Secure)
		require.Equal(t, "/", csrf[0].Path)
		require.Empty(t, csrf[0].Domain)
	}
}

// Accepting an invitation while signed in joins a store with the session
// (issue 48 §2): from another site it answers 403 CROSS_SITE_REQUEST and
// joins nothing, so a sibling site cannot make a signed-in merchant join a
// store; from the merchant's pages the same link joins.
func TestInvitationAcceptedWhileSignedInChecksWhereItComesFrom(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil) // the invitation's mail
	owner, invitee := h.signup("xsiteowner"), h.signup("xsiteinvitee")
	h.verifyEmail(invitee)
	invited := h.do(request{method: "POST", path: storePath(owner.storeID, "/staff/invitations"), auth: owner.auth(),
		body: map[string]any{"email": invitee.email, "role_id": h.roleID(owner, "Admin")}})
	require.Equal(t, http.StatusCreated, invited.Status, string(invited.Raw))
	token := h.invitationToken(invitee.email, 1)
	accept := func(headers map[string]string) response {
		return h.do(request{method: "POST", path: "/api/v1/staff-invitations/accept", auth: invitee.auth(),
			body: map[string]any{"token": token}, headers: headers})
	}
	members := func() int {
		staff := h.do(request{method: "GET", path: storePath(owner.storeID, "/staff"), auth: owner.auth()})
		require.Equal(t, http.StatusOK, staff.Status, string(staff.Raw))
		return len(staff.list())
	}
	before := members()

	for _, headers := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
		{"Sec-Fetch-Site": "same-site"},
		{"Sec-Fetch-Site": ""},
	} {
		refused := accept(headers)
		require.Equal(t, http.StatusForbidden, refused.Status, "%v: %s", headers, refused.Raw)
		require.Equal(t, "CROSS_SITE_REQUEST", refused.errorCode(), "%v", headers)
	}
	require.Equal(t, before, members(), "nobody joined")

	joined := accept(nil)
	require.Equal(t, http.StatusCreated, joined.Status, string(joined.Raw))
	require.Equal(t, before+1, members())
}
