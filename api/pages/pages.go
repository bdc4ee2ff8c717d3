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

var watchWords = map[string]map[string]string{
	"ar": {
		"nav_imports": "الاستيراد", "nav_deliveries": "إشعارات الويب هوك", "nav_work": "الأعمال الجارية",
		"imports_title": "استيراد المنتجات", "upload": "رفع الملف", "dry_run": "تجربة دون حفظ", "file": "ملف CSV",
		"no_imports": "لا توجد عمليات استيراد بعد.", "status_running": "جارٍ", "status_succeeded": "اكتمل", "status_failed": "فشل",
		"rows": "صف", "created": "أُنشئ", "updated": "حُدّث", "unchanged": "بلا تغيير", "failed_rows": "صفوف بها أخطاء",
		"row": "الصف", "column": "العمود", "code": "الرمز", "message": "الرسالة", "download_errors": "تنزيل تقرير الأخطاء (CSV)",
		"dry_run_badge": "تجربة", "started": "بدأ", "upload_failed": "تعذّر رفع الملف",
		"deliveries_title": "إشعارات الويب هوك", "no_subscriptions": "لا توجد اشتراكات ويب هوك.", "active": "مفعّل", "inactive": "متوقف",
		"event": "الحدث", "status": "الحالة", "attempts": "المحاولات", "response": "رد الخادم", "next_retry": "المحاولة التالية",
		"created_at": "التاريخ", "redeliver": "إعادة الإرسال", "recover": "استعادة الإشعارات المتعثرة (آخر 3 أيام)",
		"no_deliveries": "لا توجد إشعارات بعد.", "enable": "إعادة تفعيل الاشتراك", "enabled": "فُعّل الاشتراك", "queued": "أُضيفت إلى قائمة الإرسال", "retrying_wait": "يُعاد تلقائيًا",
		"work_title": "الأعمال الجارية", "images_processing": "صور قيد المعالجة", "no_images": "لا توجد صور قيد المعالجة.",
		"product": "المنتج", "since": "منذ", "exceptions": "طلبات تحتاج انتباهك", "no_exceptions": "لا توجد طلبات تحتاج انتباهك.",
		"order": "الطلب", "reason": "السبب", "nav_shipments": "الشحنات", "nav_staff": "الفريق والأدوار", "nav_analytics": "التحليلات", "switch_store": "متاجرك الأخرى",
		"d_pending": "بانتظار الإرسال", "d_retrying": "تُعاد المحاولة", "d_succeeded": "وصل", "d_failed": "فشل",
		"d_exhausted": "استُنفدت المحاولات", "d_gone": "العنوان لم يعد موجودًا", "d_skipped": "تُخطّي",
	},
	"en": {
		"nav_imports": "Imports", "nav_deliveries": "Webhook deliveries", "nav_work": "Background work",
		"imports_title": "Product imports", "upload": "Upload", "dry_run": "Dry run (save nothing)", "file": "CSV file",
		"no_imports": "No imports yet.", "status_running": "Running", "status_succeeded": "Finished", "status_failed": "Failed",
		"rows": "rows", "created": "created", "updated": "updated", "unchanged": "unchanged", "failed_rows": "rows with errors",
		"row": "Row", "column": "Column", "code": "Code", "message": "Message", "download_errors": "Download the error report (CSV)",
		"dry_run_badge": "dry run", "started": "Started", "upload_failed": "The file could not be uploaded",
		"deliveries_title": "Webhook deliveries", "no_subscriptions": "No webhook subscriptions.", "active": "active", "inactive": "switched off",
		"event": "Event", "status": "Status", "attempts": "Attempts", "response": "Response", "next_retry": "Next retry",
		"created_at": "Created", "redeliver": "Redeliver", "recover": "Recover failed deliveries (last 3 days)",
		"no_deliveries": "No deliveries yet.", "enable": "Switch the subscription back on", "enabled": "Switched on", "queued": "Queued", "retrying_wait": "retried automatically",
		"work_title": "Background work", "images_processing": "Images processing", "no_images": "No images are processing.",
		"product": "Product", "since": "Since", "exceptions": "Orders that need you", "no_exceptions": "No orders need you.",
		"order": "Order", "reason": "Reason", "nav_shipments": "Shipments", "nav_staff": "Staff and roles", "nav_analytics": "Analytics", "switch_store": "Your other stores",
		"d_pending": "pending", "d_retrying": "retrying", "d_succeeded": "succeeded", "d_failed": "failed",
		"d_exhausted": "exhausted", "d_gone": "gone", "d_skipped": "skipped",
	},
}

// storePage renders a store page (one under /stores/{store_id}) in the
// store shell: the store's name, its pages and the switcher.
// A member of more than one store switches between them on every page.
func (p *Pages) storePage(w http.ResponseWriter, mp memberPage, name, lang, section string, data map[string]any) {
	data["T"], data["W"], data["Lang"] = pageWords[lang], watchWords[lang], lang
	data["StoreID"], data["StoreName"], data["Section"] = mp.store.ID, mp.store.Name, section
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
	renderPage(w, http.StatusOK, name, data)
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
}

// storeMember is the store named in the path, when the signed-in user is
// one of its members (any role: what they may change is the API's to say,
// decisions §16), or a redirect to sign in.
func (p *Pages) storeMember(w http.ResponseWriter, r *http.Request) (memberPage, error) {
	user, err := p.signedIn(w, r)
	if err != nil {
		return memberPage{}, err
	}
	storeID, err := uuid.Parse(chi.URLParam(r, "store_id"))
	if err != nil {
		p.problemPage(w, http.StatusNotFound, p.pageLang(r, user), "no such store")
		return memberPage{}, errAnswered
	}
	stores, err := p.db.FindMemberStores(r.Context(), user.ID)
	if err != nil {
		return memberPage{}, err
	}
	for _, ms := range stores {
		if ms.Store.ID == storeID {
			return memberPage{user: user, store: ms.Store, member: ms.Membership, stores: stores, lang: p.pageLang(r, user)}, nil
		}
	}
	toLogin(w, r)
	return memberPage{}, errAnswered
}
