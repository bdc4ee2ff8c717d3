package theme_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage/theme"
)

// fakeRefs knows which references exist.
type fakeRefs map[string][]string

func (f fakeRefs) Missing(_ context.Context, kind string, ids []string) (map[string]bool, error) {
	missing := map[string]bool{}
	for _, id := range ids {
		found := false
		for _, have := range f[kind] {
			found = found || have == id
		}
		missing[id] = !found
	}
	return missing, nil
}

const (
	productA = "0192f3a4-5b6c-7d8e-9f01-23456789abcd"
	productB = "0192f3a4-5b6c-7d8e-9f01-23456789abce"
	unknown  = "0192f3a4-5b6c-7d8e-9f01-000000000000"
)

var refs = fakeRefs{theme.RefProduct: {productA, productB}, theme.RefVariant: {productA}, theme.RefCollection: {productA},
	theme.RefPage: {"about"}, theme.RefBlog: {"news"}, theme.RefMenu: {"main-menu"},
	// The store's media, and values its documents held before image_picker named media.
	theme.RefImage: {productA, "https://cdn.example.com/a.webp", "/media/s/i/large.webp"}}

// oneOfEach is a theme with a setting of every type, id = type.
var oneOfEach = func() *theme.Theme {
	schema := `{"name":"t","settings":[
	{"type":"text","id":"text","label":"x"},
	{"type":"inline_richtext","id":"inline_richtext","label":"x"},
	{"type":"richtext","id":"richtext","label":"x"},
	{"type":"textarea","id":"textarea","label":"x"},
	{"type":"number","id":"number","label":"x"},
	{"type":"range","id":"range","label":"x","min":10,"max":50,"step":5},
	{"type":"range_with_unit","id":"range_with_unit","label":"x","min":0,"max":100,"step":10,"units":["px","rem"]},
	{"type":"select","id":"select","label":"x","options":[{"value":"a","label":"A"},{"value":"b","label":"B"}]},
	{"type":"radio","id":"radio","label":"x","options":[{"value":"ltr","label":"L"},{"value":"rtl","label":"R"}]},
	{"type":"checkbox","id":"checkbox","label":"x"},
	{"type":"color","id":"color","label":"x"},
	{"type":"color_scheme_group","id":"color_scheme_group","label":"x","definition":[{"type":"color","id":"bg","label":"x"}],"default":{"light":{"bg":"#fff"}}},
	{"type":"color_scheme","id":"color_scheme","label":"x"},
	{"type":"font_picker","id":"font_picker","label":"x"},
	{"type":"image_picker","id":"image_picker","label":"x"},
	{"type":"video_url","id":"video_url","label":"x"},
	{"type":"url","id":"url","label":"x"},
	{"type":"link_list_picker","id":"link_list_picker","label":"x"},
	{"type":"page_picker","id":"page_picker","label":"x"},
	{"type":"blog_picker","id":"blog_picker","label":"x"},
	{"type":"product","id":"product","label":"x"},
	{"type":"product_list","id":"product_list","label":"x","limit":2},
	{"type":"collection","id":"collection","label":"x"},
	{"type":"collection_list","id":"collection_list","label":"x"},
	{"type":"variant_picker","id":"variant_picker","label":"x"},
	{"type":"header","id":"header","label":"x"}]}`
	th, err := theme.Load(fstest.MapFS{"settings_schema.json": {Data: []byte(schema)}})
	if err != nil {
		panic(err)
	}
	return th
}()

func codesFor(t *testing.T, th *theme.Theme, doc string) []string {
	errs, err := th.Validate(context.Background(), json.RawMessage(doc), refs)
	require.NoError(t, err)
	var codes []string
	for _, e := range errs {
		codes = append(codes, e.Code)
	}
	return codes
}

