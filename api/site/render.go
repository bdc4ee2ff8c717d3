package site

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/merchantsvc/svc/storage/numerals"
	"github.com/merchantsvc/svc/storage/theme"
)

// The renderer: html/template over the theme's files. Themes are project
// code (merchants write settings and content, never templates), so there is
// no template injection; every value the merchant wrote is escaped by the
// template, except rich text that keeps to the theme's allow-list.

// themeTemplates are each built-in theme's templates by theme id: the
// default theme's sections/<type>.html (beside schemas/sections/<type>.json),
// layout/*.html and templates/*.html, with the theme's own files of those
// names over them.
var themeTemplates = func() map[string]*template.Template {
	base := template.Must(template.New("theme").Funcs(funcs).ParseFS(theme.DefaultFiles(),
		"layout/*.html", "templates/*.html", "sections/*.html"))
	out := map[string]*template.Template{}
	for _, b := range theme.Builtins() {
		if b.ID == theme.DefaultID {
			out[b.ID] = base
			continue
		}
		set := template.Must(base.Clone())
		for _, pattern := range []string{"layout/*.html", "templates/*.html", "sections/*.html"} {
			if files, _ := fs.Glob(b.Files, pattern); len(files) > 0 {
				set = template.Must(set.ParseFS(b.Files, pattern))
			}
		}
		out[b.ID] = set
	}
	return out
}()

// templatesOf is the template set of a page's theme (the default theme's
// for an id the library no longer has).
func templatesOf(p *Page) *template.Template {
	if t, ok := themeTemplates[p.ThemeID]; ok {
		return t
	}
	return themeTemplates[theme.DefaultID]
}

var funcs = template.FuncMap{
	"t": func(p *Page, key string) string { return word(p.Lang, key) },
	"price": func(p *Page, minor int64) string {
		return numerals.Price(minor, exponent(p.Currency), p.Currency, p.Lang, p.Numerals)
	},
	"num": func(p *Page, n int) string {
		s := strconv.Itoa(n)
		if p.Lang == "ar" && p.Numerals == numerals.Arabic {
			return numerals.ToArabic(s)
		}
		return s
	},
	"rich": func(v any) template.HTML {
		s, _ := v.(string)
		if theme.RichTextAllowed(s, false) {
			return template.HTML(s) // #nosec G203: kept to the theme's allow-list
		}
		return template.HTML(template.HTMLEscapeString(s))
	},
	"inline": func(v any) template.HTML {
		s, _ := v.(string)
		if theme.RichTextAllowed(s, true) {
			return template.HTML(s) // #nosec G203: kept to the inline allow-list
		}
		return template.HTML(template.HTMLEscapeString(s))
	},
	"dict": func(kv ...any) map[string]any {
		m := make(map[string]any, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			k, _ := kv[i].(string)
			m[k] = kv[i+1]
		}
		return m
	},
	"str": func(v any) string {
		switch x := v.(type) {
		case string:
			return x
		case nil:
			return ""
		}
		return fmt.Sprint(v)
	},
	"truthy": func(v any) bool {
		b, ok := v.(bool)
		return ok && b
	},
	"int": func(v any) int {
		switch x := v.(type) {
		case float64:
			return int(x)
		case json.Number:
			n, _ := x.Int64()
			return int(n)
		case int:
			return x
		}
		return 0
	},
	"link":     func(p *Page, path string) string { return p.Link(path) },
	"safeLink": safeLink,
	"add":      func(a, b int) int { return a + b },
	"seq": func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i + 1
		}
		return out
	},
}

// exponent is how many minor units a currency's unit has.
func exponent(currency string) int {
	switch currency {
	case "KWD", "BHD", "OMR", "JOD", "IQD", "LYD", "TND":
		return 3
	}
	return 2
}

// safeLink answers a merchant's link setting when it is http(s), mailto:,
// tel: or a path of the site, else "#" (the validator refuses others; the
// preview renders unsaved drafts too).
func safeLink(p *Page, v any) string {
	s, _ := v.(string)
	if s == "" || theme.LinkProblem(s) != nil {
		return ""
	}
	if strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//") {
		return p.Link(s)
	}
	return s
}

// Page is everything a page of the site is rendered from.
type Page struct {
	Kind     string // index, product, collection, search, page, blog, article, 404
	Lang     string
	Dir      string
	Numerals string
	Currency string
	ThemeID  string
	Preview  bool

	StoreName string
	// Base is the site's path for this language ("/s/souq/en"), Root the
	// site's absolute address without a language ("http://…/s/souq").
	Base, Root string
	// Path is this page's path on the site, without the language prefix
	// ("" or "/en" …, Prefix).
	Path, Prefix string
	variant      string // ?variant= on a product page
	defLang      string

	Title, Description string
	Canonical          string
	Alternates         []Alternate
	OGType, OGImage    string
	JSONLD             []any
	NoIndex            bool

	Scheme    string // the default color scheme's class
	Style     template.CSS
	StyleHash string // the CSP hash of the inline <style>
	CSSURL    string
	ScriptURL string // the preview's message handler, nil on the storefront
	AltLink   string // the same page in the other language
	AltLang   string

	MainMenu   []MenuLink
	CODBadge   string
	Before     []template.HTML // the sections above the page's own content
	Main       template.HTML   // the page's own content (product, collection …)
	Sections   []template.HTML // the page's sections
	After      []template.HTML // the sections below (the footer group)
	HasFooter  bool            // a footer section is on the page (else the layout's own)
	Breadcrumb []Crumb

	Data any // the page's own content, for templates/<kind>.html
}

