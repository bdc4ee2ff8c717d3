// Package docs holds the repository's prose; its one test checks that every
// relative link in README.md and docs/ resolves.
package docs

import (
	"fmt"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestLinksResolve fails on a relative link in README.md or any .md under
// docs/ whose file does not exist, whose #anchor names no heading of its
// target, or that leaves the repository (GitHub cannot follow it, so
// ../shared/... is written as code, not linked). http(s) and mailto links are
// not fetched.
func TestLinksResolve(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md")}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{} // file → its anchors, read once
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(b))
		anchors[path] = a
		return a, nil
	}
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		for _, l := range links(string(b)) {
			if problem := checkLink(root, file, l.target, anchorsOf); problem != "" {
				t.Errorf("%s:%d: link %q: %s", rel, l.line, l.target, problem)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no links found: the reader is broken")
	}
}

// checkLink says what is wrong with target as written in file, or "".
func checkLink(root, file, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if target == "" {
		return "empty link"
	}
	lower := strings.ToLower(target)
	for _, scheme := range []string{"http://", "https://", "mailto:"} {
		if strings.HasPrefix(lower, scheme) {
			return ""
		}
	}
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		return "unknown scheme " + u.Scheme
	}
	path, anchor, _ := strings.Cut(target, "#")
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	dest := file
	if path != "" {
		if strings.HasPrefix(path, "/") {
			dest = filepath.Join(root, filepath.FromSlash(path))
		} else {
			dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		}
		if r, err := filepath.Rel(root, dest); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "leaves the repository (write it as code, not as a link)"
		}
		info, err := os.Stat(dest)
		if err != nil {
			return "no such file"
		}
		if info.IsDir() {
			if anchor != "" {
				return "an anchor on a directory"
			}
			return ""
		}
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(dest, ".md") {
		return "an anchor on a file that is not Markdown"
	}
	a, err := anchorsOf(dest)
	if err != nil {
		return err.Error()
	}
	if p, err := url.PathUnescape(anchor); err == nil {
		anchor = p
	}
	if !a[strings.ToLower(anchor)] {
		return fmt.Sprintf("no heading makes the anchor #%s", anchor)
	}
	return ""
}

type link struct {
	line   int
	target string
}

var (
	inlineLink    = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+"[^"]*")?\s*\)`)
	referenceLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	codeSpan      = regexp.MustCompile("`+[^`]*`+")
	htmlAnchor    = regexp.MustCompile(`<a\s[^>]*(?:name|id)="([^"]+)"`)
	headingLine   = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
)

// links lists the link targets of a Markdown text, outside code blocks and
// code spans.
func links(text string) []link {
	var out []link
	for i, line := range proseLines(text) {
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{i + 1, strings.Trim(m[1], "<>")})
		}
		if m := referenceLink.FindStringSubmatch(line); m != nil {
			out = append(out, link{i + 1, strings.Trim(m[1], "<>")})
		}
	}
	return out
}

// proseLines yields the lines of a Markdown text outside its fenced code
// blocks, with their index from 0.
func proseLines(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fence := ""
		for i, line := range strings.Split(text, "\n") {
			if f := fenceOf(line); f != "" {
				switch {
				case fence == "":
					fence = f
					continue
				case strings.HasPrefix(f, fence):
					fence = ""
					continue
				}
			}
			if fence != "" {
				continue
			}
			if !yield(i, line) {
				return
			}
		}
	}
}

// fenceOf is the fence a line opens or closes (``` or ~~~, any length), or "".
func fenceOf(line string) string {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return ""
	}
	for _, c := range []string{"`", "~"} {
		n := len(s) - len(strings.TrimLeft(s, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// headingAnchors lists the anchors GitHub gives a Markdown text's headings
// (and any <a name> or id), with -1, -2, … for repeated headings.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[strings.ToLower(m[1])] = true
		}
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := Slug(m[2])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

var linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// Slug is GitHub's anchor for a heading's text: the rendered text
// lowercased, every character but letters, marks, numbers, '_', '-' and
// spaces dropped (Arabic letters are letters, so they stay), and each space
// turned into '-'.
func Slug(heading string) string {
	heading = linkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Rotating the secrets key":                          "rotating-the-secrets-key",
		"3. Verify the signature — before anything else":    "3-verify-the-signature--before-anything-else",
		"Catalog list: `GET /products` page of 20 (`make`)": "catalog-list-get-products-page-of-20-make",
		"Fulfillment: shipments, waybills, COD (§12)":       "fulfillment-shipments-waybills-cod-12",
		"snake_case and kebab-case":                         "snake_case-and-kebab-case",
		"المستودع الرئيسي":                                  "المستودع-الرئيسي",
		"A [linked](x.md) heading":                          "a-linked-heading",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestLinksFindsBrokenOnes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.md")
	text := "# Top\n\n## Two words\n\n[ok](#two-words) [bad](#nope) [gone](missing.md) `[code](missing.md)`\n" +
		"```\n[fenced](missing.md)\n```\n[self](a.md#top) [out](../../x.md)\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	anchorsOf := func(p string) (map[string]bool, error) {
		b, err := os.ReadFile(p)
		return headingAnchors(string(b)), err
	}
	var problems []string
	for _, l := range links(text) {
		if p := checkLink(dir, file, l.target, anchorsOf); p != "" {
			problems = append(problems, l.target)
		}
	}
	if want := "#nope missing.md ../../x.md"; strings.Join(problems, " ") != want {
		t.Errorf("broken links found: %q, want %q", problems, want)
	}
}
