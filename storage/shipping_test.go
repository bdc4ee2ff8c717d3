package storage_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage"
)

// Place names match after §15's normalisation.
func TestNormalizeAreaName(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"الجيزه", "الجيزة"},
		{"  الإسكندرية ", "الاسكندريه"},
		{"أسوان", "اسوان"},
		{"آمون", "امون"},
		{"بنى سويف", "بني سويف"},
		{"القاهـــرة", "القاهرة"},
		{"مَصْر", "مصر"},
		{"Giza", "GIZA"},
		{"Sharm  El Sheikh", "sharm el sheikh"},
		{"６ October", "6 october"},
	} {
		require.Equal(t, storage.NormalizeAreaName(c.a), storage.NormalizeAreaName(c.b), "%q ~ %q", c.a, c.b)
	}
	require.NotEqual(t, storage.NormalizeAreaName("Giza"), storage.NormalizeAreaName("الجيزة"), "other spellings are listed, not guessed")
}
