package orderemail

import (
	"bytes"
	"fmt"
	"html/template"
)

var accountPage = template.Must(template.ParseFS(files, "templates/account.html"))

type accountWords struct {
	Dir, Lang, Subject, Greeting, Intro, Button, Expiry, NotYou string
}

// accountDictionary holds an account's own mails (issue 48 §8) by kind,
// then language. The subjects are fixed text: nothing a stranger typed.
var accountDictionary = map[string]map[string]accountWords{
	"password_reset": {
		"ar": {Dir: "rtl", Lang: "ar", Subject: "إعادة تعيين كلمة المرور", Greeting: "مرحبًا",
			Intro: "طلب أحدهم إعادة تعيين كلمة مرور حسابك. اضغط الزر لاختيار كلمة مرور جديدة.", Button: "اختر كلمة مرور جديدة",
			Expiry: "يعمل الرابط مرة واحدة خلال ثلاثين دقيقة.", NotYou: "إن لم تطلب ذلك فتجاهل هذه الرسالة؛ كلمة مرورك لم تتغير."},
		"en": {Dir: "ltr", Lang: "en", Subject: "Reset your password", Greeting: "Hello",
			Intro: "Someone asked to reset your account's password. Press the button to choose a new one.", Button: "Choose a new password",
			Expiry: "The link works once, within thirty minutes.", NotYou: "If it was not you, ignore this mail; your password is unchanged."},
	},
	"sign_in_lock": {
		"ar": {Dir: "rtl", Lang: "ar", Subject: "محاولات دخول فاشلة إلى حسابك", Greeting: "مرحبًا",
			Intro:  "فشلت محاولات دخول كثيرة إلى حسابك، فأوقفنا الدخول من الشبكات الجديدة مؤقتًا. الشبكات التي دخلت منها من قبل ما زالت تعمل. لتدخل من شبكة جديدة الآن اختر كلمة مرور جديدة بهذا الرابط، أو انتظر حتى تنتهي المهلة.",
			Button: "اختر كلمة مرور جديدة وادخل", Expiry: "يعمل الرابط مرة واحدة خلال ثلاثين دقيقة.",
			NotYou: "إن لم تكن أنت من حاول الدخول فقد يكون أحدهم يخمّن كلمة مرورك؛ اختر كلمة مرور جديدة."},
		"en": {Dir: "ltr", Lang: "en", Subject: "Failed sign-ins to your account", Greeting: "Hello",
			Intro:  "Many sign-ins to your account failed, so sign-ins from new networks are held back for a while. Networks you signed in from before still work. To sign in from a new network now, choose a new password with this link, or wait until the hold ends.",
			Button: "Choose a new password and sign in", Expiry: "The link works once, within thirty minutes.",
			NotYou: "If it was not you trying, someone may be guessing your password; choose a new one."},
	},
	"email_verification": {
		"ar": {Dir: "rtl", Lang: "ar", Subject: "أكّد بريدك الإلكتروني", Greeting: "مرحبًا",
			Intro: "اضغط الزر لتأكيد أن هذا البريد بريدك.", Button: "أكّد البريد",
			Expiry: "يعمل الرابط مرة واحدة خلال سبعة أيام.", NotYou: "إن لم تنشئ حسابًا فتجاهل هذه الرسالة."},
		"en": {Dir: "ltr", Lang: "en", Subject: "Confirm your email address", Greeting: "Hello",
			Intro: "Press the button to confirm this address is yours.", Button: "Confirm the address",
			Expiry: "The link works once, within seven days.", NotYou: "If you did not create an account, ignore this mail."},
	},
}

// RenderAccountMail builds an account's own mail of kind (password_reset,
// sign_in_lock, email_verification) in language ("ar" or "en"; Arabic for
// any other); link carries the token in its fragment.
func RenderAccountMail(kind, language, to, name, link string) (Email, error) {
	words, ok := accountDictionary[kind]
	if !ok {
		return Email{}, fmt.Errorf("render account email: unknown kind %q", kind)
	}
	w, ok := words[language]
	if !ok {
		w = words["ar"]
	}
	var buf bytes.Buffer
	if err := accountPage.Execute(&buf, map[string]any{"W": w, "Name": name, "Link": template.URL(link)}); err != nil {
		return Email{}, fmt.Errorf("render account email: %w", err)
	}
	return Email{To: to, Subject: w.Subject, HTML: buf.String()}, nil
}
