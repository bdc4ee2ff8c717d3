package pages

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/theme"
)

//go:embed *.html
var pageFiles embed.FS

var pageTemplates = template.Must(template.ParseFS(pageFiles, "*.html"))

// Config is what the pages need beyond the database.
type Config struct {
	// SecureCookies marks the session and CSRF cookies Secure (everywhere
	// but local development).
	SecureCookies bool
	// CheckPassword checks a sign-in under the server's throttles; it
	// answers session.ErrBadLogin, *session.Throttled or session.ErrBusy.
	CheckPassword func(r *http.Request, email, password string) (storage.User, error)
	// WebhookRetrySchedule is the retry ladder's waits, for the deliveries
	// page's next retry times.
	WebhookRetrySchedule []time.Duration
	// Source is where a request came from (behind the trusted proxies),
	// for the audit log's sign-in entries.
	Source func(r *http.Request) storage.RequestSource
}

// Pages serves the merchant's server-rendered pages.
type Pages struct {
	cfg Config
	db  *storage.DB
	log *slog.Logger
}

// New serves the pages over the database.
func New(cfg Config, db *storage.DB, log *slog.Logger) *Pages {
	return &Pages{cfg: cfg, db: db, log: log}
}

// handlerFunc is a page handler that returns its error: ServeHTTP logs it
// and shows the problem page with "internal error" and nothing more.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// pageHandler binds a handlerFunc to the pages' logger.
type pageHandler struct {
	p  *Pages
	fn handlerFunc
}

func (h pageHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.fn(w, r); err != nil && !errors.Is(err, errAnswered) {
		h.p.log.ErrorContext(r.Context(), "page failed", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Any("error", storage.Redacted(err)))
		lang := h.p.pageLang(r, nil)
		h.p.problemPage(w, http.StatusInternalServerError, lang, pageWords[lang]["internal_error"])
	}
}

func (p *Pages) handle(fn handlerFunc) http.Handler { return pageHandler{p: p, fn: fn} }

const csrfCookie = "svc_csrf"

var pageWords = map[string]map[string]string{
	"ar": {
		"lang": "ar", "dir": "rtl", "signin_title": "تسجيل الدخول", "email": "البريد الإلكتروني", "password": "كلمة المرور",
		"signin": "دخول", "other_lang": "English", "bad_login": "البريد الإلكتروني أو كلمة المرور غير صحيحة",
		"throttled": "محاولات دخول فاشلة كثيرة؛ انتظر قليلًا ثم حاول مجددًا", "busy": "الخادم مشغول؛ حاول مجددًا بعد لحظات",
		"consent_title": "تثبيت تطبيق", "consent_intro": "يطلب التطبيق الوصول إلى متجرك:", "consent_scopes": "سيتمكن التطبيق من:",
		"consent_events": "وسيصله إشعار بهذه الأحداث في متجرك:",
		"allow":          "السماح", "deny": "رفض", "problem_title": "تعذّر متابعة الطلب",
		"read": "عرض", "write": "عرض وتعديل", "bad_form": "انتهت صلاحية النموذج؛ أعد تحميل الصفحة وحاول مجددًا",
		"publish": "نشر", "history": "السجل", "theme_settings": "إعدادات القالب", "add_section": "إضافة قسم",
		"publish_name": "اسم النسخة (اختياري)", "preview": "معاينة",
		"internal_error": "حدث خطأ داخلي؛ حاول مجددًا بعد قليل", "catalog": "المنتجات والتصنيفات", "media": "الصور والوسائط", "orders": "الطلبات والمدفوعات", "customers": "العملاء",
		"analytics": "التحليلات", "marketing": "التسويق", "themes": "تصميم المتجر", "risk": "تقييم المخاطر", "settings": "إعدادات المتجر",
	},
	"en": {
		"lang": "en", "dir": "ltr", "signin_title": "Sign in", "email": "Email", "password": "Password",
		"signin": "Sign in", "other_lang": "العربية", "bad_login": "Invalid email or password",
		"throttled": "Too many failed sign-ins; wait a while and try again", "busy": "The server is busy; try again in a moment",
		"consent_title": "Install an app", "consent_intro": "This app asks for access to your store:", "consent_scopes": "The app will be able to:",
		"consent_events": "It will be notified of these events in your store:",
		"allow":          "Allow", "deny": "Deny", "problem_title": "This request cannot continue",
		"read": "View", "write": "View and change", "bad_form": "The form expired; reload the page and try again",
		"publish": "Publish", "history": "History", "theme_settings": "Theme settings", "add_section": "Add section",
		"publish_name": "Version name (optional)", "preview": "Preview",
		"internal_error": "Internal error; try again shortly", "catalog": "products and categories", "media": "images and media", "orders": "orders and payments", "customers": "customers",
		"analytics": "analytics", "marketing": "marketing", "themes": "the store's design", "risk": "risk scores", "settings": "store settings",
	},
}

