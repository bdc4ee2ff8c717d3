package pages

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template/parse"

	"github.com/stretchr/testify/require"
)

// Both word lists have the same keys, none of them empty.
func TestWordListsHaveTheSameKeys(t *testing.T) {
	ar, en := wordLists["ar"], wordLists["en"]
	require.NotEmpty(t, ar)
	require.ElementsMatch(t, slices.Collect(maps.Keys(ar)), slices.Collect(maps.Keys(en)), "words_ar.json and words_en.json")
	for _, lang := range languages {
		for key, w := range wordLists[lang] {
			require.NotEmpty(t, strings.TrimSpace(w), "words_%s.json: %s", lang, key)
		}
	}
}

// Every key a template asks for ({{t "key"}}, {{words "key" …}}) and every
// key the pages' Go code names is in the word lists. A key the Go code
// builds ("returns.r_"+status) must start at least one key.
func TestEveryKeyUsedIsInTheWordLists(t *testing.T) {
	list := wordLists["en"]
	used := templateKeys(t)
	require.NotEmpty(t, used)
	for _, key := range used {
		_, ok := list[key]
		require.True(t, ok, "a template asks for %q, which the word lists lack", key)
	}
	exact, prefixes := goKeys(t, list)
	require.NotEmpty(t, exact)
	for _, key := range exact {
		_, ok := list[key]
		require.True(t, ok, "the Go code names %q, which the word lists lack", key)
	}
	for _, prefix := range prefixes {
		require.True(t, slices.ContainsFunc(slices.Collect(maps.Keys(list)), func(k string) bool { return strings.HasPrefix(k, prefix) }),
			"the Go code builds keys from %q, which starts none", prefix)
	}
}

// templateKeys are the string arguments of every t and words call in the
// templates; a call with anything but strings fails the test (its key
// could not be checked).
func templateKeys(t *testing.T) []string {
	var keys []string
	var walk func(name string, n parse.Node)
	walk = func(name string, n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n != nil {
				for _, c := range n.Nodes {
					walk(name, c)
				}
			}
		case *parse.ActionNode:
			walk(name, n.Pipe)
		case *parse.PipeNode:
			if n != nil {
				for _, c := range n.Cmds {
					walk(name, c)
				}
			}
		case *parse.CommandNode:
			if id, ok := n.Args[0].(*parse.IdentifierNode); ok && (id.Ident == "t" || id.Ident == "words") {
				for _, arg := range n.Args[1:] {
					s, ok := arg.(*parse.StringNode)
					require.True(t, ok, "%s: %s takes keys as strings: %s", name, id.Ident, n)
					keys = append(keys, s.Text)
				}
			}
			for _, arg := range n.Args {
				walk(name, arg)
			}
		case *parse.IfNode:
			walk(name, &n.BranchNode)
		case *parse.RangeNode:
			walk(name, &n.BranchNode)
		case *parse.WithNode:
			walk(name, &n.BranchNode)
		case *parse.BranchNode:
			walk(name, n.Pipe)
			walk(name, n.List)
			walk(name, n.ElseList)
		case *parse.TemplateNode:
			walk(name, n.Pipe)
		}
	}
	for _, tpl := range pageTemplates["ar"].Templates() {
		if tpl.Tree != nil {
			walk(tpl.Name(), tpl.Tree.Root)
		}
	}
	return keys
}

// goKeys are the string literals of the package's Go code that name a
// page's words ("imports.title": a page of the lists, a dot, a name, but
// not a template's file name); those ending in "_" are prefixes the code
// completes.
func goKeys(t *testing.T, list map[string]string) (exact, prefixes []string) {
	pages := map[string]bool{}
	for key := range list {
		if page, _, ok := strings.Cut(key, "."); ok {
			pages[page] = true
		}
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			page, rest, ok := strings.Cut(s, ".")
			if !ok || !pages[page] || strings.ContainsAny(rest, " ./") || rest == "html" { // analytics.html is a template
				return true
			}
			if rest == "" || strings.HasSuffix(rest, "_") {
				prefixes = append(prefixes, s)
			} else {
				exact = append(exact, s)
			}
			return true
		})
	}
	return exact, prefixes
}

// A page's script reads only words its template hands it ({{words …}}):
// words.name, or words["prefix_" + …] for one of several.
func TestScriptsReadTheWordsTheirTemplateHands(t *testing.T) {
	scriptSrc := regexp.MustCompile(`<script type="module" src="/assets/([^"]+)"`)
	wordsCall := regexp.MustCompile(`\{\{words ([^}]*)\}\}`)
	quoted := regexp.MustCompile(`"([^"]+)"`)
	read := regexp.MustCompile(`\bwords(?:\.(\w+)|\["(\w+)")`)
	sibling := regexp.MustCompile(`from "\./([\w.]+\.js)"`)
	templates, err := filepath.Glob("*.html")
	require.NoError(t, err)
	for _, name := range templates {
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		handed := map[string]bool{}
		for _, call := range wordsCall.FindAllStringSubmatch(string(src), -1) {
			for _, key := range quoted.FindAllStringSubmatch(call[1], -1) {
				_, short, _ := strings.Cut(key[1], ".")
				handed[short] = true
			}
		}
		for _, script := range scriptSrc.FindAllStringSubmatch(string(src), -1) {
			js, err := os.ReadFile(filepath.Join("assets", script[1]))
			require.NoError(t, err)
			// The modules it imports from beside it read the same words.
			for _, imported := range sibling.FindAllStringSubmatch(string(js), -1) {
				more, err := os.ReadFile(filepath.Join("assets", filepath.Dir(script[1]), imported[1]))
				require.NoError(t, err)
				js = append(js, more...)
			}
			for _, m := range read.FindAllStringSubmatch(string(js), -1) {
				if m[1] != "" {
					require.True(t, handed[m[1]], "%s reads words.%s, which %s does not hand it", script[1], m[1], name)
					continue
				}
				require.True(t, slices.ContainsFunc(slices.Collect(maps.Keys(handed)), func(k string) bool { return strings.HasPrefix(k, m[2]) }),
					"%s reads words[%q…], which %s does not hand it", script[1], m[2], name)
			}
		}
	}
}
