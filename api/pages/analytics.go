package pages

import "net/http"

// The analytics page (decisions §17): the sales chart over a chosen range
// and interval, the totals and the top products. It reads the JSON API
// from the browser with the member's session, so analytics:read decides
// who sees figures, and the CSV links are the API's own exports.

// AnalyticsPage serves GET /stores/{store_id}/analytics.
func (p *Pages) AnalyticsPage() http.Handler {
	return p.handleStore("analytics:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		p.storePage(w, mp, "analytics.html", "analytics", map[string]any{"Title": word(mp.lang, "analytics.title")})
		return nil
	})
}
