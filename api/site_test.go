package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// siteShop is a store with a catalog, a collection, a page, a blog with an
// article and a published theme: what the website tests visit.
type siteShop struct {
	h         *harness
	m         merchant
	token     string
	subdomain string
	root      string // {base_url}/s/{subdomain}
	scarf     map[string]any
	scarfVar  string
}

func newSiteShop(t *testing.T, h *harness, name string, withImage bool) siteShop {
	m := h.signup(name)
	s := siteShop{h: h, m: m, token: h.pat(m, "catalog:read", "catalog:write", "themes:read", "themes:write", "settings:write"),
		subdomain: h.subdomain(shop{m: m})}
	s.root = h.url + "/s/" + s.subdomain
	s.scarf = h.createProduct(s.token, m.storeID, map[string]any{"name": "وشاح حرير", "price": 12050, "status": "active",
		"description": "وشاح من الحرير الطبيعي، خفيف وناعم."})
	v := s.call("POST", "/products/"+s.scarf["id"].(string)+"/variants", map[string]any{"sku": "SCARF-1", "quantity": 5, "price": 12050,
		"options": map[string]any{"color": "أحمر"}})
	require.Equal(t, http.StatusCreated, v.Status, string(v.Raw))
	s.scarfVar = v.Body["id"].(string)
	for i, name := range []string{"قميص قطن", "حقيبة جلد", "نظارة شمسية"} {
		p := h.createProduct(s.token, m.storeID, map[string]any{"name": name, "price": 9900 + i*2500, "status": "active"})
		q := s.call("POST", "/products/"+p["id"].(string)+"/variants", map[string]any{"sku": "SKU-" + string(rune('A'+i)), "quantity": 3 + i,
			"options": map[string]any{"size": "M"}})
		require.Equal(t, http.StatusCreated, q.Status, string(q.Raw))
	}
	h.createProduct(s.token, m.storeID, map[string]any{"name": "مسودة سرية", "price": 100, "status": "draft"})
	if withImage {
		up := h.uploadFile(s.token, storePath(m.storeID, "/products/"+s.scarf["id"].(string)+"/images"), "file", jpegBytes(t, 1400, 1400), nil)
		require.Contains(t, []int{http.StatusCreated, http.StatusAccepted}, up.Status, string(up.Raw))
		require.Eventually(t, func() bool {
			got := s.call("GET", "/products/"+s.scarf["id"].(string), nil)
			imgs, _ := got.data()["images"].([]any)
			return len(imgs) == 1
		}, 30*time.Second, 200*time.Millisecond)
	}
	col := s.call("POST", "/collections", map[string]any{"kind": "manual", "handle": "summer", "title": map[string]any{"ar": "تشكيلة الصيف", "en": "Summer"},
		"published": true})
	require.Equal(t, http.StatusCreated, col.Status, string(col.Raw))
	add := s.call("POST", "/collections/"+col.data()["id"].(string)+"/products", map[string]any{"product_ids": []string{s.scarf["id"].(string)}})
	require.Contains(t, []int{http.StatusOK, http.StatusCreated}, add.Status, string(add.Raw))
	past := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	page := s.call("POST", "/pages", map[string]any{"handle": "about", "title": map[string]any{"ar": "من نحن", "en": "About us"},
		"body": map[string]any{"ar": "<p>نحن <b>متجر</b> عائلي</p>", "en": "<p>We are a <b>family</b> shop</p>"}, "published_at": past})
	require.Equal(t, http.StatusCreated, page.Status, string(page.Raw))
	draftPage := s.call("POST", "/pages", map[string]any{"handle": "secret", "title": map[string]any{"ar": "سر"}})
	require.Equal(t, http.StatusCreated, draftPage.Status, string(draftPage.Raw))
	blog := s.call("POST", "/blogs", map[string]any{"handle": "news", "title": map[string]any{"ar": "الأخبار", "en": "News"}})
	require.Equal(t, http.StatusCreated, blog.Status, string(blog.Raw))
	art := s.call("POST", "/blogs/"+blog.data()["id"].(string)+"/articles", map[string]any{"handle": "opening",
		"title": map[string]any{"ar": "افتتاح المتجر", "en": "We are open"}, "body": map[string]any{"ar": "<p>افتتحنا اليوم</p>", "en": "<p>Open today</p>"},
		"author": "منى", "published_at": past})
	require.Equal(t, http.StatusCreated, art.Status, string(art.Raw))
	return s
}

