package api_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// handles lists the handles of a content list's items.
func (c contentShop) handles(path string) []string {
	c.h.t.Helper()
	list := c.call("GET", path, nil)
	require.Equal(c.h.t, http.StatusOK, list.Status, string(list.Raw))
	var out []string
	for _, it := range list.list() {
		out = append(out, it.(map[string]any)["handle"].(string))
	}
	slices.Sort(out)
	return out
}

// The theme editor's pickers search pages, blogs and menus by handle or by
// title in either language, case ignored; the total counts the matches.
func TestPagesBlogsAndMenusSearchByTitleOrHandle(t *testing.T) {
	h := newHarness(t, api.Config{})
	c := newContentShop(h, "content-search")
	create := func(path string, body map[string]any) {
		t.Helper()
		got := c.call("POST", path, body)
		require.Equal(t, http.StatusCreated, got.Status, string(got.Raw))
	}
	create("/pages", map[string]any{"handle": "shipping", "title": map[string]any{"ar": "سياسة الشحن", "en": "Shipping Policy"}})
	create("/pages", map[string]any{"handle": "about", "title": map[string]any{"ar": "من نحن", "en": "About us"}})
	create("/pages", map[string]any{"handle": "returns", "title": map[string]any{"en": "Returns within 14 days, 100% back"}})
	create("/blogs", map[string]any{"handle": "news", "title": map[string]any{"ar": "الأخبار", "en": "News"}})
	create("/blogs", map[string]any{"handle": "recipes", "title": map[string]any{"ar": "وصفات", "en": "Recipes"}})
	create("/menus", map[string]any{"handle": "sidebar", "title": map[string]any{"ar": "القائمة الجانبية", "en": "Side menu"}})

	for _, tc := range []struct {
		path, search string
		want         []string
	}{
		{"/pages", "", []string{"about", "returns", "shipping"}},
		{"/pages", "POLICY", []string{"shipping"}}, // English title, case ignored
		{"/pages", "الشحن", []string{"shipping"}},  // Arabic title
		{"/pages", "abo", []string{"about"}},       // handle
		{"/pages", "  نحن ", []string{"about"}},    // trimmed
		{"/pages", "100%", []string{"returns"}},    // LIKE's wildcards are plain characters
		{"/pages", "0%b", nil},
		{"/pages", "nothing", nil},
		{"/blogs", "", []string{"news", "recipes"}},
		{"/blogs", "أخبار", []string{"news"}},
		{"/blogs", "RECIPE", []string{"recipes"}},
		{"/blogs", "_", nil},
		{"/menus", "", []string{"footer", "main-menu", "sidebar"}},
		{"/menus", "side", []string{"sidebar"}},     // handle and English title
		{"/menus", "الجانبية", []string{"sidebar"}}, // Arabic title
		{"/menus", "main", []string{"main-menu"}},   // a built-in one too
		{"/menus", "FOOTER", []string{"footer"}},    // its English title is "Footer"
		{"/menus", "zzz", nil},
	} {
		path := tc.path
		if tc.search != "" {
			path += "?search=" + url.QueryEscape(tc.search)
		}
		require.Equal(t, tc.want, c.handles(path), path)
	}
	matched := c.call("GET", "/pages?limit=1&search=s", nil) // about us, shipping, returns
	require.Equal(t, http.StatusOK, matched.Status, string(matched.Raw))
	require.Len(t, matched.list(), 1)
	require.EqualValues(t, 3, matched.data()["pagination"].(map[string]any)["total"], string(matched.Raw))
}
