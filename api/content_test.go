package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// contentShop is a store with a token of both themes scopes and helpers
// for its content routes.
type contentShop struct {
	h         *harness
	m         merchant
	token     string
	subdomain string
}

func newContentShop(h *harness, name string) contentShop {
	m := h.signup(name)
	return contentShop{h: h, m: m, token: h.pat(m, "themes:read", "themes:write"), subdomain: h.subdomain(shop{m: m})}
}

func (c contentShop) call(method, path string, body any, headers ...string) response {
	c.h.t.Helper()
	hdr := map[string]string{}
	for i := 0; i+1 < len(headers); i += 2 {
		hdr[headers[i]] = headers[i+1]
	}
	return c.h.do(request{method: method, path: storePath(c.m.storeID, path), auth: bearer(c.token), body: body, headers: hdr})
}

func (c contentShop) storefront(path string) response {
	c.h.t.Helper()
	return c.h.do(request{method: "GET", path: "/api/v1/storefront/" + c.subdomain + path})
}

// themeNames saves a draft whose page template has a rich-text section
// naming the page and blog handles (either "" for none), and answers it.
func (c contentShop) themeNames(page, blog string) map[string]any {
	c.h.t.Helper()
	got := c.call("GET", "/themes/v3/customization", nil)
	require.Equal(c.h.t, http.StatusOK, got.Status, string(got.Raw))
	draft := got.data()["draft"].(map[string]any)
	settings := map[string]any{}
	if page != "" {
		settings["page"] = page
	}
	if blog != "" {
		settings["blog"] = blog
	}
	templates, _ := draft["templates"].(map[string]any)
	if templates == nil {
		templates = map[string]any{}
		draft["templates"] = templates
	}
	templates["page"] = map[string]any{"sections": map[string]any{"story": map[string]any{"type": "rich-text", "settings": settings}}, "order": []string{"story"}}
	saved := c.call("PUT", "/themes/v3/customization", draft, "If-Match", got.data()["etag"].(string))
	require.Equal(c.h.t, http.StatusOK, saved.Status, string(saved.Raw))
	return draft
}

func (c contentShop) publishTheme() {
	c.h.t.Helper()
	pub := c.call("POST", "/themes/v3/customization/publish", map[string]any{"name": "with content"})
	require.Equal(c.h.t, http.StatusCreated, pub.Status, string(pub.Raw))
}

func (c contentShop) count(path string) int {
	c.h.t.Helper()
	list := c.call("GET", path, nil)
	require.Equal(c.h.t, http.StatusOK, list.Status, string(list.Raw))
	return len(list.list())
}