// scopeWords says what a scope lets an app do, in the page's language.
func scopeWords(lang, scope string) string {
	domain, access, _ := strings.Cut(scope, ":")
	w := pageWords[lang]
	return w[access] + " " + w[domain]
}

// pageCSRF returns the request's CSRF token, setting the cookie when the
// browser has none yet.
func (p *Pages) pageCSRF(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: token, Path: "/", HttpOnly: true, Secure: p.cfg.SecureCookies,
		SameSite: http.SameSiteStrictMode})
	return token
}

// csrfValid checks a posted form's token against the cookie.
func csrfValid(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	return err == nil && len(c.Value) >= 32 && subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) == 1
}

func renderPage(w http.ResponseWriter, status int, name string, data map[string]any) {
	pageHeaders(w, "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = pageTemplates.ExecuteTemplate(w, name, data)
}

// pageHeaders are every page's headers, with its content security policy.
func pageHeaders(w http.ResponseWriter, csp string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", csp)
	h.Set("Referrer-Policy", "no-referrer")
}

// pageLang is the signed-in merchant's language, else ?lang=en, else Arabic.
func (p *Pages) pageLang(r *http.Request, user *storage.User) string {
	if user != nil && user.Locale == "en" {
		return "en"
	}
	if user == nil && r.URL.Query().Get("lang") == "en" {
		return "en"
	}
	return "ar"
}

// errAnswered ends a page request that has already answered: a redirect to
// sign in (as the store's owner), or a problem page.
var errAnswered = errors.New("the page has answered")

// signedIn is the signed-in merchant of a page request; without one it
// sends them to sign in (and back) and returns errAnswered.
func (p *Pages) signedIn(w http.ResponseWriter, r *http.Request) (*storage.User, error) {
	user, err := session.User(r, p.db)
	if err != nil {
		return nil, err
	}
	if user == nil {
		toLogin(w, r)
		return nil, errAnswered
	}
	return user, nil
}

func (p *Pages) problemPage(w http.ResponseWriter, status int, lang, message string) {
	renderPage(w, status, "problem.html", map[string]any{"T": pageWords[lang], "Title": pageWords[lang]["problem_title"],
		"Error": message})
}

// toLogin sends the browser to sign in and come back to where it was.
func toLogin(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
}

// safeNext keeps redirects after sign-in on this site.
func safeNext(next string) string {
	if !theme.SafePath(next) {
		return "/"
	}
	return next
}

// otherLoginLanguage is the sign-in page in the other language, going on to
// the same next page.
func otherLoginLanguage(lang, next string) string {
	other := url.Values{"next": {next}}
	if lang == "ar" {
		other.Set("lang", "en")
	}
	return "/login?" + other.Encode()
}

// LoginPage serves GET /login.
func (p *Pages) LoginPage() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		lang := p.pageLang(r, nil)
		next := safeNext(r.URL.Query().Get("next"))
		renderPage(w, http.StatusOK, "login.html", map[string]any{"T": pageWords[lang], "Title": pageWords[lang]["signin_title"],
			"CSRF": p.pageCSRF(w, r), "Next": next, "OtherLangURL": otherLoginLanguage(lang, next)})
		return nil
	})
}

