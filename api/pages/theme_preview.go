package pages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/merchantsvc/svc/storage/theme"
)

// The storefront preview the theme editor frames: a page of the draft,
// rendered on the server, and its sections again for each change the
// editor sends.

// maxRenderBody bounds a posted document, as the JSON API bounds its bodies.
const maxRenderBody = 1 << 20

// previewData is what a preview page shows: the theme settings and the
// page's sections in order.
type previewData struct {
	Settings map[string]any
	Sections []previewSection
	Dir      string
	Vars     template.CSS
}

type previewSection struct {
	ID       string
	Type     string
	Name     string
	Disabled bool
	Settings []previewValue
	Blocks   []previewBlock
}

type previewBlock struct {
	ID       string
	Type     string
	Name     string
	Settings []previewValue
}

type previewValue struct {
	ID    string
	Label string
	Text  string
}

func valuesOf(defs []theme.Setting, settings map[string]any) []previewValue {
	var out []previewValue
	for _, d := range defs {
		v, ok := settings[d.ID]
		if !ok {
			if len(d.Default) == 0 {
				continue
			}
			_ = json.Unmarshal(d.Default, &v)
		}
		if v == nil || d.Type == "header" {
			continue
		}
		text := fmt.Sprint(v)
		if s, ok := v.(string); ok {
			text = s
		}
		out = append(out, previewValue{ID: d.ID, Label: d.Label, Text: text})
	}
	return out
}

// buildPreview lays a document's page out for the preview template. Every
// value is shown as escaped text: the preview runs beside the merchant's
// session, so it never interprets the document's markup.
func buildPreview(doc json.RawMessage, page string) (previewData, error) {
	var d struct {
		Settings  map[string]any `json:"settings"`
		Templates map[string]struct {
			Sections map[string]struct {
				Type     string         `json:"type"`
				Settings map[string]any `json:"settings"`
				Blocks   map[string]struct {
					Type     string         `json:"type"`
					Settings map[string]any `json:"settings"`
					Disabled bool           `json:"disabled"`
				} `json:"blocks"`
				BlockOrder []string `json:"block_order"`
				Disabled   bool     `json:"disabled"`
			} `json:"sections"`
			Order []string `json:"order"`
		} `json:"templates"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return previewData{}, err
	}
	t := theme.Default()
	out := previewData{Settings: d.Settings, Dir: "rtl"}
	if dir, _ := d.Settings["direction"].(string); dir == "ltr" {
		out.Dir = "ltr"
	}
	var vars []string
	if accent, ok := d.Settings["accent"].(string); ok && colorHex(accent) {
		vars = append(vars, "--accent: "+accent)
	}
	out.Vars = template.CSS(strings.Join(vars, "; "))
	tpl := d.Templates[page]
	for _, id := range tpl.Order {
		sec, ok := tpl.Sections[id]
		if !ok {
			continue
		}
		schema := t.Sections[sec.Type]
		ps := previewSection{ID: id, Type: sec.Type, Name: schema.Name, Disabled: sec.Disabled, Settings: valuesOf(schema.Settings, sec.Settings)}
		for _, bid := range sec.BlockOrder {
			b, ok := sec.Blocks[bid]
			if !ok || b.Disabled {
				continue
			}
			def, _ := schema.Block(b.Type)
			ps.Blocks = append(ps.Blocks, previewBlock{ID: bid, Type: b.Type, Name: def.Name, Settings: valuesOf(def.Settings, b.Settings)})
		}
		out.Sections = append(out.Sections, ps)
	}
	return out, nil
}

func colorHex(s string) bool {
	if len(s) != 4 && len(s) != 7 || s[0] != '#' {
		return false
	}
	return strings.Trim(strings.ToLower(s[1:]), "0123456789abcdef") == ""
}

// Preview serves GET /stores/{store_id}/themes/preview: it renders a storefront page of the
// draft for the editor's frame (same origin only).
func (p *Pages) Preview() http.Handler {
	return p.handleStore("themes:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		store := mp.store
		page := r.URL.Query().Get("page")
		if !slices.Contains(theme.Pages, page) {
			page = "index"
		}
		c, err := p.db.FindCustomization(r.Context(), store.ID)
		if err != nil {
			return err
		}
		data, err := buildPreview(c.Draft, page)
		if err != nil {
			return err
		}
		var body bytes.Buffer
		if err := pageTemplates[mp.lang].ExecuteTemplate(&body, "preview-sections", data); err != nil {
			return err
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src https: 'self'; frame-ancestors 'self'; "+formAndBase())
		w.WriteHeader(http.StatusOK)
		_ = pageTemplates[mp.lang].ExecuteTemplate(w, "preview-page", map[string]any{"Data": data, "Body": template.HTML(body.String()),
			"StoreName": store.Name})
		return nil
	})
}

// PreviewRender serves POST /stores/{store_id}/themes/preview/render: it renders the sections of
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
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			http.Error(w, "the body is not a theme document", http.StatusBadRequest)
			return nil
		}
		if !slices.Contains(theme.Pages, req.Page) {
			req.Page = "index"
		}
		data, err := buildPreview(req.Document, req.Page)
		if err != nil {
			http.Error(w, "the body is not a theme document", http.StatusBadRequest)
			return nil
		}
		var body bytes.Buffer
		if err := pageTemplates[mp.lang].ExecuteTemplate(&body, "preview-sections", data); err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		return json.NewEncoder(w).Encode(map[string]any{"success": true,
			"data": map[string]any{"html": body.String(), "dir": data.Dir, "vars": string(data.Vars)}})
	})
}
