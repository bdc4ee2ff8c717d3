// Package handle normalises the handles of the online store's content
// (collections, pages, blogs, articles, menus), as decisions part three's
// shared rules set them: 1-120 characters, Arabic letters allowed, NFKC,
// tatweel and tashkeel removed, spaces to '-', Latin lower case, unique per
// store and kind (the caller's constraint), percent-encoded in URLs. It is a
// package of its own so that its fuzz test links nothing but it (and
// storage/numerals, which reads the digits).
package handle

import (
	"errors"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/merchantsvc/svc/storage/numerals"
)

// MaxLength is the most characters (runes) a handle holds.
const MaxLength = 120

// Reasons Normalize refuses a handle, each a 422 code of the handle field.
var (
	// ErrBlank: nothing is left once the handle is normalised.
	ErrBlank = errors.New("blank")
	// ErrTooLong: more than MaxLength characters once normalised.
	ErrTooLong = errors.New("too_long")
	// ErrInvalid: a character other than a letter, a digit, '-' or '_'.
	ErrInvalid = errors.New("invalid")
)

// Normalize answers the stored form of a handle a merchant typed, or why it
// cannot be one. "  Summer Sale " and "summer-sale" are the same handle, as
// are "عـروض" and "عروض" (tatweel) and "عُرُوض" (tashkeel); Arabic-Indic and
// Persian digits become ASCII ones. Runs of spaces and '-' become one '-',
// and none is kept at either end.
func Normalize(typed string) (string, error) {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFKC.String(typed) {
		r = fold(r)
		switch {
		case r < 0:
			continue
		case r == '-' || unicode.IsSpace(r):
			dash = b.Len() > 0
			continue
		case !allowed(r):
			return "", ErrInvalid
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteRune(r)
	}
	h := b.String()
	switch {
	case h == "":
		return "", ErrBlank
	case utf8.RuneCountInString(h) > MaxLength:
		return "", ErrTooLong
	}
	return h, nil
}

// FromTitle derives a handle from a title when the merchant gives none, as
// Shopify does: what Normalize keeps, every other character a '-', cut to
// MaxLength. It answers "" when nothing of the title is usable, and the
// caller picks another (the kind and a number).
func FromTitle(title string) string {
	var b strings.Builder
	n, dash := 0, false
	for _, r := range norm.NFKC.String(title) {
		r = fold(r)
		if r < 0 {
			continue
		}
		if !allowed(r) || r == '-' {
			dash = n > 0
			continue
		}
		if n+2 > MaxLength && dash || n+1 > MaxLength {
			break
		}
		if dash {
			b.WriteByte('-')
			n++
			dash = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// Path is a handle as it stands in a URL path: percent-encoded.
func Path(h string) string { return url.PathEscape(h) }

// fold answers r as a handle keeps it: Latin lower case, Arabic-Indic and
// Persian digits as ASCII, and -1 for a tatweel or a tashkeel mark, which
// a handle drops.
func fold(r rune) rune {
	switch {
	case r >= 'A' && r <= 'Z':
		return r + ('a' - 'A')
	case numerals.ASCIIDigit(r) != r:
		return numerals.ASCIIDigit(r)
	case r == '\u0640', r >= '\u064B' && r <= '\u065F', r == '\u0670':
		return -1
	}
	if unicode.Is(unicode.Latin, r) {
		return unicode.ToLower(r)
	}
	return r
}

// allowed: letters of any script, ASCII digits, '-' and '_'.
func allowed(r rune) bool {
	return r == '-' || r == '_' || (r >= '0' && r <= '9') || unicode.IsLetter(r)
}
