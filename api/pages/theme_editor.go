package pages

import (
	"net/http"
)

// The theme editor (merchant pages): an HTML shell and plain ES modules
// served from the binary, beside the storefront preview it frames
// (theme_preview.go).

// EditorPage serves GET /stores/{store_id}/themes/editor.
func (p *Pages) EditorPage() http.Handler {
	return p.handleStore("themes:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		store := mp.store
		lang := mp.lang
		renderPage(w, http.StatusOK, lang, "theme_editor.html", map[string]any{"Title": store.Name, "StoreID": store.ID,
			"StoreName": store.Name, "CSRF": mp.csrf})
		return nil
	})
}
