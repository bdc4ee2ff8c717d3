// Package session is the merchant's signed-in session, shared by the JSON
// API and the server-rendered pages: the password check, the session
// cookie, and who a request's cookie belongs to.
package session

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/merchantsvc/svc/storage"
)

// sessionCookie is the session cookie's name (see CookieName); its value
// is a secret kept hashed.
const sessionCookie = "svc_session"

// CookieName names a cookie the service sets for its own host alone
// (Path=/, no Domain): with the __Host- prefix when the cookie is Secure,
// so that no sibling subdomain can set or shadow it; bare over plain http
// (local development and the tests), where browsers refuse the prefix.
// Every host-only cookie is named here, and a secure server reads only
// the prefixed name.
func CookieName(name string, secure bool) string {
	if secure {
		return "__Host-" + name
	}
	return name
}

// Secret is the session secret a request's cookie carries ("" for none).
func Secret(r *http.Request, secure bool) string {
	c, err := r.Cookie(CookieName(sessionCookie, secure))
	if err != nil {
		return ""
	}
	return c.Value
}

// TTL is how long a session lasts.
const TTL = 14 * 24 * time.Hour

// ErrBadLogin refuses an unknown email or a wrong password alike.
var ErrBadLogin = errors.New("invalid email or password")

// Throttled refuses a password attempt while its account or client network
// has used up its failures (429 with Retry-After).
type Throttled struct{ RetryAfter time.Duration }

func (e *Throttled) Error() string {
	return fmt.Sprintf("too many password attempts; retry after %s", e.RetryAfter)
}

// ErrBusy sheds a password check when every hashing slot stayed taken
// (503 with Retry-After).
var ErrBusy = errors.New("password hashing at capacity")

// dummyHash keeps a login for an unknown email as slow as one for a known email.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("not a password of anyone"), bcrypt.DefaultCost)

// CheckPassword finds the user by email and checks the password, taking the
// same time for an unknown email (ErrBadLogin either way).
func CheckPassword(ctx context.Context, db *storage.DB, email, password string) (storage.User, error) {
	user, err := db.FindUserByEmail(ctx, strings.TrimSpace(email))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return storage.User{}, err
	}
	hash := []byte(user.PasswordHash)
	if user.PasswordHash == "" {
		hash = dummyHash
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || user.PasswordHash == "" {
		return storage.User{}, ErrBadLogin
	}
	return user, nil
}

// Start creates a session for the user and sets its cookie (Secure when
// secure; everywhere but local development).
// The sign-in is written to the audit log of each store the user belongs
// to, with where the request came from.
func Start(w http.ResponseWriter, r *http.Request, db *storage.DB, userID uuid.UUID, secure bool, from storage.RequestSource) error {
	secret := storage.NewSecret("")
	s, err := db.CreateSession(r.Context(), secret, userID, TTL, from)
	if err != nil {
		return fmt.Errorf("start session: %w", err)
	}
	http.SetCookie(w, Cookie(secret, s.ExpiresAt, secure))
	return nil
}

// Cookie is the session cookie for a session secret.
func Cookie(secret string, expires time.Time, secure bool) *http.Cookie {
	return &http.Cookie{Name: CookieName(sessionCookie, secure), Value: secret, Path: "/", Expires: expires,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
}

// End deletes the request's session, if any, and clears its cookie.
func End(w http.ResponseWriter, r *http.Request, db *storage.DB, secure bool) error {
	if secret := Secret(r, secure); secret != "" {
		if err := db.DeleteSession(r.Context(), secret); err != nil {
			return err
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName(sessionCookie, secure), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
	return nil
}

// User is the signed-in merchant of a request, or nil without a live session.
func User(r *http.Request, db *storage.DB, secure bool) (*storage.User, error) {
	secret := Secret(r, secure)
	if secret == "" {
		return nil, nil
	}
	s, err := db.FindSession(r.Context(), secret)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u, err := db.FindUserByID(r.Context(), s.UserID)
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// CSRFToken is the CSRF token of the session whose secret is given, which
// the merchant's pages hand their scripts and forms: an HMAC keyed with
// the session's own secret, so it is good for that session alone, cannot
// be made without the cookie (HttpOnly, never in a page) and needs no key
// of the server's to share between replicas or rotate.
func CSRFToken(secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("svc csrf token v1"))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// CSRFValid reports whether token is the CSRF token of the request's session.
func CSRFValid(r *http.Request, secure bool, token string) bool {
	secret := Secret(r, secure)
	return secret != "" && token != "" && hmac.Equal([]byte(token), []byte(CSRFToken(secret)))
}

// Origin is where a browser says a request was sent from.
type Origin int

// What a request's Sec-Fetch-Site and Origin headers say.
const (
	// OriginUnsaid: neither header (a browser too old to send them, or not
	// a browser at all); only the page's CSRF token can vouch for it.
	OriginUnsaid Origin = iota
	// OriginOwn: the merchant's own pages.
	OriginOwn
	// OriginForeign: any other site, a sibling subdomain included.
	OriginForeign
)

// RequestOrigin reads where a request comes from: its own pages when
// Sec-Fetch-Site is same-origin or Origin is one of own (scheme://host[:port]);
// foreign when either header says anything else. `Origin: null` (a page
// with Referrer-Policy no-referrer, a sandboxed frame) says nothing on its own.
func RequestOrigin(r *http.Request, own []string) Origin {
	site, origin := r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Origin")
	if origin == "null" {
		origin = ""
	}
	switch {
	case site == "same-origin" || (origin != "" && slices.Contains(own, origin)):
		return OriginOwn
	case site != "" || origin != "":
		return OriginForeign
	}
	return OriginUnsaid
}

// OriginOf is a URL's origin as a browser's Origin header says it
// (scheme://host[:port]), or "" when it has none a policy could name.
func OriginOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" || strings.ContainsAny(u.Host, " ;,'\"") {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// WriteAllowed reports whether a write authenticated by the session cookie
// may go on: it comes from the merchant's own pages, or says nothing of
// where it comes from and carries this session's CSRF token.
func WriteAllowed(r *http.Request, secure bool, own []string, token string) bool {
	switch RequestOrigin(r, own) {
	case OriginOwn:
		return true
	case OriginForeign:
		return false
	}
	return CSRFValid(r, secure, token)
}

// Writes reports whether a request of method may change state: any but
// GET, HEAD and OPTIONS.
func Writes(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}
