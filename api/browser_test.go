package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// appServer is a partner app on loopback: its OAuth callback checks state
// and the signature, exchanges the code and calls the API with the token.
type appServer struct {
	srv      *httptest.Server
	mu       sync.Mutex
	secret   string
	clientID string
	state    string
	token    string
	orders   int
	problem  string
}

func newAppServer(t *testing.T, apiURL string) *appServer {
	a := &appServer{}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		q := r.URL.Query()
		fail := func(why string) {
			a.problem = why
			http.Error(w, why, http.StatusBadRequest)
		}
		switch {
		case r.URL.Path != "/callback":
			http.NotFound(w, r)
			return
		case !verifyHMAC(a.secret, q, time.Now()):
			fail("bad signature")
			return
		case q.Get("state") != a.state:
			fail("bad state")
			return
		}
		body, _ := json.Marshal(map[string]string{"client_id": a.clientID, "client_secret": a.secret, "code": q.Get("code"),
			"grant_type": "authorization_code"})
		resp, err := http.Post(apiURL+"/api/v1/oauth/token", "application/json", strings.NewReader(string(body)))
		if err != nil {
			fail(err.Error())
			return
		}
		var exchanged struct {
			Data struct {
				AccessToken string `json:"access_token"`
				StoreID     string `json:"store_id"`
			} `json:"data"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&exchanged)
		resp.Body.Close()
		a.token = exchanged.Data.AccessToken
		req, _ := http.NewRequest(http.MethodGet, apiURL+"/api/v1/stores/"+exchanged.Data.StoreID+"/orders", nil)
		req.Header.Set("Authorization", "Bearer "+a.token)
		orders, err := http.DefaultClient.Do(req)
		if err != nil {
			fail(err.Error())
			return
		}
		orders.Body.Close()
		a.orders = orders.StatusCode
		fmt.Fprintf(w, "<html><body><h1 id=\"done\">installed</h1></body></html>")
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// The whole install through the real pages in headless Chromium: sign in,
// open the consent link, allow, land on the app's server, which verifies
// the signature, exchanges the code and calls the API; then the token is
// revoked and answers 401.
func TestOAuthInstallInHeadlessChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	require.NoError(t, err, "Debian's chromium is needed (`make system-libs` installs it)")
	h := newHarness(t, api.Config{})
	appSrv := newAppServer(t, h.url)
	dev := h.signup("devb")
	resp := h.do(request{method: "POST", path: "/api/v1/apps", auth: dev.auth(), body: map[string]any{"name": "تطبيق الشحن", "slug": "browser-app",
		"app_url": appSrv.srv.URL + "/launch", "oauth": map[string]any{"scopes": []string{"orders:read"}, "redirect_urls": []string{appSrv.srv.URL + "/callback"}}}})
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
	appSrv.secret, appSrv.clientID, appSrv.state = resp.data()["client_secret"].(string), resp.data()["client_id"].(string), "browser-state-1"
	owner := h.signup("ownerb")

	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("ignore-certificate-errors", true))...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	consent := h.url + consentQuery(partnerApp{clientID: appSrv.clientID}, owner.storeID, appSrv.srv.URL+"/callback", "orders:read", appSrv.state)
	var scopesText, dir, landed string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(consent),
		chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, owner.email, chromedp.ByID),
		chromedp.SendKeys(`#password`, "correct horse battery", chromedp.ByID),
		chromedp.Click(`#signin`, chromedp.ByID),
		chromedp.WaitVisible(`#allow`, chromedp.ByID),
		chromedp.Text(`#scopes`, &scopesText, chromedp.ByID),
		chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
		chromedp.Click(`#allow`, chromedp.ByID),
		chromedp.WaitVisible(`#done`, chromedp.ByID),
		chromedp.Location(&landed),
	))
	require.Equal(t, "rtl", dir)
	require.Contains(t, scopesText, "عرض الطلبات والمدفوعات", "scopes in words, in Arabic")
	require.True(t, strings.HasPrefix(landed, appSrv.srv.URL+"/callback?"), landed)

	appSrv.mu.Lock()
	token, orders, problem := appSrv.token, appSrv.orders, appSrv.problem
	appSrv.mu.Unlock()
	require.Empty(t, problem)
	require.True(t, strings.HasPrefix(token, "svc_app_"))
	require.Equal(t, http.StatusOK, orders, "the app called the API with its token")

	revoke := h.do(request{method: "POST", path: "/api/v1/oauth/revoke", body: map[string]any{"client_id": appSrv.clientID,
		"client_secret": appSrv.secret, "token": token}})
	require.Equal(t, true, revoke.data()["revoked"])
	after := h.do(request{method: "GET", path: storePath(owner.storeID, "/orders"), auth: bearer(token)})
	require.Equal(t, http.StatusUnauthorized, after.Status)
	require.Equal(t, "Invalid or revoked app token", after.errorField("message"))
}
