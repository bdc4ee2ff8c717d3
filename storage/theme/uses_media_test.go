package theme_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage/theme"
)

// usesOf is where doc's pickers of kind name id.
func usesOf(doc, kind, id string) []string {
	var pointers []string
	for _, u := range theme.Default().Uses(json.RawMessage(doc), kind) {
		if u.ID == id {
			pointers = append(pointers, u.Pointer)
		}
	}
	return pointers
}

// Uses finds a media id wherever an image_picker names it (global settings,
// a section, a block) and nowhere else: not in a text setting holding the
// same string, not for another kind.
func TestUsesFindsEveryPickerNamingTheID(t *testing.T) {
	doc := `{"settings": {"favicon": "` + productA + `"},
	  "templates": {"index": {"order": ["hero", "show", "film"], "sections": {
	    "hero": {"type": "image-banner", "settings": {"heading": "` + productA + `"}},
	    "show": {"type": "slideshow", "block_order": ["s1", "s2"], "blocks": {
	      "s1": {"type": "slide", "settings": {"image": "` + productA + `"}},
	      "s2": {"type": "slide", "settings": {"image": "` + productB + `"}}}},
	    "film": {"type": "video", "settings": {"cover": "` + productA + `"}}}}}}`
	require.ElementsMatch(t, []string{"/settings/favicon", "/templates/index/sections/show/blocks/s1/settings/image",
		"/templates/index/sections/film/settings/cover"}, usesOf(doc, theme.RefImage, productA))
	require.Empty(t, usesOf(doc, theme.RefProduct, productA))
}
