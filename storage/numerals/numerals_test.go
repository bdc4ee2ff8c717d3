package numerals_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage/numerals"
)

func TestDigitSets(t *testing.T) {
	for _, tc := range []struct{ in, latin string }{
		{"0123456789", "0123456789"},
		{"٠١٢٣٤٥٦٧٨٩", "0123456789"},
		{"۰۱۲۳۴۵۶۷۸۹", "0123456789"},
		{"١٤٩٫٩٩", "149.99"},
		{"SALE-٢٠٢٦", "SALE-2026"},
		{"عباية ۳", "عباية 3"},
		{"", ""},
	} {
		require.Equal(t, tc.latin, numerals.ToLatin(tc.in), tc.in)
	}
	require.Equal(t, '7', numerals.ASCIIDigit('٧'))
	require.Equal(t, '7', numerals.ASCIIDigit('۷'))
	require.Equal(t, 'x', numerals.ASCIIDigit('x'))
	require.Equal(t, "١٬٢٣٤٫٥٠", numerals.ToArabic("1,234.50"))
	require.Equal(t, "149.99", numerals.ToLatin(numerals.ToArabic("149.99")), "a round trip")
}
