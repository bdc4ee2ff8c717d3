package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// AuditActor is who made a change (decisions §16): a member's session
// ("user"), a personal token ("token"), an app ("app") or the service
// itself ("system").
type AuditActor struct {
	Type   string
	ID     *uuid.UUID
	Name   string // empty: the user's or app's name, read when the entry is written
	UserID *uuid.UUID
}

// AuditChange is one field's value before and after a change (JSON values).
type AuditChange struct {
	From json.RawMessage `json:"from"`
	To   json.RawMessage `json:"to"`
}

// AuditEntry is one line of a store's audit log.
type AuditEntry struct {
	ID            uuid.UUID
	StoreID       uuid.UUID
	OccurredAt    time.Time
	Actor         AuditActor
	Action        string // discount.updated, staff.removed, …
	ResourceType  string
	ResourceID    string
	ResourceLabel string
	Changes       map[string]AuditChange
	RequestID     string
	IP            string
	UserAgent     string
}

// commitHookKey carries a CommitHook in a context.
type commitHookKey struct{}

// A CommitHook writes into every transaction InTx runs with its context,
// just before the commit: the audit entry of the request that runs it.
// Committed follows a commit, so the hook knows its write is kept.
type CommitHook interface {
	BeforeCommit(ctx context.Context, tx *Tx) error
	Committed()
}

// WithCommitHook returns ctx carrying hook for InTx.
func WithCommitHook(ctx context.Context, hook CommitHook) context.Context {
	return context.WithValue(ctx, commitHookKey{}, hook)
}

// actorNameSQL is the actor's name when the entry names none: the user's
// for a user, the app's for an app.
const actorNameSQL = `COALESCE(NULLIF($5, ''),
	CASE $4 WHEN 'user' THEN (SELECT name FROM users WHERE id = $6::uuid)
	        WHEN 'app' THEN (SELECT name FROM apps WHERE id = $6::uuid) END, '')`

// RecordAudit writes an audit entry in the transaction.
func (tx *Tx) RecordAudit(ctx context.Context, e AuditEntry) error {
	changes, err := marshalChanges(e.Changes)
	if err != nil {
		return err
	}
	_, err = tx.tx.Exec(ctx, `INSERT INTO audit_entries (id, store_id, occurred_at, actor_type, actor_name, actor_id,
		actor_user_id, action, resource_type, resource_id, resource_label, changes, request_id, ip, user_agent)
		VALUES ($1, $2, $3, $4, `+actorNameSQL+`, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		NewID(), e.StoreID, tx.now(), e.Actor.Type, e.Actor.Name, e.Actor.ID, e.Actor.UserID,
		e.Action, e.ResourceType, e.ResourceID, e.ResourceLabel, changes, e.RequestID, e.IP, e.UserAgent)
	if err != nil {
		return fmt.Errorf("record audit entry: %w", err)
	}
	return nil
}

// recordSignIns writes a staff.signed_in entry in every store the user is a
// member of, so each store's owner sees who came in (decisions §16).
func (tx *Tx) recordSignIns(ctx context.Context, userID uuid.UUID, from RequestSource) error {
	return tx.recordAccountEvent(ctx, userID, "staff.signed_in", from)
}

// recordAccountEvent writes an account's own event (staff.signed_in,
// staff.password_changed, staff.signed_out_everywhere) in every store the
// user is a member of: an account is under no one store, and each store's
// owner sees what happened to a member's sign-in.
func (tx *Tx) recordAccountEvent(ctx context.Context, userID uuid.UUID, action string, from RequestSource) error {
	_, err := tx.tx.Exec(ctx, `INSERT INTO audit_entries (id, store_id, occurred_at, actor_type, actor_name, actor_id,
		actor_user_id, action, resource_type, resource_id, resource_label, request_id, ip, user_agent)
		SELECT gen_random_uuid(), m.store_id, $2, 'user', u.name, u.id, u.id, $6, 'user',
			u.id::text, u.email, $3, $4, $5
		FROM store_members m JOIN users u ON u.id = m.user_id WHERE m.user_id = $1`,
		userID, tx.now(), from.RequestID, from.IP, from.UserAgent, action)
	if err != nil {
		return fmt.Errorf("record %s: %w", action, err)
	}
	return nil
}

// RequestSource is where a request came from, for the audit log.
type RequestSource struct {
	RequestID, IP, UserAgent string
}

func marshalChanges(changes map[string]AuditChange) ([]byte, error) {
	if len(changes) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(changes)
	if err != nil {
		return nil, fmt.Errorf("encode audit changes: %w", err)
	}
	return b, nil
}

// AuditFilter selects audit entries (decisions §16); zero fields match all.
type AuditFilter struct {
	ActorType    string
	ActorID      *uuid.UUID
	Action       string // exact, or a prefix ending in ".*"
	ResourceType string
	ResourceID   string
	RequestID    string
	From, To     *time.Time // both inclusive
	Page
}

// FindAuditEntries lists a store's audit entries, newest first, with the
// number matching.
func (db *DB) FindAuditEntries(ctx context.Context, storeID uuid.UUID, f AuditFilter) ([]AuditEntry, int, error) {
	where := sq.And{sq.Eq{"store_id": storeID}}
	if f.ActorType != "" {
		where = append(where, sq.Eq{"actor_type": f.ActorType})
	}
	if f.ActorID != nil {
		where = append(where, sq.Eq{"actor_id": *f.ActorID})
	}
	if prefix, ok := strings.CutSuffix(f.Action, ".*"); ok {
		where = append(where, sq.Like{"action": escapeLike(prefix) + ".%"})
	} else if f.Action != "" {
		where = append(where, sq.Eq{"action": f.Action})
	}
	if f.ResourceType != "" {
		where = append(where, sq.Eq{"resource_type": f.ResourceType})
	}
	if f.ResourceID != "" {
		where = append(where, sq.Eq{"resource_id": f.ResourceID})
	}
	if f.RequestID != "" {
		where = append(where, sq.Eq{"request_id": f.RequestID})
	}
	if f.From != nil {
		where = append(where, sq.GtOrEq{"occurred_at": *f.From})
	}
	if f.To != nil {
		where = append(where, sq.LtOrEq{"occurred_at": *f.To})
	}
	cond, args, err := dollarSQL(where)
	if err != nil {
		return nil, 0, err
	}
	return findPage(ctx, db.reader, "audit entries", listQuery{columns: `id, store_id, occurred_at, actor_type, actor_id, actor_name,
		actor_user_id, action, resource_type, resource_id, resource_label, changes, request_id, ip, user_agent`,
		from: "FROM audit_entries WHERE " + cond, args: args, orderBy: "occurred_at DESC, id DESC"},
		f.Page.Limit, int(f.Page.Offset()), scanAuditEntry)
}

func scanAuditEntry(row pgx.CollectableRow) (AuditEntry, error) {
	var e AuditEntry
	var changes []byte
	if err := row.Scan(&e.ID, &e.StoreID, &e.OccurredAt, &e.Actor.Type, &e.Actor.ID, &e.Actor.Name, &e.Actor.UserID,
		&e.Action, &e.ResourceType, &e.ResourceID, &e.ResourceLabel, &changes, &e.RequestID, &e.IP, &e.UserAgent); err != nil {
		return AuditEntry{}, err
	}
	if changes != nil {
		if err := json.Unmarshal(changes, &e.Changes); err != nil {
			return AuditEntry{}, fmt.Errorf("decode audit changes: %w", err)
		}
	}
	return e, nil
}
