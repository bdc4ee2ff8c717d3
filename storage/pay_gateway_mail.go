package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The owner's notice of a change to a payment gateway's keys (issue 48 §6,
// migration 0053): the keys decide where the store's card money goes, so
// whoever connects, replaces or disconnects them, the owner hears of it.

// GatewayChangeKind is what happened to a gateway's keys.
type GatewayChangeKind string

// Changes to a gateway's keys.
const (
	GatewayConnected    GatewayChangeKind = "connected"
	GatewayReplaced     GatewayChangeKind = "replaced"
	GatewayDisconnected GatewayChangeKind = "disconnected"
)

// GatewayChange is a change to a store's gateway keys, as the owner's mail
// tells it: the masked account hints the API shows (never a secret), who
// made it and from where (the request source of its audit entry).
type GatewayChange struct {
	ID           uuid.UUID
	StoreID      uuid.UUID
	Provider     string
	Kind         GatewayChangeKind
	AccountHint  string // the keys connected now; "" after a disconnect
	PreviousHint string // the keys replaced or disconnected; "" on a first connect
	ActorUserID  uuid.UUID
	ActorName    string
	ActorEmail   string
	From         RequestSource
	OccurredAt   time.Time
}

// LockGatewayConnection holds a store's gateway at provider for a change
// of its keys until the transaction ends, and reads it as it is (NotFound
// when none is connected): two connects at once are then one "connected"
// and one "replaced", each naming the keys it found.
func (tx *Tx) LockGatewayConnection(ctx context.Context, storeID uuid.UUID, provider string) (GatewayConnection, error) {
	if _, err := tx.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('payment_gateways:' || $1 || ':' || $2, 0))`,
		storeID.String(), provider); err != nil {
		return GatewayConnection{}, fmt.Errorf("lock gateway %s: %w", provider, err)
	}
	return tx.FindGatewayConnection(ctx, storeID, provider)
}

// RecordGatewayChange writes the owner's mail of a gateway key change in
// the change's transaction (the actor's name and email read from their
// account), to be sent after commit by the gateway-change-mail workflow.
func (tx *Tx) RecordGatewayChange(ctx context.Context, c GatewayChange) (uuid.UUID, error) {
	id := NewID()
	tag, err := tx.tx.Exec(ctx, `INSERT INTO gateway_change_mails (id, store_id, provider, change, account_hint, previous_hint,
			actor_user_id, actor_name, actor_email, request_id, ip, user_agent, occurred_at)
		SELECT $1, $2, $3, $4, $5, $6, u.id, u.name, u.email, $8, $9, $10, $11 FROM users u WHERE u.id = $7`,
		id, c.StoreID, c.Provider, c.Kind, c.AccountHint, c.PreviousHint, c.ActorUserID, c.From.RequestID, c.From.IP,
		c.From.UserAgent, tx.now())
	if err != nil {
		return uuid.Nil, fmt.Errorf("record gateway change: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return uuid.Nil, fmt.Errorf("record gateway change: user %s: %w", c.ActorUserID, ErrNotFound)
	}
	return id, tx.notifyDispatcher(ctx)
}

// GatewayChangeMailDue is a gateway change whose mail has no workflow yet.
type GatewayChangeMailDue struct {
	ID             uuid.UUID
	StoreID        uuid.UUID
	StoreSubdomain string
}

// FindGatewayChangeMailsDue lists the gateway change mails to start.
func (r reader) FindGatewayChangeMailsDue(ctx context.Context, limit int) ([]GatewayChangeMailDue, error) {
	rows, err := r.q.Query(ctx, `SELECT m.id, m.store_id, s.subdomain FROM gateway_change_mails m JOIN stores s ON s.id = m.store_id
		WHERE NOT m.mail_started ORDER BY m.occurred_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find gateway change mails: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[GatewayChangeMailDue])
}

// MarkGatewayChangeMailStarted records that a mail has its workflow.
func (db *DB) MarkGatewayChangeMailStarted(ctx context.Context, storeID, id uuid.UUID) error {
	if _, err := db.pool.Exec(ctx, `UPDATE gateway_change_mails SET mail_started = true WHERE store_id = $1 AND id = $2`, storeID, id); err != nil {
		return fmt.Errorf("mark gateway change mail started: %w", err)
	}
	return nil
}

// GatewayChangeMail is a gateway change with the store and its owner as
// they are when the mail is sent.
type GatewayChangeMail struct {
	GatewayChange
	StoreName   string
	StoreLocale string
	OwnerName   string
	OwnerEmail  string
}

// FindGatewayChangeMail reads one gateway change with its store's owner.
func (r reader) FindGatewayChangeMail(ctx context.Context, storeID, id uuid.UUID) (GatewayChangeMail, error) {
	var (
		m     GatewayChangeMail
		actor *uuid.UUID
	)
	err := r.q.QueryRow(ctx, `SELECT m.id, m.store_id, m.provider, m.change, m.account_hint, m.previous_hint, m.actor_user_id,
			m.actor_name, m.actor_email, m.request_id, m.ip, m.user_agent, m.occurred_at, s.name, s.default_language, o.name, o.email
		FROM gateway_change_mails m JOIN stores s ON s.id = m.store_id JOIN users o ON o.id = s.owner_user_id
		WHERE m.store_id = $1 AND m.id = $2`, storeID, id).Scan(&m.ID, &m.StoreID, &m.Provider, &m.Kind, &m.AccountHint, &m.PreviousHint,
		&actor, &m.ActorName, &m.ActorEmail, &m.From.RequestID, &m.From.IP, &m.From.UserAgent, &m.OccurredAt, &m.StoreName,
		&m.StoreLocale, &m.OwnerName, &m.OwnerEmail)
	if err != nil {
		return GatewayChangeMail{}, notFoundIfNoRows(err, "find gateway change mail "+id.String())
	}
	if actor != nil {
		m.ActorUserID = *actor
	}
	return m, nil
}
