package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// IdempotencyKeyTTL is how long a completed key replays (decisions §1).
const IdempotencyKeyTTL = 24 * time.Hour

// idempotencyStaleAfter frees a key whose request never finished (a crashed
// process), so the client can retry.
const idempotencyStaleAfter = 2 * time.Minute

// Idempotency outcomes of ClaimIdempotencyKey.
var (
	ErrIdempotencyInProgress = errors.New("idempotency key in progress")
	ErrIdempotencyReused     = errors.New("idempotency key reused with a different request")
)

// IdempotencyScope identifies one key (decisions §1).
type IdempotencyScope struct {
	StoreID      uuid.UUID
	CredentialID uuid.UUID
	Method       string
	Route        string
	Key          string
}

// StoredResponse is what a completed key replays.
type StoredResponse struct {
	StatusCode  int
	ContentType string
	Body        []byte
}

// ClaimIdempotencyKey marks the key in flight for a new request. It returns the
// stored response when the same request already completed,
// ErrIdempotencyInProgress while it runs, and ErrIdempotencyReused when the key
// was used for a different request.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, s IdempotencyScope, fingerprint []byte) (*StoredResponse, error) {
	var stored *StoredResponse
	err := db.InTx(ctx, func(tx *Tx) error {
		now := tx.now()
		var (
			state       string
			fp          []byte
			status      *int
			contentType *string
			body        []byte
			lockedAt    time.Time
			expiresAt   time.Time
		)
		err := tx.tx.QueryRow(ctx, `SELECT state, fingerprint, status_code, content_type, body, locked_at, expires_at
			FROM idempotency_keys
			WHERE store_id = $1 AND credential_id = $2 AND method = $3 AND route = $4 AND key = $5
			FOR UPDATE`, s.StoreID, s.CredentialID, s.Method, s.Route, s.Key).
			Scan(&state, &fp, &status, &contentType, &body, &lockedAt, &expiresAt)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			tag, err := tx.tx.Exec(ctx, `INSERT INTO idempotency_keys
				(store_id, credential_id, method, route, key, fingerprint, state, locked_at, created_at, expires_at)
				VALUES ($1, $2, $3, $4, $5, $6, 'in_flight', $7, $7, $8)
				ON CONFLICT DO NOTHING`,
				s.StoreID, s.CredentialID, s.Method, s.Route, s.Key, fingerprint, now, now.Add(IdempotencyKeyTTL))
			if err != nil {
				return fmt.Errorf("claim idempotency key: %w", err)
			}
			if tag.RowsAffected() == 0 {
				// A concurrent request inserted the key between our read and write.
				return ErrIdempotencyInProgress
			}
			return nil
		case err != nil:
			return fmt.Errorf("claim idempotency key: %w", err)
		}
		expired := !now.Before(expiresAt)
		stale := state == "in_flight" && now.Sub(lockedAt) > idempotencyStaleAfter
		if expired || stale {
			_, err := tx.tx.Exec(ctx, `UPDATE idempotency_keys
				SET fingerprint = $6, state = 'in_flight', status_code = NULL, content_type = NULL, body = NULL,
				    locked_at = $7, created_at = $7, expires_at = $8
				WHERE store_id = $1 AND credential_id = $2 AND method = $3 AND route = $4 AND key = $5`,
				s.StoreID, s.CredentialID, s.Method, s.Route, s.Key, fingerprint, now, now.Add(IdempotencyKeyTTL))
			if err != nil {
				return fmt.Errorf("reclaim idempotency key: %w", err)
			}
			return nil
		}
		// While the first request runs nothing is known of its outcome, so any
		// request under the key waits its turn (Stripe answers the same way).
		if state == "in_flight" {
			return ErrIdempotencyInProgress
		}
		if !bytes.Equal(fp, fingerprint) {
			return ErrIdempotencyReused
		}
		stored = &StoredResponse{StatusCode: *status, Body: body}
		if contentType != nil {
			stored.ContentType = *contentType
		}
		return nil
	})
	return stored, err
}

// CompleteIdempotencyKey stores the response of a claimed key. Called inside
// the transaction of the change the key guards, it commits with that change.
func (tx *Tx) CompleteIdempotencyKey(ctx context.Context, s IdempotencyScope, resp StoredResponse) error {
	return completeIdempotencyKey(ctx, tx.q, s, resp)
}

// CompleteIdempotencyKey stores the response of a claimed key for requests
// that changed nothing (a refused request replays its refusal).
func (db *DB) CompleteIdempotencyKey(ctx context.Context, s IdempotencyScope, resp StoredResponse) error {
	return completeIdempotencyKey(ctx, db.pool, s, resp)
}

