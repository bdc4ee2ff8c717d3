package api_test

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// A merchant who forgot the password follows the login page's link, has a
// reset link mailed, opens it in another browser and sets a new password
// there, which signs that browser in; the page speaks Arabic.
func TestPasswordResetPage(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("resetpage")

	asker := freshBrowser(t)
	var dir string
	require.NoError(t, chromedp.Run(asker,
		chromedp.Navigate(h.url+"/login"),
		chromedp.Click(`#forgot`, chromedp.ByID),
		chromedp.WaitVisible(`#request`, chromedp.ByID),
		chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
		chromedp.SendKeys(`#email`, m.email, chromedp.ByID),
		chromedp.Click(`#send`, chromedp.ByID),
		chromedp.WaitVisible(`body[data-sent]`, chromedp.ByQuery)))
	require.Equal(t, "rtl", dir)
	token := h.accountLinks(m.email, "/password-reset", 1)[0]

	opener := freshBrowser(t)
	var done string
	require.NoError(t, chromedp.Run(opener,
		chromedp.Navigate(h.url+"/password-reset#token="+token),
		chromedp.WaitVisible(`#confirm`, chromedp.ByID),
		chromedp.SendKeys(`#password`, "a brand new passphrase", chromedp.ByID),
		chromedp.Click(`#save`, chromedp.ByID),
		chromedp.WaitVisible(`#done`, chromedp.ByID),
		chromedp.Text(`#status`, &done, chromedp.ByID)))
	require.Contains(t, done, "تغيّرت كلمة مرورك")
	require.Equal(t, http.StatusOK, h.login(m.email, "a brand new passphrase").Status)

	// Opened again, the used link says so and offers a new one.
	var code string
	again := freshBrowser(t)
	require.NoError(t, chromedp.Run(again,
		chromedp.Navigate(h.url+"/password-reset#token="+token),
		chromedp.WaitVisible(`#confirm`, chromedp.ByID),
		chromedp.SendKeys(`#password`, "yet another passphrase", chromedp.ByID),
		chromedp.Click(`#save`, chromedp.ByID),
		chromedp.WaitVisible(`#request`, chromedp.ByID),
		chromedp.AttributeValue(`#error`, "data-code", &code, nil, chromedp.ByID)))
	require.Equal(t, "LINK_INVALID", code)
}
