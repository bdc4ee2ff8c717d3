package storage

import (
	"strings"
)

// An invoice's total in words (decisions §27), as printed invoices in the
// region carry it: Arabic in the accountants' form "فقط … لا غير" (which
// spares the counted noun its case), English in plain words.

// currencyNames are a currency's unit and subunit in Arabic and English.
var currencyNames = map[string][4]string{
	"SAR": {"ريال سعودي", "هللة", "Saudi riyals", "halalas"},
	"EGP": {"جنيه مصري", "قرش", "Egyptian pounds", "piastres"},
	"AED": {"درهم إماراتي", "فلس", "UAE dirhams", "fils"},
	"KWD": {"دينار كويتي", "فلس", "Kuwaiti dinars", "fils"},
	"BHD": {"دينار بحريني", "فلس", "Bahraini dinars", "fils"},
	"OMR": {"ريال عماني", "بيسة", "Omani rials", "baisa"},
	"JOD": {"دينار أردني", "فلس", "Jordanian dinars", "fils"},
	"QAR": {"ريال قطري", "درهم", "Qatari riyals", "dirhams"},
}

// AmountInWords is an amount in minor units of currency, in words.
func AmountInWords(amount int64, currency string) Bilingual {
	names, ok := currencyNames[currency]
	if !ok {
		names = [4]string{currency, "", currency, "cents"}
	}
	exp := CurrencyExponent(currency)
	scale := int64(1)
	for range exp {
		scale *= 10
	}
	whole, part := amount/scale, amount%scale
	ar := arabicNumber(whole) + " " + names[0]
	en := englishNumber(whole) + " " + englishUnit(names[2], whole)
	if part > 0 {
		ar += " و" + arabicNumber(part) + " " + names[1]
		en += " and " + englishNumber(part) + " " + englishUnit(names[3], part)
	}
	return Bilingual{AR: "فقط " + ar + " لا غير", EN: strings.ToUpper(en[:1]) + en[1:]}
}

// englishUnit is a currency's plural name for n, singular for one.
func englishUnit(plural string, n int64) string {
	if n == 1 && plural != "fils" && plural != "baisa" {
		return strings.TrimSuffix(plural, "s")
	}
	return plural
}

var (
	arabicOnes = []string{"", "واحد", "اثنان", "ثلاثة", "أربعة", "خمسة", "ستة", "سبعة", "ثمانية", "تسعة", "عشرة",
		"أحد عشر", "اثنا عشر", "ثلاثة عشر", "أربعة عشر", "خمسة عشر", "ستة عشر", "سبعة عشر", "ثمانية عشر", "تسعة عشر"}
	arabicTens     = []string{"", "", "عشرون", "ثلاثون", "أربعون", "خمسون", "ستون", "سبعون", "ثمانون", "تسعون"}
	arabicHundreds = []string{"", "مائة", "مائتان", "ثلاثمائة", "أربعمائة", "خمسمائة", "ستمائة", "سبعمائة", "ثمانمائة", "تسعمائة"}
	// arabicScales: the word for one, two, three to ten, and eleven up.
	arabicScales = [][4]string{
		{"ألف", "ألفان", "آلاف", "ألفًا"},
		{"مليون", "مليونان", "ملايين", "مليونًا"},
		{"مليار", "ملياران", "مليارات", "مليارًا"},
		{"تريليون", "تريليونان", "تريليونات", "تريليونًا"},
	}
)

// arabicBelowThousand is 1-999 in words, parts joined by و.
func arabicBelowThousand(n int64) string {
	var parts []string
	if n >= 100 {
		parts = append(parts, arabicHundreds[n/100])
		n %= 100
	}
	switch {
	case n == 0:
	case n < 20:
		parts = append(parts, arabicOnes[n])
	case n%10 == 0:
		parts = append(parts, arabicTens[n/10])
	default:
		parts = append(parts, arabicOnes[n%10]+" و"+arabicTens[n/10])
	}
	return strings.Join(parts, " و")
}

func arabicNumber(n int64) string {
	if n == 0 {
		return "صفر"
	}
	var groups []int64
	for m := n; m > 0; m /= 1000 {
		groups = append(groups, m%1000)
	}
	var parts []string
	for i := len(groups) - 1; i >= 0; i-- {
		g := groups[i]
		if g == 0 {
			continue
		}
		if i == 0 {
			parts = append(parts, arabicBelowThousand(g))
			continue
		}
		scale := arabicScales[min(i-1, len(arabicScales)-1)]
		switch {
		case g == 1:
			parts = append(parts, scale[0])
		case g == 2:
			parts = append(parts, scale[1])
		case g <= 10:
			parts = append(parts, arabicBelowThousand(g)+" "+scale[2])
		default:
			parts = append(parts, arabicBelowThousand(g)+" "+scale[3])
		}
	}
	return strings.Join(parts, " و")
}

var (
	englishOnes = []string{"", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
		"thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	englishTens   = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	englishScales = []string{"", "thousand", "million", "billion", "trillion"}
)

func englishNumber(n int64) string {
	if n == 0 {
		return "zero"
	}
	var groups []int64
	for m := n; m > 0; m /= 1000 {
		groups = append(groups, m%1000)
	}
	var parts []string
	for i := len(groups) - 1; i >= 0; i-- {
		g := groups[i]
		if g == 0 {
			continue
		}
		var words []string
		if g >= 100 {
			words = append(words, englishOnes[g/100], "hundred")
			g %= 100
		}
		switch {
		case g == 0:
		case g < 20:
			words = append(words, englishOnes[g])
		case g%10 == 0:
			words = append(words, englishTens[g/10])
		default:
			words = append(words, englishTens[g/10]+"-"+englishOnes[g%10])
		}
		if i > 0 {
			words = append(words, englishScales[min(i, len(englishScales)-1)])
		}
		parts = append(parts, strings.Join(words, " "))
	}
	return strings.Join(parts, " ")
}
