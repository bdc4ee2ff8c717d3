package pages

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// After sign-in the browser goes only to a path on this site: anything a
// browser could read as another host goes home instead.
func TestSafeNext(t *testing.T) {
	for next, want := range map[string]string{
		"/stores/1/themes/editor":    "/stores/1/themes/editor",
		"/oauth/authorize?state=x&a": "/oauth/authorize?state=x&a",
		"":                           "/",
		"https://evil.example/":      "/",
		"//evil.example/":            "/",
		"/\\evil.example/":           "/",
		"/\t/evil.example/":          "/",
		"/\r\n/evil.example/":        "/",
		"/%09/evil.example/":         "/%09/evil.example/", // still encoded: a path here
		"\\\\evil.example":           "/",
		"javascript:alert(1)":        "/",
	} {
		require.Equal(t, want, safeNext(next), "%q", next)
	}
}
