package pages

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"

	"github.com/merchantsvc/svc/storage/theme"
)

// The storefront preview the theme editor frames: a page of the draft,
// rendered by the storefront's own renderer (package site) so that what the
// merchant sees is what buyers get, and rendered again for each change the
// editor sends.

// maxRenderBody bounds a posted document, as the JSON API bounds its bodies.
const maxRenderBody = 1 << 20

// previewCSP is the frame's policy: the storefront's (no inline script),
// on the merchant's origin, framed by the editor only. The swapped-in
// theme style is inline, and the page is never cached.
const previewCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' https: data:; " +
	"frame-ancestors 'self'; object-src 'none'; "

// previewLanguage is the language the preview shows: ?lang=en or ar, else
// the merchant's own.
func previewLanguage(r *http.Request, fallback string) string {
	if l := r.URL.Query().Get("lang"); l == "ar" || l == "en" {
		return l
	}
	return fallback
}

// Preview serves GET /stores/{store_id}/themes/preview: it renders a storefront page of the
// draft for the editor's frame (same origin only).
func (p *Pages) Preview() http.Handler {
	return p.handleStore("themes:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		page := r.URL.Query().Get("page")
		if !slices.Contains(theme.Pages, page) {
			page = "index"
		}
		c, err := p.db.FindCustomization(r.Context(), mp.store.ID)
		if err != nil {
			return err
		}
		out, err := p.site.RenderPreview(r.Context(), mp.store, c.Draft, c.DraftThemeID, page, previewLanguage(r, mp.lang))
		if err != nil {
			return err
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", previewCSP+formAndBase())
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out.Document)
		return nil
	})
}

// PreviewRender serves POST /stores/{store_id}/themes/preview/render: it renders the page of
// a posted document, for the frame to swap in when the editor sends new settings.
func (p *Pages) PreviewRender() http.Handler {
	return p.handleStore("themes:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRenderBody))
		if err != nil {
			http.Error(w, "the document is too large", http.StatusRequestEntityTooLarge)
			return nil
		}
		var req struct {
			Document json.RawMessage `json:"document"`
			Page     string          `json:"page"`
			Lang     string          `json:"lang"`
			ThemeID  string          `json:"theme_id"`
		}
		if err := json.Unmarshal(raw, &req); err != nil || len(req.Document) == 0 || req.Document[0] != '{' {
			http.Error(w, "the body is not a theme document", http.StatusBadRequest)
			return nil
		}
		if !slices.Contains(theme.Pages, req.Page) {
			req.Page = "index"
		}
		lang := mp.lang
		if req.Lang == "ar" || req.Lang == "en" {
			lang = req.Lang
		}
		if _, ok := theme.FindBuiltin(req.ThemeID); !ok {
			c, err := p.db.FindCustomization(r.Context(), mp.store.ID)
			if err != nil {
				return err
			}
			req.ThemeID = c.DraftThemeID
		}
		out, err := p.site.RenderPreview(r.Context(), mp.store, req.Document, req.ThemeID, req.Page, lang)
		if err != nil {
			http.Error(w, "the body is not a theme document", http.StatusBadRequest)
			return nil
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		return json.NewEncoder(w).Encode(map[string]any{"success": true,
			"data": map[string]any{"html": out.Body, "dir": out.Dir, "lang": out.Lang, "style": out.Style, "theme_id": out.ThemeID,
				"css_url": out.CSSURL}})
	})
}