// LoginForm serves POST /login: it signs a merchant in from the page and returns them to where
// they were going.
func (p *Pages) LoginForm() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		lang := p.pageLang(r, nil)
		if err := r.ParseForm(); err != nil || !csrfValid(r) {
			p.problemPage(w, http.StatusForbidden, lang, pageWords[lang]["bad_form"])
			return nil
		}
		next := safeNext(r.PostFormValue("next"))
		email := strings.TrimSpace(r.PostFormValue("email"))
		user, err := p.cfg.CheckPassword(r, email, r.PostFormValue("password"))
		var throttled *session.Throttled
		status, refusal := 0, ""
		switch {
		case errors.Is(err, session.ErrBadLogin):
			status, refusal = http.StatusUnauthorized, "bad_login"
		case errors.As(err, &throttled):
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(throttled.RetryAfter.Seconds()))))
			status, refusal = http.StatusTooManyRequests, "throttled"
		case errors.Is(err, session.ErrBusy):
			w.Header().Set("Retry-After", "1")
			status, refusal = http.StatusServiceUnavailable, "busy"
		case err != nil:
			return err
		}
		if status != 0 {
			renderPage(w, status, "login.html", map[string]any{"T": pageWords[lang], "Title": pageWords[lang]["signin_title"],
				"CSRF": p.pageCSRF(w, r), "Next": next, "Email": email, "Error": pageWords[lang][refusal], "OtherLangURL": otherLoginLanguage(lang, next)})
			return nil
		}
		if err := session.Start(w, r, p.db, user.ID, p.cfg.SecureCookies, p.cfg.Source(r)); err != nil {
			return err
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	})
}

// authCodePrefix starts every authorization code the consent page issues.
const authCodePrefix = "svc_code_"

var statePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// consentRequest is a consent link that passed every rule of spec §5.2.
type consentRequest struct {
	App     storage.App
	Store   storage.Store
	Scopes  []string
	Params  map[string]string
	Problem string // set when the link breaks a rule; the page says which
}

// checkConsent applies the consent-link rules. It never redirects anywhere
// the link names before the link has been checked.
func (p *Pages) checkConsent(r *http.Request, values url.Values, user *storage.User) (consentRequest, error) {
	c := consentRequest{Params: map[string]string{}}
	for _, k := range []string{"client_id", "store_id", "redirect_uri", "scope", "state"} {
		c.Params[k] = values.Get(k)
	}
	app, err := p.db.FindAppByClientID(r.Context(), c.Params["client_id"])
	if errors.Is(err, storage.ErrNotFound) {
		c.Problem = "unknown client_id"
		return c, nil
	}
	if err != nil {
		return c, err
	}
	c.App = app
	if !slices.Contains(app.RedirectURLs, c.Params["redirect_uri"]) {
		c.Problem = "redirect_uri is not one of the app's redirect URLs"
		return c, nil
	}
	if !statePattern.MatchString(c.Params["state"]) {
		c.Problem = "state is required and may hold only letters, digits, - and _"
		return c, nil
	}
	requested := strings.Fields(c.Params["scope"])
	for _, sc := range app.Scopes {
		if !slices.Contains(requested, sc) {
			c.Problem = "scope must include every required scope of the app (" + sc + " is missing)"
			return c, nil
		}
	}
	for _, sc := range requested {
		if !slices.Contains(app.Scopes, sc) && !slices.Contains(app.OptionalScopes, sc) {
			c.Problem = "scope " + sc + " is not one the app may ask for"
			return c, nil
		}
	}
	for _, sc := range requested { // each once, in the order asked
		if !slices.Contains(c.Scopes, sc) {
			c.Scopes = append(c.Scopes, sc)
		}
	}
	storeID, err := uuid.Parse(c.Params["store_id"])
	if err != nil {
		c.Problem = "store_id must be a store's id"
		return c, nil
	}
	store, err := p.db.FindStoreByID(r.Context(), storeID)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && store.OwnerUserID != user.ID) {
		return c, errNotOwner
	}
	if err != nil {
		return c, err
	}
	c.Store = store
	return c, nil
}

var errNotOwner = errors.New("not the store's owner")

// ConsentPage serves GET /oauth/authorize: it shows the consent page for a valid consent link.
func (p *Pages) ConsentPage() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		user, err := p.signedIn(w, r)
		if err != nil {
			return err
		}
		lang := p.pageLang(r, user)
		c, err := p.checkConsent(r, r.URL.Query(), user)
		if errors.Is(err, errNotOwner) {
			toLogin(w, r) // sign in as the store's owner and come back
			return nil
		}
		if err != nil {
			return err
		}
		if c.Problem != "" {
			p.problemPage(w, http.StatusBadRequest, lang, c.Problem)
			return nil
		}
		type scopeLine struct{ Name, Words string }
		lines := make([]scopeLine, 0, len(c.Scopes))
		for _, sc := range c.Scopes {
			lines = append(lines, scopeLine{sc, scopeWords(lang, sc)})
		}
		// The webhook events the app will receive: its manifest's, as far as
		// the scopes asked for can read them.
		var events []string
		if c.App.WebhookURL != nil {
			events = storage.EventsReadable(c.App.WebhookEvents, c.Scopes)
		}
		renderPage(w, http.StatusOK, "consent.html", map[string]any{"T": pageWords[lang], "Title": pageWords[lang]["consent_title"],
			"CSRF": p.pageCSRF(w, r), "App": c.App.Name, "Store": c.Store.Name, "Scopes": lines, "Events": events, "Params": c.Params})
		return nil
	})
}

