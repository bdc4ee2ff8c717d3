package richtext_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/merchantsvc/svc/storage/richtext"
)

// storeMedia is a policy whose only media is /media/s/1/large.webp.
var storeMedia = richtext.Policy{Image: func(src string) bool { return src == "/media/s/1/large.webp" }}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name, body     string
		code, pointer  string
		offsetFromBody string // the refused tag starts where this text does
	}{
		{name: "empty", body: ""},
		{name: "plain text", body: "نص عادي & more"},
		{name: "the theme's tags", body: `<h2>عنوان</h2><p><b>b</b> <strong>s</strong> <i>i</i> <em>e</em> <u>u</u> <span>s</span><br></p><ul><li>a</li></ul><ol><li>b</li></ol><h3>x</h3><h4>y</h4><blockquote>q</blockquote>`},
		{name: "links", body: `<p><a href="https://example.com/x">a</a> <a href="http://e.com">b</a> <a href="mailto:a@b.c">c</a> <a href="tel:+201001234567">d</a> <a href="/pages/about">e</a></p>`},
		{name: "the store's image", body: `<p><img src="/media/s/1/large.webp" alt="صورة"></p>`},
		{name: "self-closing image", body: `<img src="/media/s/1/large.webp"/>`},
		{name: "stray end tag", body: `</p><p>x</p>`},

		{name: "script at the top", body: `<p>a</p><script>alert(1)</script>`, code: "tag_not_allowed", pointer: "/script[1]", offsetFromBody: "<script>"},
		{name: "iframe nested", body: `<p>a</p><p><b>x</b><b><iframe src="https://e.com"></iframe></b></p>`, code: "tag_not_allowed", pointer: "/p[2]/b[2]/iframe[1]", offsetFromBody: "<iframe"},
		{name: "upper-case tag", body: `<P><SCRIPT>x</SCRIPT></P>`, code: "tag_not_allowed", pointer: "/p[1]/script[1]", offsetFromBody: "<SCRIPT>"},
		{name: "a positions after closed siblings", body: `<ul><li>a</li><li>b</li><li><style>x</style></li></ul>`, code: "tag_not_allowed", pointer: "/ul[1]/li[3]/style[1]", offsetFromBody: "<style>"},
		{name: "void elements open nothing", body: `<p>a<br>b<br><table></table></p>`, code: "tag_not_allowed", pointer: "/p[1]/table[1]", offsetFromBody: "<table>"},
		{name: "a lone end tag", body: `<p>x</p></div>`, code: "tag_not_allowed", pointer: "/div[1]", offsetFromBody: "</div>"},
		{name: "comment", body: `<p>a<!-- x --></p>`, code: "tag_not_allowed", pointer: "/p[1]/comment()[1]", offsetFromBody: "<!--"},
		{name: "doctype", body: `<!DOCTYPE html><p>a</p>`, code: "tag_not_allowed", pointer: "/doctype()[1]", offsetFromBody: "<!DOCTYPE"},
		{name: "svg", body: `<svg onload="x"></svg>`, code: "tag_not_allowed", pointer: "/svg[1]", offsetFromBody: "<svg"},
		{name: "event handler", body: `<p onclick="x">a</p>`, code: "attribute_not_allowed", pointer: "/p[1]/@onclick", offsetFromBody: "<p"},
		{name: "style attribute", body: `<p><span style="color:red">a</span></p>`, code: "attribute_not_allowed", pointer: "/p[1]/span[1]/@style", offsetFromBody: "<span"},
		{name: "target on a link", body: `<a href="/x" target="_blank">a</a>`, code: "attribute_not_allowed", pointer: "/a[1]/@target", offsetFromBody: "<a"},
		{name: "javascript link", body: `<p><a href="javascript:alert(1)">a</a></p>`, code: "unsafe_url", pointer: "/p[1]/a[1]/@href", offsetFromBody: "<a"},
		{name: "entity-hidden javascript link", body: `<a href="java&#x73;cript:alert(1)">a</a>`, code: "unsafe_url", pointer: "/a[1]/@href", offsetFromBody: "<a"},
		{name: "data link", body: `<a href="data:text/html,x">a</a>`, code: "unsafe_url", pointer: "/a[1]/@href", offsetFromBody: "<a"},
		{name: "protocol-relative link", body: `<a href="//evil.example/x">a</a>`, code: "unsafe_url", pointer: "/a[1]/@href", offsetFromBody: "<a"},
		{name: "outside image", body: `<p><img src="https://evil.example/x.png"></p>`, code: "image_not_allowed", pointer: "/p[1]/img[1]/@src", offsetFromBody: "<img"},
		{name: "another store's image", body: `<img src="/media/other/1/large.webp">`, code: "image_not_allowed", pointer: "/img[1]/@src", offsetFromBody: "<img"},
		{name: "image without src", body: `<img alt="x">`, code: "image_not_allowed", pointer: "/img[1]", offsetFromBody: "<img"},
		{name: "image with onerror", body: `<img src="/media/s/1/large.webp" onerror="x">`, code: "attribute_not_allowed", pointer: "/img[1]/@onerror", offsetFromBody: "<img"},
		{name: "too long", body: strings.Repeat("a", richtext.MaxBytes+1), code: "too_long", pointer: "/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := richtext.Check(c.body, storeMedia)
			if c.code == "" {
				require.Nil(t, p)
				return
			}
			require.NotNil(t, p, "the body must be refused")
			require.Equal(t, c.code, p.Code, p.Message)
			require.Equal(t, c.pointer, p.Pointer)
			if c.offsetFromBody != "" {
				require.Equal(t, strings.Index(c.body, c.offsetFromBody), p.Offset)
			}
			require.NotEmpty(t, p.Message)
		})
	}
}