func completeIdempotencyKey(ctx context.Context, q querier, s IdempotencyScope, resp StoredResponse) error {
	_, err := q.Exec(ctx, `UPDATE idempotency_keys SET state = 'completed', status_code = $6, content_type = $7, body = $8
		WHERE store_id = $1 AND credential_id = $2 AND method = $3 AND route = $4 AND key = $5`,
		s.StoreID, s.CredentialID, s.Method, s.Route, s.Key, resp.StatusCode, resp.ContentType, resp.Body)
	if err != nil {
		return fmt.Errorf("complete idempotency key: %w", err)
	}
	return nil
}

// ReleaseIdempotencyKey frees a key whose request failed with a server error,
// so the client may retry it.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, s IdempotencyScope) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE store_id = $1 AND credential_id = $2 AND method = $3 AND route = $4 AND key = $5 AND state = 'in_flight'`,
		s.StoreID, s.CredentialID, s.Method, s.Route, s.Key)
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// Purged counts what PurgeExpired deleted.
type Purged struct {
	IdempotencyKeys int
	Sessions        int
	AuthCodes       int
	ContactSends    int
	AuditEntries    int
	// WebhookDeliveries counts the deliveries past their retention; their
	// attempts went with them.
	WebhookDeliveries int
	// OutboxEvents counts the dispatched events past the same retention.
	OutboxEvents int
}

// PurgeBatch caps the webhook deliveries, and the outbox events, one purge
// deletes: a store that has kept months of them (before the retention
// existed) is worked down over hourly runs, each one short transaction well
// inside the purge activity's timeout, instead of one that never finishes.
// Hourly runs of 50 000 take 1.2 million a day, four times the deliveries of
// a store of 100 000 orders a day.
var PurgeBatch = 50_000

// WebhookDeliveryRetention is how long a webhook delivery and its attempts
// are kept once they are over (not pending, not retrying), and a dispatched
// outbox event.
const WebhookDeliveryRetention = 30 * 24 * time.Hour

// PurgeExpired deletes idempotency records, sessions and authorization codes
// past their expiry, day-old confirmation marks, year-old audit entries, and
// webhook deliveries and dispatched outbox events past their retention, in
// one round trip; the cleanup schedule runs it. Expired rows answer nothing
// already, so this only keeps the tables (and what they hold) small.
func (db *DB) PurgeExpired(ctx context.Context) (Purged, error) {
	var p Purged
	now := db.now()
	batch := &pgx.Batch{}
	batch.Queue(`DELETE FROM idempotency_keys WHERE expires_at < $1`, now).Exec(func(tag pgconn.CommandTag) error {
		p.IdempotencyKeys = int(tag.RowsAffected())
		return nil
	})
	batch.Queue(`DELETE FROM sessions WHERE expires_at < $1`, now).Exec(func(tag pgconn.CommandTag) error {
		p.Sessions = int(tag.RowsAffected())
		return nil
	})
	batch.Queue(`DELETE FROM oauth_codes WHERE expires_at < $1`, now).Exec(func(tag pgconn.CommandTag) error {
		p.AuthCodes = int(tag.RowsAffected())
		return nil
	})
	// A day is longer than any confirmation interval.
	batch.Queue(`DELETE FROM contact_sends WHERE last_sent_at < $1`, now.Add(-24*time.Hour)).Exec(func(tag pgconn.CommandTag) error {
		p.ContactSends = int(tag.RowsAffected())
		return nil
	})
	// The audit log keeps a year (decisions §16).
	batch.Queue(`DELETE FROM audit_entries WHERE occurred_at < $1`, now.Add(-365*24*time.Hour)).Exec(func(tag pgconn.CommandTag) error {
		p.AuditEntries = int(tag.RowsAffected())
		return nil
	})
	// A delivery still pending or retrying is kept until it is over; its
	// attempts go with it (migration 0044's trigger).
	batch.Queue(`DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
			WHERE created_at < $1 AND status NOT IN ('pending', 'retrying') LIMIT $2)`,
		now.Add(-WebhookDeliveryRetention), PurgeBatch).Exec(func(tag pgconn.CommandTag) error {
		p.WebhookDeliveries = int(tag.RowsAffected())
		return nil
	})
	// An event not dispatched yet is never dropped. A delivery that
	// outlives its event (retrying past the retention) keeps its own copy
	// of the body; its outbox_id only kept its claim from being made twice.
	batch.Queue(`DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE created_at < $1 AND dispatched_at IS NOT NULL LIMIT $2)`,
		now.Add(-WebhookDeliveryRetention), PurgeBatch).Exec(func(tag pgconn.CommandTag) error {
		p.OutboxEvents = int(tag.RowsAffected())
		return nil
	})
	if err := db.pool.SendBatch(ctx, batch).Close(); err != nil {
		return Purged{}, fmt.Errorf("purge expired rows: %w", err)
	}
	return p, nil
}
