package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// storeSubdomain is a merchant's storefront name.
func (h *harness) storeSubdomain(m merchant) string {
	var sub string
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT subdomain FROM stores WHERE id = $1`, m.storeID).Scan(&sub))
	return sub
}

// menuItem is an item of a menu body.
func menuItem(title, itemType string, extra map[string]any, children ...map[string]any) map[string]any {
	it := map[string]any{"title": map[string]any{"ar": title}, "type": itemType}
	for k, v := range extra {
		it[k] = v
	}
	if len(children) > 0 {
		it["items"] = children
	}
	return it
}

func nested(depth int) map[string]any {
	it := menuItem("مستوى", "home", nil)
	if depth > 1 {
		it["items"] = []any{nested(depth - 1)}
	}
	return it
}

// Menus (decisions §22): the built-in two, handles normalised and unique,
// items checked whole (depth, count, types, targets, URLs) with nothing
// written on a refusal, If-Match on PATCH, ids kept, main-menu and footer
// never deleted nor renamed.
func TestMenus(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("menus")
	token := h.pat(m, "themes:write", "catalog:write")
	menus := storePath(m.storeID, "/menus")
	post := func(body any) response {
		return h.do(request{method: "POST", path: menus, auth: bearer(token), body: body})
	}
	count := func() int {
		list := h.do(request{method: "GET", path: menus, auth: bearer(token)})
		require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
		return len(list.list())
	}

	// Every store has main-menu and footer, empty; text follows Accept-Language.
	list := h.do(request{method: "GET", path: menus, auth: bearer(token)})
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	builtIn := map[string]string{}
	for _, it := range list.list() {
		menu := it.(map[string]any)
		require.Equal(t, true, menu["built_in"])
		require.Empty(t, menu["items"])
		builtIn[menu["handle"].(string)] = menu["id"].(string)
		require.Equal(t, menu["title"].(map[string]any)["ar"], menu["title"].(map[string]any)["text"], "the store's language is Arabic")
	}
	require.Len(t, builtIn, 2)
	require.Contains(t, builtIn, "main-menu")
	require.Contains(t, builtIn, "footer")
	english := h.do(request{method: "GET", path: menus + "/" + builtIn["main-menu"], auth: bearer(token), headers: map[string]string{"Accept-Language": "en-GB,en;q=0.9"}})
	require.Equal(t, http.StatusOK, english.Status, string(english.Raw))
	require.Equal(t, "Main menu", english.data()["title"].(map[string]any)["text"])
	require.Equal(t, `"1"`, english.Header.Get("ETag"))

	product := h.createProduct(token, m.storeID, map[string]any{"name": "قميص", "price": 10000})
	category := h.do(request{method: "POST", path: storePath(m.storeID, "/categories"), auth: bearer(token), body: map[string]any{"name": "ملابس"}})
	require.Equal(t, http.StatusCreated, category.Status, string(category.Raw))
	productID, categoryID := product["id"].(string), category.data()["id"].(string)

	created := post(map[string]any{"title": map[string]any{"ar": "روابط مهمة", "en": "Useful links"}, "items": []any{
		menuItem("الرئيسية", "home", nil),
		menuItem("ملابس", "category", map[string]any{"resource_id": categoryID},
			menuItem("قميص", "product", map[string]any{"resource_id": productID},
				menuItem("راسلنا", "url", map[string]any{"url": "mailto:hello@example.com"}))),
		menuItem("من نحن", "url", map[string]any{"url": "/pages/about"}),
	}})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	menu := created.data()
	require.Equal(t, "useful-links", menu["handle"], "derived from the English title")
	require.Equal(t, float64(5), menu["item_count"])
	require.Equal(t, false, menu["built_in"])
	require.Equal(t, `"1"`, created.Header.Get("ETag"))
	items := menu["items"].([]any)
	require.Len(t, items, 3)
	shirt := items[1].(map[string]any)["items"].([]any)[0].(map[string]any)
	require.Equal(t, productID, shirt["resource_id"])
	require.Nil(t, shirt["url"])
	require.NotEmpty(t, shirt["id"])
	menuPath := menus + "/" + menu["id"].(string)

	arabic := post(map[string]any{"handle": "روابـــط الفوتر", "title": map[string]any{"ar": "روابط"}})
	require.Equal(t, http.StatusCreated, arabic.Status, string(arabic.Raw))
	require.Equal(t, "روابط-الفوتر", arabic.data()["handle"], "tatweel dropped, spaces to -")
	dup := post(map[string]any{"handle": "رَوابط-الفوتر", "title": map[string]any{"en": "again"}})
	require.Equal(t, http.StatusConflict, dup.Status, string(dup.Raw))
	require.Equal(t, "DUPLICATE_HANDLE", dup.errorCode())
	require.NotEmpty(t, dup.Body["error"].(map[string]any)["message_ar"])

	before := count()
	tooMany := make([]any, 0, 201)
	for i := 0; i < 201; i++ {
		tooMany = append(tooMany, menuItem(fmt.Sprint(i), "home", nil))
	}
	missing := "0190d3c4-0000-7000-8000-00000000abcd"
	for _, c := range []struct {
		name        string
		items       []any
		field, code string
	}{
		{"four levels", []any{nested(4)}, "items[0].items[0].items[0].items", "depth_exceeded"},
		{"201 items", tooMany, "items", "too_many"},
		{"unknown type", []any{menuItem("x", "wiki", nil)}, "items[0].type", "one_of"},
		{"product without its id", []any{menuItem("x", "product", nil)}, "items[0].resource_id", "required"},
		{"not a uuid", []any{menuItem("x", "product", map[string]any{"resource_id": "12"})}, "items[0].resource_id", "invalid_uuid"},
		{"a product the store lacks", []any{menuItem("x", "home", nil, menuItem("y", "product", map[string]any{"resource_id": missing}))},
			"items[0].items[0].resource_id", "not_found"},
		{"a page the store lacks", []any{menuItem("x", "page", map[string]any{"resource_id": missing})}, "items[0].resource_id", "not_found"},
		{"javascript", []any{menuItem("x", "url", map[string]any{"url": "javascript:alert(1)"})}, "items[0].url", "invalid"},
		{"another host by //", []any{menuItem("x", "url", map[string]any{"url": "//evil.example/"})}, "items[0].url", "invalid"},
		{"plain http", []any{menuItem("x", "url", map[string]any{"url": "http://example.com/"})}, "items[0].url", "invalid"},
		{"url item without url", []any{menuItem("x", "url", nil)}, "items[0].url", "required"},
		{"a url on a home item", []any{menuItem("x", "home", map[string]any{"url": "/x"})}, "items[0].url", "not_allowed"},
		{"an id twice", []any{menuItem("x", "home", map[string]any{"id": missing}), menuItem("y", "home", map[string]any{"id": missing})},
			"items[1].id", "duplicate"},
		{"no title", []any{map[string]any{"title": map[string]any{}, "type": "home"}}, "items[0].title", "required"},
	} {
		resp := post(map[string]any{"title": map[string]any{"en": c.name}, "items": c.items})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s: %s", c.name, resp.Raw)
		require.Equal(t, c.code, resp.fieldCode(c.field), "%s: %s", c.name, resp.Raw)
		require.NotEmpty(t, resp.fieldMessageAr(c.field), c.name)
	}
	bad := post(map[string]any{"handle": "a/b", "title": map[string]any{"en": "x"}})
	require.Equal(t, "invalid", bad.fieldCode("handle"), string(bad.Raw))
	require.Equal(t, before, count(), "a refused menu writes nothing")
	deep := post(map[string]any{"title": map[string]any{"en": "three levels"}, "items": []any{nested(3)}})
	require.Equal(t, http.StatusCreated, deep.Status, "three levels are allowed: %s", deep.Raw)

	// PATCH: If-Match, items replaced whole, ids kept when sent back.
	patch := func(body any, ifMatch string) response {
		headers := map[string]string{}
		if ifMatch != "" {
			headers["If-Match"] = ifMatch
		}
		return h.do(request{method: "PATCH", path: menuPath, auth: bearer(token), body: body, headers: headers})
	}
	keep := items[0].(map[string]any)
	replaced := []any{map[string]any{"id": keep["id"], "title": keep["title"], "type": "home"}, menuItem("بحث", "search", nil)}
	require.Equal(t, http.StatusPreconditionRequired, patch(map[string]any{"items": replaced}, "").Status)
	stale := patch(map[string]any{"items": replaced}, `"7"`)
	require.Equal(t, http.StatusPreconditionFailed, stale.Status, string(stale.Raw))
	require.Equal(t, `"1"`, stale.Header.Get("ETag"))
	require.Equal(t, float64(5), stale.Body["current"].(map[string]any)["item_count"])
	done := patch(map[string]any{"items": replaced}, `"1"`)
	require.Equal(t, http.StatusOK, done.Status, string(done.Raw))
	require.Equal(t, `"2"`, done.Header.Get("ETag"))
	after := done.data()["items"].([]any)
	require.Len(t, after, 2)
	require.Equal(t, keep["id"], after[0].(map[string]any)["id"], "an id sent back is kept")
	require.Equal(t, http.StatusPreconditionFailed, patch(map[string]any{"title": map[string]any{"en": "x"}}, `"1"`).Status, "the old tag is stale now")
	refused := patch(map[string]any{"items": []any{menuItem("x", "product", map[string]any{"resource_id": missing})}}, `"2"`)
	require.Equal(t, "not_found", refused.fieldCode("items[0].resource_id"), string(refused.Raw))
	got := h.do(request{method: "GET", path: menuPath, auth: bearer(token)})
	require.Len(t, got.data()["items"], 2, "a refused PATCH changes nothing")
	require.Equal(t, `"2"`, got.Header.Get("ETag"))

	// The built-in menus stay.
	mainPath := menus + "/" + builtIn["main-menu"]
	del := h.do(request{method: "DELETE", path: mainPath, auth: bearer(token)})
	require.Equal(t, http.StatusConflict, del.Status, string(del.Raw))
	require.Equal(t, "MENU_BUILT_IN", del.errorCode())
	rename := h.do(request{method: "PATCH", path: mainPath, auth: bearer(token), body: map[string]any{"handle": "header"},
		headers: map[string]string{"If-Match": `"1"`}})
	require.Equal(t, "MENU_BUILT_IN", rename.errorCode(), string(rename.Raw))
	fill := h.do(request{method: "PATCH", path: mainPath, auth: bearer(token), body: map[string]any{"items": []any{menuItem("الكل", "catalog", nil)}},
		headers: map[string]string{"If-Match": `"1"`}})
	require.Equal(t, http.StatusOK, fill.Status, "a built-in menu's items change: %s", fill.Raw)

	// Another store sees none of it.
	other := h.signup("menus-other")
	otherToken := h.pat(other, "themes:write")
	require.Equal(t, http.StatusForbidden, h.do(request{method: "GET", path: menuPath, auth: bearer(otherToken)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(other.storeID, "/menus/"+menu["id"].(string)), auth: bearer(otherToken)}).Status)
	cross := h.do(request{method: "POST", path: storePath(other.storeID, "/menus"), auth: bearer(otherToken), body: map[string]any{
		"title": map[string]any{"en": "x"}, "items": []any{menuItem("x", "product", map[string]any{"resource_id": productID})}}})
	require.Equal(t, "not_found", cross.fieldCode("items[0].resource_id"), "another store's product is not a target: %s", cross.Raw)

	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(m.storeID, "/menus/"+arabic.data()["id"].(string)), auth: bearer(token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "DELETE", path: storePath(m.storeID, "/menus/"+arabic.data()["id"].(string)), auth: bearer(token)}).Status)
}

// replaceString gives back v with every string equal to from replaced by to,
// and the JSON Pointers where it was.
func replaceString(v any, from, to, at string, pointers *[]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = replaceString(e, from, to, at+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k), pointers)
		}
	case []any:
		for i, e := range x {
			x[i] = replaceString(e, from, to, fmt.Sprintf("%s/%d", at, i), pointers)
		}
	case string:
		if x == from {
			*pointers = append(*pointers, at)
			return to
		}
	}
	return v
}

// A menu the theme names is neither deleted nor renamed (409 with the
// draft's pointers); a product's or a category's delete takes its items out
// of every menu (children move up), the answer staying 204 and the audit
// entry listing them; the storefront resolves URLs and leaves out what
// buyers cannot see.
func TestMenusFollowTheThemeAndTheCatalog(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("menus-theme")
	token := h.pat(m, "themes:write", "catalog:write")
	menus := storePath(m.storeID, "/menus")
	shown := h.createProduct(token, m.storeID, map[string]any{"name": "Shown", "price": 100})
	hidden := h.createProduct(token, m.storeID, map[string]any{"name": "Hidden", "price": 100, "status": "draft"})
	doomed := h.createProduct(token, m.storeID, map[string]any{"name": "Doomed", "price": 100})
	category := h.do(request{method: "POST", path: storePath(m.storeID, "/categories"), auth: bearer(token), body: map[string]any{"name": "All"}})
	require.Equal(t, http.StatusCreated, category.Status, string(category.Raw))

	created := h.do(request{method: "POST", path: menus, auth: bearer(token), body: map[string]any{"handle": "قائمة-الرأس", "title": map[string]any{"ar": "الرأس", "en": "Header"}, "items": []any{
		menuItem("بيت", "home", nil),
		menuItem("مخفي", "product", map[string]any{"resource_id": hidden["id"]}),
		menuItem("سيُحذف", "product", map[string]any{"resource_id": doomed["id"]},
			menuItem("ظاهر", "product", map[string]any{"resource_id": shown["id"]})),
		menuItem("الكل", "category", map[string]any{"resource_id": category.data()["id"]}),
		menuItem("واتساب", "url", map[string]any{"url": "https://wa.me/201000000000"}),
	}}})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Raw))
	menuPath := menus + "/" + created.data()["id"].(string)

	sub := h.storeSubdomain(m)
	storefront := func(handle string) response {
		return h.do(request{method: "GET", path: "/api/v1/storefront/" + sub + "/menus/" + url.PathEscape(handle),
			headers: map[string]string{"Accept-Language": "en"}})
	}
	sf := storefront("قائمة-الرأس")
	require.Equal(t, http.StatusOK, sf.Status, string(sf.Raw))
	require.Equal(t, "Header", sf.data()["title"].(map[string]any)["text"])
	var urls []string
	var walk func(items []any)
	walk = func(items []any) {
		for _, it := range items {
			item := it.(map[string]any)
			urls = append(urls, item["url"].(string))
			walk(item["items"].([]any))
		}
	}
	walk(sf.data()["items"].([]any))
	collection := h.do(request{method: "GET", path: storePath(m.storeID, "/collections/"+category.data()["id"].(string)), auth: bearer(token)})
	require.Equal(t, http.StatusOK, collection.Status, "every category has its collection: %s", collection.Raw)
	require.Equal(t, []string{"/", "/products/" + doomed["handle"].(string), "/products/" + shown["handle"].(string),
		"/collections/" + collection.data()["handle"].(string), "https://wa.me/201000000000"}, urls, "the draft product is left out")
	require.Equal(t, http.StatusNotFound, storefront("no-such-menu").Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: "/api/v1/storefront/no-such-shop-x/menus/main-menu"}).Status)

	// The theme names the menu: no delete, no rename, and the pointers say where.
	custom := h.do(request{method: "GET", path: storePath(m.storeID, "/themes/v3/customization"), auth: bearer(token)})
	require.Equal(t, http.StatusOK, custom.Status, string(custom.Raw))
	var pointers []string
	draft := replaceString(custom.data()["draft"], "main-menu", "قائمة-الرأس", "", &pointers)
	require.NotEmpty(t, pointers, "the default theme names main-menu")
	saved := h.do(request{method: "PUT", path: storePath(m.storeID, "/themes/v3/customization"), auth: bearer(token), body: draft,
		headers: map[string]string{"If-Match": custom.data()["etag"].(string)}})
	require.Equal(t, http.StatusOK, saved.Status, string(saved.Raw))
	del := h.do(request{method: "DELETE", path: menuPath, auth: bearer(token)})
	require.Equal(t, http.StatusConflict, del.Status, string(del.Raw))
	require.Equal(t, "CONTENT_IN_USE", del.errorCode())
	details := del.Body["error"].(map[string]any)["details"].(map[string]any)
	got, _ := json.Marshal(details["pointers"])
	want, _ := json.Marshal(pointers)
	require.JSONEq(t, string(want), string(got))
	rename := h.do(request{method: "PATCH", path: menuPath, auth: bearer(token), body: map[string]any{"handle": "header"},
		headers: map[string]string{"If-Match": `"1"`}})
	require.Equal(t, http.StatusConflict, rename.Status, string(rename.Raw))
	require.Equal(t, "HANDLE_IN_USE_BY_THEME", rename.errorCode())
	require.Equal(t, http.StatusOK, storefront("قائمة-الرأس").Status, "the refused rename changed nothing")

	// Deleting a product takes its items out; the answer stays 204.
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(m.storeID, "/products/"+doomed["id"].(string)), auth: bearer(token)}).Status)
	after := h.do(request{method: "GET", path: menuPath, auth: bearer(token)})
	require.Equal(t, `"2"`, after.Header.Get("ETag"), "the removal is a change of the menu")
	var types []string
	for _, it := range after.data()["items"].([]any) {
		types = append(types, it.(map[string]any)["type"].(string)+":"+fmt.Sprint(it.(map[string]any)["resource_id"]))
	}
	require.Equal(t, []string{"home:<nil>", "product:" + hidden["id"].(string), "product:" + shown["id"].(string),
		"category:" + category.data()["id"].(string), "url:<nil>"}, types, "the doomed item's child took its place")
	var removed string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT changes->'removed_menu_items'->>'from' FROM audit_entries
		WHERE store_id = $1 AND action = 'product.deleted'`, m.storeID).Scan(&removed))
	require.Contains(t, removed, created.data()["id"].(string), "the product's audit entry lists the removed items")

	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(m.storeID, "/categories/"+category.data()["id"].(string)), auth: bearer(token)}).Status)
	after = h.do(request{method: "GET", path: menuPath, auth: bearer(token)})
	require.Len(t, after.data()["items"], 4, "the category's item went with it")
}

