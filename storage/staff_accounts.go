package storage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// User is a merchant who signs in to the merchant application.
type User struct {
	ID           uuid.UUID
	Email        string
	PasswordHash string
	Name         string
	Locale       string
	CreatedAt    time.Time
	// EmailVerified says the address is proven: its verification link was
	// used, it came through an invitation's mail, or the account predates
	// verification (migration 0051). CreateUser writes it as given.
	EmailVerified bool
}

// NewSecret returns prefix + 256 random bits, URL-safe: session ids, access
// tokens, app secrets and authorization codes.
func NewSecret(prefix string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// HashSecret is how session ids and bearer tokens are stored: their SHA-256.
// The secrets are 256-bit random values, so a fast hash is enough; nothing
// about a secret can be recovered from the table.
func HashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// CreateUserAndStore signs a merchant up: the user, the first store, in one go.
func (tx *Tx) CreateUserAndStore(ctx context.Context, u *User, s *Store) error {
	if u.Locale == "" {
		u.Locale = s.DefaultLanguage
	}
	if err := tx.CreateUser(ctx, u); err != nil {
		return err
	}
	s.ID = NewID()
	s.OwnerUserID = u.ID
	s.LifecycleState = "trial"
	now := u.CreatedAt
	s.CreatedAt = now
	if _, err := tx.tx.Exec(ctx,
		`INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
		s.ID, s.OwnerUserID, s.Name, s.Subdomain, s.Currency, s.DefaultLanguage, s.LifecycleState, now); err != nil {
		if isUniqueViolation(err, "stores_subdomain_key") {
			return &ConflictError{Field: "store.subdomain", Message: "subdomain is taken"}
		}
		return fmt.Errorf("create store: %w", err)
	}
	if err := tx.createBuiltInRoles(ctx, *s); err != nil {
		return err
	}
	if err := tx.createBuiltInMenus(ctx, s.ID, now); err != nil {
		return err
	}
	return tx.createDefaultLocation(ctx, *s)
}

// CreateUser adds an account (a signup's, or an invited member's).
func (tx *Tx) CreateUser(ctx context.Context, u *User) error {
	u.ID = NewID()
	u.CreatedAt = tx.now()
	if _, err := tx.tx.Exec(ctx,
		`INSERT INTO users (id, email, password_hash, name, locale, created_at, updated_at, email_verified_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $6, CASE WHEN $7 THEN $6::timestamptz END)`,
		u.ID, u.Email, u.PasswordHash, u.Name, u.Locale, u.CreatedAt, u.EmailVerified); err != nil {
		if isUniqueViolation(err, "users_email_key") {
			return &ConflictError{Field: "email", Message: "email is already registered"}
		}
		return fmt.Errorf("create user: %w", err)
	}
	return nil
}

// FindUserByEmail returns the user with that email (case-insensitive).
func (r reader) FindUserByEmail(ctx context.Context, email string) (User, error) {
	var u User
	err := r.q.QueryRow(ctx,
		`SELECT id, email, password_hash, name, locale, created_at, email_verified_at IS NOT NULL FROM users WHERE email = $1`, email).
		Scan(&u.ID, &u.Email, &u.PasswordHash, &u.Name, &u.Locale, &u.CreatedAt, &u.EmailVerified)
	if err != nil {
		return User{}, notFoundIfNoRows(err, "find user by email")
	}
	return u, nil
}

// FindUserByID returns one user.
func (r reader) FindUserByID(ctx context.Context, id uuid.UUID) (User, error) {
	var u User
	err := r.q.QueryRow(ctx,
		`SELECT id, email, password_hash, name, locale, created_at, email_verified_at IS NOT NULL FROM users WHERE id = $1`, id).
		Scan(&u.ID, &u.Email, &u.PasswordHash, &u.Name, &u.Locale, &u.CreatedAt, &u.EmailVerified)
	if err != nil {
		return User{}, notFoundIfNoRows(err, "find user")
	}
	return u, nil
}

// Session is a signed-in browser.
type Session struct {
	UserID    uuid.UUID
	ExpiresAt time.Time
}

// CreateSession stores a session under the hash of its secret.
func (db *DB) CreateSession(ctx context.Context, secret string, userID uuid.UUID, ttl time.Duration, from RequestSource) (Session, error) {
	var s Session
	err := db.InTx(ctx, func(tx *Tx) error {
		var err error
		s, err = tx.CreateSession(ctx, secret, userID, ttl, from)
		return err
	})
	return s, err
}

// CreateSession signs a user in within the transaction: the session, its
// network among the user's known ones (staff_lockout.go) and a
// staff.signed_in audit entry in each store the user is a member of.
func (tx *Tx) CreateSession(ctx context.Context, secret string, userID uuid.UUID, ttl time.Duration, from RequestSource) (Session, error) {
	s := Session{UserID: userID, ExpiresAt: tx.now().Add(ttl)}
	_, err := tx.tx.Exec(ctx, `INSERT INTO sessions (id_hash, user_id, expires_at) VALUES ($1, $2, $3)`,
		HashSecret(secret), userID, s.ExpiresAt)
	if err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	if err := tx.recordSignInNetwork(ctx, userID, from); err != nil {
		return Session{}, err
	}
	return s, tx.recordSignIns(ctx, userID, from)
}

// FindSession returns the live session for a cookie secret.
func (db *DB) FindSession(ctx context.Context, secret string) (Session, error) {
	var s Session
	err := db.pool.QueryRow(ctx, `SELECT user_id, expires_at FROM sessions WHERE id_hash = $1 AND expires_at > $2`,
		HashSecret(secret), db.now()).Scan(&s.UserID, &s.ExpiresAt)
	if err != nil {
		return Session{}, notFoundIfNoRows(err, "find session")
	}
	return s, nil
}

// DeleteSession signs a browser out.
func (db *DB) DeleteSession(ctx context.Context, secret string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM sessions WHERE id_hash = $1`, HashSecret(secret)); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// EndSessions signs a user out of every browser but the one whose cookie
// secret is keep (none when keep is empty), and records action
// (staff.signed_out_everywhere, staff.password_changed) in the user's stores.
func (tx *Tx) EndSessions(ctx context.Context, userID uuid.UUID, keep, action string, from RequestSource) error {
	kept := []byte{}
	if keep != "" {
		kept = HashSecret(keep)
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id_hash <> $2`, userID, kept); err != nil {
		return fmt.Errorf("end sessions: %w", err)
	}
	return tx.recordAccountEvent(ctx, userID, action, from)
}

// SetPassword replaces a user's password hash.
func (tx *Tx) SetPassword(ctx context.Context, userID uuid.UUID, hash string) error {
	tag, err := tx.tx.Exec(ctx, `UPDATE users SET password_hash = $2, updated_at = $3 WHERE id = $1`, userID, hash, tx.now())
	if err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set password: %w", ErrNotFound)
	}
	return nil
}

// TokenKind tells a merchant's personal access token from an app's token.
type TokenKind string

// Token kinds.
const (
	TokenPAT TokenKind = "pat"
	TokenApp TokenKind = "app"
)

// Token is a bearer credential bound to one store.
type Token struct {
	ID         uuid.UUID
	Kind       TokenKind
	StoreID    uuid.UUID
	UserID     *uuid.UUID
	AppID      *uuid.UUID // the app an app token was issued to
	Name       string
	Hint       string
	Scopes     []string
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
	CreatedAt  time.Time
	// StoreState is the lifecycle state of the token's store, read with the
	// token by FindTokenBySecret (trial, active, suspended, closed).
	StoreState string
	// Minter is the membership of the user who minted a personal access
	// token, read with it by FindTokenBySecret (nil: no longer a member).
	Minter *Membership
}

// StoreOpen reports whether the token's store may still be used: not
// suspended or closed.
func (t Token) StoreOpen() bool { return storeOpen(t.StoreState) }

// storeOpen reports whether a store in lifecycle state may still be used:
// not suspended or closed.
func storeOpen(state string) bool { return state != "suspended" && state != "closed" }

// Usable reports whether the token may authenticate a request at now.
func (t Token) Usable(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}

const tokenColumns = `id, kind, store_id, user_id, app_id, name, token_hint, scopes, expires_at, revoked_at, last_used_at, created_at`

func scanToken(row pgx.Row) (Token, error) {
	var t Token
	err := row.Scan(&t.ID, &t.Kind, &t.StoreID, &t.UserID, &t.AppID, &t.Name, &t.Hint, &t.Scopes, &t.ExpiresAt, &t.RevokedAt, &t.LastUsedAt, &t.CreatedAt)
	return t, err
}

// CreateToken stores a new token under the hash of its secret.
func (tx *Tx) CreateToken(ctx context.Context, t *Token, secret string) error {
	t.ID = NewID()
	t.CreatedAt = tx.now()
	_, err := tx.tx.Exec(ctx,
		`INSERT INTO api_tokens (id, kind, store_id, user_id, name, token_hash, token_hint, scopes, expires_at, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		t.ID, t.Kind, t.StoreID, t.UserID, t.Name, HashSecret(secret), t.Hint, t.Scopes, t.ExpiresAt, t.CreatedAt)
	if err != nil {
		return fmt.Errorf("create token: %w", err)
	}
	return nil
}

// FindTokenBySecret returns the token whose secret this is, usable or not,
// with its store's lifecycle state (one query on every bearer request).
func (r reader) FindTokenBySecret(ctx context.Context, secret string) (Token, error) {
	var (
		t       Token
		roleID  *uuid.UUID
		role    Membership
		name    *string
		builtIn *string
		scopes  []string
	)
	// The minter's membership comes with the token: a personal token acts
	// within its scopes and its minter's role, from one read.
	err := r.q.QueryRow(ctx, `SELECT t.`+strings.ReplaceAll(tokenColumns, ", ", ", t.")+`, s.lifecycle_state,
			m.role_id, ro.name, ro.built_in, ro.scopes
		FROM api_tokens t JOIN stores s ON s.id = t.store_id
		LEFT JOIN store_members m ON t.kind = 'pat' AND m.store_id = t.store_id AND m.user_id = t.user_id
		LEFT JOIN roles ro ON ro.id = m.role_id
		WHERE t.token_hash = $1`, HashSecret(secret)).Scan(
		&t.ID, &t.Kind, &t.StoreID, &t.UserID, &t.AppID, &t.Name, &t.Hint, &t.Scopes, &t.ExpiresAt, &t.RevokedAt, &t.LastUsedAt, &t.CreatedAt, &t.StoreState,
		&roleID, &name, &builtIn, &scopes)
	if err != nil {
		return Token{}, notFoundIfNoRows(err, "find token")
	}
	if roleID != nil && t.UserID != nil {
		role.StoreID, role.UserID, role.RoleID, role.RoleName, role.Scopes = t.StoreID, *t.UserID, *roleID, *name, scopes
		if builtIn != nil {
			role.BuiltIn = *builtIn
		}
		t.Minter = &role
	}
	return t, nil
}

// FindTokens lists a store's tokens of one kind, newest first.
func (r reader) FindTokens(ctx context.Context, storeID uuid.UUID, kind TokenKind) ([]Token, error) {
	rows, err := r.q.Query(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE store_id = $1 AND kind = $2 ORDER BY created_at DESC, id`, storeID, kind)
	if err != nil {
		return nil, fmt.Errorf("find tokens: %w", err)
	}
	tokens, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Token, error) { return scanToken(row) })
	if err != nil {
		return nil, fmt.Errorf("find tokens: %w", err)
	}
	return tokens, nil
}

// RevokeToken makes a store's token unusable from now on.
func (tx *Tx) RevokeToken(ctx context.Context, storeID, id uuid.UUID, kind TokenKind) error {
	tag, err := tx.tx.Exec(ctx, `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $4)
		WHERE store_id = $1 AND id = $2 AND kind = $3`, storeID, id, kind, tx.now())
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("revoke token: %w", ErrNotFound)
	}
	return nil
}

// TouchToken records use of a token. It writes at most once a minute per token,
// so the hot path does not turn every read into a write.
func (db *DB) TouchToken(ctx context.Context, t Token) error {
	now := db.now()
	if t.LastUsedAt != nil && now.Sub(*t.LastUsedAt) < time.Minute {
		return nil
	}
	_, err := db.pool.Exec(ctx, `UPDATE api_tokens SET last_used_at = $2
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)`, t.ID, now, now.Add(-time.Minute))
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("touch token: %w", err)
	}
	return nil
}
