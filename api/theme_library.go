package api

import (
	"net/http"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/site"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage/theme"
)

// The theme library (decisions §23): the built-in themes and switching the
// draft to one of them.

type themeText struct {
	Ar string `json:"ar"`
	En string `json:"en"`
}

type themeResponse struct {
	ID            string    `json:"id"`
	Name          themeText `json:"name"`
	Description   themeText `json:"description"`
	StylesheetURL string    `json:"stylesheet_url"`
	Draft         bool      `json:"draft"`
	Published     bool      `json:"published"`
}

// handleListThemes serves GET /stores/{store_id}/themes: every built-in
// theme, marking the draft's and the published document's.
func (s *Server) handleListThemes() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.db.FindCustomization(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			return err
		}
		items := []themeResponse{}
		for _, b := range theme.Builtins() {
			items = append(items, themeResponse{ID: b.ID, Name: themeText(b.Name), Description: themeText(b.Description),
				StylesheetURL: site.StylesheetURL(s.cfg.BaseURL+"/assets/theme", b.ID), Draft: b.ID == c.DraftThemeID,
				Published: c.Published != nil && b.ID == c.PublishedThemeID})
		}
		respond(w, http.StatusOK, map[string]any{"items": items})
		return nil
	}
}

// handleSwitchTheme serves POST /stores/{store_id}/themes/v3/customization/switch: the theme's
// defaults become the draft (the old draft saved as a version first); the website keeps the
// published document until Publish.
func (s *Server) handleSwitchTheme() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.SwitchTheme](r)
		if err != nil {
			return err
		}
		c, v, err := s.db.SwitchTheme(r.Context(), storeIDFrom(r.Context()), *req.ThemeID)
		if err != nil {
			return err
		}
		w.Header().Set("ETag", c.ETag)
		respond(w, http.StatusOK, map[string]any{"draft": c.Draft, "etag": c.ETag, "revision": c.Revision, "saved_at": c.SavedAt.UTC(),
			"theme_id": c.DraftThemeID, "saved_version": newVersionResponse(v, false)})
		return nil
	}
}
