package pages

import "net/http"

// PasswordResetPage serves GET /password-reset: the form that has a reset
// link mailed, and the page that link opens. The token stays in the URL's
// fragment, which no server sees; the page's script reads it and sets the
// new password through the JSON API, as the invitation page accepts.
func (p *Pages) PasswordResetPage() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		lang := p.pageLang(r, nil)
		renderPage(w, http.StatusOK, lang, "staff_password_reset.html", map[string]any{"Title": word(lang, "reset.title"),
			"CSRF": p.sessionCSRF(r)})
		return nil
	})
}

// VerifyEmailPage serves GET /verify-email: the page the signup's
// verification mail opens; its script reads the token from the fragment and
// proves the address through the JSON API.
func (p *Pages) VerifyEmailPage() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		lang := p.pageLang(r, nil)
		renderPage(w, http.StatusOK, lang, "staff_verify_email.html", map[string]any{"Title": word(lang, "verify.title"),
			"CSRF": p.sessionCSRF(r)})
		return nil
	})
}
