package request

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage/handle"
	"github.com/merchantsvc/svc/storage/richtext"
)

// The bodies of pages, blogs and articles (decisions §22, api/content_*.go).

// Limits on content fields, in characters (bodies in bytes).
const (
	maxContentTitle   = 255
	maxSEOTitle       = 70
	maxSEODescription = 320
	maxExcerpt        = 1000
	maxAuthor         = 100
	maxTags           = 20
	maxTag            = 40
)

// templateSuffix is what may follow "page." in a page's template.
var templateSuffix = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,49}$`)

// Bilingual is a text in Arabic and English; either may be left out.
type Bilingual struct {
	AR *string `json:"ar"`
	EN *string `json:"en"`
}

// Text answers the two languages, trimmed, "" for one left out.
func (b Bilingual) Text() (ar, en string) {
	if b.AR != nil {
		ar = strings.TrimSpace(*b.AR)
	}
	if b.EN != nil {
		en = strings.TrimSpace(*b.EN)
	}
	return ar, en
}

// SEO is what search engines are shown.
type SEO struct {
	Title       *string `json:"title"`
	Description *string `json:"description"`
}

// checkTitle: one language at least, each at most maxLen characters.
func checkTitle(c *Checker, field string, b Bilingual, maxLen int) {
	ar, en := b.Text()
	if ar == "" && en == "" {
		c.Add(field, "required", "needs ar or en")
		return
	}
	c.Text(field+".ar", ar, 0, maxLen)
	c.Text(field+".en", en, 0, maxLen)
}

// checkOptionalText: each language at most maxLen characters.
func checkOptionalText(c *Checker, field string, b Bilingual, maxLen int) {
	ar, en := b.Text()
	c.Text(field+".ar", ar, 0, maxLen)
	c.Text(field+".en", en, 0, maxLen)
}

// checkBody: each language at most richtext.MaxBytes; what the HTML may
// hold the storage layer checks, with the store's media at hand.
func checkBody(c *Checker, b Bilingual) {
	for _, l := range []struct {
		lang string
		v    *string
	}{{"ar", b.AR}, {"en", b.EN}} {
		if l.v != nil && len(*l.v) > richtext.MaxBytes {
			c.Add("body."+l.lang, "too_long", fmt.Sprintf("must be at most %d bytes", richtext.MaxBytes))
		}
	}
}

func checkHandle(c *Checker, h string) {
	if _, err := handle.Normalize(h); err != nil {
		c.Add("handle", err.Error(), "is not a handle: letters of any script, digits, '-' and '_', 1-120 characters")
	}
}

func checkSEO(c *Checker, s SEO) {
	if s.Title != nil {
		c.Text("seo.title", *s.Title, 0, maxSEOTitle)
	}
	if s.Description != nil {
		c.Text("seo.description", *s.Description, 0, maxSEODescription)
	}
}

// ParsePublishedAt reads an RFC 3339 time (nil for none).
func ParsePublishedAt(s *string) (*time.Time, error) {
	if s == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return nil, err
	}
	t = t.UTC().Truncate(time.Microsecond)
	return &t, nil
}

func checkPublishedAt(c *Checker, s *string) {
	if _, err := ParsePublishedAt(s); err != nil {
		c.Add("published_at", "invalid", "must be an RFC 3339 time such as 2026-12-01T09:00:00Z, or null for a draft")
	}
}

func checkTemplate(c *Checker, t string) {
	if suffix, ok := strings.CutPrefix(t, "page."); t != "page" && (!ok || !templateSuffix.MatchString(suffix)) {
		c.Add("template", "invalid", `must be "page" or "page.<suffix>" (lower-case letters, digits, '-' and '_')`)
	}
}

// CreatePage is the JSON body handleCreatePage reads (api/content_pages.go).
type CreatePage struct {
	Handle      *string    `json:"handle"`
	Title       Bilingual  `json:"title"`
	Body        *Bilingual `json:"body"`
	Template    *string    `json:"template"`
	PublishedAt *string    `json:"published_at"`
	SEO         *SEO       `json:"seo"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreatePage) Valid() []wire.FieldError {
	var c Checker
	if req.Handle != nil {
		checkHandle(&c, *req.Handle)
	}
	checkTitle(&c, "title", req.Title, maxContentTitle)
	if req.Body != nil {
		checkBody(&c, *req.Body)
	}
	if req.Template != nil {
		checkTemplate(&c, *req.Template)
	}
	checkPublishedAt(&c, req.PublishedAt)
	if req.SEO != nil {
		checkSEO(&c, *req.SEO)
	}
	return c.Result()
}

