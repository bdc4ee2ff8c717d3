package orderemail

import (
	"fmt"
	"html/template"
	"time"

	"github.com/merchantsvc/svc/storage/numerals"
)

var giftCardPage = template.Must(template.New("gift_card.html").Funcs(moneyFor("ar", numerals.Latin)).ParseFS(files, "templates/gift_card.html"))

// GiftCard is what a gift card's mail to its recipient tells (decisions
// §19): the code, printed XXXX-XXXX-XXXX-XXXX, its balance and expiry, and
// the sender's message. Only the activity that sends it holds the code.
type GiftCard struct {
	To, RecipientName, StoreName, Language string
	Numerals                               string // the store's digits for Arabic readers
	Message                                *string
	Code                                   string
	Balance                                int64
	Currency                               string
	ExpiresOn                              *time.Time
}

type giftCardWords struct {
	Dir, Lang, Subject, Greeting, Intro, Code, Balance, Expires, HowTo string
}

var giftCardDictionary = map[string]giftCardWords{
	"ar": {Dir: "rtl", Lang: "ar", Subject: "وصلتك بطاقة هدايا", Greeting: "مرحبًا", Intro: "وصلتك بطاقة هدايا من",
		Code: "رمز البطاقة", Balance: "الرصيد", Expires: "صالحة حتى",
		HowTo: "اكتب الرمز عند إتمام الطلب. احتفظ به لنفسك: من يعرف الرمز يستطيع استخدام الرصيد."},
	"en": {Dir: "ltr", Lang: "en", Subject: "You received a gift card", Greeting: "Hello", Intro: "You received a gift card from",
		Code: "Card code", Balance: "Balance", Expires: "Valid until",
		HowTo: "Enter the code at checkout. Keep it to yourself: whoever knows the code can spend the balance."},
}

// RenderGiftCard builds a gift card's mail in c.Language ("ar" or "en";
// Arabic for any other). The subject is fixed text: the store's name stays
// in the body.
func RenderGiftCard(c GiftCard) (Email, error) {
	w, ok := giftCardDictionary[c.Language]
	lang := c.Language
	if !ok {
		w, lang = giftCardDictionary["ar"], "ar"
	}
	expires := ""
	if c.ExpiresOn != nil {
		expires = c.ExpiresOn.Format(time.DateOnly)
	}
	html, err := execute(giftCardPage, lang, c.Numerals, map[string]any{"W": w, "C": c, "Expires": expires})
	if err != nil {
		return Email{}, fmt.Errorf("render gift card email: %w", err)
	}
	return Email{To: c.To, Subject: w.Subject, HTML: html}, nil
}
