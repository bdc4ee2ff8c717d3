package theme

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"slices"
)

// The theme library (decisions §23): the built-in themes a store may
// switch its draft to. They share the default theme's schemas (one
// document format, as Shopify's Dawn family shares its schema), and each
// brings its own templates, stylesheet and defaults; a file a theme does
// not have is the default theme's.

// BuiltinText is a theme's text in both languages.
type BuiltinText struct {
	Ar string `json:"ar"`
	En string `json:"en"`
}

// Builtin is one theme of the library.
type Builtin struct {
	ID          string      `json:"id"`
	Name        BuiltinText `json:"name"`
	Description BuiltinText `json:"description"`
	// Files are the theme's own templates and assets, over the default's.
	Files fs.FS `json:"-"`
	// settings and index are its defaults over the default document's.
	Settings map[string]json.RawMessage `json:"settings"`
	Index    []string                   `json:"index"`
}

// DefaultID is the theme every store starts with.
const DefaultID = "souq"

//go:embed layali
var layaliFiles embed.FS

var builtins = func() []Builtin {
	souq := Builtin{ID: DefaultID, Name: BuiltinText{Ar: "سوق", En: "Souq"}, Files: DefaultFiles(),
		Description: BuiltinText{Ar: "فاتح وواضح: بحث في الأعلى، أزرار مستديرة وأربعة منتجات في الصف.",
			En: "Light and clear: search up front, rounded buttons and four products a row."}}
	out := []Builtin{souq}
	for _, dir := range []string{"layali"} {
		sub, _ := fs.Sub(layaliFiles, dir)
		raw, err := fs.ReadFile(sub, "theme.json")
		if err != nil {
			panic("theme " + dir + ": " + err.Error())
		}
		var b Builtin
		if err := json.Unmarshal(raw, &b); err != nil || b.ID != dir {
			panic("theme " + dir + ": theme.json is invalid")
		}
		b.Files = sub
		if problems, _ := Default().Validate(context.Background(), b.DefaultDocument(), noReferences{}); len(problems) > 0 {
			panic("theme " + dir + ": its defaults are invalid: " + problems[0].Pointer + " " + problems[0].Message)
		}
		out = append(out, b)
	}
	return out
}()

// Builtins lists the theme library, the default theme first.
func Builtins() []Builtin { return slices.Clone(builtins) }

// FindBuiltin finds a built-in theme by id.
func FindBuiltin(id string) (Builtin, bool) {
	for _, b := range builtins {
		if b.ID == id {
			return b, true
		}
	}
	return Builtin{}, false
}

// DefaultDocument is the document a store gets when it switches to the
// theme: the default theme's, with the theme's settings and home page
// order over it.
func (b Builtin) DefaultDocument() json.RawMessage {
	base := Default().DefaultDocument()
	if len(b.Settings) == 0 && len(b.Index) == 0 {
		return base
	}
	var doc struct {
		Settings  map[string]json.RawMessage `json:"settings"`
		Templates map[string]struct {
			Sections map[string]json.RawMessage `json:"sections"`
			Order    []string                   `json:"order"`
		} `json:"templates"`
	}
	_ = json.Unmarshal(base, &doc)
	for k, v := range b.Settings {
		doc.Settings[k] = v
	}
	if len(b.Index) > 0 {
		index := doc.Templates["index"]
		var order []string
		for _, id := range b.Index {
			if _, ok := index.Sections[id]; ok {
				order = append(order, id)
			}
		}
		index.Order = order
		for id := range index.Sections {
			if !slices.Contains(order, id) {
				delete(index.Sections, id)
			}
		}
		doc.Templates["index"] = index
	}
	out, _ := json.Marshal(doc)
	canonical, _, _ := Canonical(out)
	return canonical
}

// noReferences finds every reference: a built-in theme's defaults name no
// content of a store.
type noReferences struct{}

func (noReferences) Missing(context.Context, string, []string) (map[string]bool, error) {
	return nil, nil
}
