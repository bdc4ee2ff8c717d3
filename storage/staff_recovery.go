package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// AccountMailKind is what an account's own mail is for (migration 0050).
type AccountMailKind string

// The account mails. A sign-in lock notice carries a password reset link:
// it is how the owner of a locked account signs in from a new network.
const (
	MailPasswordReset     AccountMailKind = "password_reset"
	MailEmailVerification AccountMailKind = "email_verification"
	MailSignInLock        AccountMailKind = "sign_in_lock"
)

// How long an account mail's link works.
const (
	PasswordResetTTL     = 30 * time.Minute
	EmailVerificationTTL = 7 * 24 * time.Hour
)

// resetRequestGap is how often one account may be sent a reset link: a
// form pressed twice sends one mail, and an address typed by someone else
// cannot fill its owner's inbox.
const resetRequestGap = time.Minute

// The refusals of an account link.
var (
	// ErrLinkInvalid is an unknown or already used link.
	ErrLinkInvalid = errors.New("account link unknown or used")
	// ErrLinkExpired is a link past its time.
	ErrLinkExpired = errors.New("account link expired")
	// ErrAccountMailSuperseded is a mail whose link was used or expired
	// before it could be sent.
	ErrAccountMailSuperseded = errors.New("account mail superseded")
)

// linkPrefix is how each kind's token begins, so a token pasted into the
// wrong form is refused before any lookup.
var linkPrefix = map[AccountMailKind]string{
	MailPasswordReset:     "svc_pwr_",
	MailSignInLock:        "svc_pwr_",
	MailEmailVerification: "svc_ver_",
}

// RequestAccountMail asks for a mail of kind to the user, sent after commit
// by the account-mail workflow; a password reset asked for again within a
// minute of the last is not sent twice (false).
func (tx *Tx) RequestAccountMail(ctx context.Context, userID uuid.UUID, kind AccountMailKind, ttl time.Duration) (bool, error) {
	now := tx.now()
	if kind == MailPasswordReset {
		var recent bool
		if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM account_mails WHERE user_id = $1 AND kind = $2 AND created_at > $3)`,
			userID, kind, now.Add(-resetRequestGap)).Scan(&recent); err != nil {
			return false, fmt.Errorf("find recent account mail: %w", err)
		}
		if recent {
			return false, nil
		}
	}
	if err := tx.insertAccountMail(ctx, userID, kind, ttl); err != nil {
		return false, err
	}
	return true, nil
}

// insertAccountMail writes the row of one account mail, live for ttl, and
// wakes the dispatcher, as a new outbox event does.
func (tx *Tx) insertAccountMail(ctx context.Context, userID uuid.UUID, kind AccountMailKind, ttl time.Duration) error {
	now := tx.now()
	if _, err := tx.tx.Exec(ctx, `INSERT INTO account_mails (id, user_id, kind, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)`,
		NewID(), userID, kind, now.Add(ttl), now); err != nil {
		return fmt.Errorf("request account mail: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `SELECT pg_notify('`+OutboxChannel+`', '')`); err != nil {
		return fmt.Errorf("notify dispatcher: %w", err)
	}
	return nil
}

// AccountMailDue is an account mail whose workflow has not started.
type AccountMailDue struct {
	ID     uuid.UUID
	UserID uuid.UUID
	Kind   AccountMailKind
}

// FindAccountMailsDue lists the account mails to start.
func (r reader) FindAccountMailsDue(ctx context.Context, limit int) ([]AccountMailDue, error) {
	rows, err := r.q.Query(ctx, `SELECT id, user_id, kind FROM account_mails WHERE NOT mail_started ORDER BY created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find account mails: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[AccountMailDue])
}

// MarkAccountMailStarted records that a mail has its workflow.
func (db *DB) MarkAccountMailStarted(ctx context.Context, id uuid.UUID) error {
	if _, err := db.pool.Exec(ctx, `UPDATE account_mails SET mail_started = true WHERE id = $1`, id); err != nil {
		return fmt.Errorf("mark account mail started: %w", err)
	}
	return nil
}

// AccountMail is one mail about to be sent: what it is and to whom.
type AccountMail struct {
	Kind      AccountMailKind
	Email     string
	Name      string
	Locale    string
	ExpiresAt time.Time
}

// MintAccountMailToken gives a mail its link's token (prefix + 256 random
// bits; only the hash is kept, so a retried send kills the link of the
// attempt before it). ErrAccountMailSuperseded: the link was used or expired.
func (db *DB) MintAccountMailToken(ctx context.Context, id uuid.UUID) (AccountMail, string, error) {
	var m AccountMail
	if err := db.pool.QueryRow(ctx, `SELECT kind FROM account_mails WHERE id = $1`, id).Scan(&m.Kind); err != nil {
		return AccountMail{}, "", notFoundIfNoRows(err, "find account mail")
	}
	token := NewSecret(linkPrefix[m.Kind])
	err := db.pool.QueryRow(ctx, `UPDATE account_mails a SET token_hash = $2 FROM users u
		WHERE a.id = $1 AND u.id = a.user_id AND a.used_at IS NULL AND a.expires_at > $3
		RETURNING u.email, u.name, u.locale, a.expires_at`, id, HashSecret(token), db.now()).
		Scan(&m.Email, &m.Name, &m.Locale, &m.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return AccountMail{}, "", ErrAccountMailSuperseded
	}
	if err != nil {
		return AccountMail{}, "", fmt.Errorf("mint account mail token: %w", err)
	}
	return m, token, nil
}

// UseAccountLink spends a link's token of one of kinds and answers whose
// account it is: ErrLinkInvalid for an unknown or used token, ErrLinkExpired
// past its time. Every other live link of the same kinds of the user dies
// with it (one reset ends them all).
func (tx *Tx) UseAccountLink(ctx context.Context, token string, kinds ...AccountMailKind) (uuid.UUID, error) {
	var (
		userID  uuid.UUID
		kind    AccountMailKind
		expires time.Time
		used    *time.Time
	)
	err := tx.tx.QueryRow(ctx, `SELECT user_id, kind, expires_at, used_at FROM account_mails WHERE token_hash = $1 FOR UPDATE`,
		HashSecret(token)).Scan(&userID, &kind, &expires, &used)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrLinkInvalid
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("find account link: %w", err)
	}
	wanted := make([]string, len(kinds))
	known := false
	for i, k := range kinds {
		wanted[i] = string(k)
		known = known || k == kind
	}
	now := tx.now()
	switch {
	case !known || used != nil:
		return uuid.Nil, ErrLinkInvalid
	case !expires.After(now):
		return uuid.Nil, ErrLinkExpired
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE account_mails SET used_at = $3 WHERE user_id = $1 AND kind = ANY($2) AND used_at IS NULL`,
		userID, wanted, now); err != nil {
		return uuid.Nil, fmt.Errorf("use account link: %w", err)
	}
	return userID, nil
}

// VerifyEmail marks the account's address as proven.
func (tx *Tx) VerifyEmail(ctx context.Context, userID uuid.UUID) error {
	if _, err := tx.tx.Exec(ctx, `UPDATE users SET email_verified_at = COALESCE(email_verified_at, $2) WHERE id = $1`,
		userID, tx.now()); err != nil {
		return fmt.Errorf("verify email: %w", err)
	}
	return nil
}
