package pages

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/storage"
)

// The app pages (decisions §5, §8): the consent page of an OAuth install,
// an install from the app store, and an installed app's launch.

// authCodePrefix starts every authorization code the consent page issues.
const authCodePrefix = "svc_code_"

var statePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// consentRequest is a consent link that passed every rule of spec §5.2.
type consentRequest struct {
	App     storage.App
	Store   storage.Store
	Scopes  []string
	Params  map[string]string
	Problem string // the word of the rule the link breaks ("problem.…"), if it breaks one
	About   string // what in the link breaks it, when the rule names it
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
		c.Problem = "problem.unknown_client"
		return c, nil
	}
	if err != nil {
		return c, err
	}
	c.App = app
	if !slices.Contains(app.RedirectURLs, c.Params["redirect_uri"]) {
		c.Problem = "problem.bad_redirect"
		return c, nil
	}
	if !statePattern.MatchString(c.Params["state"]) {
		c.Problem = "problem.bad_state"
		return c, nil
	}
	requested := strings.Fields(c.Params["scope"])
	for _, sc := range app.Scopes {
		if !slices.Contains(requested, sc) {
			c.Problem, c.About = "problem.missing_scope", sc
			return c, nil
		}
	}
	for _, sc := range requested {
		if !slices.Contains(app.Scopes, sc) && !slices.Contains(app.OptionalScopes, sc) {
			c.Problem, c.About = "problem.unknown_scope", sc
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
		c.Problem = "problem.bad_store_id"
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
			p.problemPageAbout(w, http.StatusBadRequest, lang, c.Problem, c.About)
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
		// Allow and Deny both redirect to the app: the form may go there.
		renderPage(w, http.StatusOK, lang, "app_consent.html", map[string]any{"Title": word(lang, "consent.title"),
			"CSRF": p.sessionCSRF(r), "App": c.App.Name, "Store": c.Store.Name, "Scopes": lines, "Events": events, "Params": c.Params},
			session.OriginOf(c.Params["redirect_uri"]))
		return nil
	})
}

// ConsentForm serves POST /oauth/authorize: it takes the merchant's answer: Allow redirects with
// a single-use code and a signature, Deny with error=access_denied and state.
func (p *Pages) ConsentForm() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		user, err := session.User(r, p.db, p.cfg.SecureCookies)
		if err != nil {
			return err
		}
		if user == nil {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return nil
		}
		lang := p.pageLang(r, user)
		if err := r.ParseForm(); err != nil || !p.sessionFormValid(r) {
			p.problemPage(w, http.StatusForbidden, lang, "problem.bad_form")
			return nil
		}
		c, err := p.checkConsent(r, r.PostForm, user)
		if errors.Is(err, errNotOwner) {
			p.problemPage(w, http.StatusForbidden, lang, "problem.not_owner")
			return nil
		}
		if err != nil {
			return err
		}
		if c.Problem != "" {
			p.problemPageAbout(w, http.StatusBadRequest, lang, c.Problem, c.About)
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
			p.problemPage(w, http.StatusNotFound, p.pageLang(r, nil), "problem.unknown_app")
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
			p.problemPage(w, http.StatusNotFound, lang, "problem.unknown_app")
			return nil
		}
		storeID, err := uuid.Parse(r.URL.Query().Get("store_id"))
		if err != nil {
			p.problemPage(w, http.StatusBadRequest, lang, "problem.bad_store_id")
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
			p.problemPage(w, http.StatusNotFound, lang, "problem.not_installed")
			return nil
		}
		params := url.Values{"store_id": {storeID.String()}, "locale": {lang}}
		http.Redirect(w, r, withSignature(app.AppURL, app.ClientSecret, params, time.Now().Unix()), http.StatusFound)
		return nil
	})
}