// Alternate is the page in one language, for hreflang.
type Alternate struct{ Lang, URL string }

// Crumb is one step of the breadcrumb trail.
type Crumb struct{ Name, URL string }

// MenuLink is a resolved menu item.
type MenuLink struct {
	Title string
	URL   string
	Items []MenuLink
}

// Link is the site path of path in this page's language.
func (p *Page) Link(path string) string {
	if path == "/" {
		path = ""
	}
	if p.Base == "" && path == "" {
		return "/"
	}
	return p.Base + path
}

// abs is the absolute address of path in this page's language.
func (p *Page) abs(path string) string {
	if path == "/" && p.Prefix != "" {
		path = ""
	}
	return p.Root + p.Prefix + path
}

// render executes a named template of the theme.
func render(p *Page, name string, data any) (template.HTML, error) {
	var b bytes.Buffer
	if err := templatesOf(p).ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("render %s: %w", name, err)
	}
	return template.HTML(b.String()), nil // #nosec G203: html/template's own output
}

// document renders the whole page.
func document(p *Page) ([]byte, error) {
	var b bytes.Buffer
	if err := templatesOf(p).ExecuteTemplate(&b, "layout", p); err != nil {
		return nil, fmt.Errorf("render layout: %w", err)
	}
	return b.Bytes(), nil
}

var colorPattern = regexp.MustCompile(`^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$`)

// themeStyle is the inline <style> of the theme settings: custom
// properties and one class per color scheme. Values are checked (colors
// #rgb, numbers) before they are written, so a draft cannot break out.
func themeStyle(settings map[string]any) (template.CSS, string) {
	var b strings.Builder
	color := func(v any, fallback string) string {
		if s, ok := v.(string); ok && colorPattern.MatchString(s) {
			return s
		}
		return fallback
	}
	b.WriteString(":root{")
	fmt.Fprintf(&b, "--accent:%s;", color(settings["accent"], "#f2b705"))
	scale := 100
	if n, ok := number(settings["body_scale"]); ok && n >= 80 && n <= 130 {
		scale = n
	}
	fmt.Fprintf(&b, "--body-scale:%d%%;", scale)
	width := "1200px"
	if w, ok := settings["page_width"].(map[string]any); ok {
		if n, ok := number(w["value"]); ok {
			switch w["unit"] {
			case "px":
				if n >= 320 && n <= 2400 {
					width = strconv.Itoa(n) + "px"
				}
			case "rem":
				if n >= 20 && n <= 150 {
					width = strconv.Itoa(n) + "rem"
				}
			}
		}
	}
	fmt.Fprintf(&b, "--page-width:%s;", width)
	radius := map[string]string{"square": "0", "pill": "999px"}[fmt.Sprint(settings["button_style"])]
	if radius == "" {
		radius = "8px"
	}
	fmt.Fprintf(&b, "--button-radius:%s;", radius)
	perRow := 4
	if n, ok := number(settings["products_per_row"]); ok && n >= 2 && n <= 6 {
		perRow = n
	}
	fmt.Fprintf(&b, "--per-row:%d;}", perRow)
	schemes, _ := settings["color_schemes"].(map[string]any)
	if schemes == nil {
		schemes = defaultSchemes()
	}
	for _, id := range sortedKeys(schemes) {
		s, _ := schemes[id].(map[string]any)
		if !schemeID.MatchString(id) {
			continue
		}
		fmt.Fprintf(&b, ".%s{--bg:%s;--fg:%s;--button:%s;}", id, color(s["background"], "#ffffff"), color(s["text"], "#1d2329"),
			color(s["button"], "#1a7f5a"))
	}
	css := b.String()
	sum := sha256.Sum256([]byte(css))
	return template.CSS(css), "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'" // #nosec G203: built from checked values
}

var schemeID = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

func defaultSchemes() map[string]any {
	for _, s := range theme.Default().Settings {
		if s.Type == "color_scheme_group" {
			var out map[string]any
			_ = json.Unmarshal(s.Default, &out)
			return out
		}
	}
	return nil
}

func number(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		return int(x), true
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	}
	return 0, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// assetFile is a static file of the themes, served at {root}/assets/{file}:
// the first theme of the library that has it (each theme names its own
// stylesheet, stylesheet).
func assetFile(name string) ([]byte, error) {
	for _, b := range theme.Builtins() {
		if body, err := fs.ReadFile(b.Files, "assets/"+name); err == nil {
			return body, nil
		}
	}
	return nil, fs.ErrNotExist
}

// stylesheet is a theme's stylesheet: assets/{id}.css when it has one,
// else the default theme's assets/theme.css.
func stylesheet(themeID string) string {
	if b, ok := theme.FindBuiltin(themeID); ok {
		if _, err := fs.Stat(b.Files, "assets/"+themeID+".css"); err == nil {
			return themeID + ".css"
		}
	}
	return "theme.css"
}

// assetVersions change the stylesheets' URLs when the files change, so
// they may be cached for a year.
var assetVersions = func() map[string]string {
	out := map[string]string{}
	for _, b := range theme.Builtins() {
		css, _ := assetFile(stylesheet(b.ID))
		sum := sha256.Sum256(css)
		out[b.ID] = hex.EncodeToString(sum[:6])
	}
	return out
}()

// StylesheetURL is the path of a theme's stylesheet under base (the site's
// root, or /assets/theme for the preview).
func StylesheetURL(base, themeID string) string {
	return base + "/" + stylesheet(themeID) + "?v=" + assetVersions[themeID]
}
