package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// The theme's collection and collection_list pickers name collections: a
// category's id keeps resolving (its collection has it), a collection's id
// resolves, anything else is not_found. A collection the draft or the
// published document names cannot be deleted: 409 CONTENT_IN_USE with the
// JSON Pointers of every place that names it.
func TestCollectionsInTheTheme(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newCollectionShop(h, "coll-theme")
	themes := h.pat(s.m, "themes:read", "themes:write")
	category := s.call("POST", "/categories", map[string]any{"name": "Abayas"})
	require.Equal(t, http.StatusCreated, category.Status, string(category.Raw))
	categoryID := category.data()["id"].(string)
	picks := s.create(map[string]any{"kind": "manual", "title": map[string]any{"en": "Picks"}})["id"].(string)
	spare := s.create(map[string]any{"kind": "manual", "title": map[string]any{"en": "Spare"}})["id"].(string)

	path := storePath(s.m.storeID, "/themes/v3/customization")
	got := h.do(request{method: "GET", path: path, auth: bearer(themes)})
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	etag := got.data()["etag"].(string)
	draft := got.data()["draft"].(map[string]any)
	index := draft["templates"].(map[string]any)["index"].(map[string]any)
	sections := index["sections"].(map[string]any)
	index["order"] = append(index["order"].([]any), "picks")
	put := func(featured string, list []string) response {
		sections["featured-collection"].(map[string]any)["settings"].(map[string]any)["collection"] = featured
		sections["picks"] = map[string]any{"type": "product-grid", "settings": map[string]any{"collections": list}}
		body, err := json.Marshal(draft)
		require.NoError(t, err)
		resp := h.do(request{method: "PUT", path: path, auth: bearer(themes), body: body, headers: map[string]string{"If-Match": etag}})
		if resp.Status == http.StatusOK {
			etag = resp.data()["etag"].(string)
		}
		return resp
	}

	unknown := put("00000000-0000-0000-0000-000000000042", []string{picks})
	require.Equal(t, http.StatusUnprocessableEntity, unknown.Status, string(unknown.Raw))
	require.Contains(t, string(unknown.Raw), "not_found")
	saved := put(categoryID, []string{spare, picks})
	require.Equal(t, http.StatusOK, saved.Status, "a category's id names its collection: %s", saved.Raw)
	published := h.do(request{method: "POST", path: path + "/publish", auth: bearer(themes), headers: map[string]string{"If-Match": etag}})
	require.Equal(t, http.StatusCreated, published.Status, string(published.Raw))
	// The draft moves on without spare; the published document keeps it.
	require.Equal(t, http.StatusOK, put(categoryID, []string{picks}).Status)

	// pointers are the places in either document, each once; referrers say
	// which document holds each.
	for id, want := range map[string]struct{ pointers, referrers []string }{
		picks: {[]string{"/templates/index/sections/picks/settings/collections/0", "/templates/index/sections/picks/settings/collections/1"},
			[]string{"theme_draft /templates/index/sections/picks/settings/collections/0", "theme_published /templates/index/sections/picks/settings/collections/1"}},
		spare: {[]string{"/templates/index/sections/picks/settings/collections/0"},
			[]string{"theme_published /templates/index/sections/picks/settings/collections/0"}},
		categoryID: {[]string{"/templates/index/sections/featured-collection/settings/collection"},
			[]string{"theme_draft /templates/index/sections/featured-collection/settings/collection", "theme_published /templates/index/sections/featured-collection/settings/collection"}},
	} {
		refused := s.call("DELETE", "/collections/"+id, nil)
		require.Equal(t, http.StatusConflict, refused.Status, string(refused.Raw))
		require.Equal(t, "CONTENT_IN_USE", refused.errorCode())
		require.NotEmpty(t, refused.Body["error"].(map[string]any)["message_ar"])
		details := refused.errorField("details").(map[string]any)
		pointers, referrers := []string{}, []string{}
		for _, p := range details["pointers"].([]any) {
			pointers = append(pointers, p.(string))
		}
		for _, r := range details["referrers"].([]any) {
			ref := r.(map[string]any)
			referrers = append(referrers, ref["kind"].(string)+" "+ref["pointer"].(string))
		}
		require.ElementsMatch(t, want.pointers, pointers)
		require.ElementsMatch(t, want.referrers, referrers)
	}
	require.Equal(t, http.StatusOK, s.call("GET", "/collections/"+picks, nil).Status, "a refused delete changes nothing")

	loose := s.create(map[string]any{"kind": "manual", "title": map[string]any{"en": "Loose"}})["id"].(string)
	require.Equal(t, http.StatusNoContent, s.call("DELETE", "/collections/"+loose, nil).Status, "one the theme does not name goes")
}
