package pages

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
)

// The pages' words: one list per language (words_ar.json, words_en.json),
// keyed by page ("imports.title", "returns.r_approved") but for the few
// every page shares ("lang", "dir", "other_lang" and its "other_lang_code").
// Templates say {{t "key"}}, Go code word(lang, "key"), and a page's script reads the
// words its template hands it with {{words "key" …}}. words_test.go keeps
// both lists on the same keys and every key a page uses in them.

//go:embed words_ar.json words_en.json
var wordFiles embed.FS

// languages are the pages' languages, Arabic first (the default).
var languages = []string{"ar", "en"}

// wordLists are the pages' words by language, then by key.
var wordLists = func() map[string]map[string]string {
	lists := map[string]map[string]string{}
	for _, lang := range languages {
		raw, err := wordFiles.ReadFile("words_" + lang + ".json")
		if err != nil {
			panic(err)
		}
		list := map[string]string{}
		if err := json.Unmarshal(raw, &list); err != nil {
			panic(fmt.Sprintf("words_%s.json: %v", lang, err))
		}
		lists[lang] = list
	}
	return lists
}()

// word is a key's word in lang; "" for a key the list lacks (a status the
// page has no word for).
func word(lang, key string) string { return wordLists[lang][key] }

// scriptWords are the words a page's script reads, keyed by the part of
// their key after the page's name ("deliveries.queued" is "queued"); a
// template writes them as JSON in <script type="application/json" id="words">.
func scriptWords(lang string, keys ...string) map[string]string {
	out := make(map[string]string, len(keys))
	for _, key := range keys {
		_, name, _ := strings.Cut(key, ".")
		out[name] = word(lang, key)
	}
	return out
}

// pageFuncs are the templates' functions in one language.
func pageFuncs(lang string) template.FuncMap {
	return template.FuncMap{
		"t":     func(key string) string { return word(lang, key) },
		"words": func(keys ...string) map[string]string { return scriptWords(lang, keys...) },
	}
}

// scopeWords says what a scope lets an app do, in the page's language.
func scopeWords(lang, scope string) string {
	domain, access, _ := strings.Cut(scope, ":")
	return word(lang, "scope."+access) + " " + word(lang, "scope."+domain)
}
