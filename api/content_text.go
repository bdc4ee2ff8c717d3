package api

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// What pages, blogs and articles share on the wire (decisions §22 and part
// three's shared rules): bilingual texts with `text` in the reader's
// language, the publication status, and the refusals.

// titleText is a bilingual title: a language left out is null; text is the
// reader's language, else the other one.
type titleText struct {
	AR   *string `json:"ar"`
	EN   *string `json:"en"`
	Text string  `json:"text"`
}

// bodyText is a bilingual body: a language left out is "".
type bodyText struct {
	AR   string `json:"ar"`
	EN   string `json:"en"`
	Text string `json:"text"`
}

type seoResponse struct {
	Title       string `json:"title"`
	Description string `json:"description"`
}

// inLanguage picks lang's text of t, else the other language's.
func inLanguage(t storage.ContentText, lang string) string {
	if lang == "ar" && t.AR != "" || t.EN == "" {
		return t.AR
	}
	return t.EN
}

func newTitleText(t storage.ContentText, lang string) titleText {
	out := titleText{Text: inLanguage(t, lang)}
	if t.AR != "" {
		out.AR = &t.AR
	}
	if t.EN != "" {
		out.EN = &t.EN
	}
	return out
}

func newBodyText(t storage.ContentText, lang string) bodyText {
	return bodyText{AR: t.AR, EN: t.EN, Text: inLanguage(t, lang)}
}

// optionalTitleText is newTitleText, nil when both languages are left out.
func optionalTitleText(t storage.ContentText, lang string) *titleText {
	if t == (storage.ContentText{}) {
		return nil
	}
	out := newTitleText(t, lang)
	return &out
}

// contentText is a request's bilingual text as storage keeps it.
func contentText(b request.Bilingual) storage.ContentText {
	ar, en := b.Text()
	return storage.ContentText{AR: ar, EN: en}
}

// contentBody is a request's body as storage keeps it: untrimmed, since
// the HTML is the merchant's.
func contentBody(b request.Bilingual) storage.ContentText {
	var out storage.ContentText
	if b.AR != nil {
		out.AR = *b.AR
	}
	if b.EN != nil {
		out.EN = *b.EN
	}
	return out
}

func contentSEO(s request.SEO) storage.ContentSEO {
	var out storage.ContentSEO
	if s.Title != nil {
		out.Title = strings.TrimSpace(*s.Title)
	}
	if s.Description != nil {
		out.Description = strings.TrimSpace(*s.Description)
	}
	return out
}

// publicationStatus is draft (no time), scheduled (a time to come) or
// published.
func publicationStatus(at *time.Time, now time.Time) string {
	switch {
	case at == nil:
		return "draft"
	case at.After(now):
		return "scheduled"
	}
	return "published"
}

func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// contentSearch reads the `search` of a page, blog or menu list (the
// theme editor's pickers search with it): NFKC-normalised and trimmed like
// the media library's q, "" for none.
func contentSearch(q *queryParser) string {
	return strings.TrimSpace(norm.NFKC.String(q.values.Get("search")))
}

// readerLanguage is the language bilingual reads answer in: the first of
// ar and en the request's Accept-Language accepts (by q), else the store's.
func (s *Server) readerLanguage(r *http.Request, storeID uuid.UUID) (string, error) {
	if lang := acceptedLanguage(r.Header.Get("Accept-Language")); lang != "" {
		return lang, nil
	}
	store, err := s.db.FindStoreByID(r.Context(), storeID)
	if err != nil {
		return "", err
	}
	return store.DefaultLanguage, nil
}

// acceptedLanguage reads an Accept-Language header for ar or en, "" when
// it names neither.
func acceptedLanguage(header string) string {
	type choice struct {
		lang string
		q    float64
	}
	var choices []choice
	for _, part := range strings.Split(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if base != "ar" && base != "en" {
			continue
		}
		q := 1.0
		if v, found := strings.CutPrefix(strings.TrimSpace(params), "q="); found {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if q > 0 {
			choices = append(choices, choice{base, q})
		}
	}
	sort.SliceStable(choices, func(i, j int) bool { return choices[i].q > choices[j].q })
	if len(choices) == 0 {
		return ""
	}
	return choices[0].lang
}

// bodyMessagesAr are the Arabic messages of a body's refusals.
var bodyMessagesAr = map[string]string{
	"tag_not_allowed":       "يحتوي النص على وسم غير مسموح به",
	"attribute_not_allowed": "يحتوي النص على خاصية غير مسموح بها",
	"unsafe_url":            "الرابط غير آمن: المسموح http(s) وmailto: وtel: ومسارات المتجر",
	"invalid_url":           "الرابط غير صالح",
	"image_not_allowed":     "الصورة يجب أن تكون من وسائط المتجر",
	"invalid_html":          "النص ليس HTML صالحًا",
	"too_long":              "النص أطول من المسموح",
}

// contentErrors maps the refusals of pages, blogs and articles.
func contentErrors(err error) *apiError {
	var body *storage.BodyError
	switch {
	case errors.As(err, &body):
		p := body.Problem
		e := validationError([]wire.FieldError{{Field: body.Field, Code: p.Code,
			Message:   fmt.Sprintf("%s (at %s, byte %d)", p.Message, p.Pointer, p.Offset),
			MessageAr: fmt.Sprintf("%s (عند %s، البايت %d)", bodyMessagesAr[p.Code], p.Pointer, p.Offset)}})
		e.Details = map[string]any{"field": body.Field, "pointer": p.Pointer, "offset": p.Offset}
		return e
	case errors.Is(err, storage.ErrDuplicateHandle):
		return &apiError{Status: http.StatusConflict, Code: "DUPLICATE_HANDLE",
			Message:   "Another item of this kind already has this handle",
			MessageAr: "يوجد عنصر آخر من النوع نفسه بهذا المعرّف",
			Fields: []wire.FieldError{{Field: "handle", Code: "taken", Message: "is already in use",
				MessageAr: "المعرّف مستخدم مسبقًا"}}}
	}
	return nil
}
