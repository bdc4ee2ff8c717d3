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

func TestPrice(t *testing.T) {
	for _, tc := range []struct {
		minor                  int64
		exponent               int
		currency, lang, system string
		want                   string
	}{
		{123450, 2, "EGP", "en", numerals.Latin, "EGP 1,234.50"},
		{123450, 2, "EGP", "en", numerals.Arabic, "EGP 1,234.50"},
		{123450, 2, "EGP", "ar", numerals.Latin, "1,234.50 ج.م."},
		{123450, 2, "EGP", "ar", numerals.Arabic, "١٬٢٣٤٫٥٠ ج.م."},
		{5, 2, "SAR", "ar", numerals.Arabic, "٠٫٠٥ ر.س."},
		{1234567, 3, "KWD", "ar", numerals.Latin, "1,234.567 د.ك."},
		{100000000, 2, "EGP", "en", numerals.Latin, "EGP 1,000,000.00"},
		{-2500, 2, "USD", "ar", numerals.Latin, "-25.00 USD"},
		{0, 0, "JPY", "en", numerals.Latin, "JPY 0"},
	} {
		require.Equal(t, tc.want, numerals.Price(tc.minor, tc.exponent, tc.currency, tc.lang, tc.system), "%+v", tc)
	}
}
