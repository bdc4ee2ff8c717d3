// Package session is the merchant's signed-in session, shared by the JSON
// API and the server-rendered pages: the password check, the session
// cookie, and who a request's cookie belongs to.
package session

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/merchantsvc/svc/storage"
)

// CookieName is the session cookie; its value is a secret kept hashed.
const CookieName = "svc_session"

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
	return &http.Cookie{Name: CookieName, Value: secret, Path: "/", Expires: expires,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
}

// End deletes the request's session, if any, and clears its cookie.
func End(w http.ResponseWriter, r *http.Request, db *storage.DB, secure bool) error {
	if cookie, err := r.Cookie(CookieName); err == nil {
		if err := db.DeleteSession(r.Context(), cookie.Value); err != nil {
			return err
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
	return nil
}

// User is the signed-in merchant of a request, or nil without a live session.
func User(r *http.Request, db *storage.DB) (*storage.User, error) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return nil, nil
	}
	s, err := db.FindSession(r.Context(), c.Value)
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