// Pages (decisions §22): handles normalised and derived, bilingual reads
// in the reader's language, bodies held to the rich text rules with a
// pointer, drafts and scheduled pages kept off the storefront until their
// time, and the theme's references guarding deletes and renames.
func TestPagesOverHTTP(t *testing.T) {
	h := newHarness(t, api.Config{})
	c := newContentShop(h, "pages")

	// A handle typed is normalised; one left out comes from the title.
	about := c.call("POST", "/pages", map[string]any{"handle": "  About Us ", "title": map[string]any{"ar": "من نحن", "en": "About us"},
		"body": map[string]any{"ar": "<p>نحن <b>متجر</b></p>", "en": "<p>We are a <a href=\"/pages/contact\">shop</a></p>"},
		"seo":  map[string]any{"title": "About", "description": "Who we are"}})
	require.Equal(t, http.StatusCreated, about.Status, string(about.Raw))
	page := about.data()
	require.Equal(t, "about-us", page["handle"])
	require.Equal(t, "/pages/about-us", page["url"])
	require.Equal(t, "draft", page["status"])
	require.Nil(t, page["published_at"])
	require.Equal(t, "page", page["template"])
	require.Equal(t, "من نحن", page["title"].(map[string]any)["text"], "the store's language without Accept-Language")
	aboutID := page["id"].(string)

	arabic := c.call("POST", "/pages", map[string]any{"title": map[string]any{"ar": "سياسة الإرجاع"}, "template": "page.policy"},
		"Accept-Language", "en-GB,en;q=0.9")
	require.Equal(t, http.StatusCreated, arabic.Status, string(arabic.Raw))
	require.Equal(t, "سياسة-الإرجاع", arabic.data()["handle"])
	require.Equal(t, "سياسة الإرجاع", arabic.data()["title"].(map[string]any)["text"], "the other language when the reader's is left out")
	require.Nil(t, arabic.data()["title"].(map[string]any)["en"])
	again := c.call("POST", "/pages", map[string]any{"title": map[string]any{"ar": "سياسة الإرجاع"}})
	require.Equal(t, http.StatusCreated, again.Status, string(again.Raw))
	require.Equal(t, "سياسة-الإرجاع-2", again.data()["handle"], "a derived handle steps aside")

	english := c.call("GET", "/pages/"+aboutID, nil, "Accept-Language", "en")
	require.Equal(t, http.StatusOK, english.Status)
	require.Equal(t, "About us", english.data()["title"].(map[string]any)["text"])
	require.Contains(t, english.data()["body"].(map[string]any)["text"], "We are a")

	dup := c.call("POST", "/pages", map[string]any{"handle": "ABOUT-us", "title": map[string]any{"en": "Again"}})
	require.Equal(t, http.StatusConflict, dup.Status, string(dup.Raw))
	require.Equal(t, "DUPLICATE_HANDLE", dup.errorCode())

	// Refusals name the field (and, in a body, the place); nothing is written.
	for _, r := range []struct {
		name        string
		body        map[string]any
		field, code string
		pointer     string
	}{
		{"handle", map[string]any{"handle": "a/b", "title": map[string]any{"en": "x"}}, "handle", "invalid", ""},
		{"blank handle", map[string]any{"handle": " - ", "title": map[string]any{"en": "x"}}, "handle", "blank", ""},
		{"published_at", map[string]any{"title": map[string]any{"en": "x"}, "published_at": "tomorrow"}, "published_at", "invalid", ""},
		{"title", map[string]any{"title": map[string]any{"ar": " "}}, "title", "required", ""},
		{"template", map[string]any{"title": map[string]any{"en": "x"}, "template": "blog"}, "template", "invalid", ""},
		{"script", map[string]any{"title": map[string]any{"en": "x"}, "body": map[string]any{"ar": "<p>أ</p><p>ب<script>alert(1)</script></p>"}},
			"body.ar", "tag_not_allowed", "/p[2]/script[1]"},
		{"javascript link", map[string]any{"title": map[string]any{"en": "x"}, "body": map[string]any{"en": `<p><a href="javascript:alert(1)">x</a></p>`}},
			"body.en", "unsafe_url", "/p[1]/a[1]/@href"},
		{"outside image", map[string]any{"title": map[string]any{"en": "x"}, "body": map[string]any{"ar": `<img src="https://evil.example/a.png">`}},
			"body.ar", "image_not_allowed", "/img[1]/@src"},
		{"event handler", map[string]any{"title": map[string]any{"en": "x"}, "body": map[string]any{"ar": `<p onclick="x">a</p>`}},
			"body.ar", "attribute_not_allowed", "/p[1]/@onclick"},
		{"too long", map[string]any{"title": map[string]any{"en": "x"}, "body": map[string]any{"ar": strings.Repeat("a", 256<<10+1)}},
			"body.ar", "too_long", ""},
	} {
		resp := c.call("POST", "/pages", r.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s: %s", r.name, resp.Raw)
		require.Equal(t, r.code, resp.fieldCode(r.field), "%s: %s", r.name, resp.Raw)
		require.NotEmpty(t, resp.fieldMessageAr(r.field), r.name)
		if r.pointer != "" {
			details := resp.errorField("details").(map[string]any)
			require.Equal(t, r.pointer, details["pointer"], r.name)
			require.Equal(t, r.field, details["field"], r.name)
			require.Contains(t, resp.fieldError(r.field)["message"], r.pointer, r.name)
		}
	}
	require.Equal(t, 3, c.count("/pages"), "a refused page writes nothing")

	// An image of the store's own media is taken.
	imageID := "0190d3c4-0000-7000-8000-0000000056aa"
	h.exec(`INSERT INTO media (id, store_id, kind, filename, mime, size, original_key, status, created_at, updated_at)
		VALUES ($1, $2, 'image', 'abaya.jpg', 'image/jpeg', 10, 'k', 'ready', now(), now())`, imageID, c.m.storeID)
	own := fmt.Sprintf(`<p><img src="/files/%s/%s/large.webp" alt="عباية"></p>`, c.m.storeID, imageID)
	withImage := c.call("PATCH", "/pages/"+aboutID, map[string]any{"body": map[string]any{"ar": own}})
	require.Equal(t, http.StatusOK, withImage.Status, string(withImage.Raw))
	other := newContentShop(h, "pages-other")
	theirs := c.call("PATCH", "/pages/"+aboutID, map[string]any{"body": map[string]any{"ar": strings.Replace(own, c.m.storeID, other.m.storeID, 1)}})
	require.Equal(t, http.StatusUnprocessableEntity, theirs.Status, string(theirs.Raw))
	require.Equal(t, "image_not_allowed", theirs.fieldCode("body.ar"))

	// Drafts never reach the storefront; scheduled pages once their time comes.
	require.Equal(t, http.StatusNotFound, c.storefront("/pages/about-us").Status, "a draft")
	later := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	scheduled := c.call("PATCH", "/pages/"+aboutID, map[string]any{"published_at": later.Format(time.RFC3339)})
	require.Equal(t, http.StatusOK, scheduled.Status, string(scheduled.Raw))
	require.Equal(t, "scheduled", scheduled.data()["status"])
	require.Equal(t, http.StatusNotFound, c.storefront("/pages/about-us").Status, "scheduled for later")
	require.Equal(t, 1, c.count("/pages?status=scheduled"))
	t.Cleanup(func() { h.db.SetClock(time.Now) })
	h.db.SetClock(func() time.Time { return time.Now().Add(2 * time.Hour) })
	live := c.storefront("/pages/About-Us")
	require.Equal(t, http.StatusOK, live.Status, string(live.Raw))
	require.Equal(t, "about-us", live.data()["handle"])
	require.Equal(t, own, live.data()["body"].(map[string]any)["ar"])
	require.Equal(t, own, live.data()["body"].(map[string]any)["text"], "the body in the store's language")
	h.db.SetClock(time.Now)
	published := c.call("PATCH", "/pages/"+arabic.data()["id"].(string), map[string]any{"published_at": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)})
	require.Equal(t, "published", published.data()["status"])
	encoded := c.storefront("/pages/" + url.PathEscape("سياسة-الإرجاع"))
	require.Equal(t, http.StatusOK, encoded.Status, "an Arabic handle, percent-encoded: %s", encoded.Raw)
	unpublished := c.call("PATCH", "/pages/"+arabic.data()["id"].(string), map[string]any{"published_at": nil})
	require.Equal(t, "draft", unpublished.data()["status"])
	require.Equal(t, http.StatusNotFound, c.storefront("/pages/"+url.PathEscape("سياسة-الإرجاع")).Status, "a draft again")
	require.Equal(t, http.StatusNotFound, other.storefront("/pages/about-us").Status, "another store's storefront")
	require.Equal(t, http.StatusNotFound, other.call("GET", "/pages/"+aboutID, nil).Status, "another store's page")

	// The theme names about-us: no delete, no rename; the draft's pointers.
	c.themeNames("about-us", "")
	inUse := c.call("DELETE", "/pages/"+aboutID, nil)
	require.Equal(t, http.StatusConflict, inUse.Status, string(inUse.Raw))
	require.Equal(t, "CONTENT_IN_USE", inUse.errorCode())
	details := inUse.errorField("details").(map[string]any)
	require.Equal(t, []any{"/templates/page/sections/story/settings/page"}, details["pointers"])
	require.Equal(t, []any{map[string]any{"kind": "theme_draft", "pointer": "/templates/page/sections/story/settings/page"}}, details["referrers"])
	rename := c.call("PATCH", "/pages/"+aboutID, map[string]any{"handle": "who-we-are"})
	require.Equal(t, http.StatusConflict, rename.Status, string(rename.Raw))
	require.Equal(t, "HANDLE_IN_USE_BY_THEME", rename.errorCode())
	require.Equal(t, []any{"/templates/page/sections/story/settings/page"}, rename.errorField("details").(map[string]any)["pointers"])
	same := c.call("PATCH", "/pages/"+aboutID, map[string]any{"handle": " About-US"})
	require.Equal(t, http.StatusOK, same.Status, "the same handle once normalised is no rename: %s", same.Raw)
	// A handle stored before the rules (a migrated one) stands until it is changed.
	legacyID := "0190d3c4-0000-7000-8000-0000000056bb"
	h.exec(`INSERT INTO pages (id, store_id, handle, title_en, created_at, updated_at) VALUES ($1, $2, 'Legacy_Page', 'Legacy', now(), now())`,
		legacyID, c.m.storeID)
	retitled := c.call("PATCH", "/pages/"+legacyID, map[string]any{"title": map[string]any{"en": "Old page"}})
	require.Equal(t, http.StatusOK, retitled.Status, string(retitled.Raw))
	require.Equal(t, "Legacy_Page", retitled.data()["handle"])
	// Published and then dropped from the draft: the published document still names it.
	c.publishTheme()
	c.themeNames("", "")
	stillInUse := c.call("DELETE", "/pages/"+aboutID, nil)
	require.Equal(t, http.StatusConflict, stillInUse.Status, string(stillInUse.Raw))
	require.Equal(t, []any{map[string]any{"kind": "theme_published", "pointer": "/templates/page/sections/story/settings/page"}},
		stillInUse.errorField("details").(map[string]any)["referrers"])
	require.Equal(t, "about-us", c.call("GET", "/pages/"+aboutID, nil).data()["handle"], "nothing changed")

	// A page the theme does not name renames and deletes.
	renamed := c.call("PATCH", "/pages/"+again.data()["id"].(string), map[string]any{"handle": "Returns Policy", "title": map[string]any{"en": "Returns"}})
	require.Equal(t, http.StatusOK, renamed.Status, string(renamed.Raw))
	require.Equal(t, "returns-policy", renamed.data()["handle"])
	require.Equal(t, "Returns", renamed.data()["title"].(map[string]any)["en"])
	require.Nil(t, renamed.data()["title"].(map[string]any)["ar"], "a title is replaced whole")
	taken := c.call("PATCH", "/pages/"+again.data()["id"].(string), map[string]any{"handle": "about-us"})
	require.Equal(t, "DUPLICATE_HANDLE", taken.errorCode())
	require.Equal(t, http.StatusNoContent, c.call("DELETE", "/pages/"+again.data()["id"].(string), nil).Status)
	require.Equal(t, http.StatusNotFound, c.call("GET", "/pages/"+again.data()["id"].(string), nil).Status)
}

