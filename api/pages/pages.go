package pages

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/site"
	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/theme"
)

//go:embed *.html
var pageFiles embed.FS

// pageTemplates are the pages' templates by language: {{t "key"}} says
// the key's word in that language.
var pageTemplates = func() map[string]*template.Template {
	sets := map[string]*template.Template{}
	for _, lang := range languages {
		sets[lang] = template.Must(template.New(lang).Funcs(pageFuncs(lang)).ParseFS(pageFiles, "*.html"))
	}
	return sets
}()

// Config is what the pages need beyond the database.
type Config struct {
	// SecureCookies marks the session and CSRF cookies Secure (everywhere
	// but local development), and names them with the __Host- prefix.
	SecureCookies bool
	// OwnOrigins are the merchant URL's and the API's origins: a form post
	// with another Origin, or Sec-Fetch-Site other than same-origin, is
	// refused (session.RequestOrigin).
	OwnOrigins []string
	// CheckPassword checks a sign-in under the server's throttles; it
	// answers session.ErrBadLogin, *session.Throttled or session.ErrBusy.
	CheckPassword func(r *http.Request, email, password string) (storage.User, error)
	// WebhookRetrySchedule is the retry ladder's waits, for the deliveries
	// page's next retry times.
	WebhookRetrySchedule []time.Duration
	// Source is where a request came from (behind the trusted proxies),
	// for the audit log's sign-in entries.
	Source func(r *http.Request) storage.RequestSource
	// ExpensiveRead counts an expensive page (the waybill print run)
	// against the user's export limit, setting the X-RateLimit-* headers
	// and, refused, Retry-After; it reports whether the user had room.
	ExpensiveRead func(w http.ResponseWriter, userID uuid.UUID) bool
}

// Pages serves the merchant's server-rendered pages.
type Pages struct {
	cfg  Config
	db   *storage.DB
	log  *slog.Logger
	site *site.Site
}

// UseSite hands the pages the storefront's renderer, which the theme
// editor's preview shares.
func (p *Pages) UseSite(s *site.Site) { p.site = s }

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
		h.p.problemPage(w, http.StatusInternalServerError, lang, "problem.internal_error")
	}
}

func (p *Pages) handle(fn handlerFunc) http.Handler { return pageHandler{p: p, fn: fn} }

// handleStore serves a store page (one under /stores/{store_id}): fn runs
// for a member of that store (storeMember) whose role holds scope, the
// scope the page's API twin requires ("" for a page every member may
// read); a member without it gets the problem page with 403 and none of
// the page's data, anyone else is sent to sign in.
func (p *Pages) handleStore(scope string, fn func(w http.ResponseWriter, r *http.Request, mp memberPage) error) http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		mp, err := p.storeMember(w, r)
		if err != nil {
			return err
		}
		if scope != "" && !mp.member.Allows(scope) {
			p.problemPageAbout(w, http.StatusForbidden, mp.lang, "problem.scope_missing", scope)
			return nil
		}
		return fn(w, r, mp)
	})
}

// loginCSRFCookie is the sign-in form's CSRF cookie (see session.CookieName).
const loginCSRFCookie = "svc_csrf"

// loginCSRF returns the sign-in form's CSRF token, setting its cookie
// when the browser has none yet: a double-submit cookie, since there is no
// session yet to bind the token to.
func (p *Pages) loginCSRF(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(session.CookieName(loginCSRFCookie, p.cfg.SecureCookies)); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: session.CookieName(loginCSRFCookie, p.cfg.SecureCookies), Value: token, Path: "/",
		HttpOnly: true, Secure: p.cfg.SecureCookies, SameSite: http.SameSiteStrictMode})
	return token
}

// loginFormValid checks the sign-in form: not sent from another site, and
// its token is the cookie's.
func (p *Pages) loginFormValid(r *http.Request) bool {
	c, err := r.Cookie(session.CookieName(loginCSRFCookie, p.cfg.SecureCookies))
	return session.RequestOrigin(r, p.cfg.OwnOrigins) != session.OriginForeign &&
		err == nil && len(c.Value) >= 32 && subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) == 1
}

