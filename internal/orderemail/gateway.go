package orderemail

import (
	"bytes"
	"fmt"
	"html/template"
	"time"
)

var gatewayChangePage = template.Must(template.ParseFS(files, "templates/gateway_change.html"))

// GatewayChange is what the store owner's mail about a change to a payment
// gateway's keys tells (issue 48 §6): what changed, the masked account
// hints the API shows (never a secret), who changed it, when and from where.
type GatewayChange struct {
	To, OwnerName, StoreName, Language string
	Provider                           string // "stripe"
	Kind                               string // connected, replaced, disconnected
	AccountHint, PreviousHint          string
	ActorName, ActorEmail              string
	IP, UserAgent, RequestID           string
	At                                 time.Time
}

type gatewayChangeWords struct {
	Dir, Lang, Subject, Greeting                                      string
	Headlines                                                         map[string]string
	KeyNow, KeyBefore, By, When, From, Device, Request, Audit, NotYou string
}

// gatewayProviderNames are the gateways' names as people know them.
var gatewayProviderNames = map[string]string{"stripe": "Stripe"}

// gatewayChangeDictionary holds the mail's words by language. The subject
// is fixed text: the store's name, which its owner typed, stays in the body.
var gatewayChangeDictionary = map[string]gatewayChangeWords{
	"ar": {Dir: "rtl", Lang: "ar", Subject: "تغيّرت مفاتيح بوابة الدفع في متجرك", Greeting: "مرحبًا",
		Headlines: map[string]string{
			"connected":    "رُبطت بوابة الدفع %s بمتجرك",
			"replaced":     "استُبدلت مفاتيح بوابة الدفع %s في متجرك",
			"disconnected": "فُصلت بوابة الدفع %s عن متجرك، فتوقف الدفع بالبطاقة في",
		},
		KeyNow: "المفتاح الآن", KeyBefore: "المفتاح السابق", By: "بواسطة", When: "الوقت", From: "من عنوان IP", Device: "المتصفح أو الجهاز",
		Request: "رقم الطلب", Audit: "تجد هذا التغيير أيضًا في سجل التدقيق لمتجرك.",
		NotYou: "إن لم تقم أنت أو فريقك بهذا التغيير فافصل البوابة، وأنشئ مفاتيح جديدة من لوحة تحكم بوابة الدفع، وراجع أعضاء فريقك وصلاحياتهم."},
	"en": {Dir: "ltr", Lang: "en", Subject: "Your store's payment gateway keys changed", Greeting: "Hello",
		Headlines: map[string]string{
			"connected":    "The %s payment gateway was connected to",
			"replaced":     "The keys of the %s payment gateway were replaced in",
			"disconnected": "The %s payment gateway was disconnected, so card payments are off, in",
		},
		KeyNow: "Key now", KeyBefore: "Key before", By: "By", When: "When", From: "From IP address", Device: "Browser or device",
		Request: "Request ID", Audit: "The change is in your store's audit log too.",
		NotYou: "If you or your team did not make this change, disconnect the gateway, roll the keys in the gateway's dashboard, and review your staff and their roles."},
}

// RenderGatewayChange builds the owner's mail about a change to a payment
// gateway's keys in c.Language ("ar" or "en"; Arabic for any other).
func RenderGatewayChange(c GatewayChange) (Email, error) {
	w, ok := gatewayChangeDictionary[c.Language]
	if !ok {
		w = gatewayChangeDictionary["ar"]
	}
	headline, ok := w.Headlines[c.Kind]
	if !ok {
		return Email{}, fmt.Errorf("render gateway change email: unknown change %q", c.Kind)
	}
	provider, ok := gatewayProviderNames[c.Provider]
	if !ok {
		provider = c.Provider
	}
	var buf bytes.Buffer
	if err := gatewayChangePage.Execute(&buf, map[string]any{"W": w, "C": c, "Headline": fmt.Sprintf(headline, provider),
		"When": c.At.UTC().Format("2006-01-02 15:04:05 UTC")}); err != nil {
		return Email{}, fmt.Errorf("render gateway change email: %w", err)
	}
	return Email{To: c.To, Subject: w.Subject, HTML: buf.String()}, nil
}