// Blogs and articles (decisions §22): article handles unique within their
// blog, tags cleaned, images refused until the media library, only
// published articles on the storefront, and a blog the theme names kept.
func TestBlogsAndArticlesOverHTTP(t *testing.T) {
	h := newHarness(t, api.Config{})
	c := newContentShop(h, "blogs")

	news := c.call("POST", "/blogs", map[string]any{"title": map[string]any{"ar": "الأخبار", "en": "News"}, "handle": "News"})
	require.Equal(t, http.StatusCreated, news.Status, string(news.Raw))
	require.Equal(t, "news", news.data()["handle"])
	require.Equal(t, "الأخبار", news.data()["title"].(map[string]any)["text"])
	newsID := news.data()["id"].(string)
	journal := c.call("POST", "/blogs", map[string]any{"title": map[string]any{"en": "Journal"}})
	require.Equal(t, http.StatusCreated, journal.Status, string(journal.Raw))
	require.Equal(t, "journal", journal.data()["handle"])
	journalID := journal.data()["id"].(string)
	require.Equal(t, "DUPLICATE_HANDLE", c.call("POST", "/blogs", map[string]any{"title": map[string]any{"en": "x"}, "handle": "news"}).errorCode())
	require.Equal(t, 2, c.count("/blogs"))

	articles := "/blogs/" + newsID + "/articles"
	past := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	eid := c.call("POST", articles, map[string]any{"title": map[string]any{"ar": "عروض العيد", "en": "Eid offers"}, "handle": "eid",
		"body": map[string]any{"ar": "<p>خصم <strong>20%</strong></p>"}, "excerpt": map[string]any{"en": "Up to 20% off"},
		"author": " منى ", "tags": []string{"Eid", " offers ", "eid", "عروض"}, "published_at": past})
	require.Equal(t, http.StatusCreated, eid.Status, string(eid.Raw))
	article := eid.data()
	require.Equal(t, "published", article["status"])
	require.Equal(t, []any{"Eid", "offers", "عروض"}, article["tags"], "trimmed, each once")
	require.Equal(t, "منى", article["author"])
	require.Equal(t, "Up to 20% off", article["excerpt"].(map[string]any)["text"])
	eidID := article["id"].(string)
	draft := c.call("POST", articles, map[string]any{"title": map[string]any{"en": "Coming soon"}})
	require.Equal(t, http.StatusCreated, draft.Status, string(draft.Raw))
	require.Nil(t, draft.data()["excerpt"])
	scheduled := c.call("POST", articles, map[string]any{"title": map[string]any{"en": "Ramadan"}, "tags": []string{"eid"},
		"published_at": time.Now().UTC().Add(time.Hour).Format(time.RFC3339)})
	require.Equal(t, "scheduled", scheduled.data()["status"])

	// Refusals.
	require.Equal(t, "DUPLICATE_HANDLE", c.call("POST", articles, map[string]any{"title": map[string]any{"en": "x"}, "handle": "EID"}).errorCode())
	sameHandleElsewhere := c.call("POST", "/blogs/"+journalID+"/articles", map[string]any{"title": map[string]any{"en": "x"}, "handle": "eid"})
	require.Equal(t, http.StatusCreated, sameHandleElsewhere.Status, "a handle is unique within its blog: %s", sameHandleElsewhere.Raw)
	for _, r := range []struct {
		body        map[string]any
		field, code string
	}{
		{map[string]any{"title": map[string]any{"en": "x"}, "image_id": "0190d3c4-0000-7000-8000-00000000abcd"}, "image_id", "not_found"},
		{map[string]any{"title": map[string]any{"en": "x"}, "tags": strings.Split(strings.Repeat("t,", 21)[:41], ",")}, "tags", "too_many"},
		{map[string]any{"title": map[string]any{"en": "x"}, "body": map[string]any{"ar": "<iframe></iframe>"}}, "body.ar", "tag_not_allowed"},
		{map[string]any{"title": map[string]any{"en": "x"}, "published_at": "2026-13-01"}, "published_at", "invalid"},
	} {
		resp := c.call("POST", articles, r.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Equal(t, r.code, resp.fieldCode(r.field), string(resp.Raw))
	}
	require.Equal(t, http.StatusNotFound, c.call("POST", "/blogs/0190d3c4-0000-7000-8000-00000000abcd/articles", map[string]any{"title": map[string]any{"en": "x"}}).Status)
	require.Equal(t, 3, c.count(articles), "refusals write nothing")
	require.Equal(t, 2, c.count(articles+"?tag=eid"))
	require.Equal(t, 1, c.count(articles+"?status=draft"))

	// The storefront shows published articles only.
	list := c.storefront("/blogs/news/articles")
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	items := list.data()["items"].([]any)
	require.Len(t, items, 1)
	require.Equal(t, "/blogs/news/articles/eid", items[0].(map[string]any)["url"])
	require.Equal(t, "الأخبار", list.data()["blog"].(map[string]any)["title"].(map[string]any)["text"])
	require.Equal(t, http.StatusOK, c.storefront("/blogs/news/articles/eid").Status)
	require.Equal(t, http.StatusNotFound, c.storefront("/blogs/news/articles/"+draft.data()["handle"].(string)).Status, "a draft")
	require.Equal(t, http.StatusNotFound, c.storefront("/blogs/news/articles/"+scheduled.data()["handle"].(string)).Status, "scheduled for later")
	require.Equal(t, http.StatusNotFound, c.storefront("/blogs/nothing/articles").Status)

	// PATCH: unpublish, retag, rename (no theme setting names an article).
	patched := c.call("PATCH", articles+"/"+eidID, map[string]any{"published_at": nil, "tags": []string{"sale"}, "handle": "eid-2026", "excerpt": nil})
	require.Equal(t, http.StatusOK, patched.Status, string(patched.Raw))
	require.Equal(t, "draft", patched.data()["status"])
	require.Equal(t, []any{"sale"}, patched.data()["tags"])
	require.Equal(t, "eid-2026", patched.data()["handle"])
	require.Nil(t, patched.data()["excerpt"])
	require.Equal(t, http.StatusNotFound, c.storefront("/blogs/news/articles/eid-2026").Status)
	require.Len(t, c.storefront("/blogs/news/articles").data()["items"], 0)

	// The theme names the blog: no delete, no rename.
	c.themeNames("", "news")
	inUse := c.call("DELETE", "/blogs/"+newsID, nil)
	require.Equal(t, http.StatusConflict, inUse.Status, string(inUse.Raw))
	require.Equal(t, "CONTENT_IN_USE", inUse.errorCode())
	require.Equal(t, []any{"/templates/page/sections/story/settings/blog"}, inUse.errorField("details").(map[string]any)["pointers"])
	rename := c.call("PATCH", "/blogs/"+newsID, map[string]any{"handle": "updates"})
	require.Equal(t, "HANDLE_IN_USE_BY_THEME", rename.errorCode())
	retitled := c.call("PATCH", "/blogs/"+newsID, map[string]any{"title": map[string]any{"en": "Updates"}})
	require.Equal(t, http.StatusOK, retitled.Status, "a new title is not a rename: %s", retitled.Raw)

	// A blog the theme does not name goes with its articles.
	require.Equal(t, http.StatusNoContent, c.call("DELETE", "/blogs/"+journalID+"/articles/"+sameHandleElsewhere.data()["id"].(string), nil).Status)
	again := c.call("POST", "/blogs/"+journalID+"/articles", map[string]any{"title": map[string]any{"en": "y"}})
	require.Equal(t, http.StatusNoContent, c.call("DELETE", "/blogs/"+journalID, nil).Status)
	require.Equal(t, http.StatusNotFound, c.call("GET", "/blogs/"+journalID+"/articles/"+again.data()["id"].(string), nil).Status)
	require.Equal(t, http.StatusNotFound, c.call("GET", "/blogs/"+journalID, nil).Status)
	other := newContentShop(h, "blogs-other")
	require.Equal(t, http.StatusNotFound, other.call("GET", "/blogs/"+newsID, nil).Status, "another store's blog")
	require.Equal(t, http.StatusNotFound, other.call("GET", articles+"/"+eidID, nil).Status, "another store's article")
}
