package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// freshBrowser is a headless Chromium tab with no session.
func freshBrowser(t *testing.T) context.Context {
	t.Helper()
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU)...)
	t.Cleanup(cancel)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	tab, cancelT := context.WithTimeout(tab, 120*time.Second)
	t.Cleanup(cancelT)
	return tab
}

// The staff pages in Chromium (decisions §16): the owner makes a role and
// invites a clerk on the staff page; the clerk opens the mailed link,
// accepts as a new account, signs in, and sees only what the role allows;
// a second store's invitation, accepted signed in, adds the store switcher.
func TestStaffPagesInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	owner := h.signup("staffpage")
	ownerTab, _ := editorBrowser(t, h, owner.email)
	staffPage := h.url + "/stores/" + owner.storeID + "/staff"

	// A custom role of two scopes, then an invitation to it, on the page.
	var dir string
	require.NoError(t, chromedp.Run(ownerTab,
		chromedp.Navigate(staffPage),
		chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
		chromedp.SendKeys(`form.new-role input[name=name]`, "أمين المخزن", chromedp.ByQuery),
		chromedp.Click(`form.new-role input[value="catalog:read"]`, chromedp.ByQuery),
		chromedp.Click(`form.new-role input[value="orders:write"]`, chromedp.ByQuery),
		chromedp.Click(`form.new-role button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//tr[contains(@class,"role")]/td[contains(., "أمين المخزن")]`, chromedp.BySearch),
	))
	require.Equal(t, "rtl", dir)
	clerkRole := h.roleID(owner, "أمين المخزن")
	const clerkEmail = "clerk-page@example.com"
	require.NoError(t, chromedp.Run(ownerTab,
		chromedp.SendKeys(`#invite input[name=email]`, clerkEmail, chromedp.ByQuery),
		chromedp.SetValue(`#invite select[name=role_id]`, clerkRole, chromedp.ByQuery),
		chromedp.Click(`#invite button`, chromedp.ByQuery),
		chromedp.WaitVisible(`tr.invitation`, chromedp.ByQuery),
	))
	var invitations string
	require.NoError(t, chromedp.Run(ownerTab, chromedp.Text(`#invitations`, &invitations, chromedp.ByID)))
	require.Contains(t, invitations, clerkEmail)
	require.Contains(t, invitations, "أمين المخزن")
	checkLayout(t, ownerTab, "staff-ar")

	// A bad email: the API's Arabic message on the page, nothing invited.
	var refusal string
	require.NoError(t, chromedp.Run(ownerTab,
		chromedp.Evaluate(`document.querySelector('#invite input[name=email]').type = 'text'`, nil),
		chromedp.SendKeys(`#invite input[name=email]`, "not-an-email", chromedp.ByQuery),
		chromedp.Click(`#invite button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#invite .result.error`, chromedp.ByQuery),
		chromedp.Text(`#invite .result`, &refusal, chromedp.ByQuery)))
	require.Contains(t, refusal, "email")

	// The clerk opens the mailed link in another browser, as a new account.
	link := h.url + "/invitations#token=" + h.invitationToken(clerkEmail, 1)
	clerkTab := freshBrowser(t)
	var storeName, roleName, done string
	require.NoError(t, chromedp.Run(clerkTab,
		chromedp.Navigate(link),
		chromedp.WaitVisible(`#accept-new`, chromedp.ByID),
		chromedp.Text(`#store-name`, &storeName, chromedp.ByID),
		chromedp.Text(`#role-name`, &roleName, chromedp.ByID),
	))
	require.Equal(t, "Store staffpage", storeName)
	require.Equal(t, "أمين المخزن", roleName)
	checkLayout(t, clerkTab, "invitation-ar")
	// In English (looking up does not use the link up).
	englishTab := freshBrowser(t)
	var englishDir, englishIntro string
	require.NoError(t, chromedp.Run(englishTab,
		chromedp.Navigate(h.url+"/invitations?lang=en#token="+strings.TrimPrefix(link, h.url+"/invitations#token=")),
		chromedp.WaitVisible(`#accept-new`, chromedp.ByID),
		chromedp.AttributeValue(`html`, "dir", &englishDir, nil, chromedp.ByQuery),
		chromedp.Text(`#invitation`, &englishIntro, chromedp.ByID)))
	require.Equal(t, "ltr", englishDir)
	require.Contains(t, englishIntro, "You are invited to join")
	checkLayout(t, englishTab, "invitation-en")
	require.NoError(t, chromedp.Run(clerkTab,
		chromedp.SendKeys(`#name`, "سارة", chromedp.ByID),
		chromedp.SendKeys(`#password`, "correct horse battery", chromedp.ByID),
		chromedp.Click(`#accept`, chromedp.ByID),
		chromedp.WaitVisible(`#done`, chromedp.ByID),
		chromedp.Text(`#status`, &done, chromedp.ByID)))
	require.Contains(t, done, "انضممت")

	// The link is single use: opened again, the API's 404 in Arabic.
	var reused string
	reuseTab := freshBrowser(t)
	require.NoError(t, chromedp.Run(reuseTab, chromedp.Navigate(link),
		chromedp.WaitVisible(`#error`, chromedp.ByID),
		chromedp.AttributeValue(`#error`, "data-code", &reused, nil, chromedp.ByID)))
	require.Equal(t, "NOT_FOUND", reused)

	// Signed in as the clerk: the staff page shows the role and nothing to
	// manage; the pages' API calls answer only what the role allows.
	clerkSignedIn, _ := editorBrowser(t, h, clerkEmail)
	var myRole string
	var manageForms int
	require.NoError(t, chromedp.Run(clerkSignedIn,
		chromedp.Navigate(staffPage),
		chromedp.Text(`#my-role`, &myRole, chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll('#members, #invite, form.new-role').length`, &manageForms),
	))
	require.Contains(t, myRole, "أمين المخزن")
	require.Contains(t, myRole, "عرض المنتجات والتصنيفات")
	require.Zero(t, manageForms)
	statuses := map[string]float64{}
	for _, path := range []string{"/orders", "/products", "/customers", "/staff", "/audit-log"} {
		var status float64
		require.NoError(t, chromedp.Run(clerkSignedIn, chromedp.Evaluate(
			`fetch('/api/v1/stores/`+owner.storeID+path+`', {credentials: 'same-origin'}).then(r => r.status)`, &status,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })))
		statuses[path] = status
	}
	require.Equal(t, map[string]float64{"/orders": http.StatusOK, "/products": http.StatusOK, "/customers": http.StatusForbidden,
		"/staff": http.StatusForbidden, "/audit-log": http.StatusForbidden}, statuses)
	checkLayout(t, clerkSignedIn, "staff-clerk-ar")

	// Another store invites the same email: the clerk, signed in, accepts
	// with one click, and the pages switch between the two stores.
	other := h.signup("staffpage-other")
	inv := h.do(request{method: "POST", path: storePath(other.storeID, "/staff/invitations"), auth: other.auth(),
		body: map[string]any{"email": clerkEmail, "role_id": h.roleID(other, "Admin")}})
	require.Equal(t, http.StatusCreated, inv.Status, string(inv.Raw))
	require.NoError(t, chromedp.Run(clerkSignedIn,
		chromedp.Navigate(h.url+"/invitations#token="+h.invitationToken(clerkEmail, 2)),
		chromedp.WaitVisible(`#accept-signed-in`, chromedp.ByID),
		chromedp.Click(`#accept-signed-in`, chromedp.ByID),
		chromedp.WaitVisible(`#done`, chromedp.ByID),
		chromedp.Navigate(h.url+"/stores/"+owner.storeID+"/shipments"),
		chromedp.WaitVisible(`a.switch-store[data-store-id="`+other.storeID+`"]`, chromedp.ByQuery),
		chromedp.Click(`a.switch-store`, chromedp.ByQuery),
		chromedp.WaitVisible(`#shipments`, chromedp.ByID),
	))
	var url string
	require.NoError(t, chromedp.Run(clerkSignedIn, chromedp.Location(&url)))
	require.Equal(t, h.url+"/stores/"+other.storeID+"/shipments", url)
	checkLayout(t, clerkSignedIn, "switcher-ar")
	h.setLocale(clerkEmail, "en")
	var switcher string
	require.NoError(t, chromedp.Run(clerkSignedIn, chromedp.Reload(),
		chromedp.Text(`nav.stores`, &switcher, chromedp.ByQuery)))
	require.Contains(t, switcher, "Your other stores")
	checkLayout(t, clerkSignedIn, "switcher-en")

	// In English the staff page reads left to right.
	h.setLocale(owner.email, "en")
	var text string
	require.NoError(t, chromedp.Run(ownerTab, chromedp.Navigate(staffPage),
		chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
		chromedp.Text(`#members`, &text, chromedp.ByID)))
	require.Equal(t, "ltr", dir)
	require.Contains(t, text, "Members")
	require.Contains(t, text, "سارة")
	checkLayout(t, ownerTab, "staff-en")
}
