package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Authorization-code refusals (spec §7: 400 with a message saying which).
var (
	ErrCodeInvalid = errors.New("authorization code is invalid")
	ErrCodeExpired = errors.New("authorization code has expired")
	ErrCodeUsed    = errors.New("authorization code was already used")
)

// CodeLifetime is how long an authorization code may be exchanged (spec §8).
const CodeLifetime = 10 * time.Minute

// App is a partner app and its manifest.
type App struct {
	ID             uuid.UUID
	OwnerUserID    uuid.UUID
	Name           string
	Slug           string
	AppURL         string
	Scopes         []string
	OptionalScopes []string
	RedirectURLs   []string
	WebhookURL     *string
	WebhookEvents  []string
	ClientID       string
	ClientSecret   string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

const appColumns = `id, owner_user_id, name, slug, app_url, scopes, optional_scopes, redirect_urls, webhook_url, webhook_events,
	client_id, client_secret, created_at, updated_at`

func scanApp(row pgx.Row) (App, error) {
	var a App
	err := row.Scan(&a.ID, &a.OwnerUserID, &a.Name, &a.Slug, &a.AppURL, &a.Scopes, &a.OptionalScopes, &a.RedirectURLs, &a.WebhookURL,
		&a.WebhookEvents, &a.ClientID, &a.ClientSecret, &a.CreatedAt, &a.UpdatedAt)
	return a, err
}

// CreateApp registers an app; the slug is unique across the platform.
func (tx *Tx) CreateApp(ctx context.Context, a *App) error {
	a.ID = NewID()
	a.CreatedAt, a.UpdatedAt = tx.now(), tx.now()
	_, err := tx.tx.Exec(ctx, `INSERT INTO apps (id, owner_user_id, name, slug, app_url, scopes, optional_scopes, redirect_urls,
			webhook_url, webhook_events, client_id, client_secret, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`,
		a.ID, a.OwnerUserID, a.Name, a.Slug, a.AppURL, a.Scopes, a.OptionalScopes, a.RedirectURLs, a.WebhookURL, a.WebhookEvents,
		a.ClientID, a.ClientSecret, a.CreatedAt)
	if isUniqueViolation(err, "apps_slug_key") {
		return &ConflictError{Field: "slug", Message: "slug is taken"}
	}
	if err != nil {
		return fmt.Errorf("create app: %w", err)
	}
	return nil
}

// FindAppByID reads an app.
func (r reader) FindAppByID(ctx context.Context, id uuid.UUID) (App, error) {
	a, err := scanApp(r.q.QueryRow(ctx, `SELECT `+appColumns+` FROM apps WHERE id = $1`, id))
	if err != nil {
		return App{}, notFoundIfNoRows(err, "find app")
	}
	return a, nil
}

// FindAppByClientID reads an app by its public client id.
func (r reader) FindAppByClientID(ctx context.Context, clientID string) (App, error) {
	a, err := scanApp(r.q.QueryRow(ctx, `SELECT `+appColumns+` FROM apps WHERE client_id = $1`, clientID))
	if err != nil {
		return App{}, notFoundIfNoRows(err, "find app by client id")
	}
	return a, nil
}

// FindAppBySlug reads an app by its slug.
func (r reader) FindAppBySlug(ctx context.Context, slug string) (App, error) {
	a, err := scanApp(r.q.QueryRow(ctx, `SELECT `+appColumns+` FROM apps WHERE slug = $1`, slug))
	if err != nil {
		return App{}, notFoundIfNoRows(err, "find app by slug")
	}
	return a, nil
}

// FindAppsByOwner lists the apps a developer registered.
func (r reader) FindAppsByOwner(ctx context.Context, userID uuid.UUID) ([]App, error) {
	rows, err := r.q.Query(ctx, `SELECT `+appColumns+` FROM apps WHERE owner_user_id = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("find apps: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (App, error) { return scanApp(row) })
}

// RotateAppSecret replaces the client secret; the old one stops working at
// once, for the token exchange and for every signature.
func (tx *Tx) RotateAppSecret(ctx context.Context, ownerID, appID uuid.UUID, secret string) (App, error) {
	a, err := scanApp(tx.tx.QueryRow(ctx, `UPDATE apps SET client_secret = $3, updated_at = $4
		WHERE id = $1 AND owner_user_id = $2 RETURNING `+appColumns, appID, ownerID, secret, tx.now()))
	if err != nil {
		return App{}, notFoundIfNoRows(err, "rotate app secret")
	}
	return a, nil
}

// CreateAuthCode stores a consent's single-use code under its hash.
func (tx *Tx) CreateAuthCode(ctx context.Context, code string, appID, storeID, userID uuid.UUID, scopes []string, redirectURI string) error {
	now := tx.now()
	_, err := tx.tx.Exec(ctx, `INSERT INTO oauth_codes (code_hash, app_id, store_id, user_id, scopes, redirect_uri, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, HashSecret(code), appID, storeID, userID, scopes, redirectURI, now.Add(CodeLifetime), now)
	if err != nil {
		return fmt.Errorf("create authorization code: %w", err)
	}
	return nil
}

// AuthCode is a burnt code's grant.
type AuthCode struct {
	AppID     uuid.UUID
	StoreID   uuid.UUID
	UserID    uuid.UUID
	Scopes    []string
	ExpiresAt time.Time
}

// BurnAuthCode marks a code used, in its own transaction so that it stays
// burnt whatever happens to the exchange afterwards, and returns its grant.
// A code never issued, used before, or past its 10 minutes is refused.
func (db *DB) BurnAuthCode(ctx context.Context, code string) (AuthCode, error) {
	var (
		c      AuthCode
		usedAt *time.Time
	)
	err := db.InTx(ctx, func(tx *Tx) error {
		err := tx.tx.QueryRow(ctx, `SELECT app_id, store_id, user_id, scopes, expires_at, used_at FROM oauth_codes
			WHERE code_hash = $1 FOR UPDATE`, HashSecret(code)).Scan(&c.AppID, &c.StoreID, &c.UserID, &c.Scopes, &c.ExpiresAt, &usedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrCodeInvalid
		}
		if err != nil {
			return fmt.Errorf("find authorization code: %w", err)
		}
		if usedAt != nil {
			return ErrCodeUsed
		}
		_, err = tx.tx.Exec(ctx, `UPDATE oauth_codes SET used_at = $2 WHERE code_hash = $1`, HashSecret(code), tx.now())
		return err
	})
	if err != nil {
		return AuthCode{}, err
	}
	if !db.now().Before(c.ExpiresAt) {
		return AuthCode{}, ErrCodeExpired
	}
	return c, nil
}

// InstallApp records the installation and the store's subscription to the
// app's manifest webhooks, mints the app token, and writes the store's
// app.installed audit entry with source, the exchange's request.
func (tx *Tx) InstallApp(ctx context.Context, a App, grant AuthCode, secret string, source RequestSource) (Token, error) {
	now := tx.now()
	var held []string
	if err := tx.tx.QueryRow(ctx, `SELECT scopes FROM app_installations WHERE app_id = $1 AND store_id = $2 AND uninstalled_at IS NULL`,
		a.ID, grant.StoreID).Scan(&held); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return Token{}, fmt.Errorf("find installation: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO app_installations (app_id, store_id, scopes, installed_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (app_id, store_id) DO UPDATE SET scopes = excluded.scopes, installed_at = excluded.installed_at, uninstalled_at = NULL`,
		a.ID, grant.StoreID, grant.Scopes, now); err != nil {
		return Token{}, fmt.Errorf("record installation: %w", err)
	}
	// The subscription carries only the events the granted scopes can read;
	// a grant that reads none of them switches a previous one off.
	events := EventsReadable(a.WebhookEvents, grant.Scopes)
	if a.WebhookURL != nil && len(events) > 0 {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO webhook_subscriptions (id, store_id, url, events, description, is_active, secret, app_id,
				created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, true, '', $6, $7, $7)
			ON CONFLICT (store_id, app_id) WHERE app_id IS NOT NULL
			DO UPDATE SET url = excluded.url, events = excluded.events, is_active = true, disabled_at = NULL, disabled_reason = NULL,
				updated_at = excluded.updated_at`,
			NewID(), grant.StoreID, *a.WebhookURL, events, "app "+a.Slug, a.ID, now); err != nil {
			return Token{}, fmt.Errorf("subscribe app webhooks: %w", err)
		}
	} else if _, err := tx.tx.Exec(ctx, `UPDATE webhook_subscriptions SET is_active = false, events = '{}', disabled_at = $3,
			disabled_reason = 'no granted scope reads its events', updated_at = $3 WHERE app_id = $1 AND store_id = $2`,
		a.ID, grant.StoreID, now); err != nil {
		return Token{}, fmt.Errorf("unsubscribe app webhooks: %w", err)
	}
	t := Token{Kind: TokenApp, StoreID: grant.StoreID, UserID: &grant.UserID, Name: a.Name, Hint: secret[len(secret)-4:], Scopes: grant.Scopes}
	if err := tx.CreateToken(ctx, &t, secret); err != nil {
		return Token{}, err
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE api_tokens SET app_id = $2 WHERE id = $1`, t.ID, a.ID); err != nil {
		return Token{}, fmt.Errorf("bind app token: %w", err)
	}
	// The store's audit log keeps the installation: the app, on the consent
	// of the member who approved it, and the scopes it held before.
	from, err := json.Marshal(held) // null when it held none
	if err != nil {
		return Token{}, err
	}
	to, err := json.Marshal(grant.Scopes)
	if err != nil {
		return Token{}, err
	}
	appID, approver := a.ID, grant.UserID
	entry := AuditEntry{StoreID: grant.StoreID, Actor: AuditActor{Type: "app", ID: &appID, UserID: &approver}, Action: "app.installed",
		ResourceType: "app", ResourceID: a.ID.String(), ResourceLabel: a.Name, Changes: map[string]AuditChange{"scopes": {From: from, To: to}},
		RequestID: source.RequestID, IP: source.IP, UserAgent: source.UserAgent}
	return t, tx.RecordAudit(ctx, entry)
}

// UninstallApp revokes every token of the app on the store and switches its
// manifest subscription off.
func (tx *Tx) UninstallApp(ctx context.Context, storeID, appID uuid.UUID) error {
	now := tx.now()
	tag, err := tx.tx.Exec(ctx, `UPDATE app_installations SET uninstalled_at = $3 WHERE app_id = $1 AND store_id = $2 AND uninstalled_at IS NULL`,
		appID, storeID, now)
	if err != nil {
		return fmt.Errorf("uninstall app: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("uninstall app: %w", ErrNotFound)
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $3) WHERE app_id = $1 AND store_id = $2`,
		appID, storeID, now); err != nil {
		return fmt.Errorf("revoke app tokens: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE webhook_subscriptions SET is_active = false, disabled_at = $3, disabled_reason = 'app uninstalled',
		updated_at = $3 WHERE app_id = $1 AND store_id = $2`, appID, storeID, now); err != nil {
		return fmt.Errorf("unsubscribe app webhooks: %w", err)
	}
	return nil
}

// AppInstalled reports whether the app is installed on the store now.
func (r reader) AppInstalled(ctx context.Context, appID, storeID uuid.UUID) (bool, error) {
	var ok bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app_installations WHERE app_id = $1 AND store_id = $2 AND uninstalled_at IS NULL)`,
		appID, storeID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("check installation: %w", err)
	}
	return ok, nil
}

// RevokeAppToken revokes the token if it is one of the app's; anything else
// (unknown, another app's, a PAT) changes nothing. The same two statements
// run either way.
func (db *DB) RevokeAppToken(ctx context.Context, appID uuid.UUID, secret string) error {
	_, err := db.pool.Exec(ctx, `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $3)
		WHERE token_hash = $1 AND app_id = $2 AND kind = 'app'`, HashSecret(secret), appID, db.now())
	if err != nil {
		return fmt.Errorf("revoke app token: %w", err)
	}
	return nil
}

// AppSlugOfToken names the app a token belongs to ("" for a PAT).
func (r reader) AppSlugOfToken(ctx context.Context, tokenID uuid.UUID) (string, error) {
	var slug *string
	err := r.q.QueryRow(ctx, `SELECT a.slug FROM api_tokens t LEFT JOIN apps a ON a.id = t.app_id WHERE t.id = $1`, tokenID).Scan(&slug)
	if err != nil {
		return "", notFoundIfNoRows(err, "find token app")
	}
	if slug == nil {
		return "", nil
	}
	return *slug, nil
}
