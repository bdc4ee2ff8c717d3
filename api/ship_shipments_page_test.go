package api_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// The shipments page in headless Chromium, in Arabic and English, wide and
// on a phone: today's shipments with their status, COD and waybill; a
// waybill downloads through the API with the page's session; and the day's
// print run prints as one PDF with a page per waybill.
func TestShipmentsPageInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newShop(t, h, "shippage", 20)
	var ids []string
	for i, phone := range []string{"+201005556661", "+201005556662"} {
		placed := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: arabicOrderBody(s.variantID, 1+i, phone)})
		require.Equal(t, http.StatusCreated, placed.Status, string(placed.Raw))
		shipped := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+placed.data()["id"].(string)+"/shipments"), auth: bearer(s.token),
			body: map[string]any{"carrier": "aramex", "tracking_number": "AWB-PAGE-" + phone[len(phone)-1:]}})
		require.Equal(t, http.StatusCreated, shipped.Status, string(shipped.Raw))
		ids = append(ids, shipped.data()["id"].(string))
	}
	require.Equal(t, http.StatusOK, h.shipmentEvent(s, ids[1], map[string]any{"status": "in_transit"}).Status)
	for _, id := range ids {
		waitFor(t, "the waybill", func() bool {
			return h.do(request{method: "GET", path: storePath(s.m.storeID, "/shipments/"+id), auth: bearer(s.token)}).data()["waybill"].(map[string]any)["status"] == "ready"
		})
	}

	tab, _ := editorBrowser(t, h, s.m.email)
	pagePath := h.url + "/stores/" + s.m.storeID + "/shipments"
	var table, dir string
	var downloads int
	require.NoError(t, chromedp.Run(tab,
		chromedp.Navigate(pagePath),
		chromedp.Text(`#shipments`, &table, chromedp.ByID),
		chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#shipments a.download').length`, &downloads)))
	require.Equal(t, "rtl", dir)
	require.Equal(t, 2, downloads)
	for _, want := range []string{"ORD-1001-1", "ORD-1002-1", "AWB-PAGE-1", "في الطريق", "البوليصة جاهزة", "aramex"} {
		require.Contains(t, table, want)
	}
	// The download link answers the PDF to the page's session.
	var answer string
	require.NoError(t, chromedp.Run(tab, chromedp.Evaluate(`fetch(document.querySelector('#shipments a.download').href)
		.then(r => r.status + " " + r.headers.get("content-type") + " " + r.headers.get("content-disposition"))`, &answer,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })))
	require.True(t, strings.HasPrefix(answer, `200 application/pdf attachment; filename="AWB-ORD-100`), answer)
	checkLayout(t, tab, "shipments-ar")

	// The day's waybills: one PDF, a page each.
	var printHref string
	var pdf []byte
	require.NoError(t, chromedp.Run(tab, chromedp.AttributeValue(`a.print`, "href", &printHref, nil, chromedp.ByQuery)))
	require.NoError(t, chromedp.Run(tab, chromedp.Navigate(h.url+printHref)))
	require.NoError(t, chromedp.Run(tab,
		chromedp.WaitReady(`section.label`, chromedp.ByQuery),
		chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			pdf, _, err = page.PrintToPDF().WithPreferCSSPageSize(true).Do(ctx)
			return err
		})))
	file := filepath.Join(screenshotDir(t), "waybills-of-the-day.pdf")
	require.NoError(t, os.WriteFile(file, pdf, 0o644))
	info, err := exec.Command("pdfinfo", file).Output()
	require.NoError(t, err)
	require.Regexp(t, `Pages:\s+2\b`, string(info))
	text, err := exec.Command("pdftotext", "-enc", "UTF-8", file, "-").Output()
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(text), "منى عادل"), string(text))
	require.Contains(t, string(text), "AWB-PAGE-2")

	h.setLocale(s.m.email, "en")
	require.NoError(t, chromedp.Run(tab, chromedp.Navigate(pagePath), chromedp.Text(`#shipments`, &table, chromedp.ByID),
		chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery)))
	require.Equal(t, "ltr", dir)
	require.Contains(t, table, "in transit")
	require.Contains(t, table, "Download PDF")
	checkLayout(t, tab, "shipments-en")

	// Another day has none; a bad date is refused.
	require.NoError(t, chromedp.Run(tab, chromedp.Navigate(pagePath+"?date=2020-01-01"), chromedp.Text(`#shipments`, &table, chromedp.ByID)))
	require.Contains(t, table, "No shipments on this day.")
	other := newShop(t, h, "shippage-other", 1)
	resp := h.do(request{method: "GET", path: "/stores/" + s.m.storeID + "/shipments/print", auth: other.m.auth()})
	require.NotContains(t, string(resp.Raw), "منى عادل", "another merchant is sent to sign in and sees no waybills")
	require.NotContains(t, string(resp.Raw), "AWB-PAGE")
}
