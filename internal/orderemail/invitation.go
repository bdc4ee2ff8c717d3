package orderemail

import (
	"bytes"
	"fmt"
	"html/template"
)

var invitationPage = template.Must(template.ParseFS(files, "templates/invitation.html"))

type invitationWords struct {
	Dir, Lang, Subject, Greeting, Intro, As, Button, Expiry string
}

var invitationDictionary = map[string]invitationWords{
	"ar": {Dir: "rtl", Lang: "ar", Subject: "دعوة للانضمام إلى فريق المتجر", Greeting: "مرحبًا", Intro: "دُعيت للانضمام إلى فريق",
		As: "بدور", Button: "اقبل الدعوة", Expiry: "تنتهي صلاحية الرابط بعد سبعة أيام، ويعمل مرة واحدة."},
	"en": {Dir: "ltr", Lang: "en", Subject: "You are invited to join the store's staff", Greeting: "Hello", Intro: "You are invited to join the staff of",
		As: "as", Button: "Accept the invitation", Expiry: "The link works once and expires in seven days."},
}

// RenderInvitation builds a staff invitation email in language ("ar" or
// "en"); link carries the token in its fragment.
func RenderInvitation(storeName, language, to, role, link string) (Email, error) {
	w, ok := invitationDictionary[language]
	if !ok {
		w = invitationDictionary["ar"]
	}
	var buf bytes.Buffer
	if err := invitationPage.Execute(&buf, map[string]any{"W": w, "Store": storeName, "Role": role, "Link": template.URL(link)}); err != nil {
		return Email{}, fmt.Errorf("render invitation email: %w", err)
	}
	// The subject is fixed text: the store's name is whatever its owner
	// typed, so it stays in the body, never where a mail client shows it as
	// the message.
	return Email{To: to, Subject: w.Subject, HTML: buf.String()}, nil
}