// Redirects (decisions §22): paths normalised, one per path, chains
// collapse both ways, loops refused, nothing written on a refusal.
func TestRedirects(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("redirects")
	token := h.pat(m, "themes:write")
	redirects := storePath(m.storeID, "/redirects")
	post := func(from, to string) response {
		return h.do(request{method: "POST", path: redirects, auth: bearer(token), body: map[string]any{"from_path": from, "to": to}})
	}

	a := post("/pages/old-about/", "/pages/about")
	require.Equal(t, http.StatusCreated, a.Status, string(a.Raw))
	require.Equal(t, "/pages/old-about", a.data()["from_path"], "the trailing slash goes")
	dup := post("/PAGES/old-about", "/x")
	require.Equal(t, http.StatusConflict, dup.Status, string(dup.Raw))
	require.Equal(t, "DUPLICATE_REDIRECT", dup.errorCode())

	// A redirect to a redirected path takes its target.
	b := post("/about-us", "/pages/old-about")
	require.Equal(t, http.StatusCreated, b.Status, string(b.Raw))
	require.Equal(t, "/pages/about", b.data()["to"])
	// A new redirect from a path others lead to: they follow it.
	c := post("/pages/about", "/pages/عن-المتجر")
	require.Equal(t, http.StatusCreated, c.Status, string(c.Raw))
	for _, id := range []string{a.data()["id"].(string), b.data()["id"].(string)} {
		got := h.do(request{method: "GET", path: redirects + "/" + id, auth: bearer(token)})
		require.Equal(t, "/pages/عن-المتجر", got.data()["to"], "the chain collapsed: %s", got.Raw)
	}

	before := len(h.do(request{method: "GET", path: redirects, auth: bearer(token)}).list())
	for _, bad := range []struct{ from, to, field, code string }{
		{"/pages/عن-المتجر", "/about-us", "to", "loop"},
		{"/self", "/self/", "to", "loop"},
		{"pages/x", "/y", "from_path", "invalid"},
		{"//evil.example/x", "/y", "from_path", "invalid"},
		{"/x#frag", "/y", "from_path", "invalid"},
		{"/x", "javascript:alert(1)", "to", "invalid"},
		{"/x", "ftp://example.com/", "to", "invalid"},
	} {
		resp := post(bad.from, bad.to)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%v: %s", bad, resp.Raw)
		require.Equal(t, bad.code, resp.fieldCode(bad.field), "%v: %s", bad, resp.Raw)
		require.NotEmpty(t, resp.fieldMessageAr(bad.field))
	}
	require.Equal(t, before, len(h.do(request{method: "GET", path: redirects, auth: bearer(token)}).list()), "refusals write nothing")
	ext := post("/instagram", "https://instagram.com/store")
	require.Equal(t, http.StatusCreated, ext.Status, string(ext.Raw))

	found := h.do(request{method: "GET", path: redirects + "?path=" + url.QueryEscape("/Pages/Old-About/"), auth: bearer(token)})
	require.Len(t, found.list(), 1)
	require.Equal(t, a.data()["id"], found.list()[0].(map[string]any)["id"])
	to := h.do(request{method: "GET", path: redirects + "?target=" + url.QueryEscape("/pages/عن-المتجر"), auth: bearer(token)})
	require.Len(t, to.list(), 3)

	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: redirects + "/" + ext.data()["id"].(string), auth: bearer(token)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: redirects + "/" + ext.data()["id"].(string), auth: bearer(token)}).Status)
}