func (s siteShop) call(method, path string, body any, headers ...string) response {
	s.h.t.Helper()
	hdr := map[string]string{}
	for i := 0; i+1 < len(headers); i += 2 {
		hdr[headers[i]] = headers[i+1]
	}
	return s.h.do(request{method: method, path: storePath(s.m.storeID, path), auth: bearer(s.token), body: body, headers: hdr})
}

// sitePage is one answer of the website.
type sitePage struct {
	status int
	header http.Header
	body   string
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func visit(t *testing.T, url string, headers ...string) sitePage {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noRedirects.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return sitePage{resp.StatusCode, resp.Header, string(b)}
}

// jsonLD answers the page's JSON-LD objects by @type.
func (p sitePage) jsonLD(t *testing.T) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, m := range regexp.MustCompile(`(?s)<script type="application/ld\+json">(.*?)</script>`).FindAllStringSubmatch(p.body, -1) {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(m[1]), &v), m[1])
		out[v["@type"].(string)] = v
	}
	return out
}

func (p sitePage) attr(t *testing.T, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(p.body)
	require.NotNil(t, m, "no %s in %s", pattern, p.body)
	return m[1]
}

// The website of decisions §23 over plain HTTP: every page in Arabic (the
// default, no prefix) and English (/en/), its status, headers and SEO tags;
// a renamed handle answers 301, the unpublished and unknown 404 with the
// themed page.
func TestSitePagesOverHTTP(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newSiteShop(t, h, "sitepages", true)
	scarfHandle := url.PathEscape(s.scarf["handle"].(string))

	// The home page, from the default theme (nothing published yet).
	home := visit(t, s.root)
	require.Equal(t, http.StatusOK, home.status, home.body)
	require.Contains(t, home.body, `<html lang="ar" dir="rtl" data-theme="souq" data-page="index">`)
	require.Equal(t, "public, max-age=60, stale-while-revalidate=300", home.header.Get("Cache-Control"))
	csp := home.header.Get("Content-Security-Policy")
	require.Contains(t, csp, "script-src 'self';")
	require.NotContains(t, csp, "unsafe-inline")
	require.Regexp(t, `style-src 'self' 'sha256-[A-Za-z0-9+/=]+'`, csp, "the theme's inline style by its hash")
	require.NotContains(t, home.body, "<script>", "no inline script on a cached page")
	require.Contains(t, home.body, `data-section-id="slideshow"`)
	require.Contains(t, home.body, `data-block-id="slide-1"`)
	require.Contains(t, home.body, "وشاح حرير", "the featured collection lists the newest products")
	require.NotContains(t, home.body, "مسودة سرية", "a draft product is not shown")
	require.Contains(t, home.body, `<link rel="canonical" href="`+s.root+`/">`)
	require.Contains(t, home.body, `<link rel="alternate" hreflang="en" href="`+s.root+`/en">`)
	require.Contains(t, home.body, `<link rel="alternate" hreflang="x-default" href="`+s.root+`/">`)

	// ETag and 304.
	etag := home.header.Get("ETag")
	require.NotEmpty(t, etag)
	again := visit(t, s.root, "If-None-Match", etag)
	require.Equal(t, http.StatusNotModified, again.status)
	require.Empty(t, again.body)

	// The product page: price of the first available variant, JSON-LD
	// Product and BreadcrumbList, OpenGraph with the large image, srcset.
	product := visit(t, s.root+"/products/"+scarfHandle)
	require.Equal(t, http.StatusOK, product.status, product.body)
	require.Contains(t, product.body, "120.50 ج.م.")
	ld := product.jsonLD(t)
	require.Equal(t, "وشاح حرير", ld["Product"]["name"])
	offer := ld["Product"]["offers"].(map[string]any)
	require.Equal(t, "120.50", offer["price"])
	require.Equal(t, "EGP", offer["priceCurrency"])
	require.Equal(t, "https://schema.org/InStock", offer["availability"])
	crumbs := ld["BreadcrumbList"]["itemListElement"].([]any)
	require.Len(t, crumbs, 3)
	require.Equal(t, s.root+"/products/"+scarfHandle, crumbs[2].(map[string]any)["item"])
	require.Contains(t, product.body, `<link rel="canonical" href="`+s.root+`/products/`+scarfHandle+`">`)
	require.Contains(t, product.body, `<meta property="og:type" content="product">`)
	ogImage := product.attr(t, `<meta property="og:image" content="([^"]+)">`)
	require.True(t, strings.HasSuffix(ogImage, "/large.webp"), ogImage)
	srcset := product.attr(t, `srcset="([^"]+)"`)
	require.Regexp(t, `thumbnail\.webp 150w, \S+medium\.webp 600w, \S+large\.webp 1200w`, srcset)
	require.Contains(t, product.body, `name="variant_id"`)
	require.Contains(t, product.body, `name="quantity"`)

	// English: /en/, Latin digits, ltr, the English hreflang twin.
	en := visit(t, s.root+"/en/products/"+scarfHandle)
	require.Equal(t, http.StatusOK, en.status, en.body)
	require.Contains(t, en.body, `<html lang="en" dir="ltr"`)
	require.Contains(t, en.body, "EGP 120.50")
	require.Contains(t, en.body, `<link rel="canonical" href="`+s.root+`/en/products/`+scarfHandle+`">`)
	require.Contains(t, en.body, "Add to cart")
	require.Equal(t, "en", en.header.Get("Content-Language"))

	// Eastern Arabic digits when the store chooses them; English keeps Latin.
	set := s.call("PATCH", "/settings", map[string]any{"numerals": "arab"})
	require.Equal(t, http.StatusOK, set.Status, string(set.Raw))
	require.Contains(t, visit(t, s.root+"/products/"+scarfHandle).body, "١٢٠٫٥٠ ج.م.")
	require.Contains(t, visit(t, s.root+"/en/products/"+scarfHandle).body, "EGP 120.50")

	// A renamed handle answers 301 to the new address; a draft product 404.
	renamed := s.call("PATCH", "/products/"+s.scarf["id"].(string), map[string]any{"handle": "silk-scarf"})
	require.Equal(t, http.StatusOK, renamed.Status, string(renamed.Raw))
	moved := visit(t, s.root+"/products/"+scarfHandle)
	require.Equal(t, http.StatusMovedPermanently, moved.status, moved.body)
	require.Equal(t, "/s/"+s.subdomain+"/products/silk-scarf", moved.header.Get("Location"))
	movedEn := visit(t, s.root+"/en/products/"+scarfHandle)
	require.Equal(t, "/s/"+s.subdomain+"/en/products/silk-scarf", movedEn.header.Get("Location"))
	for _, path := range []string{"/products/" + "مسودة-سرية", "/products/nothing-here", "/pages/secret", "/blogs/news/nope", "/collections/nope",
		"/categories/summer", "/no/such/page"} {
		missing := visit(t, s.root+path)
		require.Equal(t, http.StatusNotFound, missing.status, path)
		require.Contains(t, missing.body, "الصفحة غير موجودة", path+": the themed 404")
		require.Contains(t, missing.body, `<meta name="robots" content="noindex">`, path)
	}
	require.Contains(t, visit(t, s.root+"/en/nothing").body, "Page not found")

	// Collections, the catalog, categories, search.
	summer := visit(t, s.root+"/collections/summer")
	require.Equal(t, http.StatusOK, summer.status, summer.body)
	require.Contains(t, summer.body, "تشكيلة الصيف")
	require.Contains(t, summer.body, "وشاح حرير")
	require.NotContains(t, summer.body, "قميص قطن")
	all := visit(t, s.root+"/collections/all?sort=price_asc")
	require.Equal(t, http.StatusOK, all.status)
	require.Less(t, strings.Index(all.body, "قميص قطن"), strings.Index(all.body, "وشاح حرير"), "cheapest first")
	filtered := visit(t, s.root+"/collections/all?min=١٠٠&max=125")
	require.Contains(t, filtered.body, "وشاح حرير", "a price filter typed in Arabic-Indic digits")
	require.NotContains(t, filtered.body, "قميص قطن")
	cat := s.call("POST", "/categories", map[string]any{"name": "Bags"})
	require.Equal(t, http.StatusCreated, cat.Status, string(cat.Raw))
	bags := visit(t, s.root+"/categories/bags")
	require.Equal(t, http.StatusOK, bags.status, bags.body)
	found := visit(t, s.root+"/search?q=حقيبة")
	require.Equal(t, http.StatusOK, found.status)
	require.Contains(t, found.body, "حقيبة جلد")
	require.NotContains(t, found.body, "وشاح حرير")
	require.Contains(t, found.body, `<meta name="robots" content="noindex">`)

	// Pages, blogs and articles, in both languages.
	about := visit(t, s.root+"/pages/about")
	require.Equal(t, http.StatusOK, about.status)
	require.Contains(t, about.body, "<p>نحن <b>متجر</b> عائلي</p>", "the body's allowed markup is kept")
	require.Contains(t, visit(t, s.root+"/en/pages/about").body, "<p>We are a <b>family</b> shop</p>")
	news := visit(t, s.root+"/blogs/news")
	require.Equal(t, http.StatusOK, news.status)
	require.Contains(t, news.body, `href="/s/`+s.subdomain+`/blogs/news/opening"`)
	article := visit(t, s.root+"/blogs/news/opening")
	require.Equal(t, http.StatusOK, article.status)
	require.Contains(t, article.body, "افتتحنا اليوم")
	require.Contains(t, article.body, `<meta property="og:type" content="article">`)
	require.Equal(t, http.StatusOK, visit(t, s.root+"/blogs/news/articles/opening").status, "the menus' article path too")

	// Sitemap and robots.
	sitemap := visit(t, s.root+"/sitemap.xml")
	require.Equal(t, http.StatusOK, sitemap.status)
	require.Contains(t, sitemap.body, "<loc>"+s.root+"/products/silk-scarf</loc>")
	require.Contains(t, sitemap.body, "<loc>"+s.root+"/en/products/silk-scarf</loc>")
	require.Contains(t, sitemap.body, "<loc>"+s.root+"/pages/about</loc>")
	require.Contains(t, sitemap.body, "<loc>"+s.root+"/blogs/news/opening</loc>")
	require.NotContains(t, sitemap.body, "secret")
	robots := visit(t, s.root+"/robots.txt")
	require.Contains(t, robots.body, "Sitemap: "+s.root+"/sitemap.xml")
	require.Contains(t, robots.body, "Disallow: /s/"+s.subdomain+"/checkout")

	// An unknown or suspended store has no website.
	require.Equal(t, http.StatusNotFound, visit(t, h.url+"/s/no-such-store-here").status)
	_, err := testenv.SQL(t, h.db).Exec(context.Background(), `UPDATE stores SET lifecycle_state = 'suspended' WHERE id = $1`, s.m.storeID)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, visit(t, s.root).status)
}