// ConsentForm serves POST /oauth/authorize: it takes the merchant's answer: Allow redirects with
// a single-use code and a signature, Deny with error=access_denied and state.
func (p *Pages) ConsentForm() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		user, err := session.User(r, p.db)
		if err != nil {
			return err
		}
		if user == nil {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return nil
		}
		lang := p.pageLang(r, user)
		if err := r.ParseForm(); err != nil || !csrfValid(r) {
			p.problemPage(w, http.StatusForbidden, lang, pageWords[lang]["bad_form"])
			return nil
		}
		c, err := p.checkConsent(r, r.PostForm, user)
		if errors.Is(err, errNotOwner) {
			p.problemPage(w, http.StatusForbidden, lang, "sign in as the store's owner")
			return nil
		}
		if err != nil {
			return err
		}
		if c.Problem != "" {
			p.problemPage(w, http.StatusBadRequest, lang, c.Problem)
			return nil
		}
		redirect := c.Params["redirect_uri"]
		if r.PostFormValue("decision") != "allow" {
			http.Redirect(w, r, redirect+"?"+url.Values{"error": {"access_denied"}, "state": {c.Params["state"]}}.Encode(), http.StatusFound)
			return nil
		}
		code := storage.NewSecret(authCodePrefix)
		if err := p.db.InTx(r.Context(), func(tx *storage.Tx) error {
			return tx.CreateAuthCode(r.Context(), code, c.App.ID, c.Store.ID, user.ID, c.Scopes, redirect)
		}); err != nil {
			return err
		}
		params := url.Values{"code": {code}, "state": {c.Params["state"]}, "store_id": {c.Store.ID.String()}}
		http.Redirect(w, r, withSignature(redirect, c.App.ClientSecret, params, time.Now().Unix()), http.StatusFound)
		return nil
	})
}

// InstallFromListing serves GET /apps/{slug}/install: it starts an install from the app store:
// the service chooses state and the app's first redirect URL receives the code.
func (p *Pages) InstallFromListing() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		app, err := p.db.FindAppBySlug(r.Context(), chi.URLParam(r, "slug"))
		if err != nil {
			p.problemPage(w, http.StatusNotFound, "ar", "unknown app")
			return nil
		}
		b := make([]byte, 18)
		_, _ = rand.Read(b)
		q := url.Values{"client_id": {app.ClientID}, "store_id": {r.URL.Query().Get("store_id")},
			"redirect_uri": {app.RedirectURLs[0]}, "scope": {strings.Join(app.Scopes, " ")},
			"state": {base64.RawURLEncoding.EncodeToString(b)}}
		http.Redirect(w, r, "/oauth/authorize?"+q.Encode(), http.StatusFound)
		return nil
	})
}

// Launch serves GET /apps/{slug}/launch: it opens an installed app for the signed-in owner:
// app_url with store_id, locale, timestamp and hmac.
func (p *Pages) Launch() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		user, err := p.signedIn(w, r)
		if err != nil {
			return err
		}
		lang := p.pageLang(r, user)
		app, err := p.db.FindAppBySlug(r.Context(), chi.URLParam(r, "slug"))
		if err != nil {
			p.problemPage(w, http.StatusNotFound, lang, "unknown app")
			return nil
		}
		storeID, err := uuid.Parse(r.URL.Query().Get("store_id"))
		if err != nil {
			p.problemPage(w, http.StatusBadRequest, lang, "store_id must be a store's id")
			return nil
		}
		store, err := p.db.FindStoreByID(r.Context(), storeID)
		if err != nil || store.OwnerUserID != user.ID {
			toLogin(w, r)
			return nil
		}
		installed, err := p.db.AppInstalled(r.Context(), app.ID, storeID)
		if err != nil {
			return err
		}
		if !installed {
			p.problemPage(w, http.StatusNotFound, lang, "the app is not installed on this store")
			return nil
		}
		params := url.Values{"store_id": {storeID.String()}, "locale": {lang}}
		http.Redirect(w, r, withSignature(app.AppURL, app.ClientSecret, params, time.Now().Unix()), http.StatusFound)
		return nil
	})
}
