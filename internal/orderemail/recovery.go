package orderemail

import (
	"fmt"
	"html/template"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/numerals"
)

var recoveryPage = template.Must(template.New("recovery.html").Funcs(moneyFor("ar", numerals.Latin)).ParseFS(files, "templates/recovery.html"))

type recoveryWords struct {
	Dir, Lang, Subject, Greeting, Intro, Item, Qty, Total, GrandTotal, Button, Footer string
}

var recoveryDictionary = map[string]recoveryWords{
	"ar": {Dir: "rtl", Lang: "ar", Subject: "سلتك ما زالت بانتظارك", Greeting: "مرحبًا",
		Intro: "تركت بعض المنتجات في سلتك. احتفظنا بها لك، ويمكنك إكمال طلبك متى شئت.", Item: "المنتج", Qty: "الكمية",
		Total: "الإجمالي", GrandTotal: "إجمالي السلة", Button: "أكمل طلبك", Footer: "شكرًا لتسوقك معنا"},
	"en": {Dir: "ltr", Lang: "en", Subject: "Your cart is waiting for you", Greeting: "Hello",
		Intro: "You left a few things in your cart. We kept them for you; complete your order whenever you like.", Item: "Item",
		Qty: "Qty", Total: "Total", GrandTotal: "Cart total", Button: "Complete your order", Footer: "Thank you for shopping with us"},
}

// RenderRecovery builds the abandoned-cart email with the link back to the
// cart, in language ("ar" or "en"), its amounts in the store's numerals.
func RenderRecovery(storeName, language, system string, c storage.Cart, link string) (Email, error) {
	w, ok := recoveryDictionary[language]
	if !ok {
		w, language = recoveryDictionary["ar"], "ar"
	}
	html, err := execute(recoveryPage, language, system, map[string]any{"W": w, "Store": storeName, "Cart": c, "Link": template.URL(link)})
	if err != nil {
		return Email{}, fmt.Errorf("render recovery email: %w", err)
	}
	to := ""
	if c.Email != nil {
		to = *c.Email
	}
	return Email{To: to, Subject: storeName + " — " + w.Subject, HTML: html}, nil
}
