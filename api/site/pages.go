package site

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
	"github.com/merchantsvc/svc/storage/numerals"
	"github.com/merchantsvc/svc/storage/richtext"
)

// perPage is how many products a collection or search page lists (§23).
const perPage = 24

// CollectionData is a collection, catalog or search page.
type CollectionData struct {
	Title, Description string
	Query              string // search only
	Cards              []Card
	Total              int
	Sort               string
	Sorts              []Choice
	Filters            bool // the price filter (the catalog and search)
	PriceMin, PriceMax string
	Pager              Pager
}

// Choice is an option of a select.
type Choice struct {
	Value, Label string
	Selected     bool
}

// Pager links the pages of a list.
type Pager struct {
	Page, Pages   int
	Prev, Next    string
	HasPrev, More bool
}

// ContentData is a page, a blog or an article.
type ContentData struct {
	Title, Author, Date string
	Body                template.HTML
	BlogTitle, BlogURL  string
	Articles            []ArticleCard
	Pager               Pager
}

// ArticleCard is an article in its blog's list.
type ArticleCard struct {
	Title, URL, Excerpt, Date string
}

// fill loads and renders the page at path into p; errNotFound when there
// is no such page.
func (l *loader) fill(ctx context.Context, p *Page, d doc, path string, q url.Values) error {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range parts {
		u, err := url.PathUnescape(s)
		if err != nil {
			return errNotFound
		}
		parts[i] = u
	}
	p.Breadcrumb = []Crumb{{Name: word(p.Lang, "home"), URL: p.abs("/")}}
	kind := ""
	var err error
	switch {
	case path == "/":
		kind = "index"
		p.Title = p.StoreName
	case len(parts) == 2 && parts[0] == "products":
		kind = "product"
		err = l.product(ctx, p, parts[1])
	case len(parts) == 2 && parts[0] == "collections" && parts[1] == "all":
		kind = "collection"
		err = l.catalog(ctx, p, q)
	case len(parts) == 2 && (parts[0] == "collections" || parts[0] == "categories"):
		kind = "collection"
		err = l.collection(ctx, p, parts[1], parts[0] == "categories", q)
	case len(parts) == 1 && parts[0] == "search":
		kind = "search"
		err = l.search(ctx, p, q)
	case len(parts) == 2 && parts[0] == "pages":
		kind = "page"
		err = l.contentPage(ctx, p, parts[1])
	case len(parts) == 2 && parts[0] == "blogs":
		kind = "blog"
		err = l.blog(ctx, p, parts[1], q)
	case len(parts) == 3 && parts[0] == "blogs", len(parts) == 4 && parts[0] == "blogs" && parts[2] == "articles":
		kind = "article"
		err = l.article(ctx, p, parts[1], parts[len(parts)-1])
	default:
		return errNotFound
	}
	if err != nil {
		return err
	}
	p.Kind = kind
	if err := l.chrome(ctx, p, d, kind); err != nil {
		return err
	}
	if kind != "index" {
		main, err := render(p, "main/"+kind, p)
		if err != nil {
			return err
		}
		p.Main = main
	}
	return nil
}

// chrome fills what every page has: the main menu and the sections.
func (l *loader) chrome(ctx context.Context, p *Page, d doc, kind string) error {
	menu, _ := d.Settings["main_menu"].(string)
	p.MainMenu = l.menu(ctx, p, menu)
	return l.sections(ctx, p, d, kind)
}

// notFoundOr maps the storage's not found to the themed 404.
func notFoundOr(err error) error {
	if errors.Is(err, storage.ErrNotFound) {
		return errNotFound
	}
	return err
}

