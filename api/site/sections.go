package site

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
	"github.com/merchantsvc/svc/storage/theme"
)

// doc is a theme document (decisions §9) as the renderer reads it.
type doc struct {
	Settings  map[string]any         `json:"settings"`
	Templates map[string]docTemplate `json:"templates"`
}

type docTemplate struct {
	Sections map[string]docSection `json:"sections"`
	Order    []string              `json:"order"`
}

type docSection struct {
	Type       string              `json:"type"`
	Settings   map[string]any      `json:"settings"`
	Blocks     map[string]docBlock `json:"blocks"`
	BlockOrder []string            `json:"block_order"`
	Disabled   bool                `json:"disabled"`
}

type docBlock struct {
	Type     string         `json:"type"`
	Settings map[string]any `json:"settings"`
	Disabled bool           `json:"disabled"`
}

func parseDoc(raw json.RawMessage) (doc, error) {
	var d doc
	if len(raw) == 0 || string(raw) == "null" {
		raw = theme.Default().DefaultDocument()
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return doc{}, fmt.Errorf("read theme document: %w", err)
	}
	d.Settings = withDefaults(theme.Default().Settings, d.Settings)
	return d, nil
}

// groupSections are the section types that, like Shopify's header and
// footer groups, appear on every page: a page whose template has none of
// them borrows the home page's.
var groupSections = map[string]string{"announcement-bar": "before", "footer": "after"}

// withDefaults is a settings object with each missing setting's default.
func withDefaults(defs []theme.Setting, values map[string]any) map[string]any {
	out := make(map[string]any, len(defs))
	for _, d := range defs {
		if v, ok := values[d.ID]; ok {
			out[d.ID] = v
			continue
		}
		if len(d.Default) > 0 {
			var v any
			_ = json.Unmarshal(d.Default, &v)
			out[d.ID] = v
		}
	}
	return out
}

// SectionView is what a section template is executed with.
type SectionView struct {
	ID, Type string
	Settings map[string]any
	Blocks   []BlockView
	Page     *Page
	// Data is what the section's pickers name, loaded by its type.
	Products   []Card
	Product    *ProductView
	Collection *CollectionLink
	Images     map[string]*Image
	Menus      map[string][]MenuLink
	Links      map[string]string
}

// BlockView is one block of a section.
type BlockView struct {
	ID, Type string
	Settings map[string]any
}

// Card is a product in a list.
type Card struct {
	Title     string
	URL       string
	Image     *Image
	Price     int64
	From      bool // variants at different prices: "from" the lowest
	Available bool
}

// CollectionLink is a collection named by a section.
type CollectionLink struct {
	Title, URL string
}

// Image is an image with its three sizes (150, 600 and 1200 px wide).
type Image struct {
	Src, SrcSet, Alt string
	Width, Height    int
}

// sections renders a page's sections in order: those above the page's own
// content, its own, and those below.
func (l *loader) sections(ctx context.Context, p *Page, d doc, kind string) error {
	own, ok := d.Templates[kind]
	groups := map[string]bool{}
	if ok {
		for _, id := range own.Order {
			if s, ok := own.Sections[id]; ok && groupSections[s.Type] != "" {
				groups[s.Type] = true
			}
		}
	}
	if kind != "index" {
		index := d.Templates["index"]
		for _, id := range index.Order {
			s, ok := index.Sections[id]
			if !ok || groupSections[s.Type] == "" || groups[s.Type] {
				continue
			}
			html, err := l.section(ctx, p, id, s)
			if err != nil {
				return err
			}
			if groupSections[s.Type] == "before" {
				p.Before = append(p.Before, html)
			} else {
				p.After = append(p.After, html)
			}
		}
	}
	for _, id := range own.Order {
		s, ok := own.Sections[id]
		if !ok {
			continue
		}
		html, err := l.section(ctx, p, id, s)
		if err != nil {
			return err
		}
		switch {
		case groupSections[s.Type] == "before":
			p.Before = append(p.Before, html)
		case groupSections[s.Type] == "after":
			p.After = append(p.After, html)
		default:
			p.Sections = append(p.Sections, html)
		}
	}
	return nil
}

