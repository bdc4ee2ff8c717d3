// Package numerals reads and writes numbers in the digit sets Arabic
// readers use: ASCII digits (latn) and Arabic-Indic ones (arab), and, on
// input, Persian ones. What people type is read in any of them (decisions
// part three: codes, handles, amounts, phones); what Arabic readers are
// shown may be written in Arabic-Indic digits (a waybill, the storefront's
// numerals setting). It imports nothing of ours, so every package may use it.
package numerals

import (
	"fmt"
	"strconv"
	"strings"
)

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

// The digit sets a store may show its buyers (decisions §23, the store
// setting numerals).
const (
	Latin  = "latn" // 1,234.50
	Arabic = "arab" // ١٬٢٣٤٫٥٠
)

// Systems are the values of the numerals setting.
var Systems = []string{Latin, Arabic}

// arabicCurrency is how Arabic text abbreviates the currencies of the
// region; others are written by their ISO code.
var arabicCurrency = map[string]string{
	"EGP": "ج.م.", "SAR": "ر.س.", "AED": "د.إ.", "KWD": "د.ك.", "QAR": "ر.ق.", "BHD": "د.ب.", "OMR": "ر.ع.",
	"JOD": "د.أ.", "IQD": "د.ع.", "LYD": "د.ل.", "TND": "د.ت.", "DZD": "د.ج.", "MAD": "د.م.", "SDG": "ج.س.", "LBP": "ل.ل.",
}

// Price writes an amount of minor units (exponent digits of them to the
// unit) for a reader of lang: "EGP 1,234.50" in English; in Arabic the
// currency's Arabic abbreviation after the number, "1,234.50 ج.م.", or
// "١٬٢٣٤٫٥٠ ج.م." when the store shows Arabic-Indic digits (English text
// always shows Latin ones).
func Price(minor int64, exponent int, currency, lang, system string) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	unit := int64(1)
	for range exponent {
		unit *= 10
	}
	whole := strconv.FormatInt(minor/unit, 10)
	var grouped strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			grouped.WriteByte(',')
		}
		grouped.WriteRune(r)
	}
	number := sign + grouped.String()
	if exponent > 0 {
		number += "." + fmt.Sprintf("%0*d", exponent, minor%unit)
	}
	if lang != "ar" {
		return currency + " " + number
	}
	if system == Arabic {
		number = ToArabic(number)
	}
	symbol, ok := arabicCurrency[currency]
	if !ok {
		symbol = currency
	}
	return number + " " + symbol
}
