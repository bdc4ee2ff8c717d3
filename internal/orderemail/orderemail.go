// Package orderemail renders the status email a customer receives, in the
// store's language (Arabic right-to-left, or English). It shows what the
// customer may see — never staff comments or internal notes.
package orderemail

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/numerals"
)

//go:embed templates/*.html
var files embed.FS

var page = template.Must(template.New("email.html").Funcs(moneyFor("ar", numerals.Latin)).ParseFS(files, "templates/email.html"))

// moneyFor is the templates' money function for a reader of lang in a store
// showing its Arabic readers the digits of system: "EGP 1,234.50" in
// English, "1,234.50 ج.م." or "١٬٢٣٤٫٥٠ ج.م." in Arabic.
func moneyFor(lang, system string) template.FuncMap {
	return template.FuncMap{"money": func(minor int64, currency string) string {
		return numerals.Price(minor, storage.CurrencyExponent(currency), currency, lang, system)
	}}
}

// execute renders t for a reader of lang, amounts in the store's digits.
func execute(t *template.Template, lang, system string, data any) (string, error) {
	own, err := t.Clone()
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := own.Funcs(moneyFor(lang, system)).Execute(&buf, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// Email is a rendered message.
type Email struct {
	To      string
	Subject string
	HTML    string
}

type words struct {
	Dir, Lang, Greeting, Intro, Item, Qty, Total, Shipping, Discount, GrandTotal, Status, Footer string
}

var dictionary = map[string]words{
	"ar": {Dir: "rtl", Lang: "ar", Greeting: "مرحبًا", Intro: "هذه آخر حالة لطلبك", Item: "المنتج", Qty: "الكمية",
		Total: "الإجمالي الفرعي", Shipping: "الشحن", Discount: "الخصم", GrandTotal: "الإجمالي", Status: "الحالة",
		Footer: "شكرًا لتسوقك معنا"},
	"en": {Dir: "ltr", Lang: "en", Greeting: "Hello", Intro: "Here is the latest on your order", Item: "Item", Qty: "Qty",
		Total: "Subtotal", Shipping: "Shipping", Discount: "Discount", GrandTotal: "Total", Status: "Status",
		Footer: "Thank you for shopping with us"},
}

var statusNames = map[string]map[storage.OrderStatus]string{
	"ar": {"PENDING": "تم استلام الطلب", "CONFIRMED": "تم تأكيد الطلب", "PROCESSING": "قيد التجهيز", "READY_TO_SHIP": "جاهز للشحن",
		"SHIPPED": "تم الشحن", "DELIVERED": "تم التوصيل", "RETURNED": "تم الإرجاع", "CANCELLED": "تم الإلغاء", "DRAFT": "مسودة"},
	"en": {"PENDING": "Order received", "CONFIRMED": "Order confirmed", "PROCESSING": "Being prepared", "READY_TO_SHIP": "Ready to ship",
		"SHIPPED": "Shipped", "DELIVERED": "Delivered", "RETURNED": "Returned", "CANCELLED": "Cancelled", "DRAFT": "Draft"},
}

// Render builds the email for the order at status, in language ("ar" or
// "en"), its amounts in the store's numerals (storage/numerals).
func Render(storeName, language, system string, o storage.Order, status storage.OrderStatus) (Email, error) {
	w, ok := dictionary[language]
	if !ok {
		w, language = dictionary["ar"], "ar"
	}
	cust := o.Customer
	statusName := statusNames[language][status]
	html, err := execute(page, language, system, map[string]any{"W": w, "Store": storeName, "Customer": cust.Name, "Order": o,
		"StatusName": statusName, "Status": status})
	if err != nil {
		return Email{}, fmt.Errorf("render order email: %w", err)
	}
	subject := fmt.Sprintf("%s — %s %s", storeName, statusName, o.OrderNumber)
	to := ""
	if cust.Email != nil {
		to = *cust.Email
	}
	return Email{To: to, Subject: subject, HTML: html}, nil
}
