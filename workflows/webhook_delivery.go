package workflows

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// DefaultRetrySchedule is the wait before each retry (spec §6.2).
var DefaultRetrySchedule = []time.Duration{10 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute}

// attemptOptions run one attempt: the 10 s HTTP timeout plus recording.
// Activity retries cover infrastructure faults only; HTTP failures are
// outcomes, retried by the ladder's durable timers.
var attemptOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
}

// DeliveryInput is one delivery's ladder.
type DeliveryInput struct {
	StoreID    uuid.UUID
	DeliveryID uuid.UUID
	// Schedule is the wait before each remaining attempt.
	Schedule []time.Duration
	// NextAttempt is the number of the first attempt this ladder makes.
	NextAttempt int
}

// DeliveryResult is how the ladder ended.
type DeliveryResult struct {
	Status   string
	Attempts int
}

// DeliveryWorkflowID is the id of one delivery's retry ladder.
func DeliveryWorkflowID(deliveryID uuid.UUID) string {
	return "webhook-delivery:" + deliveryID.String()
}

// RedeliveryWorkflowID is the id of a requeued delivery's ladder that
// begins at attempt from; the API and the dispatcher's lost-start sweep
// derive the same one, so a ladder is started once.
func RedeliveryWorkflowID(deliveryID uuid.UUID, from int) string {
	return fmt.Sprintf("%s:from-%d", DeliveryWorkflowID(deliveryID), from)
}

// RedeliverySchedule is a requeued delivery's ladder: an attempt at once,
// then the retry schedule.
func RedeliverySchedule(retries []time.Duration) []time.Duration {
	return append([]time.Duration{0}, retries...)
}

// Delivery retries one delivery after each wait of its schedule (durable
// timers): until a 2xx, a 410, a switched-off subscription, or the last
// attempt, whose failure exhausts the delivery and switches the subscription off.
func Delivery(ctx workflow.Context, in DeliveryInput) (DeliveryResult, error) {
	ctx = workflow.WithActivityOptions(ctx, attemptOptions)
	result := DeliveryResult{Status: activities.OutcomeRetrying}
	for i, wait := range in.Schedule {
		if wait > 0 {
			if err := workflow.Sleep(ctx, wait); err != nil {
				return result, err
			}
		}
		attempt := in.NextAttempt + i
		var out activities.AttemptOutcome
		err := workflow.ExecuteActivity(ctx, a.AttemptDelivery, activities.AttemptInput{
			StoreID: in.StoreID, DeliveryID: in.DeliveryID, Attempt: attempt, Final: i == len(in.Schedule)-1,
		}).Get(ctx, &out)
		if err != nil {
			return result, err
		}
		result = DeliveryResult{Status: out.Status, Attempts: attempt}
		if out.Status != activities.OutcomeRetrying {
			return result, nil
		}
	}
	return result, nil
}
