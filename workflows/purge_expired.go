package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// PurgeScheduleID names the Temporal schedule that purges expired rows every
// hour; each scheduled run's workflow id starts with it.
const PurgeScheduleID = "purge-expired"

// PurgeExpiredResult counts what one purge deleted.
type PurgeExpiredResult struct {
	IdempotencyKeys int
	Sessions        int
	AuthCodes       int
	ContactSends    int
	AuditEntries    int
	// WebhookDeliveries counts deliveries past their retention.
	WebhookDeliveries int
	// OutboxEvents counts dispatched outbox events past the same retention.
	OutboxEvents int
}

// PurgeExpired deletes expired idempotency records (with the answers they
// stored), sessions and authorization codes, old confirmation marks and
// audit entries, and webhook deliveries and dispatched outbox events past
// their 30 days. It takes no
// input: a schedule starts it.
func PurgeExpired(ctx workflow.Context) (PurgeExpiredResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
	})
	var out activities.PurgeExpiredResult
	err := workflow.ExecuteActivity(actx, a.PurgeExpired, activities.PurgeExpiredInput{}).Get(ctx, &out)
	return PurgeExpiredResult{IdempotencyKeys: out.IdempotencyKeys, Sessions: out.Sessions, AuthCodes: out.AuthCodes, ContactSends: out.ContactSends, AuditEntries: out.AuditEntries,
		WebhookDeliveries: out.WebhookDeliveries, OutboxEvents: out.OutboxEvents}, err
}