func (l *loader) product(ctx context.Context, p *Page, raw string) error {
	h, err := handle.Normalize(raw)
	if err != nil {
		return errNotFound
	}
	pr, err := l.db.FindActiveProductByHandle(ctx, l.store.ID, h)
	if err != nil {
		return notFoundOr(err)
	}
	p.Path = "/products/" + handle.Path(pr.Handle) // the canonical spelling of the address
	v, err := l.productViewOf(ctx, p, pr, p.variant)
	if err != nil {
		return err
	}
	p.Data = v
	p.Title, p.Description, p.OGType = v.Title, summary(v.Description), "product"
	if len(v.Images) > 0 {
		p.OGImage = v.Images[0].LargeURL()
	}
	p.Breadcrumb = append(p.Breadcrumb, Crumb{Name: word(p.Lang, "all_products"), URL: p.abs("/collections/all")},
		Crumb{Name: v.Title, URL: p.abs(p.Path)})
	availability := "https://schema.org/OutOfStock"
	if v.Selected.Available {
		availability = "https://schema.org/InStock"
	}
	product := map[string]any{"@context": "https://schema.org", "@type": "Product", "name": v.Title, "url": p.abs(p.Path),
		"offers": map[string]any{"@type": "Offer", "price": decimal(v.Selected.Price, exponent(p.Currency)), "priceCurrency": p.Currency,
			"availability": availability, "url": p.abs(p.Path)}}
	if v.Description != "" {
		product["description"] = v.Description
	}
	if v.SKU != "" {
		product["sku"] = v.SKU
	}
	if len(v.Images) > 0 {
		var images []string
		for _, img := range v.Images {
			images = append(images, img.LargeURL())
		}
		product["image"] = images
	}
	p.JSONLD = append(p.JSONLD, product)
	return nil
}

// decimal writes minor units as a decimal number with a point ("1234.50").
func decimal(minor int64, exp int) string {
	s := numerals.Price(minor, exp, "", "en", numerals.Latin)
	return strings.ReplaceAll(strings.TrimSpace(s), ",", "")
}

// summary is the start of a text, for a meta description.
func summary(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= 160 {
		return s
	}
	r := []rune(s)
	return string(r[:157]) + "…"
}

// pageNumber reads ?page (either digit set), 1 when absent or bad.
func pageNumber(q url.Values) int {
	n, err := strconv.Atoi(numerals.ToLatin(q.Get("page")))
	if err != nil || n < 1 || n > 10000 {
		return 1
	}
	return n
}

func (l *loader) pager(p *Page, q url.Values, page, total int) Pager {
	pages := max(1, (total+perPage-1)/perPage)
	link := func(n int) string {
		v := url.Values{}
		for k, vals := range q {
			if k != "page" {
				v[k] = vals
			}
		}
		if n > 1 {
			v.Set("page", strconv.Itoa(n))
		}
		if len(v) == 0 {
			return p.Link(p.Path)
		}
		return p.Link(p.Path) + "?" + v.Encode()
	}
	return Pager{Page: page, Pages: pages, HasPrev: page > 1, More: page < pages, Prev: link(page - 1), Next: link(page + 1)}
}

// catalogSorts are /collections/all's orders and their product list sort.
var catalogSorts = []struct {
	value, label, column string
	desc                 bool
}{
	{"newest", "sort_newest", "created_at", true},
	{"price_asc", "sort_price_asc", "price", false},
	{"price_desc", "sort_price_dsc", "price", true},
	{"title", "sort_title", "name", false},
}

