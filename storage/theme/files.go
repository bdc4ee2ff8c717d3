package theme

import "io/fs"

// DefaultFiles are the default theme's files: beside the schemas, the
// storefront's templates (sections/<type>.html beside schemas/sections/
// <type>.json, layout/*.html, templates/*.html) and assets/ (decisions §23).
func DefaultFiles() fs.FS {
	sub, _ := fs.Sub(defaultFiles, "default")
	return sub
}

// RichTextAllowed says whether a rich text value keeps to the allow-list
// of its setting type (inline: inline_richtext's tags only), so that a
// renderer may show it as markup; a value that does not is shown as text.
func RichTextAllowed(s string, inline bool) bool {
	allowed := blockTags
	if inline {
		allowed = inlineTags
	}
	return checkRichText(s, allowed) == nil
}