// Menu items of pages, blogs, articles and collections (decisions §22): the
// storefront gives them their handles' URLs and leaves out what is not
// published; deleting one answers 200 with the menu items it took out (a
// blog's delete takes its articles' too), 204 when none named it.
func TestMenusOfTheStoreContent(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("menus-content")
	token := h.pat(m, "themes:write", "catalog:write")
	post := func(path string, body map[string]any) map[string]any {
		t.Helper()
		resp := h.do(request{method: "POST", path: storePath(m.storeID, path), auth: bearer(token), body: body})
		require.Equal(t, http.StatusCreated, resp.Status, "%s: %s", path, resp.Raw)
		return resp.data()
	}
	past := "2026-01-01T00:00:00Z"
	about := post("/pages", map[string]any{"handle": "من-نحن", "title": map[string]any{"ar": "من نحن"}, "published_at": past})
	draft := post("/pages", map[string]any{"handle": "soon", "title": map[string]any{"en": "Soon"}})
	blog := post("/blogs", map[string]any{"handle": "news", "title": map[string]any{"en": "News"}})
	article := post("/blogs/"+blog["id"].(string)+"/articles", map[string]any{"handle": "eid-hours", "title": map[string]any{"en": "Eid hours"},
		"published_at": past})
	sale := post("/collections", map[string]any{"handle": "sale", "title": map[string]any{"en": "Sale"}, "kind": "manual", "published": true})
	lonely := post("/pages", map[string]any{"handle": "lonely", "title": map[string]any{"en": "Lonely"}})

	menu := post("/menus", map[string]any{"handle": "content", "title": map[string]any{"en": "Content"}, "items": []any{
		menuItem("about", "page", map[string]any{"resource_id": about["id"]}),
		menuItem("soon", "page", map[string]any{"resource_id": draft["id"]}),
		menuItem("news", "blog", map[string]any{"resource_id": blog["id"]},
			menuItem("eid", "article", map[string]any{"resource_id": article["id"]})),
		menuItem("sale", "collection", map[string]any{"resource_id": sale["id"]}),
	}})
	sf := h.do(request{method: "GET", path: "/api/v1/storefront/" + h.storeSubdomain(m) + "/menus/content"})
	require.Equal(t, http.StatusOK, sf.Status, string(sf.Raw))
	var urls []string
	var walk func(items []any)
	walk = func(items []any) {
		for _, it := range items {
			urls = append(urls, it.(map[string]any)["url"].(string))
			walk(it.(map[string]any)["items"].([]any))
		}
	}
	walk(sf.data()["items"].([]any))
	require.Equal(t, []string{"/pages/" + url.PathEscape("من-نحن"), "/blogs/news", "/blogs/news/articles/eid-hours", "/collections/sale"}, urls,
		"the draft page is left out; Arabic handles are percent-encoded")

	// A rename keeps the old URL: a redirect from it, chained ones collapsed.
	for _, rename := range []struct{ path, from, to string }{
		{"/pages/" + about["id"].(string), "/pages/من-نحن", "/pages/عن-المتجر"},
		{"/pages/" + about["id"].(string), "/pages/عن-المتجر", "/pages/about"},
		{"/blogs/" + blog["id"].(string) + "/articles/" + article["id"].(string), "/blogs/news/articles/eid-hours", "/blogs/news/articles/eid"},
		{"/blogs/" + blog["id"].(string), "/blogs/news", "/blogs/updates"},
	} {
		handle := rename.to[strings.LastIndex(rename.to, "/")+1:]
		resp := h.do(request{method: "PATCH", path: storePath(m.storeID, rename.path), auth: bearer(token), body: map[string]any{"handle": handle}})
		require.Equal(t, http.StatusOK, resp.Status, "%s: %s", rename.path, resp.Raw)
		found := h.do(request{method: "GET", path: storePath(m.storeID, "/redirects?path="+url.QueryEscape(rename.from)), auth: bearer(token)})
		require.Len(t, found.list(), 1, "%s is redirected: %s", rename.from, found.Raw)
		require.Equal(t, rename.to, found.list()[0].(map[string]any)["to"])
	}
	first := h.do(request{method: "GET", path: storePath(m.storeID, "/redirects?path="+url.QueryEscape("/pages/من-نحن")), auth: bearer(token)})
	require.Equal(t, "/pages/about", first.list()[0].(map[string]any)["to"], "the first rename's redirect follows the second")

	del := h.do(request{method: "DELETE", path: storePath(m.storeID, "/pages/"+about["id"].(string)), auth: bearer(token)})
	require.Equal(t, http.StatusOK, del.Status, string(del.Raw))
	require.Equal(t, []any{map[string]any{"menu_id": menu["id"], "item_id": menu["items"].([]any)[0].(map[string]any)["id"]}},
		del.data()["removed_menu_items"])
	gone := h.do(request{method: "DELETE", path: storePath(m.storeID, "/blogs/"+blog["id"].(string)), auth: bearer(token)})
	require.Equal(t, http.StatusOK, gone.Status, string(gone.Raw))
	require.Len(t, gone.data()["removed_menu_items"], 2, "the blog's item and its article's")
	require.Equal(t, http.StatusOK, h.do(request{method: "DELETE", path: storePath(m.storeID, "/collections/"+sale["id"].(string)), auth: bearer(token)}).Status)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(m.storeID, "/pages/"+lonely["id"].(string)), auth: bearer(token)}).Status,
		"a delete that removes no item stays 204")
	left := h.do(request{method: "GET", path: storePath(m.storeID, "/menus/"+menu["id"].(string)), auth: bearer(token)})
	require.Len(t, left.data()["items"], 1, "only the draft page's item is left")
}