// amount reads a price filter typed in major units in either digit set.
func amount(s string, exp int) *int64 {
	s = strings.TrimSpace(numerals.ToLatin(s))
	if s == "" {
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e10 {
		return nil
	}
	unit := 1.0
	for range exp {
		unit *= 10
	}
	v := int64(f*unit + 0.5)
	return &v
}

func (l *loader) catalog(ctx context.Context, p *Page, q url.Values) error {
	data := &CollectionData{Title: word(p.Lang, "all_products"), Filters: true, Sort: "newest"}
	return l.productList(ctx, p, q, data, nil)
}

func (l *loader) search(ctx context.Context, p *Page, q url.Values) error {
	query := strings.Join(strings.Fields(numerals.ToLatin(q.Get("q"))), " ")
	if utf8.RuneCountInString(query) > 100 {
		query = string([]rune(query)[:100])
	}
	data := &CollectionData{Title: word(p.Lang, "search"), Query: query, Filters: true, Sort: "newest"}
	p.NoIndex = true
	if query == "" {
		p.Title, p.Data = data.Title, data
		data.Pager = l.pager(p, q, 1, 0)
		return nil
	}
	data.Title = word(p.Lang, "search_for") + " “" + query + "”"
	return l.productList(ctx, p, q, data, &query)
}

// productList is the catalog or a search: active products, sorted and
// filtered by price.
func (l *loader) productList(ctx context.Context, p *Page, q url.Values, data *CollectionData, search *string) error {
	page := pageNumber(q)
	sortBy, desc := "created_at", true
	if s := q.Get("sort"); s != "" {
		for _, c := range catalogSorts {
			if c.value == s {
				data.Sort, sortBy, desc = s, c.column, c.desc
			}
		}
	}
	for _, c := range catalogSorts {
		data.Sorts = append(data.Sorts, Choice{Value: c.value, Label: word(p.Lang, c.label), Selected: c.value == data.Sort})
	}
	exp := exponent(p.Currency)
	minP, maxP := amount(q.Get("min"), exp), amount(q.Get("max"), exp)
	if minP != nil {
		data.PriceMin = numerals.ToLatin(q.Get("min"))
	}
	if maxP != nil {
		data.PriceMax = numerals.ToLatin(q.Get("max"))
	}
	active := "active"
	products, total, err := l.db.FindProducts(ctx, l.store.ID, storage.ProductFilter{Status: &active, Search: search, PriceMin: minP,
		PriceMax: maxP, SortBy: sortBy, Descending: desc, Page: storage.Page{Page: page, Limit: perPage}})
	if err != nil {
		return err
	}
	if data.Cards, err = l.cards(ctx, p, products); err != nil {
		return err
	}
	data.Total, data.Pager = total, l.pager(p, q, page, total)
	p.Title, p.Data = data.Title, data
	if search == nil {
		p.Breadcrumb = append(p.Breadcrumb, Crumb{Name: data.Title, URL: p.abs(p.Path)})
	}
	return nil
}

// collectionSorts are a collection's orders (storage.CollectionSorts).
var collectionSorts = map[string]string{"manual": "sort_manual", "best_selling": "sort_best", "price_asc": "sort_price_asc",
	"price_desc": "sort_price_dsc", "newest": "sort_newest", "title": "sort_title"}

func (l *loader) collection(ctx context.Context, p *Page, raw string, category bool, q url.Values) error {
	h, err := handle.Normalize(raw)
	if err != nil {
		return errNotFound
	}
	c, err := l.db.FindPublishedCollectionByHandle(ctx, l.store.ID, h, category)
	if err != nil {
		return notFoundOr(err)
	}
	p.Path = "/collections/" + handle.Path(c.Handle)
	if category {
		p.Path = "/categories/" + handle.Path(c.Handle)
	}
	data := &CollectionData{Title: collectionTitle(c, p.Lang), Sort: c.Sort}
	data.Description = c.Description.Ar
	if p.Lang == "en" && c.Description.En != "" || data.Description == "" {
		data.Description = c.Description.En
	}
	if s := q.Get("sort"); slices.Contains(storage.CollectionSorts, s) {
		data.Sort = s
	}
	for _, s := range storage.CollectionSorts {
		data.Sorts = append(data.Sorts, Choice{Value: s, Label: word(p.Lang, collectionSorts[s]), Selected: s == data.Sort})
	}
	page := pageNumber(q)
	products, total, err := l.db.FindPublishedCollectionProducts(ctx, l.store.ID, h, data.Sort, storage.Page{Page: page, Limit: perPage})
	if err != nil {
		return notFoundOr(err)
	}
	if data.Cards, err = l.cards(ctx, p, products); err != nil {
		return err
	}
	data.Total, data.Pager = total, l.pager(p, q, page, total)
	p.Title, p.Data = data.Title, data
	if c.SEO.Title != "" {
		p.Title = c.SEO.Title
	}
	p.Description = summary(c.SEO.Description)
	if p.Description == "" {
		p.Description = summary(data.Description)
	}
	if img := l.mediaImage(ctx, idString(c.ImageID)); img != nil {
		p.OGImage = img.LargeURL()
	}
	p.Breadcrumb = append(p.Breadcrumb, Crumb{Name: data.Title, URL: p.abs(p.Path)})
	return nil
}

// body is a stored page or article body in lang: it passed the rich text
// rules when it was saved, and is checked again before it is trusted.
func body(t storage.ContentText, lang string) template.HTML {
	s := t.AR
	if lang == "en" && t.EN != "" || s == "" {
		s = t.EN
	}
	if richtext.Check(s, richtext.Policy{Image: func(string) bool { return true }}) == nil {
		return template.HTML(s) // #nosec G203: checked against the rich text allow-list
	}
	return template.HTML(template.HTMLEscapeString(s))
}

func text(t storage.ContentText, lang string) string {
	if lang == "en" && t.EN != "" || t.AR == "" {
		return t.EN
	}
	return t.AR
}

func (l *loader) contentPage(ctx context.Context, p *Page, raw string) error {
	h, err := handle.Normalize(raw)
	if err != nil {
		return errNotFound
	}
	pg, err := l.db.FindPublishedPage(ctx, l.store.ID, h)
	if err != nil {
		return notFoundOr(err)
	}
	p.Path = "/pages/" + handle.Path(pg.Handle)
	data := &ContentData{Title: text(pg.Title, p.Lang), Body: body(pg.Body, p.Lang)}
	p.Title, p.Data = data.Title, data
	if pg.SEO.Title != "" {
		p.Title = pg.SEO.Title
	}
	p.Description = summary(pg.SEO.Description)
	p.Breadcrumb = append(p.Breadcrumb, Crumb{Name: data.Title, URL: p.abs(p.Path)})
	return nil
}

func (l *loader) date(p *Page, t *time.Time) string {
	if t == nil {
		return ""
	}
	s := t.UTC().Format("2006-01-02")
	if p.Lang == "ar" && p.Numerals == numerals.Arabic {
		s = numerals.ToArabic(s)
	}
	return s
}

func (l *loader) blog(ctx context.Context, p *Page, raw string, q url.Values) error {
	h, err := handle.Normalize(raw)
	if err != nil {
		return errNotFound
	}
	b, err := l.db.FindBlogByHandle(ctx, l.store.ID, h)
	if err != nil {
		return notFoundOr(err)
	}
	p.Path = "/blogs/" + handle.Path(b.Handle)
	page := pageNumber(q)
	articles, total, err := l.db.FindArticles(ctx, l.store.ID, b.ID, storage.ArticleFilter{Page: storage.Page{Page: page, Limit: perPage},
		Status: "published"})
	if err != nil {
		return err
	}
	data := &ContentData{Title: text(b.Title, p.Lang), Pager: l.pager(p, q, page, total)}
	for _, a := range articles {
		data.Articles = append(data.Articles, ArticleCard{Title: text(a.Title, p.Lang), Excerpt: text(a.Excerpt, p.Lang),
			URL: p.Link("/blogs/" + handle.Path(b.Handle) + "/" + handle.Path(a.Handle)), Date: l.date(p, a.PublishedAt)})
	}
	p.Title, p.Data = data.Title, data
	p.Breadcrumb = append(p.Breadcrumb, Crumb{Name: data.Title, URL: p.abs(p.Path)})
	return nil
}

func (l *loader) article(ctx context.Context, p *Page, blogHandle, raw string) error {
	bh, err1 := handle.Normalize(blogHandle)
	h, err2 := handle.Normalize(raw)
	if err1 != nil || err2 != nil {
		return errNotFound
	}
	b, err := l.db.FindBlogByHandle(ctx, l.store.ID, bh)
	if err != nil {
		return notFoundOr(err)
	}
	a, err := l.db.FindPublishedArticle(ctx, l.store.ID, b.ID, h)
	if err != nil {
		return notFoundOr(err)
	}
	blogPath := "/blogs/" + handle.Path(b.Handle)
	p.Path = blogPath + "/" + handle.Path(a.Handle) // one canonical address for /blogs/{b}/{a} and /blogs/{b}/articles/{a}
	data := &ContentData{Title: text(a.Title, p.Lang), Body: body(a.Body, p.Lang), Author: a.Author, Date: l.date(p, a.PublishedAt),
		BlogTitle: text(b.Title, p.Lang), BlogURL: p.Link(blogPath)}
	p.Title, p.Data, p.OGType = data.Title, data, "article"
	if a.SEO.Title != "" {
		p.Title = a.SEO.Title
	}
	p.Description = summary(a.SEO.Description)
	if p.Description == "" {
		p.Description = summary(text(a.Excerpt, p.Lang))
	}
	if img := l.mediaImage(ctx, idString(a.ImageID)); img != nil {
		p.OGImage = img.LargeURL()
	}
	p.Breadcrumb = append(p.Breadcrumb, Crumb{Name: data.BlogTitle, URL: p.abs(blogPath)}, Crumb{Name: data.Title, URL: p.abs(p.Path)})
	return nil
}

func idString[T fmt.Stringer](id *T) string {
	if id == nil {
		return ""
	}
	return (*id).String()
}
