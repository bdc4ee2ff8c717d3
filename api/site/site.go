// Package site renders every store's website from its published theme
// (decisions §23): the same html/template renderer serves buyers and the
// theme editor's preview (fed with the draft). It reads through storage and
// writes nothing.
package site

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
	"github.com/merchantsvc/svc/storage/numerals"
	"github.com/merchantsvc/svc/storage/theme"
)

// Config is what the site needs beyond the database.
type Config struct {
	// BaseURL is the API's address: media are served there, and without
	// a StorefrontDomain every site is at {BaseURL}/s/{subdomain}.
	BaseURL string
	// StorefrontDomain, when set, serves each store at
	// https://{subdomain}.{StorefrontDomain} (and not under BaseURL).
	StorefrontDomain string
}

// Site serves the stores' websites.
type Site struct {
	cfg   Config
	db    *storage.DB
	log   *slog.Logger
	cache *pageCache
}

// New serves the websites over the database.
func New(cfg Config, db *storage.DB, log *slog.Logger) *Site {
	return &Site{cfg: cfg, db: db, log: log, cache: newPageCache(maxCachedPages, cacheTTL)}
}

// Host answers the store subdomain a request's Host names under the
// storefront domain, or "" when it is not a storefront address.
func (s *Site) Host(r *http.Request) string {
	if s.cfg.StorefrontDomain == "" {
		return ""
	}
	host := strings.ToLower(r.Host)
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	sub, ok := strings.CutSuffix(host, "."+s.cfg.StorefrontDomain)
	if !ok || sub == "" || strings.Contains(sub, ".") {
		return ""
	}
	return sub
}

// ServeHost serves a request made to {subdomain}.{StorefrontDomain}.
func (s *Site) ServeHost(w http.ResponseWriter, r *http.Request, subdomain string) {
	s.serve(w, r, subdomain, "https://"+subdomain+"."+s.cfg.StorefrontDomain, "", r.URL.Path)
}

// ServePath serves {BaseURL}/s/{subdomain}{rest} (development and tests;
// not found when the sites have a domain of their own, so that nothing a
// store serves is same-site with the merchant application).
func (s *Site) ServePath(w http.ResponseWriter, r *http.Request, subdomain, rest string) {
	if s.cfg.StorefrontDomain != "" {
		http.NotFound(w, r)
		return
	}
	s.serve(w, r, subdomain, strings.TrimSuffix(s.cfg.BaseURL, "/")+"/s/"+subdomain, "/s/"+subdomain, rest)
}

// request is one page request of one store.
type request struct {
	w        http.ResponseWriter
	r        *http.Request
	store    storage.Store
	numerals string
	state    storage.SiteState
	root     string // absolute, without language
	rootPath string // the path part of root
	lang     string
	defLang  string // the store's default language, ar or en
	themeID  string // the built-in theme the document renders with
	cacheKey string // set: the rendered page goes in the cache under it
	prefix   string // "" or "/en" ("/ar" when the store's default is English)
	path     string // the page's path without root and prefix
}

func (s *Site) serve(w http.ResponseWriter, r *http.Request, subdomain, root, rootPath, rest string) {
	if rest == "" {
		rest = "/"
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	state, err := s.db.FindSiteState(r.Context(), subdomain)
	store := state.Store
	if err != nil || store.LifecycleState == "suspended" || store.LifecycleState == "closed" {
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			s.fail(w, r, err)
			return
		}
		http.Error(w, "no such store", http.StatusNotFound)
		return
	}
	if file, ok := strings.CutPrefix(rest, "/assets/"); ok {
		serveAsset(w, r, file)
		return
	}
	req := &request{w: w, r: r, store: store, numerals: state.Numerals, state: state, root: root, rootPath: rootPath, lang: store.DefaultLanguage, path: rest}
	if req.lang != "en" {
		req.lang = "ar"
	}
	req.defLang = req.lang
	other := otherLanguage(req.lang)
	if rest == "/"+other || strings.HasPrefix(rest, "/"+other+"/") {
		req.lang, req.prefix, req.path = other, "/"+other, strings.TrimPrefix(rest, "/"+other)
		if req.path == "" {
			req.path = "/"
		}
	}
	switch req.path {
	case "/robots.txt":
		s.robots(req)
		return
	case "/sitemap.xml":
		s.sitemap(req)
		return
	}
	if err := s.page(req); err != nil {
		s.fail(w, r, err)
	}
}

func otherLanguage(lang string) string {
	if lang == "en" {
		return "ar"
	}
	return "en"
}

