package activities

import (
	"context"
)

// PurgeExpiredInput asks for nothing: the purge covers every store.
type PurgeExpiredInput struct{}

// PurgeExpiredResult counts what was deleted.
type PurgeExpiredResult struct {
	IdempotencyKeys int
	Sessions        int
	AuthCodes       int
	ContactSends    int
	AuditEntries    int
	// WebhookDeliveries counts deliveries past their 30 days (with their
	// attempts).
	WebhookDeliveries int
	// OutboxEvents counts dispatched events past the same 30 days.
	OutboxEvents int
}

// PurgeExpired deletes expired idempotency records, sessions and
// authorization codes, old confirmation marks and audit entries, and
// webhook deliveries and dispatched outbox events past their retention.
func (a *Activities) PurgeExpired(ctx context.Context, _ PurgeExpiredInput) (PurgeExpiredResult, error) {
	p, err := a.DB.PurgeExpired(ctx)
	return PurgeExpiredResult{IdempotencyKeys: p.IdempotencyKeys, Sessions: p.Sessions, AuthCodes: p.AuthCodes, ContactSends: p.ContactSends, AuditEntries: p.AuditEntries,
		WebhookDeliveries: p.WebhookDeliveries, OutboxEvents: p.OutboxEvents}, err
}
