package gcpace

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestApplyKeepsAnExplicitGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	t.Setenv("GOGC", "")
	Apply()
	require.Equal(t, Percent, debug.SetGCPercent(100), "unset: the service's pace")

	t.Setenv("GOGC", "50")
	Apply()
	require.Equal(t, 100, debug.SetGCPercent(100), "set: left as the runtime read it")
}
