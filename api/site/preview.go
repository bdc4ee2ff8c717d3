package site

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
)

// Preview is a page of a draft rendered for the theme editor's frame: the
// whole document, and the parts the frame swaps in when the editor sends
// svc:preview:set-context (the page's body and the theme's style).
type Preview struct {
	Document []byte
	Body     string
	Style    string
	Dir      string
	Lang     string
	ThemeID  string
	CSSURL   string // the theme's stylesheet, for svc:preview:swap-theme
}

// PreviewScript is the frame's handler of the spec §6.3 messages, on the
// merchant application.
const PreviewScript = "/assets/editor/theme_preview.js"

// RenderPreview renders the page kind (index, product, collection …) of
// the store from doc, the draft, with the same templates buyers get. A
// kind that needs content shows the store's first: its newest product,
// page, blog or article; disabled sections show dimmed so the editor can
// still point at them.
func (s *Site) RenderPreview(ctx context.Context, store storage.Store, doc json.RawMessage, themeID, kind, lang string) (Preview, error) {
	settings, err := s.db.FindStoreSettings(ctx, store.ID)
	if err != nil {
		return Preview{}, err
	}
	numerals := settings.Numerals
	d, err := parseDoc(doc)
	if err != nil {
		return Preview{}, err
	}
	def := store.DefaultLanguage
	if def != "en" {
		def = "ar"
	}
	if lang != "en" {
		lang = "ar"
	}
	root := strings.TrimSuffix(s.cfg.BaseURL, "/") + "/s/" + store.Subdomain
	if s.cfg.StorefrontDomain != "" {
		root = "https://" + store.Subdomain + "." + s.cfg.StorefrontDomain
	}
	req := &request{store: store, numerals: numerals, root: root, rootPath: root, lang: lang, defLang: def, themeID: themeID}
	if lang != def {
		req.prefix = "/" + lang
	}
	l := &loader{db: s.db, store: store, mediaURL: strings.TrimSuffix(s.cfg.BaseURL, "/")}
	path, q, err := l.previewPath(ctx, kind)
	if err != nil {
		return Preview{}, err
	}
	req.path = path
	p := s.newPage(req, d)
	p.Preview, p.ScriptURL = true, PreviewScript
	p.CSSURL = StylesheetURL("/assets/theme", p.ThemeID)
	err = l.fill(ctx, p, d, path, q)
	if errors.Is(err, errNotFound) {
		p.Kind, p.Title, p.NoIndex = "404", word(p.Lang, "not_found"), true
		if err = l.chrome(ctx, p, d, kind); err == nil {
			p.Main, err = render(p, "main/404", p)
		}
	}
	if err != nil {
		return Preview{}, err
	}
	s.seo(req, p)
	full, err := document(p)
	if err != nil {
		return Preview{}, err
	}
	var body bytes.Buffer
	if err := templatesOf(p).ExecuteTemplate(&body, "page-body", p); err != nil {
		return Preview{}, fmt.Errorf("render preview body: %w", err)
	}
	return Preview{Document: full, Body: body.String(), Style: string(p.Style), Dir: p.Dir, Lang: p.Lang, ThemeID: p.ThemeID,
		CSSURL: p.CSSURL}, nil
}

// previewPath is the site path that shows a page kind of the store.
func (l *loader) previewPath(ctx context.Context, kind string) (string, url.Values, error) {
	q := url.Values{}
	switch kind {
	case "product":
		active := "active"
		products, _, err := l.db.FindProducts(ctx, l.store.ID, storage.ProductFilter{Status: &active, Descending: true,
			Page: storage.Page{Page: 1, Limit: 1}})
		if err != nil || len(products) == 0 {
			return "/products/-", q, err
		}
		return "/products/" + handle.Path(products[0].Handle), q, nil
	case "collection":
		return "/collections/all", q, nil
	case "search":
		return "/search", q, nil
	case "page":
		pages, _, err := l.db.FindPages(ctx, l.store.ID, storage.PageFilter{Page: storage.Page{Page: 1, Limit: 1}, Status: "published"})
		if err != nil || len(pages) == 0 {
			return "/pages/-", q, err
		}
		return "/pages/" + handle.Path(pages[0].Handle), q, nil
	case "blog", "article":
		blogs, _, err := l.db.FindBlogs(ctx, l.store.ID, storage.BlogFilter{Page: storage.Page{Page: 1, Limit: 1}})
		if err != nil || len(blogs) == 0 {
			return "/blogs/-", q, err
		}
		blogPath := "/blogs/" + handle.Path(blogs[0].Handle)
		if kind == "blog" {
			return blogPath, q, nil
		}
		articles, _, err := l.db.FindArticles(ctx, l.store.ID, blogs[0].ID, storage.ArticleFilter{Page: storage.Page{Page: 1, Limit: 1},
			Status: "published"})
		if err != nil || len(articles) == 0 {
			return blogPath + "/-", q, err
		}
		return blogPath + "/" + handle.Path(articles[0].Handle), q, nil
	}
	return "/", q, nil
}
