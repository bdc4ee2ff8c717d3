package orderemail

import (
	"bytes"
	"fmt"
	"html/template"
	"time"

	"github.com/merchantsvc/svc/storage"
)

var giftCardPage = template.Must(template.New("gift_card.html").Funcs(template.FuncMap{
	"money": func(minor int64, currency string) string {
		return storage.FormatPrice(minor, storage.CurrencyExponent(currency)) + " " + currency
	},
}).ParseFS(files, "templates/gift_card.html"))

// GiftCard is what a gift card's mail to its recipient tells (decisions
// §19): the code, printed XXXX-XXXX-XXXX-XXXX, its balance and expiry, and
// the sender's message. Only the activity that sends it holds the code.
type GiftCard struct {
	To, RecipientName, StoreName, Language string
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
	if !ok {
		w = giftCardDictionary["ar"]
	}
	expires := ""
	if c.ExpiresOn != nil {
		expires = c.ExpiresOn.Format(time.DateOnly)
	}
	var buf bytes.Buffer
	if err := giftCardPage.Execute(&buf, map[string]any{"W": w, "C": c, "Expires": expires}); err != nil {
		return Email{}, fmt.Errorf("render gift card email: %w", err)
	}
	return Email{To: c.To, Subject: w.Subject, HTML: buf.String()}, nil
}