// UpdatePage is the JSON body handleUpdatePage reads: what is sent
// changes; a null published_at makes the page a draft again, a null body
// or seo empties it.
type UpdatePage struct {
	Handle      wire.Optional[string]    `json:"handle"`
	Title       wire.Optional[Bilingual] `json:"title"`
	Body        wire.Optional[Bilingual] `json:"body"`
	Template    wire.Optional[string]    `json:"template"`
	PublishedAt wire.Optional[string]    `json:"published_at"`
	SEO         wire.Optional[SEO]       `json:"seo"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdatePage) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "handle", req.Handle) {
		checkHandle(&c, req.Handle.Value)
	}
	if notNull(&c, "title", req.Title) {
		checkTitle(&c, "title", req.Title.Value, maxContentTitle)
	}
	if req.Body.Set && !req.Body.Null {
		checkBody(&c, req.Body.Value)
	}
	if notNull(&c, "template", req.Template) {
		checkTemplate(&c, req.Template.Value)
	}
	if req.PublishedAt.Set && !req.PublishedAt.Null {
		checkPublishedAt(&c, &req.PublishedAt.Value)
	}
	if req.SEO.Set && !req.SEO.Null {
		checkSEO(&c, req.SEO.Value)
	}
	return c.Result()
}

// CreateBlog is the JSON body handleCreateBlog reads (api/content_blogs.go).
type CreateBlog struct {
	Handle *string   `json:"handle"`
	Title  Bilingual `json:"title"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateBlog) Valid() []wire.FieldError {
	var c Checker
	if req.Handle != nil {
		checkHandle(&c, *req.Handle)
	}
	checkTitle(&c, "title", req.Title, maxContentTitle)
	return c.Result()
}

// UpdateBlog is the JSON body handleUpdateBlog reads.
type UpdateBlog struct {
	Handle wire.Optional[string]    `json:"handle"`
	Title  wire.Optional[Bilingual] `json:"title"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateBlog) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "handle", req.Handle) {
		checkHandle(&c, req.Handle.Value)
	}
	if notNull(&c, "title", req.Title) {
		checkTitle(&c, "title", req.Title.Value, maxContentTitle)
	}
	return c.Result()
}

// CreateArticle is the JSON body handleCreateArticle reads (api/content_blogs.go).
type CreateArticle struct {
	Handle      *string    `json:"handle"`
	Title       Bilingual  `json:"title"`
	Body        *Bilingual `json:"body"`
	Excerpt     *Bilingual `json:"excerpt"`
	ImageID     *string    `json:"image_id"`
	Author      *string    `json:"author"`
	Tags        []string   `json:"tags"`
	PublishedAt *string    `json:"published_at"`
	SEO         *SEO       `json:"seo"`
}

func checkTags(c *Checker, tags []string) {
	if len(tags) > maxTags {
		c.Add("tags", "too_many", fmt.Sprintf("at most %d tags", maxTags))
		return
	}
	for i, t := range tags {
		c.Text(fmt.Sprintf("tags[%d]", i), t, 1, maxTag)
	}
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateArticle) Valid() []wire.FieldError {
	var c Checker
	if req.Handle != nil {
		checkHandle(&c, *req.Handle)
	}
	checkTitle(&c, "title", req.Title, maxContentTitle)
	if req.Body != nil {
		checkBody(&c, *req.Body)
	}
	if req.Excerpt != nil {
		checkOptionalText(&c, "excerpt", *req.Excerpt, maxExcerpt)
	}
	if req.ImageID != nil {
		c.UUID("image_id", *req.ImageID)
	}
	if req.Author != nil {
		c.Text("author", *req.Author, 0, maxAuthor)
	}
	checkTags(&c, req.Tags)
	checkPublishedAt(&c, req.PublishedAt)
	if req.SEO != nil {
		checkSEO(&c, *req.SEO)
	}
	return c.Result()
}

// UpdateArticle is the JSON body handleUpdateArticle reads: what is sent
// changes; null clears what may be empty.
type UpdateArticle struct {
	Handle      wire.Optional[string]    `json:"handle"`
	Title       wire.Optional[Bilingual] `json:"title"`
	Body        wire.Optional[Bilingual] `json:"body"`
	Excerpt     wire.Optional[Bilingual] `json:"excerpt"`
	ImageID     wire.Optional[string]    `json:"image_id"`
	Author      wire.Optional[string]    `json:"author"`
	Tags        wire.Optional[[]string]  `json:"tags"`
	PublishedAt wire.Optional[string]    `json:"published_at"`
	SEO         wire.Optional[SEO]       `json:"seo"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateArticle) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "handle", req.Handle) {
		checkHandle(&c, req.Handle.Value)
	}
	if notNull(&c, "title", req.Title) {
		checkTitle(&c, "title", req.Title.Value, maxContentTitle)
	}
	if req.Body.Set && !req.Body.Null {
		checkBody(&c, req.Body.Value)
	}
	if req.Excerpt.Set && !req.Excerpt.Null {
		checkOptionalText(&c, "excerpt", req.Excerpt.Value, maxExcerpt)
	}
	if req.ImageID.Set && !req.ImageID.Null {
		c.UUID("image_id", req.ImageID.Value)
	}
	if req.Author.Set && !req.Author.Null {
		c.Text("author", req.Author.Value, 0, maxAuthor)
	}
	if req.Tags.Set && !req.Tags.Null {
		checkTags(&c, req.Tags.Value)
	}
	if req.PublishedAt.Set && !req.PublishedAt.Null {
		checkPublishedAt(&c, &req.PublishedAt.Value)
	}
	if req.SEO.Set && !req.SEO.Null {
		checkSEO(&c, req.SEO.Value)
	}
	return c.Result()
}

// Tags answers tags trimmed, each once (ignoring case), in order.
func Tags(tags []string) []string {
	out := make([]string, 0, len(tags))
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		key := strings.ToLower(t)
		if t == "" || seen[key] || utf8.RuneCountInString(t) > maxTag {
			continue
		}
		seen[key] = true
		out = append(out, t)
	}
	return out
}