// TestCheckRefusesEveryImageWithoutAMediaPolicy: no policy, no image.
func TestCheckRefusesEveryImageWithoutAMediaPolicy(t *testing.T) {
	p := richtext.Check(`<img src="/media/s/1/large.webp">`, richtext.Policy{})
	require.NotNil(t, p)
	require.Equal(t, "image_not_allowed", p.Code)
}

// allowedElements is what a browser may build from an accepted body: the
// allow-list and the elements every document has.
var allowedElements = []string{"html", "head", "body", "p", "ul", "ol", "li", "h2", "h3", "h4", "blockquote", "b", "strong", "i", "em", "u", "a", "span", "br", "img"}

// FuzzCheck holds that a body Check accepts, read by the HTML5 tree
// builder a browser uses (not the tokenizer Check reads), builds only
// allowed elements, carries only href, src and alt, and links nowhere
// but http(s), mailto:, tel: or a path on the store.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{"", "<p>x</p>", `<a href="/x">a</a>`, `<img src="/media/s/1/large.webp">`, "<script>x</script>",
		`<p><a href="javascript:x">a</a></p>`, "<svg><p>x</p></svg>", "<math><mi>x</mi></math>", "</br>", "<p><b>x</p></b>",
		`<a href=" JaVaScRiPt:x">a</a>`, "<noscript><p>x</p></noscript>", "<textarea><p>", "<p>a<!--b-->c</p>"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if richtext.Check(body, storeMedia) != nil {
			return
		}
		doc, err := html.Parse(strings.NewReader(body))
		if err != nil {
			t.Fatalf("accepted %q, which does not parse: %v", body, err)
		}
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			switch n.Type {
			case html.ElementNode:
				if !slices.Contains(allowedElements, n.Data) || n.Namespace != "" {
					t.Fatalf("accepted %q, which builds <%s> (namespace %q)", body, n.Data, n.Namespace)
				}
				for _, a := range n.Attr {
					if !slices.Contains([]string{"href", "src", "alt"}, a.Key) || a.Namespace != "" {
						t.Fatalf("accepted %q, which carries %s on <%s>", body, a.Key, n.Data)
					}
					if a.Key == "href" && !safeLink(a.Val) {
						t.Fatalf("accepted %q, which links to %q", body, a.Val)
					}
				}
			case html.CommentNode, html.DoctypeNode:
				t.Fatalf("accepted %q, which holds a comment or doctype", body)
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
	})
}

// safeLink is the link rule said independently of theme.LinkProblem.
func safeLink(href string) bool {
	h := strings.ToLower(strings.TrimSpace(href))
	if strings.HasPrefix(h, "/") {
		return !strings.HasPrefix(h, "//")
	}
	for _, scheme := range []string{"https://", "http://", "mailto:", "tel:"} {
		if strings.HasPrefix(h, scheme) {
			return true
		}
	}
	return false
}