// The website in headless Chromium, in Arabic and English at 390 and
// 1280 px: nothing leaves the viewport sideways, the page runs with its CSP
// (no violation reported), and the screenshots are kept
// ($SVC_SCREENSHOTS) to be looked at.
func TestSiteInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newSiteShop(t, h, "sitebrowser", true)
	chromium, err := exec.LookPath("chromium")
	require.NoError(t, err, "Debian's chromium is needed (`make system-libs` installs it)")
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU)...)
	t.Cleanup(cancel)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	tab, cancelT := context.WithTimeout(tab, 180*time.Second)
	t.Cleanup(cancelT)
	var violations []string
	chromedp.ListenTarget(tab, func(ev any) {
		if e, ok := ev.(*cdpruntime.EventConsoleAPICalled); ok && e.Type == cdpruntime.APITypeError {
			violations = append(violations, fmt.Sprint(e.Args))
		}
	})
	handle := url.PathEscape(s.scarf["handle"].(string))
	for _, lang := range []string{"ar", "en"} {
		prefix := ""
		if lang == "en" {
			prefix = "/en"
		}
		for name, path := range map[string]string{"home": "", "product": "/products/" + handle, "collection": "/collections/all",
			"search": "/search?q=" + url.QueryEscape("حقيبة"), "article": "/blogs/news/opening", "404": "/nothing-here"} {
			var dir, htmlLang string
			var sheets int
			require.NoError(t, chromedp.Run(tab,
				chromedp.Navigate(s.root+prefix+path),
				chromedp.WaitReady(`#sf-main`, chromedp.ByQuery),
				chromedp.AttributeValue(`html`, "dir", &dir, nil, chromedp.ByQuery),
				chromedp.AttributeValue(`html`, "lang", &htmlLang, nil, chromedp.ByQuery),
				chromedp.Evaluate(`[...document.styleSheets].filter(s => { try { return s.cssRules.length > 0 } catch (e) { return false } }).length`, &sheets),
			))
			require.Equal(t, lang, htmlLang, name)
			require.Equal(t, map[string]string{"ar": "rtl", "en": "ltr"}[lang], dir, name)
			require.Equal(t, 2, sheets, "%s: the theme's stylesheet and its inline style both apply under the CSP", name)
			siteLayout(t, tab, "site-"+name+"-"+lang)
		}
	}
	require.Empty(t, violations)
}

