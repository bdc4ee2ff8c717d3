package theme

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/html"

	contenthandle "github.com/merchantsvc/svc/storage/handle"
)

// Problem is why a value does not fit its setting, with a stable code.
type Problem struct {
	Code    string
	Message string
}

func problem(code, format string, args ...any) *Problem {
	return &Problem{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Limits on text settings.
const (
	maxText      = 500
	maxLongText  = 20000
	maxListItems = 50
)

var (
	colorPattern = regexp.MustCompile(`^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$`)
	fontPattern  = regexp.MustCompile(`^[a-z0-9]+(?:_[a-z0-9]+)*_[nio][1-9]$`)
	handle       = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,99}$`)
	uuidPattern  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// Allowed tags of rich text: inline_richtext takes only inline ones.
var (
	inlineTags = []string{"b", "strong", "i", "em", "u", "a", "span", "br"}
	blockTags  = append([]string{"p", "ul", "ol", "li", "h2", "h3", "h4", "blockquote"}, inlineTags...)
)

// RichTextTags are the tags a richtext setting allows; page and article
// bodies (package richtext) allow these and img.
func RichTextTags() []string { return slices.Clone(blockTags) }

// LinkProblem says why href may not stand on a rich text link (nil when it
// may): http(s), mailto, tel and site-relative paths only.
func LinkProblem(href string) *Problem { return checkURL(href, false) }

// Reference kinds: what a picker's value must name in the store.
const (
	RefProduct    = "product"
	RefVariant    = "variant"
	RefCollection = "collection"
	RefPage       = "page"
	RefBlog       = "blog"
	RefMenu       = "menu"
	// RefImage is an image of the store's media library (decisions §22).
	RefImage = "image"
)

// referenceKind is what a picker setting points at, "" for other types.
func referenceKind(settingType string) string {
	switch settingType {
	case "product", "product_list":
		return RefProduct
	case "variant_picker":
		return RefVariant
	case "collection", "collection_list":
		return RefCollection
	case "page_picker":
		return RefPage
	case "blog_picker":
		return RefBlog
	case "link_list_picker":
		return RefMenu
	case "image_picker":
		return RefImage
	}
	return ""
}

func decodeValue(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// checkStatic checks a value against its setting without looking anything
// up: type, format, options, bounds. null clears any setting.
func checkStatic(s Setting, raw json.RawMessage) *Problem {
	v, err := decodeValue(raw)
	if err != nil {
		return problem("invalid_json", "is not JSON")
	}
	if v == nil {
		return nil
	}
	switch s.Type {
	case "header":
		return problem("no_value", "a header holds no value")
	case "text":
		return checkString(v, maxText)
	case "textarea":
		return checkString(v, maxLongText)
	case "inline_richtext":
		if p := checkString(v, maxText); p != nil {
			return p
		}
		return checkRichText(v.(string), inlineTags)
	case "richtext":
		if p := checkString(v, maxLongText); p != nil {
			return p
		}
		return checkRichText(v.(string), blockTags)
	case "number":
		n, ok := v.(json.Number)
		if !ok {
			return problem("invalid_type", "must be an integer")
		}
		if _, err := n.Int64(); err != nil {
			return problem("invalid_type", "must be an integer")
		}
	case "range":
		return checkRange(s, v)
	case "range_with_unit":
		obj, ok := v.(map[string]any)
		if !ok {
			return problem("invalid_type", "must be an object with value and unit")
		}
		for k := range obj {
			if k != "value" && k != "unit" {
				return problem("unknown_key", "has an unknown key %q", k)
			}
		}
		unit, _ := obj["unit"].(string)
		if !slices.Contains(s.Units, unit) {
			return problem("invalid_unit", "unit must be one of %s", strings.Join(s.Units, ", "))
		}
		return checkRange(s, obj["value"])
	case "select", "radio":
		str, ok := v.(string)
		if !ok {
			return problem("invalid_type", "must be a string")
		}
		if !slices.ContainsFunc(s.Options, func(o Option) bool { return o.Value == str }) {
			return problem("not_an_option", "must be one of the setting's options")
		}
	case "checkbox":
		if _, ok := v.(bool); !ok {
			return problem("invalid_type", "must be true or false")
		}
	case "color":
		str, ok := v.(string)
		if !ok || !colorPattern.MatchString(str) {
			return problem("invalid_color", "must be a hex color such as #1a7f5a")
		}
	case "color_scheme":
		str, ok := v.(string)
		if !ok || !handle.MatchString(str) {
			return problem("invalid_type", "must name a color scheme")
		}
	case "color_scheme_group":
		obj, ok := v.(map[string]any)
		if !ok || len(obj) == 0 {
			return problem("invalid_type", "must be an object of color schemes")
		}
		for scheme, colors := range obj {
			if !handle.MatchString(scheme) {
				return problem("invalid_key", "scheme id %q is not a handle", scheme)
			}
			m, ok := colors.(map[string]any)
			if !ok {
				return problem("invalid_type", "scheme %s must be an object", scheme)
			}
			for id, c := range m {
				def, ok := findSetting(s.Definition, id)
				if !ok {
					return problem("unknown_key", "scheme %s has an unknown setting %q", scheme, id)
				}
				raw, _ := json.Marshal(c)
				if p := checkStatic(def, raw); p != nil {
					return problem(p.Code, "scheme %s %s: %s", scheme, id, p.Message)
				}
			}
		}
	case "font_picker":
		str, ok := v.(string)
		if !ok || !fontPattern.MatchString(str) {
			return problem("invalid_font", "must be a font handle such as cairo_n7")
		}
	case "image_picker":
		// A media id; an https URL or store path only where the store's
		// documents held it before media ids (the reference check decides).
		str, ok := v.(string)
		if !ok {
			return problem("invalid_type", "must be the id of an image of the store's media")
		}
		if uuidPattern.MatchString(str) {
			return nil
		}
		return checkURL(str, true)
	case "url":
		str, ok := v.(string)
		if !ok {
			return problem("invalid_type", "must be a string")
		}
		return checkURL(str, false)
	case "video_url":
		str, ok := v.(string)
		if !ok {
			return problem("invalid_type", "must be a string")
		}
		if p := checkURL(str, false); p != nil {
			return p
		}
		u, _ := url.Parse(str)
		host := strings.TrimPrefix(u.Hostname(), "www.")
		if u.Scheme != "https" || !(host == "youtube.com" || host == "youtu.be" || host == "vimeo.com" || strings.HasSuffix(u.Path, ".mp4")) {
			return problem("invalid_video", "must be an https YouTube or Vimeo page, or an mp4 file")
		}
	case "link_list_picker", "page_picker", "blog_picker":
		// Content handles follow decisions part three (Arabic letters
		// allowed, up to 120), not the scheme ids' ASCII pattern.
		str, ok := v.(string)
		if normalised, err := contenthandle.Normalize(str); !ok || err != nil || normalised != str {
			return problem("invalid_reference", "must be a handle")
		}
	case "product", "collection", "variant_picker":
		str, ok := v.(string)
		if !ok || !uuidPattern.MatchString(str) {
			return problem("invalid_reference", "must be an id")
		}
	case "product_list", "collection_list":
		list, ok := v.([]any)
		if !ok {
			return problem("invalid_type", "must be a list of ids")
		}
		limit := maxListItems
		if s.Limit > 0 && s.Limit < limit {
			limit = s.Limit
		}
		if len(list) > limit {
			return problem("too_many", "must list at most %d", limit)
		}
		seen := map[string]bool{}
		for _, item := range list {
			str, ok := item.(string)
			if !ok || !uuidPattern.MatchString(str) {
				return problem("invalid_reference", "every item must be an id")
			}
			if seen[str] {
				return problem("duplicate", "lists %s twice", str)
			}
			seen[str] = true
		}
	}
	return nil
}

func checkString(v any, maxLen int) *Problem {
	str, ok := v.(string)
	if !ok {
		return problem("invalid_type", "must be a string")
	}
	if len([]rune(str)) > maxLen {
		return problem("too_long", "must be at most %d characters", maxLen)
	}
	return nil
}

func checkRange(s Setting, v any) *Problem {
	n, ok := v.(json.Number)
	if !ok {
		return problem("invalid_type", "must be a number")
	}
	f, err := n.Float64()
	if err != nil {
		return problem("invalid_type", "must be a number")
	}
	if f < *s.Min || f > *s.Max {
		return problem("out_of_range", "must be between %g and %g", *s.Min, *s.Max)
	}
	steps := (f - *s.Min) / *s.Step
	if math.Abs(steps-math.Round(steps)) > 1e-9 {
		return problem("off_step", "must be %g plus a multiple of %g", *s.Min, *s.Step)
	}
	return nil
}

// SafePath reports whether raw is a path on this site and nothing else: one
// leading slash, no control character and no backslash (browsers read
// "/\evil.example" and "/<TAB>/evil.example" as another host), and it parses
// with no scheme, host or user.
func SafePath(raw string) bool {
	if !strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "//") || strings.ContainsRune(raw, '\\') ||
		strings.ContainsFunc(raw, unicode.IsControl) {
		return false
	}
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil && strings.HasPrefix(u.Path, "/") && !strings.HasPrefix(u.Path, "//")
}

// checkURL allows http(s), mailto, tel and site-relative paths; never
// javascript: or data:.
func checkURL(raw string, imageOnly bool) *Problem {
	if len(raw) > 2048 {
		return problem("too_long", "must be at most 2048 characters")
	}
	if strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "\\") {
		if SafePath(raw) {
			return nil
		}
		return problem("unsafe_url", "must be a path on the store (no second slash, backslash or control character)")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return problem("invalid_url", "is not a URL")
	}
	allowed := []string{"https", "http", "mailto", "tel"}
	if imageOnly {
		allowed = []string{"https"}
	}
	if !slices.Contains(allowed, strings.ToLower(u.Scheme)) {
		return problem("unsafe_url", "must be an %s URL or a path on the store", strings.Join(allowed, ", "))
	}
	if (u.Scheme == "https" || u.Scheme == "http") && u.Host == "" {
		return problem("invalid_url", "needs a host")
	}
	return nil
}

// checkRichText allows only the given tags, and on links only an href that
// passes checkURL.
func checkRichText(s string, allowed []string) *Problem {
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return nil
			}
			return problem("invalid_html", "is not valid HTML")
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if !slices.Contains(allowed, string(name)) {
				return problem("tag_not_allowed", "may not contain <%s>", name)
			}
			for hasAttr {
				var key, val []byte
				key, val, hasAttr = z.TagAttr()
				if string(name) != "a" || string(key) != "href" {
					return problem("attribute_not_allowed", "may not use the attribute %s on <%s>", key, name)
				}
				if p := checkURL(string(val), false); p != nil {
					return p
				}
			}
		case html.CommentToken, html.DoctypeToken:
			return problem("tag_not_allowed", "may not contain comments or doctypes")
		}
	}
}
