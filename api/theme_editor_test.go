package api_test

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// editorBrowser signs the merchant in through the page and returns a
// browser context and a second tab of the same browser.
func editorBrowser(t *testing.T, h *harness, email string) (context.Context, context.Context) {
	chromium, err := exec.LookPath("chromium")
	require.NoError(t, err, "Debian's chromium is needed (`make system-libs` installs it)")
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU)...)
	t.Cleanup(cancel)
	tabA, cancelA := chromedp.NewContext(alloc)
	t.Cleanup(cancelA)
	tabA, cancelT := context.WithTimeout(tabA, 120*time.Second)
	t.Cleanup(cancelT)
	require.NoError(t, chromedp.Run(tabA,
		chromedp.Navigate(h.url+"/login"),
		chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, email, chromedp.ByID),
		chromedp.SendKeys(`#password`, "correct horse battery", chromedp.ByID),
		chromedp.Click(`#signin`, chromedp.ByID),
		chromedp.WaitNotPresent(`#signin`, chromedp.ByID),
	))
	tabB, cancelB := chromedp.NewContext(tabA)
	t.Cleanup(cancelB)
	return tabA, tabB
}

func openEditor(h *harness, storeID string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Navigate(h.url + "/stores/" + storeID + "/themes/editor"),
		chromedp.WaitVisible(`body[data-ready="true"]`, chromedp.ByQuery),
	}
}

func (h *harness) draftRevision(m merchant) (float64, map[string]any) {
	h.t.Helper()
	resp := h.do(request{method: "GET", path: storePath(m.storeID, "/themes/v3/customization"), auth: m.auth()})
	require.Equal(h.t, http.StatusOK, resp.Status)
	return resp.data()["revision"].(float64), resp.data()["draft"].(map[string]any)
}

func TestThemeEditorInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("editor")
	tabA, tabB := editorBrowser(t, h, m.email)
	require.NoError(t, chromedp.Run(tabA, openEditor(h, m.storeID)))
	start, _ := h.draftRevision(m)

	// A range edited three times within the debounce saves once.
	var state string
	require.NoError(t, chromedp.Run(tabA,
		chromedp.Click(`li[data-section-id="featured-collection"] > .section-name`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-setting-id="products_to_show"] input[type=range]`, chromedp.ByQuery),
		chromedp.Evaluate(`(() => {
			const r = document.querySelector('[data-setting-id="products_to_show"] input[type=range]');
			for (const v of [10, 12, 14]) { r.value = v; r.dispatchEvent(new Event('change')); }
		})()`, nil),
		chromedp.Sleep(500*time.Millisecond),
		chromedp.Text(`#save-state`, &state, chromedp.ByID),
	))
	rev, _ := h.draftRevision(m)
	require.Equal(t, start, rev, "nothing saved before the 1500 ms debounce")
	require.Equal(t, "تغييرات غير محفوظة", state, "unsaved changes, in Arabic by default")
	require.NoError(t, chromedp.Run(tabA, chromedp.WaitVisible(`#save-state[data-state="saved"]`, chromedp.ByQuery)))
	rev, draft := h.draftRevision(m)
	require.Equal(t, start+1, rev, "one save for three edits")
	fc := draft["templates"].(map[string]any)["index"].(map[string]any)["sections"].(map[string]any)["featured-collection"].(map[string]any)
	require.Equal(t, float64(14), fc["settings"].(map[string]any)["products_to_show"])

	// Selecting a block outlines it in the preview, and the ack arrives.
	var outlined bool
	require.NoError(t, chromedp.Run(tabA,
		chromedp.Click(`li[data-block-id="slide-1"] > .block-name`, chromedp.ByQuery),
		chromedp.WaitVisible(`#preview-status[data-last-ack="svc:preview:select-block"][data-last-ack-ok="true"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById('preview').contentDocument.querySelector('[data-block-id="slide-1"]').classList.contains('sf-selected')`, &outlined),
	))
	require.True(t, outlined)

	// Two tabs on one draft: the second saver gets 412, merges its change on
	// top and says so; both changes survive.
	require.NoError(t, chromedp.Run(tabB, openEditor(h, m.storeID),
		chromedp.Click(`#theme-settings`, chromedp.ByID),
		chromedp.SetValue(`[data-setting-id="accent"] input[type=text]`, "#123456", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('[data-setting-id="accent"] input[type=text]').dispatchEvent(new Event('change'))`, nil),
		chromedp.WaitVisible(`#save-state[data-state="saved"]`, chromedp.ByQuery),
	))
	var notice string
	require.NoError(t, chromedp.Run(tabA,
		chromedp.Click(`#theme-settings`, chromedp.ByID),
		chromedp.SetValue(`[data-setting-id="cod_badge_text"] input`, "ادفع عند الباب", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('[data-setting-id="cod_badge_text"] input').dispatchEvent(new Event('change'))`, nil),
		chromedp.WaitVisible(`#merge-notice`, chromedp.ByID),
		chromedp.Text(`#merge-notice`, &notice, chromedp.ByID),
		chromedp.WaitVisible(`#save-state[data-state="saved"]`, chromedp.ByQuery),
	))
	require.Contains(t, notice, "دمج", "the merchant is told the changes were merged (Arabic by default)")
	_, draft = h.draftRevision(m)
	settings := draft["settings"].(map[string]any)
	require.Equal(t, "#123456", settings["accent"], "the other tab's change is kept")
	require.Equal(t, "ادفع عند الباب", settings["cod_badge_text"], "and this tab's change is on top")

	// Publish, then restore from the history drawer.
	var entries, top string
	require.NoError(t, chromedp.Run(tabA,
		chromedp.SetValue(`#publish-name`, "Ramadan", chromedp.ByID),
		chromedp.Click(`#publish`, chromedp.ByID),
		chromedp.Click(`#history-toggle`, chromedp.ByID),
		chromedp.WaitVisible(`#versions li[data-source="publish"]`, chromedp.ByQuery),
		chromedp.Click(`#versions li[data-source="publish"] button:last-of-type`, chromedp.ByQuery),
		chromedp.WaitVisible(`#versions li[data-source="restore"]`, chromedp.ByQuery),
		chromedp.Text(`#versions`, &entries, chromedp.ByID),
		chromedp.Text(`#versions li:first-child .version-name`, &top, chromedp.ByQuery),
	))
	require.Contains(t, entries, "Ramadan")
	require.Equal(t, "Restored: Ramadan", top)
	versions := h.do(request{method: "GET", path: storePath(m.storeID, "/themes/v3/versions"), auth: m.auth()})
	require.Len(t, versions.Body["data"], 2, fmt.Sprint(versions.Body))
}