// siteOverflowScript is overflowScript for the website, whose slideshow is
// a scroll-snap strip: what lies inside a sideways scroll container does
// not make the page scroll, so it is not counted.
const siteOverflowScript = `(() => {
  const W = document.documentElement.clientWidth, bad = [];
  if (document.documentElement.scrollWidth > W + 1) bad.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " > " + W);
  const clipped = (el) => { for (let p = el.parentElement; p; p = p.parentElement) { const o = getComputedStyle(p).overflowX; if (o === "auto" || o === "hidden" || o === "scroll") return true; } return false; };
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0 || clipped(el)) continue;
    if (r.left < -1 || r.right > W + 1) bad.push(el.tagName + "." + el.className + " " + Math.round(r.left) + ".." + Math.round(r.right) + " of " + W);
  }
  return bad.slice(0, 10);
})()`

// siteLayout screenshots the page at 1280 and 390 px and fails when the
// page scrolls sideways at either.
func siteLayout(t *testing.T, tab context.Context, name string) {
	t.Helper()
	dir := screenshotDir(t)
	for _, width := range []int64{1280, 390} {
		var bad []string
		var shot []byte
		require.NoError(t, chromedp.Run(tab,
			chromedp.EmulateViewport(width, 900),
			chromedp.Sleep(100*time.Millisecond),
			chromedp.Evaluate(siteOverflowScript, &bad),
			chromedp.CaptureScreenshot(&shot),
		))
		require.Empty(t, bad, "%s at %d px", name, width)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width)), shot, 0o644))
	}
	require.NoError(t, chromedp.Run(tab, chromedp.EmulateViewport(1280, 900)))
}

