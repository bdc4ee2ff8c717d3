package theme

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Uses finds every picker naming content of a kind, with its pointer, and
// nothing of other kinds.
func TestUses(t *testing.T) {
	th := Default()
	menus := th.Uses(th.DefaultDocument(), RefMenu)
	require.NotEmpty(t, menus)
	ids := map[string]bool{}
	for _, u := range menus {
		require.NotEmpty(t, u.Pointer)
		require.Contains(t, u.Pointer, "/settings/")
		ids[u.ID] = true
	}
	require.True(t, ids["main-menu"], "the default header names main-menu: %v", menus)
	for _, u := range th.Uses(th.DefaultDocument(), RefPage) {
		require.NotEqual(t, "main-menu", u.ID)
	}
	require.Empty(t, th.Uses([]byte(`[]`), RefMenu))
	require.Empty(t, th.Uses([]byte(`{`), RefMenu))
}