// section renders one section inside its wrapper, which keeps the
// section's id for the editor's messages (spec §6.3). A disabled section
// shows only in the preview, dimmed.
func (l *loader) section(ctx context.Context, p *Page, id string, s docSection) (template.HTML, error) {
	schema, ok := theme.Default().Sections[s.Type]
	if !ok || (s.Disabled && !p.Preview) {
		return "", nil
	}
	v := &SectionView{ID: id, Type: s.Type, Settings: withDefaults(schema.Settings, s.Settings), Page: p,
		Images: map[string]*Image{}, Menus: map[string][]MenuLink{}, Links: map[string]string{}}
	for _, bid := range s.BlockOrder {
		b, ok := s.Blocks[bid]
		if !ok || b.Disabled {
			continue
		}
		def, ok := schema.Block(b.Type)
		if !ok {
			continue
		}
		v.Blocks = append(v.Blocks, BlockView{ID: bid, Type: b.Type, Settings: withDefaults(def.Settings, b.Settings)})
	}
	if err := l.sectionData(ctx, v); err != nil {
		return "", err
	}
	if s.Type == "footer" {
		p.HasFooter = true
	}
	inner, err := render(p, "section/"+s.Type, v)
	if err != nil {
		return "", err
	}
	return render(p, "section-wrapper", map[string]any{"ID": id, "Type": s.Type, "Disabled": s.Disabled, "Scheme": v.Settings["color_scheme"],
		"Inner": inner})
}

// sectionData loads what a section's pickers name. A picker naming
// something gone or unpublished shows nothing there, never an error.
func (l *loader) sectionData(ctx context.Context, v *SectionView) error {
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	switch v.Type {
	case "featured-collection":
		n := 8
		if k, ok := number(v.Settings["products_to_show"]); ok && k > 0 && k <= 24 {
			n = k
		}
		cards, link, err := l.collectionCards(ctx, v.Page, str(v.Settings, "collection"), n)
		if err != nil {
			return err
		}
		v.Products, v.Collection = cards, link
	case "featured-product":
		id, err := uuid.Parse(str(v.Settings, "product"))
		if err != nil {
			return nil
		}
		pv, err := l.productView(ctx, v.Page, id, str(v.Settings, "variant"))
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v.Product = pv
	case "product-grid":
		var ids []uuid.UUID
		list, _ := v.Settings["products"].([]any)
		for _, item := range list {
			if id, err := uuid.Parse(fmt.Sprint(item)); err == nil {
				ids = append(ids, id)
			}
		}
		cards, err := l.cardsByID(ctx, v.Page, ids)
		if err != nil {
			return err
		}
		v.Products = cards
		cols, _ := v.Settings["collections"].([]any)
		for _, item := range cols {
			id, err := uuid.Parse(fmt.Sprint(item))
			if err != nil {
				continue
			}
			c, err := l.db.FindCollectionByID(ctx, l.store.ID, id)
			if err == nil && c.Published {
				v.Links[c.ID.String()] = v.Page.Link("/collections/" + handle.Path(c.Handle))
				v.Menus["collections"] = append(v.Menus["collections"], MenuLink{Title: collectionTitle(c, v.Page.Lang),
					URL: v.Page.Link("/collections/" + handle.Path(c.Handle))})
			}
		}
	case "slideshow":
		for _, b := range v.Blocks {
			if img := l.mediaImage(ctx, str(b.Settings, "image")); img != nil {
				v.Images[b.ID] = img
			}
		}
	case "video":
		if img := l.mediaImage(ctx, str(v.Settings, "cover")); img != nil {
			v.Images["cover"] = img
		}
	case "rich-text":
		if h := str(v.Settings, "page"); h != "" {
			if _, err := l.db.FindPublishedPage(ctx, l.store.ID, h); err == nil {
				v.Links["page"] = v.Page.Link("/pages/" + handle.Path(h))
			}
		}
		if h := str(v.Settings, "blog"); h != "" {
			if _, err := l.db.FindBlogByHandle(ctx, l.store.ID, h); err == nil {
				v.Links["blog"] = v.Page.Link("/blogs/" + handle.Path(h))
			}
		}
	case "footer":
		for _, b := range v.Blocks {
			if b.Type == "menu" {
				v.Menus[b.ID] = l.menu(ctx, v.Page, str(b.Settings, "menu"))
			}
		}
	}
	return nil
}

func collectionTitle(c storage.Collection, lang string) string {
	if lang == "en" && c.Title.En != "" || c.Title.Ar == "" {
		return c.Title.En
	}
	return c.Title.Ar
}
