package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

func accentDraft(t *testing.T, draft any, color string) []byte {
	raw, err := json.Marshal(draft)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(raw, &v))
	v["settings"].(map[string]any)["accent"] = color
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return out
}

func TestThemeCustomizationOverHTTP(t *testing.T) {
	h := newHarness(t, api.Config{})
	m := h.signup("themes")
	token := h.pat(m, "themes:write")
	path := func(rest string) string { return storePath(m.storeID, "/themes/v3"+rest) }

	got := h.do(request{method: "GET", path: path("/customization"), auth: bearer(token)})
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	etag := got.data()["etag"].(string)
	require.Equal(t, etag, got.Header.Get("ETag"))
	draft := got.data()["draft"]
	require.Nil(t, got.data()["published"])

	put := func(body []byte, ifMatch string) response {
		headers := map[string]string{}
		if ifMatch != "" {
			headers["If-Match"] = ifMatch
		}
		return h.do(request{method: "PUT", path: path("/customization"), auth: bearer(token), body: body, headers: headers})
	}
	require.Equal(t, http.StatusPreconditionRequired, put(accentDraft(t, draft, "#101010"), "").Status)

	saved := put(accentDraft(t, draft, "#101010"), etag)
	require.Equal(t, http.StatusOK, saved.Status, string(saved.Raw))
	newTag := saved.data()["etag"].(string)
	require.NotEqual(t, etag, newTag)
	require.Equal(t, newTag, saved.Header.Get("ETag"))

	stale := put(accentDraft(t, draft, "#202020"), etag)
	require.Equal(t, http.StatusPreconditionFailed, stale.Status)
	require.Equal(t, "PRECONDITION_FAILED", stale.errorCode())
	current := stale.Body["current"].(map[string]any)
	require.Equal(t, newTag, current["etag"])
	require.Equal(t, "#101010", current["draft"].(map[string]any)["settings"].(map[string]any)["accent"])

	invalid := put(accentDraft(t, draft, "green"), newTag)
	require.Equal(t, http.StatusUnprocessableEntity, invalid.Status)
	require.Equal(t, []string{"/settings/accent"}, invalid.fieldNames())

	// Publish, compare, restore.
	pub := h.do(request{method: "POST", path: path("/customization/publish"), auth: bearer(token), body: map[string]any{"name": "Eid sale"}})
	require.Equal(t, http.StatusCreated, pub.Status, string(pub.Raw))
	require.Equal(t, "Eid sale", pub.data()["name"])
	versionID := pub.data()["id"].(string)
	third := put(accentDraft(t, draft, "#303030"), newTag)
	require.Equal(t, http.StatusOK, third.Status)

	cmp := h.do(request{method: "GET", path: path("/versions/compare?from=" + versionID + "&to=draft"), auth: bearer(token)})
	require.Equal(t, http.StatusOK, cmp.Status, string(cmp.Raw))
	patchJSON, _ := json.Marshal(cmp.data()["patch"])
	patch, err := jsonpatch.DecodePatch(patchJSON)
	require.NoError(t, err)
	version := h.do(request{method: "GET", path: path("/versions/" + versionID), auth: bearer(token)})
	fromDoc, _ := json.Marshal(version.data()["document"])
	applied, err := patch.Apply(fromDoc)
	require.NoError(t, err)
	toDoc, _ := json.Marshal(third.data()["draft"])
	require.JSONEq(t, string(toDoc), string(applied), "from + patch = to")
	require.Equal(t, "/settings/accent", cmp.data()["changes"].([]any)[0].(map[string]any)["path"])
	require.Equal(t, http.StatusUnprocessableEntity, h.do(request{method: "GET", path: path("/versions/compare?from=yesterday&to=draft"), auth: bearer(token)}).Status)

	restored := h.do(request{method: "POST", path: path("/versions/" + versionID + "/restore"), auth: bearer(token)})
	require.Equal(t, http.StatusCreated, restored.Status, string(restored.Raw))
	require.Equal(t, "restore", restored.data()["source"], "answered like publish: the new version")
	require.Equal(t, versionID, restored.data()["restored_from"])
	afterRestore := h.do(request{method: "GET", path: path("/customization"), auth: bearer(token)})
	require.Equal(t, "#101010", afterRestore.data()["draft"].(map[string]any)["settings"].(map[string]any)["accent"])
	require.Equal(t, afterRestore.Header.Get("ETag"), restored.Header.Get("ETag"), "the restore sent the replaced draft's tag")
	list := h.do(request{method: "GET", path: path("/versions"), auth: bearer(token)})
	require.Len(t, list.Body["data"], 2)
	require.Equal(t, "restore", list.Body["data"].([]any)[0].(map[string]any)["source"])

	schemas := h.do(request{method: "GET", path: path("/schemas"), auth: bearer(token)})
	require.Contains(t, schemas.data()["sections"], "slideshow")

	// Scopes and stores.
	reader := h.pat(m, "themes:read")
	require.Equal(t, http.StatusForbidden, h.do(request{method: "PUT", path: path("/customization"), auth: bearer(reader), body: []byte(`{}`),
		headers: map[string]string{"If-Match": newTag}}).Status)
	other := h.signup("themes2")
	otherToken := h.pat(other, "themes:write")
	require.Equal(t, http.StatusForbidden, h.do(request{method: "GET", path: path("/customization"), auth: bearer(otherToken)}).Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(other.storeID, "/themes/v3/versions/"+versionID), auth: bearer(otherToken)}).Status)
}