func (s *Site) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.log.ErrorContext(r.Context(), "storefront page failed", slog.String("path", r.URL.Path), slog.Any("error", err))
	http.Error(w, "internal error", http.StatusInternalServerError)
}

// errNotFound is a page that is not there: the themed 404 (after the
// store's redirects).
var errNotFound = errors.New("page not found")

// page renders the page at req.path.
func (s *Site) page(req *request) error {
	ctx := req.r.Context()
	key := cacheKey(req)
	if e, ok := s.cache.get(key); ok {
		req.w.Header().Set("X-Cache", "hit")
		return s.send(req, e)
	}
	c, err := s.db.FindCustomization(ctx, req.store.ID)
	if err != nil {
		return err
	}
	d, err := parseDoc(c.Published)
	if err != nil {
		return err
	}
	req.themeID = c.PublishedThemeID
	if c.Published == nil {
		req.themeID = c.DraftThemeID // never published: the default document of the draft's theme
		if b, ok := theme.FindBuiltin(c.DraftThemeID); ok {
			if d, err = parseDoc(b.DefaultDocument()); err != nil {
				return err
			}
		}
	}
	p := s.newPage(req, d)
	l := &loader{db: s.db, store: req.store, mediaURL: strings.TrimSuffix(s.cfg.BaseURL, "/")}
	err = l.fill(ctx, p, d, req.path, req.r.URL.Query())
	if errors.Is(err, errNotFound) {
		to, rerr := s.db.RedirectFor(ctx, req.store.ID, req.path)
		if rerr == nil {
			if strings.HasPrefix(to, "/") && !strings.HasPrefix(to, "//") {
				to = p.Link(to)
			}
			req.w.Header().Set("Cache-Control", "public, max-age=60")
			http.Redirect(req.w, req.r, to, http.StatusMovedPermanently)
			return nil
		}
		if !errors.Is(rerr, storage.ErrNotFound) {
			return rerr
		}
		return s.notFound(ctx, req, p, d, l)
	}
	if err != nil {
		return err
	}
	req.cacheKey = key
	return s.write(req, p, http.StatusOK)
}

// newPage is a page of the request's store with the theme settings applied.
func (s *Site) newPage(req *request, d doc) *Page {
	p := &Page{Lang: req.lang, Dir: "rtl", Numerals: req.numerals, Currency: req.store.Currency, ThemeID: req.themeID,
		StoreName: req.store.Name, Base: req.rootPath + req.prefix, Root: req.root, Path: req.path, Prefix: req.prefix, defLang: req.defLang}
	if req.r != nil {
		p.variant = req.r.URL.Query().Get("variant")
	}
	if p.Lang == "en" {
		p.Dir, p.Numerals = "ltr", numerals.Latin // English pages always show Latin digits (§23)
	}
	if dir, _ := d.Settings["direction"].(string); dir == "rtl" || dir == "ltr" {
		p.Dir = dir
	}
	if p.Numerals == "" {
		p.Numerals = numerals.Latin
	}
	p.Style, p.StyleHash = themeStyle(d.Settings)
	if sc, ok := d.Settings["default_scheme"].(string); ok && schemeID.MatchString(sc) {
		p.Scheme = sc
	}
	p.CSSURL = StylesheetURL(req.rootPath+"/assets", p.ThemeID)
	p.AltLang = otherLanguage(p.Lang)
	altPrefix := ""
	if p.AltLang != req.defLang {
		altPrefix = "/" + p.AltLang
	}
	p.AltLink = req.rootPath + altPrefix + strings.TrimSuffix(req.path, "/")
	if p.AltLink == "" {
		p.AltLink = "/"
	}
	if show, _ := d.Settings["show_cod_badge"].(bool); show {
		p.CODBadge, _ = d.Settings["cod_badge_text"].(string)
	}
	return p
}

// write sends a rendered page with its headers: a publicly cacheable page
// carries no per-visitor token and no inline script (decisions §23), so the
// CSP allows scripts from the site only and the theme's inline style by
// its hash.
func (s *Site) write(req *request, p *Page, status int) error {
	s.seo(req, p)
	body, err := document(p)
	if err != nil {
		return err
	}
	h := req.w.Header()
	sum := sha256.Sum256(body)
	e := &cached{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, csp: s.csp(p), lang: p.Lang, status: status, at: time.Now()}
	if status == http.StatusOK && req.cacheKey != "" {
		s.cache.put(req.cacheKey, e)
		h.Set("X-Cache", "miss")
	}
	return s.send(req, e)
}

