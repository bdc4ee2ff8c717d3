// Package richtext checks the HTML bodies of pages and articles (decisions
// §22): the theme's richtext allow-list (storage/theme), plus img whose src
// is one of the store's media, and links only to http(s), mailto:, tel: or
// a path on the store. A body is taken as it is or refused with a pointer to
// the first place that breaks the rule: nothing is stripped in silence,
// because a merchant who pasted an embed should hear that it will not show
// rather than find it gone. It reads the HTML with golang.org/x/net/html's
// tokenizer, the one a browser-grade parser is built on, never with regular
// expressions. It is a package of its own so that its fuzz test links
// nothing but it and the theme's rules.
package richtext

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/net/html"

	"github.com/merchantsvc/svc/storage/theme"
)

// MaxBytes is the most a body holds, in each language (256 KiB).
const MaxBytes = 256 << 10

// Problem is why a body is refused and where.
type Problem struct {
	// Code is the 422 code of the body field: tag_not_allowed,
	// attribute_not_allowed, unsafe_url, invalid_url, image_not_allowed,
	// invalid_html or too_long.
	Code string
	// Message says it in English.
	Message string
	// Pointer is where in the HTML, as a path of elements with their
	// 1-based position among same-named siblings, XPath style:
	// "/p[2]/a[1]/@href" is the href of the first link of the second
	// paragraph, "/script[1]" a script at the top, "/p[1]/comment()[1]" a
	// comment inside the first paragraph.
	Pointer string
	// Offset is the byte offset in the body where the offending tag starts.
	Offset int
}

func (p *Problem) Error() string { return fmt.Sprintf("%s at %s: %s", p.Code, p.Pointer, p.Message) }

// Policy is what a body's images may be.
type Policy struct {
	// Image says whether src names one of the store's media. Nil refuses
	// every img.
	Image func(src string) bool
}

// voids are the allowed elements that never hold content, so they open no
// level of the pointer.
var voids = []string{"br", "img"}

var tags = append(theme.RichTextTags(), "img")

// frame is one open element while the body is read: its name, its
// position among its parent's children of that name, and how many children
// of each name it has had so far.
type frame struct {
	name     string
	index    int
	children map[string]int
}

type reader struct {
	stack []frame
}

// child counts a new child of the innermost open element and answers its
// position and pointer.
func (r *reader) child(name string) (int, string) {
	top := &r.stack[len(r.stack)-1]
	top.children[name]++
	var b strings.Builder
	for _, f := range r.stack[1:] {
		fmt.Fprintf(&b, "/%s[%d]", f.name, f.index)
	}
	fmt.Fprintf(&b, "/%s[%d]", name, top.children[name])
	return top.children[name], b.String()
}

// pointer is child's pointer alone.
func (r *reader) pointer(name string) string {
	_, p := r.child(name)
	return p
}

// Check answers nil when body may be kept as it is, else the first thing
// that breaks the rules and where.
func Check(body string, p Policy) *Problem {
	if len(body) > MaxBytes {
		return &Problem{Code: "too_long", Message: fmt.Sprintf("must be at most %d bytes", MaxBytes), Pointer: "/", Offset: MaxBytes}
	}
	r := &reader{stack: []frame{{children: map[string]int{}}}}
	z := html.NewTokenizer(strings.NewReader(body))
	offset := 0
	for {
		tt := z.Next()
		at := offset
		offset += len(z.Raw())
		switch tt {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return nil
			}
			return &Problem{Code: "invalid_html", Message: "is not HTML that can be read", Pointer: "/", Offset: at}
		case html.CommentToken, html.DoctypeToken:
			kind := "comment()"
			if tt == html.DoctypeToken {
				kind = "doctype()"
			}
			return &Problem{Code: "tag_not_allowed", Message: "may not contain comments or doctypes", Pointer: r.pointer(kind), Offset: at}
		case html.StartTagToken, html.SelfClosingTagToken:
			if prob := r.open(z, tt, p, at); prob != nil {
				return prob
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if !slices.Contains(tags, string(name)) {
				return &Problem{Code: "tag_not_allowed", Message: fmt.Sprintf("may not contain </%s>", name), Pointer: r.pointer(string(name)), Offset: at}
			}
			r.close(string(name))
		}
	}
}

// open checks a start tag and its attributes, and enters it unless it is
// void or self-closing.
func (r *reader) open(z *html.Tokenizer, tt html.TokenType, p Policy, at int) *Problem {
	raw, hasAttr := z.TagName()
	name := string(raw)
	index, pointer := r.child(name)
	if !slices.Contains(tags, name) {
		return &Problem{Code: "tag_not_allowed", Message: fmt.Sprintf("may not contain <%s>", name), Pointer: pointer, Offset: at}
	}
	src := false
	for hasAttr {
		var key, val []byte
		key, val, hasAttr = z.TagAttr()
		attr := pointer + "/@" + string(key)
		switch {
		case name == "a" && string(key) == "href":
			if prob := theme.LinkProblem(string(val)); prob != nil {
				return &Problem{Code: prob.Code, Message: "link " + prob.Message, Pointer: attr, Offset: at}
			}
		case name == "img" && string(key) == "alt":
		case name == "img" && string(key) == "src":
			src = true
			if p.Image == nil || !p.Image(string(val)) {
				return &Problem{Code: "image_not_allowed", Message: "an image must be one of the store's media", Pointer: attr, Offset: at}
			}
		default:
			return &Problem{Code: "attribute_not_allowed", Message: fmt.Sprintf("may not use the attribute %s on <%s>", key, name), Pointer: attr, Offset: at}
		}
	}
	if name == "img" && !src {
		return &Problem{Code: "image_not_allowed", Message: "an image needs a src from the store's media", Pointer: pointer, Offset: at}
	}
	if tt == html.StartTagToken && !slices.Contains(voids, name) {
		r.stack = append(r.stack, frame{name: name, index: index, children: map[string]int{}})
	}
	return nil
}

// close leaves the innermost open element of that name and every element
// opened inside it; an end tag nothing opened changes nothing.
func (r *reader) close(name string) {
	for i := len(r.stack) - 1; i > 0; i-- {
		if r.stack[i].name == name {
			r.stack = r.stack[:i]
			return
		}
	}
}