// The editor's preview is the website's renderer fed with the draft: a
// draft change shows in the preview (and its re-render) at once and on the
// website only once published; the preview keeps the section and block ids
// the §6.3 messages name.
func TestSitePreviewRendersTheDraft(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newSiteShop(t, h, "sitepreview", false)
	got := s.call("GET", "/themes/v3/customization", nil)
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	draft := got.data()["draft"].(map[string]any)
	index := draft["templates"].(map[string]any)["index"].(map[string]any)
	fc := index["sections"].(map[string]any)["featured-collection"].(map[string]any)
	fc["settings"].(map[string]any)["title"] = "عناوين المسودة"
	saved := s.call("PUT", "/themes/v3/customization", draft, "If-Match", got.data()["etag"].(string))
	require.Equal(t, http.StatusOK, saved.Status, string(saved.Raw))

	preview := h.do(request{method: "GET", path: "/stores/" + s.m.storeID + "/themes/preview", auth: s.m.auth()})
	require.Equal(t, http.StatusOK, preview.Status, string(preview.Raw))
	body := string(preview.Raw)
	require.Contains(t, body, "عناوين المسودة", "the preview shows the draft")
	require.Contains(t, body, `data-theme="souq"`)
	require.Contains(t, body, `data-section-id="featured-collection"`)
	require.Contains(t, body, `data-block-id="slide-2"`)
	require.Contains(t, body, `<script type="module" src="/assets/editor/theme_preview.js">`)
	require.Contains(t, body, "وشاح حرير", "with the store's own products")
	require.Equal(t, "no-store", preview.Header.Get("Cache-Control"))
	require.NotContains(t, visit(t, s.root).body, "عناوين المسودة", "the website shows the published theme only")

	fc["settings"].(map[string]any)["title"] = "عنوان لم يحفظ"
	rendered := h.do(request{method: "POST", path: "/stores/" + s.m.storeID + "/themes/preview/render", auth: s.m.auth(),
		body: map[string]any{"document": draft, "page": "index", "lang": "en"}})
	require.Equal(t, http.StatusOK, rendered.Status, string(rendered.Raw))
	require.Contains(t, rendered.data()["html"], "عنوان لم يحفظ")
	require.Contains(t, rendered.data()["html"], `data-section-id="slideshow"`)
	require.Equal(t, "ltr", rendered.data()["dir"])
	require.Contains(t, rendered.data()["style"], "--accent:")

	product := h.do(request{method: "GET", path: "/stores/" + s.m.storeID + "/themes/preview?page=product", auth: s.m.auth()})
	require.Equal(t, http.StatusOK, product.Status)
	require.Contains(t, string(product.Raw), `data-page="product"`)

	pub := s.call("POST", "/themes/v3/customization/publish", map[string]any{"name": "new title"})
	require.Equal(t, http.StatusCreated, pub.Status, string(pub.Raw))
	require.Contains(t, visit(t, s.root).body, "عناوين المسودة", "published, the website shows it")
}

