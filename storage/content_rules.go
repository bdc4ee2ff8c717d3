package storage

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage/handle"
	"github.com/merchantsvc/svc/storage/richtext"
)

// The rules pages, blogs and articles share (decisions §22): handles,
// bodies, and what the theme names.

// ContentText is a text in the store's two languages; "" is a language
// the merchant left out. A title has one at least; a body may have none.
type ContentText struct {
	AR string
	EN string
}

// ContentSEO is what search engines are shown of a page or an article.
type ContentSEO struct {
	Title       string
	Description string
}

// BodyError is a body the rich text rules refuse, with where.
type BodyError struct {
	// Field is the body's path in the request: body.ar, body.en.
	Field   string
	Problem *richtext.Problem
}

func (e *BodyError) Error() string { return e.Field + ": " + e.Problem.Error() }

// contentHandle answers the handle to store: the one typed, normalised,
// or, when none was typed, one derived from the title that no row of the
// table (within scope) has yet, as Shopify does ("about-us", "about-us-2").
// taken says whether a handle is in use.
func contentHandle(ctx context.Context, typed string, title ContentText, kind string, taken func(string) (bool, error)) (string, error) {
	if typed != "" || taken == nil {
		return typedHandle(typed)
	}
	base := handle.FromTitle(title.EN)
	if base == "" {
		base = handle.FromTitle(title.AR)
	}
	if base == "" {
		base = kind
	}
	for n := 1; n <= 50; n++ {
		h := base
		if n > 1 {
			suffix := fmt.Sprintf("-%d", n)
			h = string([]rune(base)[:min(len([]rune(base)), handle.MaxLength-len(suffix))]) + suffix
		}
		used, err := taken(h)
		if err != nil {
			return "", err
		}
		if !used {
			return h, nil
		}
	}
	return "", ErrDuplicateHandle
}

// renameContent answers the handle a page or blog keeps after an update
// that may have typed a new one: unchanged, the current one (a handle stored
// before the rules stands until the merchant changes it); else the typed
// one normalised, refused while the theme names the current one (kind), and
// leaving a redirect from the old path under prefix (decisions §22).
func (tx *Tx) renameContent(ctx context.Context, storeID uuid.UUID, kind, prefix, current, typed string) (string, error) {
	if typed == current {
		return current, nil
	}
	h, err := typedHandle(typed)
	if err != nil || h == current {
		return h, err
	}
	if err := tx.refuseThemeUses(ctx, storeID, kind, current, "HANDLE_IN_USE_BY_THEME"); err != nil {
		return "", err
	}
	return h, tx.redirectRenamed(ctx, storeID, prefix+current, prefix+h)
}

// typedHandle is a handle the merchant typed, normalised, or 422 handle.
func typedHandle(typed string) (string, error) {
	h, err := handle.Normalize(typed)
	if err != nil {
		return "", &InvalidError{Field: "handle", Code: err.Error(), Message: "is not a handle: letters, digits, '-' and '_', 1-120 characters"}
	}
	return h, nil
}

// checkBodies holds each body to the rich text rules: an img must name one
// of the store's ready media by its URL, /files/{store_id}/{media_id}/{name}
// or that path under the API's base URL (decisions §22).
func (tx *Tx) checkBodies(ctx context.Context, storeID uuid.UUID, field string, body ContentText) error {
	for _, b := range []struct{ lang, html string }{{"ar", body.AR}, {"en", body.EN}} {
		var lookupErr error
		policy := richtext.Policy{Image: func(src string) bool {
			ok, err := tx.isMediaURL(ctx, storeID, src)
			if err != nil {
				lookupErr = err
			}
			return ok
		}}
		problem := richtext.Check(b.html, policy)
		if lookupErr != nil {
			return lookupErr
		}
		if problem != nil {
			return &BodyError{Field: field + "." + b.lang, Problem: problem}
		}
	}
	return nil
}

// nullText is "" as SQL NULL, for a title language left out.
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// textOf is a nullable column's text, "" for NULL.
func textOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
