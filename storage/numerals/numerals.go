// Package numerals reads and writes numbers in the digit sets Arabic
// readers use: ASCII digits (latn) and Arabic-Indic ones (arab), and, on
// input, Persian ones. What people type is read in any of them (decisions
// part three: codes, handles, amounts, phones); what Arabic readers are
// shown may be written in Arabic-Indic digits (a waybill, the storefront's
// numerals setting). It imports nothing of ours, so every package may use it.
package numerals

import "strings"

// ASCIIDigit answers an Arabic-Indic or Persian digit as its ASCII digit,
// and any other rune as it is.
func ASCIIDigit(r rune) rune {
	switch {
	case r >= '٠' && r <= '٩':
		return '0' + (r - '٠')
	case r >= '۰' && r <= '۹':
		return '0' + (r - '۰')
	}
	return r
}

// ToLatin writes every Arabic-Indic and Persian digit of s as an ASCII one,
// and the Arabic decimal separator '٫' as '.', so "١٤٩٫٩٩" reads as 149.99.
func ToLatin(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '٫' {
			return '.'
		}
		return ASCIIDigit(r)
	}, s)
}

// arabic writes ASCII digits, the decimal point and the thousands comma as
// their Arabic-Indic forms.
var arabic = strings.NewReplacer("0", "٠", "1", "١", "2", "٢", "3", "٣", "4", "٤", "5", "٥", "6", "٦", "7", "٧", "8", "٨", "9", "٩",
	".", "٫", ",", "٬")

// ToArabic writes a number's ASCII digits, decimal point and thousands
// commas in Arabic-Indic: "1,234.50" is "١٬٢٣٤٫٥٠". Pass it numbers only:
// every '.' and ',' of s is taken for a separator.
func ToArabic(s string) string { return arabic.Replace(s) }
