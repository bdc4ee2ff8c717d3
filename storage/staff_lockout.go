package storage

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// KnownNetworkAge is how long a network an account signed in from stays
// known: while the account is locked after too many failed sign-ins, the
// right password still signs in from a network that started one of its
// sessions within this time (issue 48 §8, migration 0052).
const KnownNetworkAge = 30 * 24 * time.Hour

// SignInNetwork is the network of a client address as the sign-in limits
// count it: an IPv4 address whole, an IPv6 address's /64 (one household or
// phone holds a whole /64); anything unparsable as it is.
func SignInNetwork(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if addr = addr.Unmap(); addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	return addr.String()
}

// recordSignInNetwork notes that a session of the user started from the
// request's network, and drops the user's networks older than
// KnownNetworkAge. A session with no address (a seeded one) notes nothing.
func (tx *Tx) recordSignInNetwork(ctx context.Context, userID uuid.UUID, from RequestSource) error {
	if from.IP == "" {
		return nil
	}
	now := tx.now()
	_, err := tx.tx.Exec(ctx, `WITH old AS (DELETE FROM sign_in_networks WHERE user_id = $1 AND last_signed_in_at < $4)
		INSERT INTO sign_in_networks (user_id, network, last_signed_in_at) VALUES ($1, $2, $3)
		ON CONFLICT (user_id, network) DO UPDATE SET last_signed_in_at = EXCLUDED.last_signed_in_at`,
		userID, SignInNetwork(from.IP), now, now.Add(-KnownNetworkAge))
	if err != nil {
		return fmt.Errorf("record sign-in network: %w", err)
	}
	return nil
}

// NoteSignInLock is called for a sign-in to an account that has used up its
// failures. It answers whether the account of email has signed in from
// network within KnownNetworkAge (false for an email with no account), and
// makes sure the account's owner is sent one sign-in lock notice (kind
// MailSignInLock, a 30-minute link through the password reset) for every
// gap: a notice asked for within gap of the last is not sent again. Safe
// under a burst: the check and the insert run under the user's row lock.
func (db *DB) NoteSignInLock(ctx context.Context, email, network string, gap time.Duration) (known bool, err error) {
	var (
		userID uuid.UUID
		sent   bool
	)
	now := db.now()
	err = db.pool.QueryRow(ctx, `SELECT u.id,
			EXISTS (SELECT 1 FROM sign_in_networks n WHERE n.user_id = u.id AND n.network = $2 AND n.last_signed_in_at > $3),
			EXISTS (SELECT 1 FROM account_mails a WHERE a.user_id = u.id AND a.kind = $4 AND a.created_at > $5)
		FROM users u WHERE u.email = $1`,
		email, network, now.Add(-KnownNetworkAge), MailSignInLock, now.Add(-gap)).Scan(&userID, &known, &sent)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find sign-in lock: %w", err)
	}
	if sent {
		return known, nil
	}
	err = db.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE`, userID); err != nil {
			return fmt.Errorf("lock user: %w", err)
		}
		now := tx.now()
		if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM account_mails WHERE user_id = $1 AND kind = $2 AND created_at > $3)`,
			userID, MailSignInLock, now.Add(-gap)).Scan(&sent); err != nil {
			return fmt.Errorf("find sign-in lock notice: %w", err)
		}
		if sent {
			return nil
		}
		return tx.insertAccountMail(ctx, userID, MailSignInLock, PasswordResetTTL)
	})
	return known, err
}