// sessionCSRF is the CSRF token of the request's session ("" without a
// session cookie), for a signed-in page's forms and scripts.
func (p *Pages) sessionCSRF(r *http.Request) string {
	if secret := session.Secret(r, p.cfg.SecureCookies); secret != "" {
		return session.CSRFToken(secret)
	}
	return ""
}

// sessionFormValid checks a signed-in page's form: not sent from another
// site, and its token is the session's.
func (p *Pages) sessionFormValid(r *http.Request) bool {
	return session.RequestOrigin(r, p.cfg.OwnOrigins) != session.OriginForeign &&
		session.CSRFValid(r, p.cfg.SecureCookies, r.PostFormValue("csrf"))
}

// renderPage answers with the page's template in lang. Its forms post to
// this origin, and to formTargets (origins) too when given.
func renderPage(w http.ResponseWriter, status int, lang, name string, data map[string]any, formTargets ...string) {
	pageHeaders(w, "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'", formTargets...)
	w.WriteHeader(status)
	_ = pageTemplates[lang].ExecuteTemplate(w, name, data)
}

// pageHeaders are every page's headers, with its content security policy:
// csp, and on every page forms that post only to this origin (and to
// formTargets) and no <base> to send them or the scripts elsewhere.
func pageHeaders(w http.ResponseWriter, csp string, formTargets ...string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", csp+"; "+formAndBase(formTargets...))
	h.Set("Referrer-Policy", "no-referrer")
}

// formAndBase is the part of every page's CSP that keeps its forms and its
// links here: form-action 'self' (and formTargets; Chromium checks it on
// the redirect that follows a post too) and base-uri 'none'.
func formAndBase(formTargets ...string) string {
	sources := []string{"form-action 'self'"}
	for _, target := range formTargets {
		if target != "" {
			sources = append(sources, target)
		}
	}
	return strings.Join(sources, " ") + "; base-uri 'none'"
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
	user, err := session.User(r, p.db, p.cfg.SecureCookies)
	if err != nil {
		return nil, err
	}
	if user == nil {
		toLogin(w, r)
		return nil, errAnswered
	}
	return user, nil
}

// problemPage answers with the problem page: what went wrong is the word
// of key ("problem.…") in lang.
func (p *Pages) problemPage(w http.ResponseWriter, status int, lang, key string) {
	p.problemPageAbout(w, status, lang, key, "")
}

// problemPageAbout is problemPage naming what the problem is about (a
// scope, kept left to right in an Arabic sentence).
func (p *Pages) problemPageAbout(w http.ResponseWriter, status int, lang, key, about string) {
	renderPage(w, status, lang, "problem.html", map[string]any{"Title": word(lang, "problem.title"), "Error": word(lang, key),
		"About": about})
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
		renderPage(w, http.StatusOK, lang, "login.html", map[string]any{"Title": word(lang, "login.title"),
			"CSRF": p.loginCSRF(w, r), "Next": next, "OtherLangURL": otherLoginLanguage(lang, next)})
		return nil
	})
}

// LoginForm serves POST /login: it signs a merchant in from the page and returns them to where
// they were going.
func (p *Pages) LoginForm() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		lang := p.pageLang(r, nil)
		if err := r.ParseForm(); err != nil || !p.loginFormValid(r) {
			p.problemPage(w, http.StatusForbidden, lang, "problem.bad_form")
			return nil
		}
		next := safeNext(r.PostFormValue("next"))
		email := strings.TrimSpace(r.PostFormValue("email"))
		user, err := p.cfg.CheckPassword(r, email, r.PostFormValue("password"))
		var throttled *session.Throttled
		status, refusal := 0, ""
		switch {
		case errors.Is(err, session.ErrBadLogin):
			status, refusal = http.StatusUnauthorized, "login.bad_login"
		case errors.As(err, &throttled):
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(throttled.RetryAfter.Seconds()))))
			status, refusal = http.StatusTooManyRequests, "login.throttled"
		case errors.Is(err, session.ErrBusy):
			w.Header().Set("Retry-After", "1")
			status, refusal = http.StatusServiceUnavailable, "login.busy"
		case err != nil:
			return err
		}
		if status != 0 {
			renderPage(w, status, lang, "login.html", map[string]any{"Title": word(lang, "login.title"),
				"CSRF": p.loginCSRF(w, r), "Next": next, "Email": email, "Error": word(lang, refusal), "OtherLangURL": otherLoginLanguage(lang, next)})
			return nil
		}
		if err := session.Start(w, r, p.db, user.ID, p.cfg.SecureCookies, p.cfg.Source(r)); err != nil {
			return err
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	})
}