// With SVC_STOREFRONT_DOMAIN set, a store's website answers at
// {subdomain}.{domain} (canonical https addresses there) and no longer
// under the API's /s/, so nothing a store serves is same-site with the
// merchant application.
func TestSiteServedOnTheStorefrontDomain(t *testing.T) {
	h := newHarness(t, api.Config{StorefrontDomain: "shops.test"})
	s := newSiteShop(t, h, "sitedomain", false)
	require.Equal(t, http.StatusNotFound, visit(t, s.root).status, "not under the API's address")
	req, err := http.NewRequest(http.MethodGet, h.url+"/en/pages/about", nil)
	require.NoError(t, err)
	req.Host = s.subdomain + ".shops.test"
	resp, err := noRedirects.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	require.Contains(t, string(b), `<link rel="canonical" href="https://`+s.subdomain+`.shops.test/en/pages/about">`)
	require.Contains(t, string(b), `href="/en/cart"`, "links are the site's own paths")
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: "/healthz"}).Status, "the API's own host still answers its routes")
}

// The theme library (decisions §23): GET /themes lists the built-in
// themes; switching the draft saves the old draft as a version and puts
// the theme's defaults in the draft; the preview renders the new theme at
// once, the website only once it is published; a restore brings the old
// theme back with its draft.
func TestThemeLibraryAndSwitch(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newSiteShop(t, h, "themelib", false)
	list := s.call("GET", "/themes", nil)
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	items := list.data()["items"].([]any)
	require.GreaterOrEqual(t, len(items), 2)
	souq, layali := items[0].(map[string]any), items[1].(map[string]any)
	require.Equal(t, "souq", souq["id"])
	require.Equal(t, "layali", layali["id"])
	require.Equal(t, true, souq["draft"])
	require.Equal(t, false, souq["published"], "nothing published yet")
	require.NotEmpty(t, layali["name"].(map[string]any)["ar"])
	css := visit(t, layali["stylesheet_url"].(string))
	require.Equal(t, http.StatusOK, css.status)
	require.Equal(t, "text/css; charset=utf-8", css.header.Get("Content-Type"))

	first := s.call("POST", "/themes/v3/customization/publish", map[string]any{"name": "souq"})
	require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))

	bad := s.call("POST", "/themes/v3/customization/switch", map[string]any{"theme_id": "nope"})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status, string(bad.Raw))
	require.Equal(t, []string{"theme_id"}, bad.fieldNames())

	switched := s.call("POST", "/themes/v3/customization/switch", map[string]any{"theme_id": "layali"})
	require.Equal(t, http.StatusOK, switched.Status, string(switched.Raw))
	require.Equal(t, "layali", switched.data()["theme_id"])
	require.Equal(t, "switch", switched.data()["saved_version"].(map[string]any)["source"])
	require.Equal(t, "souq", switched.data()["saved_version"].(map[string]any)["theme_id"])
	require.Equal(t, "#c8a15a", switched.data()["draft"].(map[string]any)["settings"].(map[string]any)["accent"])
	require.Equal(t, switched.Header.Get("ETag"), switched.data()["etag"])

	preview := h.do(request{method: "GET", path: "/stores/" + s.m.storeID + "/themes/preview", auth: s.m.auth()})
	require.Equal(t, http.StatusOK, preview.Status)
	require.Contains(t, string(preview.Raw), `data-theme="layali"`)
	require.Contains(t, string(preview.Raw), `class="masthead"`, "the theme's own layout")
	require.Contains(t, string(preview.Raw), `/assets/theme/layali.css?v=`)
	site := visit(t, s.root)
	require.Contains(t, site.body, `data-theme="souq"`, "the website keeps its theme until publish")

	pub := s.call("POST", "/themes/v3/customization/publish", map[string]any{"name": "layali"})
	require.Equal(t, http.StatusCreated, pub.Status, string(pub.Raw))
	require.Equal(t, "layali", pub.data()["theme_id"])
	site = visit(t, s.root)
	require.Contains(t, site.body, `data-theme="layali"`)
	require.Contains(t, site.body, "/assets/layali.css?v=")
	require.Contains(t, site.body, "--accent:#c8a15a")
	require.Equal(t, http.StatusOK, visit(t, s.root+"/assets/layali.css").status)
	product := visit(t, s.root+"/products/"+url.PathEscape(s.scarf["handle"].(string)))
	require.Equal(t, http.StatusOK, product.status)
	require.Contains(t, product.body, `data-theme="layali"`)

	list = s.call("GET", "/themes", nil)
	require.Equal(t, true, list.data()["items"].([]any)[1].(map[string]any)["published"])

	restored := s.call("POST", "/themes/v3/versions/"+switched.data()["saved_version"].(map[string]any)["id"].(string)+"/restore", nil)
	require.Equal(t, http.StatusCreated, restored.Status, string(restored.Raw))
	require.Equal(t, "souq", restored.data()["theme_id"], "the restored draft renders with its own theme")
	preview = h.do(request{method: "GET", path: "/stores/" + s.m.storeID + "/themes/preview", auth: s.m.auth()})
	require.Contains(t, string(preview.Raw), `data-theme="souq"`)
}

