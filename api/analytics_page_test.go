package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// The analytics page in headless Chromium, in Arabic and English, wide and
// on a phone: the last 30 days by default as one bar per day (the time
// axis running right to left in Arabic), the totals and the top products;
// switching to weeks redraws the chart from the API.
func TestAnalyticsPageInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := analyticsShop(t, h, "analyticspage")
	scarf := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "وشاح حرير", "price": 12000})
	v := h.do(request{method: "POST", path: storePath(s.m.storeID, "/products/"+scarf["id"].(string)+"/variants"), auth: bearer(s.token),
		body: map[string]any{"sku": "SCARF-PAGE", "quantity": 50, "options": map[string]any{"color": "red"}}})
	require.Equal(t, http.StatusCreated, v.Status, string(v.Raw))
	now := time.Now()
	for i, back := range []int{0, 1, 1, 3, 8, 20} {
		o := h.placeOrder(s, "cod", 1+i%2)
		h.placeAt(o["id"].(string), now.AddDate(0, 0, -back))
		if i%3 == 0 {
			require.Equal(t, http.StatusOK, h.moveStatus(s, o["id"].(string), "SHIPPED").Status)
			require.Equal(t, http.StatusOK, h.moveStatus(s, o["id"].(string), "DELIVERED").Status)
		}
	}
	scarves := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
		body: orderBody(v.Body["id"].(string), 3, "+201009998887")})
	require.Equal(t, http.StatusCreated, scarves.Status, string(scarves.Raw))

	tab, _ := editorBrowser(t, h, s.m.email)
	page := h.url + "/stores/" + s.m.storeID + "/analytics"
	var dir, totals, top, from, to string
	var bars int
	var firstX, lastX float64
	read := func() {
		t.Helper()
		require.NoError(t, chromedp.Run(tab,
			chromedp.WaitVisible(`body[data-loaded="true"]`, chromedp.ByQuery),
			chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
			chromedp.Text(`#totals`, &totals, chromedp.ByID),
			chromedp.Text(`#top`, &top, chromedp.ByID),
			chromedp.Value(`input[name=date_from]`, &from, chromedp.ByQuery),
			chromedp.Value(`input[name=date_to]`, &to, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll('#chart rect.bar').length`, &bars),
			chromedp.Evaluate(`+document.querySelector('#chart rect.bar').getAttribute('x')`, &firstX),
			chromedp.Evaluate(`+[...document.querySelectorAll('#chart rect.bar')].pop().getAttribute('x')`, &lastX)))
	}
	require.NoError(t, chromedp.Run(tab, chromedp.Navigate(page)))
	read()
	require.Equal(t, "rtl", dir)
	require.Equal(t, 30, bars, "the last 30 days, one bar each")
	require.Greater(t, firstX, lastX, "in Arabic the first day is on the right")
	require.Equal(t, time.Now().In(cairo(t)).Format("2006-01-02"), to)
	for _, want := range []string{"صافي المبيعات", "نسبة تحصيل الدفع عند الاستلام", "١٠٠", "٧"} {
		require.Contains(t, totals, want)
	}
	require.Contains(t, top, "وشاح حرير")
	require.Contains(t, top, "Abaya")
	require.True(t, strings.Index(top, "Abaya") < strings.Index(top, "وشاح حرير"), "the abayas sold more")
	checkLayout(t, tab, "analytics-ar")
	require.NoError(t, chromedp.Run(tab, chromedp.ScrollIntoView(`#top`, chromedp.ByID)))
	checkLayout(t, tab, "analytics-ar-chart")

	// Weeks: the form asks the API again and the chart is redrawn.
	require.NoError(t, chromedp.Run(tab,
		chromedp.SetValue(`select[name=interval]`, "week", chromedp.ByQuery),
		chromedp.Evaluate(`document.body.dataset.loaded = ""`, nil),
		chromedp.Click(`#range-form button`, chromedp.ByQuery)))
	read()
	require.LessOrEqual(t, bars, 6)
	require.GreaterOrEqual(t, bars, 5)

	h.setLocale(s.m.email, "en")
	require.NoError(t, chromedp.Run(tab, chromedp.Navigate(page)))
	read()
	require.Equal(t, "ltr", dir)
	require.Less(t, firstX, lastX, "in English the first day is on the left")
	for _, want := range []string{"Net sales", "COD collection rate", "100%", "7"} {
		require.Contains(t, totals, want)
	}
	checkLayout(t, tab, "analytics-en")
	require.NoError(t, chromedp.Run(tab, chromedp.EmulateViewport(390, 900), chromedp.Sleep(300*time.Millisecond),
		chromedp.ScrollIntoView(`#chart-card`, chromedp.ByID)))
	checkLayout(t, tab, "analytics-en-chart")
}

func cairo(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Africa/Cairo")
	require.NoError(t, err)
	return loc
}