// The storefront keeps a menu's decoded items per revision: every change of
// the items shows on the next read, and another store's menu of the same
// handle is its own.
func TestStorefrontMenuFollowsEveryChange(t *testing.T) {
	h := newHarness(t, api.Config{})
	read := func(m merchant) []string {
		resp := h.do(request{method: "GET", path: "/api/v1/storefront/" + h.subdomain(shop{m: m}) + "/menus/main-menu"})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		var titles []string
		for _, it := range resp.data()["items"].([]any) {
			titles = append(titles, it.(map[string]any)["title"].(map[string]any)["ar"].(string))
		}
		return titles
	}
	update := func(m merchant, titles ...string) {
		token := h.pat(m, "themes:write")
		path := storePath(m.storeID, "/menus")
		var id string
		for _, it := range h.do(request{method: "GET", path: path, auth: bearer(token)}).list() {
			if menu := it.(map[string]any); menu["handle"] == "main-menu" {
				id = menu["id"].(string)
			}
		}
		current := h.do(request{method: "GET", path: path + "/" + id, auth: bearer(token)})
		items := []any{}
		for _, title := range titles {
			items = append(items, menuItem(title, "home", nil))
		}
		resp := h.do(request{method: "PATCH", path: path + "/" + id, auth: bearer(token), body: map[string]any{"items": items},
			headers: map[string]string{"If-Match": current.Header.Get("ETag")}})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	}
	a, b := h.signup("menu-cache-a"), h.signup("menu-cache-b")
	require.Empty(t, read(a))
	update(a, "الرئيسية")
	require.Equal(t, []string{"الرئيسية"}, read(a))
	require.Equal(t, []string{"الرئيسية"}, read(a), "read again, from the kept items")
	update(a, "الرئيسية", "العروض")
	require.Equal(t, []string{"الرئيسية", "العروض"}, read(a), "a change shows on the next read")
	update(b, "متجر ب")
	require.Equal(t, []string{"متجر ب"}, read(b))
	require.Equal(t, []string{"الرئيسية", "العروض"}, read(a))
}
