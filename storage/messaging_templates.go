package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Message templates (decisions §25): what a store may send a customer
// outside a conversation. A WhatsApp template is submitted to the provider
// and waits for its approval; an email template is approved at once.

// Template statuses.
const (
	TemplatePending  = "pending"
	TemplateApproved = "approved"
	TemplateRejected = "rejected"
	TemplatePaused   = "paused"
	TemplateDisabled = "disabled"
)

// ErrDuplicateTemplate refuses a second template of one name and language
// on a channel.
var ErrDuplicateTemplate = errors.New("a template of this name and language exists")

// MessageTemplate is a store's template.
type MessageTemplate struct {
	ID                 uuid.UUID
	StoreID            uuid.UUID
	Channel            string
	Name               string
	Category           string
	Language           string
	Header             *string
	Body               string
	Footer             *string
	Buttons            []string
	Examples           map[string]string
	Status             string
	RejectionReason    *string
	ProviderTemplateID *string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

const messageTemplateColumns = `id, store_id, channel, name, category, language, header, body, footer, buttons, examples, status,
	rejection_reason, provider_template_id, created_at, updated_at`

func scanMessageTemplate(row pgx.Row) (MessageTemplate, error) {
	var t MessageTemplate
	err := row.Scan(&t.ID, &t.StoreID, &t.Channel, &t.Name, &t.Category, &t.Language, &t.Header, &t.Body, &t.Footer, &t.Buttons,
		&t.Examples, &t.Status, &t.RejectionReason, &t.ProviderTemplateID, &t.CreatedAt, &t.UpdatedAt)
	return t, err
}

// CreateMessageTemplate keeps a template: approved at once on email,
// pending (with the provider's id it was submitted under) on WhatsApp.
func (tx *Tx) CreateMessageTemplate(ctx context.Context, t MessageTemplate) (MessageTemplate, error) {
	now := tx.now()
	t.ID, t.CreatedAt, t.UpdatedAt = NewID(), now, now
	if t.Buttons == nil {
		t.Buttons = []string{}
	}
	if t.Examples == nil {
		t.Examples = map[string]string{}
	}
	out, err := scanMessageTemplate(tx.tx.QueryRow(ctx, `INSERT INTO message_templates (id, store_id, channel, name, category, language, header,
			body, footer, buttons, examples, status, provider_template_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)
		RETURNING `+messageTemplateColumns, t.ID, t.StoreID, t.Channel, t.Name, t.Category, t.Language, t.Header, t.Body, t.Footer,
		t.Buttons, t.Examples, t.Status, t.ProviderTemplateID, now))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return MessageTemplate{}, fmt.Errorf("create template %s: %w", t.Name, ErrDuplicateTemplate)
	}
	if err != nil {
		return MessageTemplate{}, fmt.Errorf("create template: %w", err)
	}
	return out, nil
}

// MessageTemplateExists reports whether the store has a template of the
// name and language on the channel (checked before submitting one).
func (r reader) MessageTemplateExists(ctx context.Context, storeID uuid.UUID, channel, name, language string) (bool, error) {
	var exists bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM message_templates WHERE store_id = $1 AND channel = $2 AND name = $3 AND language = $4)`,
		storeID, channel, name, language).Scan(&exists)
	return exists, err
}

// FindMessageTemplate reads one template.
func (r reader) FindMessageTemplate(ctx context.Context, storeID, id uuid.UUID) (MessageTemplate, error) {
	t, err := scanMessageTemplate(r.q.QueryRow(ctx, `SELECT `+messageTemplateColumns+` FROM message_templates WHERE store_id = $1 AND id = $2`,
		storeID, id))
	if err != nil {
		return MessageTemplate{}, notFoundIfNoRows(err, "find template "+id.String())
	}
	return t, nil
}

// MessageTemplateFilter narrows a template list.
type MessageTemplateFilter struct {
	Page
	Channel, Status *string
}

// FindMessageTemplates lists the store's templates, newest first.
func (r reader) FindMessageTemplates(ctx context.Context, storeID uuid.UUID, f MessageTemplateFilter) ([]MessageTemplate, int, error) {
	return findPage(ctx, r, "templates", listQuery{columns: messageTemplateColumns,
		from: `FROM message_templates WHERE store_id = $1 AND ($2::text IS NULL OR channel = $2) AND ($3::text IS NULL OR status = $3)`,
		args: []any{storeID, f.Channel, f.Status}, orderBy: "created_at DESC, id DESC"}, f.Limit, int(f.Offset()),
		func(row pgx.CollectableRow) (MessageTemplate, error) { return scanMessageTemplate(row) })
}

// DeleteMessageTemplate removes a template; NotFound when there is none.
func (tx *Tx) DeleteMessageTemplate(ctx context.Context, storeID, id uuid.UUID) error {
	tag, err := tx.tx.Exec(ctx, `DELETE FROM message_templates WHERE store_id = $1 AND id = $2`, storeID, id)
	if err != nil {
		return fmt.Errorf("delete template: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete template %s: %w", id, ErrNotFound)
	}
	return nil
}

// ApplyTemplateStatus records the provider's verdict on a store's WhatsApp
// template, found by the provider's id, else by name and language. It
// reports whether a template changed (a repeat, or a template not ours,
// changes nothing).
func (db *DB) ApplyTemplateStatus(ctx context.Context, storeID uuid.UUID, providerID, name, language, status string, reason *string) (bool, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE message_templates SET status = $5, rejection_reason = $6, updated_at = $7
		WHERE store_id = $1 AND (status <> $5 OR rejection_reason IS DISTINCT FROM $6)
			AND id = (SELECT id FROM message_templates WHERE store_id = $1 AND channel = 'whatsapp'
				AND (provider_template_id = $2 OR (name = $3 AND language = $4))
				ORDER BY provider_template_id = $2 DESC NULLS LAST LIMIT 1)`, storeID, providerID, name, language, status, reason, db.now())
	if err != nil {
		return false, fmt.Errorf("apply template status: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}
