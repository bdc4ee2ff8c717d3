package handle

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		typed, want string
		err         error
	}{
		{"summer-sale", "summer-sale", nil},
		{"  Summer Sale ", "summer-sale", nil},
		{"Summer  --  Sale", "summer-sale", nil},
		{"-lead-", "lead", nil},
		{"عروض-الصيف", "عروض-الصيف", nil},
		{"عـــروض", "عروض", nil},              // tatweel
		{"عُرُوض", "عروض", nil},               // tashkeel
		{"تخفيضات ٢٠٢٦", "تخفيضات-2026", nil}, // Arabic-Indic digits
		{"فروش ۱۴۰۵", "فروش-1405", nil},       // Persian digits
		{"ＳＡＬＥ", "sale", nil},                 // NFKC full width
		{"Écharpes", "écharpes", nil},
		{"snake_case", "snake_case", nil},
		{"", "", ErrBlank},
		{" - ", "", ErrBlank},
		{"\u0640\u064B", "", ErrBlank},
		{"a/b", "", ErrInvalid},
		{"a?b", "", ErrInvalid},
		{"a.b", "", ErrInvalid},
		{"<script>", "", ErrInvalid},
		{strings.Repeat("ب", MaxLength), strings.Repeat("ب", MaxLength), nil},
		{strings.Repeat("ب", MaxLength+1), "", ErrTooLong},
	} {
		got, err := Normalize(tc.typed)
		if got != tc.want || err != tc.err {
			t.Errorf("Normalize(%q) = %q, %v; want %q, %v", tc.typed, got, err, tc.want, tc.err)
		}
	}
}

func TestFromTitle(t *testing.T) {
	for _, tc := range []struct{ title, want string }{
		{"Summer Sale!", "summer-sale"},
		{"عروض الصيف — ٢٠٢٦", "عروض-الصيف-2026"},
		{"  About us / Contact ", "about-us-contact"},
		{"!!!", ""},
		{strings.Repeat("ab ", 100), strings.TrimSuffix(strings.Repeat("ab-", 40), "-")},
	} {
		if got := FromTitle(tc.title); got != tc.want {
			t.Errorf("FromTitle(%q) = %q; want %q", tc.title, got, tc.want)
		}
	}
}

// A derived handle is always one Normalize keeps as it is.
func FuzzFromTitle(f *testing.F) {
	for _, seed := range []string{"Summer Sale", "عروض الصيف", "ＳＡＬＥ ٢٠٢٦", "a/b?c", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, title string) {
		h := FromTitle(title)
		if h == "" {
			return
		}
		if n, err := Normalize(h); err != nil || n != h || utf8.RuneCountInString(h) > MaxLength {
			t.Fatalf("FromTitle(%q) = %q, which Normalize answers %q, %v", title, h, n, err)
		}
	})
}

func TestPath(t *testing.T) {
	if got := Path("عروض"); got != "%D8%B9%D8%B1%D9%88%D8%B6" {
		t.Errorf("Path = %q", got)
	}
}
