package theme_test

import (
	"slices"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage/theme"
)

// The default theme loads, and between its schemas it uses every one of
// the 26 setting types, blocks with a limit, presets and visible_if.
func TestDefaultThemeUsesEverySettingType(t *testing.T) {
	th := theme.Default()
	used := map[string]bool{}
	var limits, presets, visibleIf int
	var walk func([]theme.Setting)
	walk = func(list []theme.Setting) {
		for _, s := range list {
			used[s.Type] = true
			if len(s.VisibleIf) > 0 {
				visibleIf++
			}
			walk(s.Definition)
		}
	}
	walk(th.Settings)
	for _, sec := range th.Sections {
		walk(sec.Settings)
		presets += len(sec.Presets)
		for _, b := range sec.Blocks {
			walk(b.Settings)
			if b.Limit > 0 {
				limits++
			}
		}
	}
	for _, typ := range theme.SettingTypes {
		require.True(t, used[typ], "the default theme does not use %s", typ)
	}
	require.Len(t, theme.SettingTypes, 26)
	require.Positive(t, limits)
	require.Positive(t, presets)
	require.Positive(t, visibleIf)
}

// Broken schemas are refused when loaded, each with its reason.
func TestSchemaValidationOnLoad(t *testing.T) {
	base := `{"name":"t","settings":[{"type":"checkbox","id":"a","label":"A"}]}`
	for _, tc := range []struct {
		name, settings, section, want string
	}{
		{"unknown type", `{"settings":[{"type":"slider","id":"a","label":"A"}]}`, "", "unknown type"},
		{"bad id", `{"settings":[{"type":"text","id":"Bad-Id","label":"A"}]}`, "", "lowercase"},
		{"repeated id", `{"settings":[{"type":"text","id":"a","label":"A"},{"type":"text","id":"a","label":"B"}]}`, "", "repeated"},
		{"invalid default", `{"settings":[{"type":"color","id":"a","label":"A","default":"red"}]}`, "", "default of a"},
		{"visible_if on a later setting", `{"settings":[{"type":"text","id":"a","label":"A","visible_if":{"b":true}},{"type":"checkbox","id":"b","label":"B"}]}`, "", "not an earlier setting"},
		{"select without options", `{"settings":[{"type":"select","id":"a","label":"A"}]}`, "", "needs options"},
		{"range without step", `{"settings":[{"type":"range","id":"a","label":"A","min":1,"max":5}]}`, "", "positive step"},
		{"preset with an unknown setting", base, `{"type":"s","settings":[],"presets":[{"name":"p","settings":{"nope":1}}]}`, "unknown setting"},
		{"preset with an unknown block", base, `{"type":"s","settings":[],"presets":[{"name":"p","blocks":[{"type":"ghost"}]}]}`, "unknown type"},
		{"preset over a block limit", base, `{"type":"s","settings":[],"blocks":[{"type":"b","name":"B","limit":1,"settings":[]}],"presets":[{"name":"p","blocks":[{"type":"b"},{"type":"b"}]}]}`, "limit"},
		{"section type differs from file", base, `{"type":"other","settings":[]}`, "file name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"settings_schema.json": {Data: []byte(tc.settings)}}
			if tc.section != "" {
				fsys["schemas/sections/s.json"] = &fstest.MapFile{Data: []byte(tc.section)}
			}
			_, err := theme.Load(fsys)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	ok := fstest.MapFS{"settings_schema.json": {Data: []byte(base)}}
	th, err := theme.Load(ok)
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(th.Settings, func(s theme.Setting) bool { return s.ID == "a" }))
}
