package theme_test

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage/theme"
)

// The patch applies (checked with an independent RFC 6902 implementation):
// from + patch = to.
func TestDiffPatchApplies(t *testing.T) {
	from := json.RawMessage(`{"settings": {"accent": "#f2b705", "old": 1, "a/b": "x"}, "templates": {"index": {"sections": {"hero": {"type": "slideshow", "settings": {"height": "small"}}}, "order": ["hero"]}}}`)
	to := json.RawMessage(`{"settings": {"accent": "#000000", "new": [1, 2], "a/b": "y"}, "templates": {"index": {"sections": {"hero": {"type": "slideshow", "settings": {"height": "large"}}, "text": {"type": "rich-text"}}, "order": ["text", "hero"]}}}`)
	ops, changes, err := theme.Diff(from, to)
	require.NoError(t, err)
	raw, err := json.Marshal(ops)
	require.NoError(t, err)
	patch, err := jsonpatch.DecodePatch(raw)
	require.NoError(t, err)
	applied, err := patch.Apply(from)
	require.NoError(t, err)
	require.JSONEq(t, string(to), string(applied))

	kinds := map[string]string{}
	for _, c := range changes {
		kinds[c.Path] = c.Kind
	}
	require.Equal(t, "changed", kinds["/settings/accent"])
	require.Equal(t, "removed", kinds["/settings/old"])
	require.Equal(t, "added", kinds["/settings/new"])
	require.Equal(t, "changed", kinds["/settings/a~1b"])
	require.Equal(t, "added", kinds["/templates/index/sections/text"])
	require.Equal(t, "changed", kinds["/templates/index/order"])

	same, _, err := theme.Diff(from, from)
	require.NoError(t, err)
	require.Empty(t, same)
}