// Every setting type, valid values and each kind of invalid one.
func TestSettingValues(t *testing.T) {
	for _, tc := range []struct {
		setting, value, code string // code "" = valid
	}{
		{"text", `"مرحبا"`, ""}, {"text", `5`, "invalid_type"}, {"text", `"` + string(make([]byte, 0)) + `"`, ""},
		{"inline_richtext", `"<b>bold</b> and <a href=\"/collections/new\">link</a>"`, ""},
		{"inline_richtext", `"<p>block</p>"`, "tag_not_allowed"},
		{"inline_richtext", `"<a href=\"javascript:alert(1)\">x</a>"`, "unsafe_url"},
		{"inline_richtext", `"<b onclick=\"x()\">x</b>"`, "attribute_not_allowed"},
		{"richtext", `"<p>one</p><ul><li>two</li></ul>"`, ""},
		{"richtext", `"<script>alert(1)</script>"`, "tag_not_allowed"},
		{"richtext", `"<img src=x>"`, "tag_not_allowed"},
		{"textarea", `"line one\nline two"`, ""}, {"textarea", `["a"]`, "invalid_type"},
		{"number", `12`, ""}, {"number", `-3`, ""}, {"number", `1.5`, "invalid_type"}, {"number", `"12"`, "invalid_type"},
		{"range", `10`, ""}, {"range", `35`, ""}, {"range", `50`, ""},
		{"range", `5`, "out_of_range"}, {"range", `55`, "out_of_range"}, {"range", `12`, "off_step"}, {"range", `"20"`, "invalid_type"},
		{"range_with_unit", `{"value": 30, "unit": "px"}`, ""},
		{"range_with_unit", `{"value": 30, "unit": "em"}`, "invalid_unit"},
		{"range_with_unit", `{"value": 35, "unit": "rem"}`, "off_step"},
		{"range_with_unit", `{"value": 300, "unit": "rem"}`, "out_of_range"},
		{"range_with_unit", `{"value": 30, "unit": "px", "extra": 1}`, "unknown_key"},
		{"range_with_unit", `30`, "invalid_type"},
		{"select", `"a"`, ""}, {"select", `"c"`, "not_an_option"}, {"select", `1`, "invalid_type"},
		{"radio", `"rtl"`, ""}, {"radio", `"up"`, "not_an_option"},
		{"checkbox", `true`, ""}, {"checkbox", `"true"`, "invalid_type"},
		{"color", `"#1a7f5a"`, ""}, {"color", `"#fff"`, ""}, {"color", `"#1a7f5a80"`, ""}, {"color", `"green"`, "invalid_color"}, {"color", `"#12345"`, "invalid_color"},
		{"color_scheme_group", `{"dark": {"bg": "#000000"}}`, ""},
		{"color_scheme_group", `{"dark": {"bg": "black"}}`, "invalid_color"},
		{"color_scheme_group", `{"dark": {"fg": "#000"}}`, "unknown_key"},
		{"color_scheme", `"light"`, ""}, {"color_scheme", `"neon"`, "unknown_scheme"}, {"color_scheme", `7`, "invalid_type"},
		{"font_picker", `"cairo_n7"`, ""}, {"font_picker", `"noto_sans_arabic_i4"`, ""}, {"font_picker", `"Cairo Bold"`, "invalid_font"},
		{"image_picker", `"` + productA + `"`, ""}, {"image_picker", `"` + unknown + `"`, "not_found"}, {"image_picker", `7`, "invalid_type"},
		{"image_picker", `"https://cdn.example.com/a.webp"`, ""}, {"image_picker", `"/media/s/i/large.webp"`, ""},
		{"image_picker", `"https://cdn.example.com/new.webp"`, "not_found"},
		{"image_picker", `"data:image/png;base64,AAAA"`, "unsafe_url"}, {"image_picker", `"http://cdn.example.com/a.png"`, "unsafe_url"},
		{"video_url", `"https://www.youtube.com/watch?v=x"`, ""}, {"video_url", `"https://vimeo.com/1"`, ""},
		{"video_url", `"https://cdn.example.com/v.mp4"`, ""}, {"video_url", `"https://example.com/page"`, "invalid_video"},
		{"video_url", `"javascript:alert(1)"`, "unsafe_url"},
		{"url", `"https://example.com"`, ""}, {"url", `"/pages/about"`, ""}, {"url", `"mailto:hi@example.com"`, ""}, {"url", `"tel:+201001234567"`, ""},
		{"url", `"javascript:alert(1)"`, "unsafe_url"}, {"url", `"JavaScript:alert(1)"`, "unsafe_url"}, {"url", `"data:text/html,x"`, "unsafe_url"},
		{"url", `"//evil.example.com"`, "unsafe_url"}, {"url", `"https://"`, "invalid_url"},
		{"url", `"/\\evil.example.com"`, "unsafe_url"}, {"url", `"/\t/evil.example.com"`, "unsafe_url"}, {"url", `"\\\\evil.example.com"`, "unsafe_url"},
		{"url", `"/collections/sale?page=2"`, ""},
		{"link_list_picker", `"main-menu"`, ""}, {"link_list_picker", `"no-such-menu"`, "not_found"}, {"link_list_picker", `"Main Menu"`, "invalid_reference"},
		{"page_picker", `"about"`, ""}, {"page_picker", `"contact"`, "not_found"},
		{"blog_picker", `"news"`, ""}, {"blog_picker", `"journal"`, "not_found"},
		{"product", `"` + productA + `"`, ""}, {"product", `"` + unknown + `"`, "not_found"}, {"product", `"abc"`, "invalid_reference"},
		{"product_list", `["` + productA + `","` + productB + `"]`, ""},
		{"product_list", `["` + productA + `","` + productB + `","` + unknown + `"]`, "too_many"},
		{"product_list", `["` + productA + `","` + productA + `"]`, "duplicate"},
		{"product_list", `["` + unknown + `"]`, "not_found"}, {"product_list", `"` + productA + `"`, "invalid_type"},
		{"collection", `"` + productA + `"`, ""}, {"collection", `"` + unknown + `"`, "not_found"},
		{"collection_list", `["` + productA + `"]`, ""}, {"collection_list", `["` + unknown + `"]`, "not_found"},
		{"variant_picker", `"` + productA + `"`, ""}, {"variant_picker", `"` + unknown + `"`, "not_found"},
		{"header", `"anything"`, "no_value"},
		{"text", `null`, ""}, {"product", `null`, ""}, {"select", `null`, ""},
	} {
		t.Run(tc.setting+" "+tc.value, func(t *testing.T) {
			codes := codesFor(t, oneOfEach, `{"settings": {"`+tc.setting+`": `+tc.value+`}}`)
			if tc.code == "" {
				require.Empty(t, codes)
				return
			}
			require.Equal(t, []string{tc.code}, codes)
		})
	}
}