// storePage renders a store page (one under /stores/{store_id}) in the
// store shell: the store's name, its pages and the switcher.
// A member of more than one store switches between them on every page.
func (p *Pages) storePage(w http.ResponseWriter, mp memberPage, name, section string, data map[string]any) {
	lang := mp.lang
	data["StoreID"], data["StoreName"], data["Section"], data["CSRF"] = mp.store.ID, mp.store.Name, section, mp.csrf
	type otherStore struct {
		ID         uuid.UUID
		Name, Role string
	}
	var others []otherStore
	for _, m := range mp.stores {
		if m.Store.ID != mp.store.ID {
			others = append(others, otherStore{ID: m.Store.ID, Name: m.Store.Name, Role: roleLabel(lang, m.Membership.RoleName, m.Membership.BuiltIn)})
		}
	}
	data["OtherStores"], data["SwitchPath"] = others, section
	if section == "orders" { // an order is one store's: the other store opens on its shipments
		data["SwitchPath"] = "shipments"
	}
	renderPage(w, http.StatusOK, lang, name, data)
}

// utcTime is how the pages show a time: UTC, to the second.
func utcTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

//go:embed assets
var assetFiles embed.FS

// Assets serves the pages' scripts and styles.
func Assets() http.Handler {
	sub, _ := fs.Sub(assetFiles, "assets")
	files := http.StripPrefix("/assets/", http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}

// memberPage is what a store page knows of its reader: the signed-in user,
// the store the path names, their membership there, and every store they
// belong to (for the switcher), all from one query.
type memberPage struct {
	user   *storage.User
	store  storage.Store
	member storage.Membership
	stores []storage.MemberStore
	lang   string // the page's language, the member's locale
	csrf   string // the page's CSRF token, which its scripts send with every call
}

// storeMember is the store named in the path, when the signed-in user is
// one of its members (any role: handleStore checks the page's scope, and
// what they may change is the API's to say, decisions §16) and the store
// is open; a suspended or closed store is the problem page with 403, and
// anyone else is sent to sign in.
func (p *Pages) storeMember(w http.ResponseWriter, r *http.Request) (memberPage, error) {
	user, err := p.signedIn(w, r)
	if err != nil {
		return memberPage{}, err
	}
	storeID, err := uuid.Parse(chi.URLParam(r, "store_id"))
	if err != nil {
		p.problemPage(w, http.StatusNotFound, p.pageLang(r, user), "problem.no_store")
		return memberPage{}, errAnswered
	}
	stores, err := p.db.FindMemberStores(r.Context(), user.ID)
	if err != nil {
		return memberPage{}, err
	}
	for _, ms := range stores {
		if ms.Store.ID != storeID {
			continue
		}
		member := ms.Membership
		member.StoreState = ms.Store.LifecycleState
		if !member.StoreOpen() {
			// As the API answers its sessions and tokens (403
			// STORE_SUSPENDED): a suspended or closed store shows its
			// members nothing, the print run's consignees included.
			p.problemPageAbout(w, http.StatusForbidden, p.pageLang(r, user), "problem.store_suspended", "STORE_SUSPENDED")
			return memberPage{}, errAnswered
		}
		return memberPage{user: user, store: ms.Store, member: member, stores: stores, lang: p.pageLang(r, user),
			csrf: p.sessionCSRF(r)}, nil
	}
	toLogin(w, r)
	return memberPage{}, errAnswered
}