// Both themes in headless Chromium, Arabic and English at 390 and 1280 px.
func TestSecondThemeInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := newSiteShop(t, h, "layalibrowser", true)
	require.Equal(t, http.StatusOK, s.call("POST", "/themes/v3/customization/switch", map[string]any{"theme_id": "layali"}).Status)
	require.Equal(t, http.StatusCreated, s.call("POST", "/themes/v3/customization/publish", map[string]any{"name": "layali"}).Status)
	chromium, err := exec.LookPath("chromium")
	require.NoError(t, err, "Debian's chromium is needed (`make system-libs` installs it)")
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU)...)
	t.Cleanup(cancel)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	tab, cancelT := context.WithTimeout(tab, 180*time.Second)
	t.Cleanup(cancelT)
	handle := url.PathEscape(s.scarf["handle"].(string))
	for _, lang := range []string{"ar", "en"} {
		prefix := map[string]string{"ar": "", "en": "/en"}[lang]
		for name, path := range map[string]string{"home": "", "product": "/products/" + handle, "collection": "/collections/all"} {
			var theme string
			require.NoError(t, chromedp.Run(tab,
				chromedp.Navigate(s.root+prefix+path),
				chromedp.WaitReady(`#sf-main`, chromedp.ByQuery),
				chromedp.AttributeValue(`html`, "data-theme", &theme, nil, chromedp.ByQuery),
			))
			require.Equal(t, "layali", theme)
			siteLayout(t, tab, "layali-"+name+"-"+lang)
		}
	}
}