func TestCollectionListCapsAtFifty(t *testing.T) {
	ids := `[`
	for i := range 51 {
		if i > 0 {
			ids += ","
		}
		ids += `"` + productA[:len(productA)-3] + string(rune('a'+i/26)) + string(rune('a'+i%26)) + `a"`
	}
	ids += `]`
	require.Equal(t, []string{"too_many"}, codesFor(t, oneOfEach, `{"settings": {"collection_list": `+ids+`}}`))
}

// Structure: templates, sections, blocks, orders, limits — every error
// with its pointer and ids.
func TestDocumentStructure(t *testing.T) {
	th := theme.Default()
	valid := th.DefaultDocument()
	errs, err := th.Validate(context.Background(), valid, refs)
	require.NoError(t, err)
	require.Empty(t, errs, "the default document is valid")

	bad := `{"settings": {"body_scale": 103, "nope": 1},
	  "colour": 1,
	  "templates": {"home": {}, "index": {"sections": {
	    "hero": {"type": "slideshow", "settings": {"height": "huge", "speed": 4, "autoplay": false},
	      "blocks": {"s1": {"type": "slide"}, "s2": {"type": "slide"}, "s3": {"type": "slide"}, "s4": {"type": "slide"}, "s5": {"type": "slide"}, "s6": {"type": "slide"}, "x": {"type": "ghost"}},
	      "block_order": ["s1", "s2", "s3", "s4", "s5", "s6", "s7"]},
	    "bad id!": {"type": "rich-text"},
	    "mystery": {"type": "carousel"}},
	    "order": ["hero", "hero"]}}}`
	errs, err = th.Validate(context.Background(), json.RawMessage(bad), refs)
	require.NoError(t, err)
	byPointer := map[string]string{}
	for _, e := range errs {
		byPointer[e.Pointer] = e.Code
	}
	require.Equal(t, "off_step", byPointer["/settings/body_scale"])
	require.Equal(t, "unknown_setting", byPointer["/settings/nope"])
	require.Equal(t, "unknown_key", byPointer["/colour"])
	require.Equal(t, "unknown_key", byPointer["/templates/home"])
	require.Equal(t, "not_an_option", byPointer["/templates/index/sections/hero/settings/height"])
	require.Equal(t, "off_step", byPointer["/templates/index/sections/hero/settings/speed"], "a value hidden by visible_if is still checked")
	require.Equal(t, "block_limit", byPointer["/templates/index/sections/hero/blocks/s6"])
	require.Equal(t, "unknown_block_type", byPointer["/templates/index/sections/hero/blocks/x/type"])
	require.Equal(t, "order_mismatch", byPointer["/templates/index/sections/hero/block_order/6"])
	require.Equal(t, "invalid_id", byPointer["/templates/index/sections/bad id!"])
	require.Equal(t, "unknown_section_type", byPointer["/templates/index/sections/mystery/type"])
	require.Equal(t, "order_mismatch", byPointer["/templates/index/order/1"])
	for _, e := range errs {
		if e.Pointer == "/templates/index/sections/hero/settings/height" {
			require.Equal(t, "hero", e.SectionID)
			require.Equal(t, "height", e.SettingID)
		}
		if e.Pointer == "/templates/index/sections/hero/blocks/s6" {
			require.Equal(t, "s6", e.BlockID)
		}
	}
	require.Equal(t, "/a~1b/c~0d", theme.Pointer("a/b", "c~d"))
}

func TestCanonicalETag(t *testing.T) {
	a, tagA, err := theme.Canonical(json.RawMessage(`{"b": 1, "a": {"y": [1, 2], "x": "s"}}`))
	require.NoError(t, err)
	b, tagB, err := theme.Canonical(json.RawMessage(`{ "a": {"x": "s", "y": [1,2]}, "b": 1 }`))
	require.NoError(t, err)
	require.Equal(t, string(a), string(b))
	require.Equal(t, tagA, tagB, "the same document, however written, has one tag")
	_, tagC, _ := theme.Canonical(json.RawMessage(`{"b": 2, "a": {"x": "s", "y": [1, 2]}}`))
	require.NotEqual(t, tagA, tagC)
	require.Regexp(t, `^"[0-9a-f]{32}"$`, tagA)
}