// send writes a rendered page: a 200 is public for a minute (then stale
// while it revalidates) with its ETag, answering 304 to a matching
// If-None-Match; anything else is revalidated every time.
func (s *Site) send(req *request, e *cached) error {
	h := req.w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Language", e.lang)
	h.Set("Content-Security-Policy", e.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	if e.status == http.StatusOK {
		h.Set("Cache-Control", "public, max-age=60, stale-while-revalidate=300")
		h.Set("ETag", e.etag)
		if match := req.r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, e.etag) {
			req.w.WriteHeader(http.StatusNotModified)
			return nil
		}
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	h.Set("Content-Length", strconv.Itoa(len(e.body)))
	req.w.WriteHeader(e.status)
	if req.r.Method != http.MethodHead {
		_, _ = req.w.Write(e.body)
	}
	return nil
}

// csp is the storefront's policy: no inline script at all, the theme's
// inline style by hash, images from the site and the media host.
func (s *Site) csp(p *Page) string {
	img := "'self' data:"
	if u, err := url.Parse(s.cfg.BaseURL); err == nil && u.Host != "" {
		img += " " + u.Scheme + "://" + u.Host
	}
	return "default-src 'self'; script-src 'self'; style-src 'self' " + p.StyleHash + "; img-src " + img +
		"; font-src 'self'; connect-src 'self'; frame-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}

// notFound renders the themed 404 page.
func (s *Site) notFound(ctx context.Context, req *request, p *Page, d doc, l *loader) error {
	p.Kind, p.Title, p.NoIndex, p.Main = "404", word(p.Lang, "not_found"), true, ""
	p.Before, p.Sections, p.After = nil, nil, nil
	if err := l.chrome(ctx, p, d, "404"); err != nil {
		return err
	}
	main, err := render(p, "main/404", p)
	if err != nil {
		return err
	}
	p.Main = main
	return s.write(req, p, http.StatusNotFound)
}

func serveAsset(w http.ResponseWriter, r *http.Request, file string) {
	types := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
	dot := strings.LastIndex(file, ".")
	if strings.Contains(file, "/") || dot < 0 || types[file[dot:]] == "" {
		http.NotFound(w, r)
		return
	}
	body, err := assetFile(file)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", types[file[dot:]])
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(body)
}

// Assets serves the theme's static files at /assets/theme/{file} on the
// merchant application, for the editor's preview.
func Assets() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveAsset(w, r, strings.TrimPrefix(r.URL.Path, "/assets/theme/"))
	})
}

// robots answers /robots.txt: what is private is not crawled, and where
// the sitemap is.
func (s *Site) robots(req *request) {
	h := req.w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=3600")
	fmt.Fprintf(req.w, "User-agent: *\nDisallow: %[1]s/cart\nDisallow: %[1]s/checkout\nDisallow: %[1]s/account\nDisallow: %[1]s/orders\nDisallow: %[1]s/search\n\nSitemap: %[2]s/sitemap.xml\n",
		req.rootPath, req.root)
}

// sitemap answers /sitemap.xml: every page buyers may visit, in both
// languages (each entry names its other-language twin).
func (s *Site) sitemap(req *request) {
	entries, err := s.db.FindSitemap(req.r.Context(), req.store.ID, storage.Now())
	if err != nil {
		s.fail(req.w, req.r, err)
		return
	}
	def := req.store.DefaultLanguage
	if def != "en" {
		def = "ar"
	}
	other := otherLanguage(def)
	h := req.w.Header()
	h.Set("Content-Type", "application/xml; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=300")
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">` + "\n")
	write := func(path, lastmod string) {
		first, second := req.root+path, req.root+"/"+other+path
		if path == "" {
			first = req.root + "/"
		}
		for _, loc := range []string{first, second} {
			fmt.Fprintf(&b, "<url><loc>%s</loc>", template.HTMLEscapeString(loc))
			if lastmod != "" {
				fmt.Fprintf(&b, "<lastmod>%s</lastmod>", lastmod)
			}
			fmt.Fprintf(&b, `<xhtml:link rel="alternate" hreflang="%s" href="%s"/><xhtml:link rel="alternate" hreflang="%s" href="%s"/></url>`+"\n",
				def, template.HTMLEscapeString(first), other, template.HTMLEscapeString(second))
		}
	}
	write("", "")
	write("/collections/all", "")
	for _, e := range entries {
		segments := strings.Split(strings.TrimPrefix(e.Path, "/"), "/")
		for i := 1; i < len(segments); i++ {
			segments[i] = handle.Path(segments[i])
		}
		write("/"+strings.Join(segments, "/"), e.UpdatedAt.UTC().Format("2006-01-02"))
	}
	b.WriteString("</urlset>\n")
	_, _ = req.w.Write([]byte(b.String()))
}