// The page cache (decisions §23): a page is served from the cache until a
// change that shows on it commits; then the next request renders it again.
// Price, stock crossing zero, content, settings and publish each move the
// store's content version in their own transaction.
func TestSiteCacheFollowsEveryChange(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newSiteShop(t, h, "sitecache", false)
	productPath := s.root + "/products/" + url.PathEscape(s.scarf["handle"].(string))
	first := visit(t, productPath)
	require.Equal(t, "miss", first.header.Get("X-Cache"))
	again := visit(t, productPath)
	require.Equal(t, "hit", again.header.Get("X-Cache"))
	require.Equal(t, first.body, again.body)
	require.Equal(t, first.header.Get("ETag"), again.header.Get("ETag"))
	require.Equal(t, "hit", visit(t, productPath).header.Get("X-Cache"))
	require.Equal(t, http.StatusNotModified, visit(t, productPath, "If-None-Match", first.header.Get("ETag")).status)
	require.Equal(t, "miss", visit(t, productPath+"?variant="+s.scarfVar).header.Get("X-Cache"), "the query is part of the key")
	require.Equal(t, "miss", visit(t, s.root+"/en/products/"+url.PathEscape(s.scarf["handle"].(string))).header.Get("X-Cache"), "and the language")

	changes := []struct {
		name   string
		change func()
		shows  string
	}{
		{"a price", func() {
			r := s.call("PATCH", "/products/"+s.scarf["id"].(string)+"/variants/"+s.scarfVar, map[string]any{"price": 13000})
			require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		}, "130.00 ج.م."},
		{"stock crossing zero", func() {
			r := s.call("PATCH", "/products/"+s.scarf["id"].(string)+"/variants/"+s.scarfVar, map[string]any{"quantity": 0})
			require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		}, "نفدت الكمية"},
		{"the numerals setting", func() {
			r := s.call("PATCH", "/settings", map[string]any{"numerals": "arab"})
			require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		}, "١٣٠٫٠٠ ج.م."},
		{"a published theme", func() {
			got := s.call("GET", "/themes/v3/customization", nil)
			draft := got.data()["draft"].(map[string]any)
			draft["settings"].(map[string]any)["accent"] = "#123456"
			require.Equal(t, http.StatusOK, s.call("PUT", "/themes/v3/customization", draft, "If-Match", got.data()["etag"].(string)).Status)
			require.Equal(t, http.StatusCreated, s.call("POST", "/themes/v3/customization/publish", nil).Status)
		}, "--accent:#123456"},
	}
	for _, c := range changes {
		require.Equal(t, "hit", visit(t, productPath).header.Get("X-Cache"), "%s: cached before", c.name)
		c.change()
		after := visit(t, productPath)
		require.Equal(t, "miss", after.header.Get("X-Cache"), c.name)
		require.Contains(t, after.body, c.shows, c.name)
		require.NotEqual(t, first.header.Get("ETag"), after.header.Get("ETag"), c.name)
		require.Equal(t, "hit", visit(t, productPath).header.Get("X-Cache"), "%s: cached again", c.name)
	}

	// A content page's edit shows on the next request too.
	about := s.root + "/pages/about"
	require.Equal(t, "miss", visit(t, about).header.Get("X-Cache"))
	require.Equal(t, "hit", visit(t, about).header.Get("X-Cache"))
	var pageID string
	for _, p := range s.call("GET", "/pages", nil).list() {
		if p.(map[string]any)["handle"] == "about" {
			pageID = p.(map[string]any)["id"].(string)
		}
	}
	require.Equal(t, http.StatusOK, s.call("PATCH", "/pages/"+pageID, map[string]any{
		"body": map[string]any{"ar": "<p>نص جديد</p>"}}).Status)
	updated := visit(t, about)
	require.Equal(t, "miss", updated.header.Get("X-Cache"))
	require.Contains(t, updated.body, "نص جديد")
}

// The editor switches the draft's theme from its picker: the preview
// frame swaps the stylesheet (svc:preview:swap-theme, acknowledged) and
// renders the draft with the new theme's templates.
func TestEditorSwitchesTheme(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("editorswitch")
	tab, _ := editorBrowser(t, h, m.email)
	require.NoError(t, chromedp.Run(tab, openEditor(h, m.storeID)))
	var frameTheme, stylesheet string
	var masthead bool
	require.NoError(t, chromedp.Run(tab,
		chromedp.WaitReady(`#theme-picker option[value="layali"]`, chromedp.ByQuery),
		chromedp.SetValue(`#theme-picker`, "layali", chromedp.ByID),
		chromedp.Evaluate(`document.getElementById('theme-picker').dispatchEvent(new Event('change'))`, nil),
		chromedp.Poll(`document.getElementById('preview').contentDocument.documentElement.dataset.theme === 'layali'`, nil),
		chromedp.Evaluate(`document.getElementById('preview').contentDocument.documentElement.dataset.theme`, &frameTheme),
		chromedp.Evaluate(`document.getElementById('preview').contentDocument.querySelector('link[rel=stylesheet]').getAttribute('href')`, &stylesheet),
		chromedp.Poll(`!!document.getElementById('preview').contentDocument.querySelector('.masthead')`, &masthead),
	))
	require.Equal(t, "layali", frameTheme)
	require.Contains(t, stylesheet, "/assets/theme/layali.css")
	require.True(t, masthead)
	themes := h.do(request{method: "GET", path: storePath(m.storeID, "/themes"), auth: m.auth()})
	require.Equal(t, true, themes.data()["items"].([]any)[1].(map[string]any)["draft"])
	dir := screenshotDir(t)
	var shot []byte
	require.NoError(t, chromedp.Run(tab, chromedp.CaptureScreenshot(&shot)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "editor-switched-layali-1280.png"), shot, 0o644))
}
