package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"

	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
)

// firstAttemptConcurrency bounds the sends of one dispatch batch in flight.
const firstAttemptConcurrency = 64

// AttemptInput names one attempt of one delivery.
type AttemptInput struct {
	StoreID    uuid.UUID
	DeliveryID uuid.UUID
	Attempt    int
	// Final marks the last attempt of the ladder: a failure exhausts the delivery.
	Final bool
	// Ping marks the test operation's delivery: sent even to a switched-off
	// subscription, and a failure never switches it off.
	Ping bool
}

// AttemptOutcome is what happened; Status is the delivery's new status.
type AttemptOutcome struct {
	Status       string
	StatusCode   int
	ResponseBody string
	Error        string
	DurationMS   int64
}

// AttemptDelivery makes one signed attempt with the subscription's current
// URL and secret and records it. An HTTP failure is an outcome, not an
// error: the workflow's ladder decides when to try again.
func (a *Activities) AttemptDelivery(ctx context.Context, in AttemptInput) (AttemptOutcome, error) {
	return a.attempt(ctx, in)
}

func (a *Activities) attempt(ctx context.Context, in AttemptInput) (AttemptOutcome, error) {
	target, err := a.DB.FindDeliveryTarget(ctx, in.StoreID, in.DeliveryID)
	if errors.Is(err, storage.ErrNotFound) {
		// The subscription (and its deliveries) was deleted: nothing to send.
		return AttemptOutcome{Status: string(storage.DeliverySkipped)}, nil
	}
	if err != nil {
		return AttemptOutcome{}, err
	}
	if target.Attempts >= in.Attempt || terminal(target.Status) {
		// This attempt was already made and recorded (the activity is being
		// retried after recording it): report it instead of sending again.
		return AttemptOutcome{Status: string(target.Status)}, nil
	}
	now := time.Now().UTC()
	if !target.IsActive && !in.Ping {
		err := a.DB.RecordAttempt(ctx, in.StoreID, storage.Attempt{DeliveryID: in.DeliveryID, Attempt: in.Attempt,
			Status: storage.DeliverySkipped, Error: "subscription is switched off", AttemptedAt: now}, storage.DeliverySkipped)
		return AttemptOutcome{Status: string(storage.DeliverySkipped), Error: "subscription is switched off"}, err
	}
	res := webhook.Send(ctx, a.HTTPClient, webhook.Request{URL: target.URL, Secret: target.Secret,
		DeliveryID: target.ID.String(), Event: target.Event, Body: target.Body}, now)
	logStatus, status := outcomeStatus(res, in.Final, in.Ping)
	var code *int
	if res.StatusCode != 0 {
		code = &res.StatusCode
	}
	err = a.DB.RecordAttempt(ctx, in.StoreID, storage.Attempt{DeliveryID: in.DeliveryID, Attempt: in.Attempt, Status: logStatus,
		ResponseCode: code, ResponseBody: res.Body, Error: res.Err, Duration: res.Duration, AttemptedAt: now}, status)
	if err != nil {
		return AttemptOutcome{}, fmt.Errorf("record attempt: %w", err)
	}
	a.Metrics.Delivery(string(status))
	return AttemptOutcome{Status: string(status), StatusCode: res.StatusCode, ResponseBody: res.Body, Error: res.Err,
		DurationMS: res.Duration.Milliseconds()}, nil
}

// OutcomeRetrying is the AttemptOutcome status of a delivery whose ladder
// goes on; every other status ends it.
const OutcomeRetrying = string(storage.DeliveryRetrying)

func terminal(status storage.DeliveryStatus) bool {
	switch status {
	case storage.DeliverySucceeded, storage.DeliveryGone, storage.DeliveryExhausted, storage.DeliveryFailed:
		return true
	}
	return false
}

// FirstAttemptsInput names a dispatch batch.
type FirstAttemptsInput struct {
	BatchID uuid.UUID
	// Final is set when the retry schedule is empty: a first failure exhausts.
	Final bool
}

// FirstAttemptsResult lists the deliveries whose first attempt failed.
type FirstAttemptsResult struct {
	Failed []FailedDelivery
}

// UnmarshalJSON also reads the bare list of histories recorded before.
func (r *FirstAttemptsResult) UnmarshalJSON(b []byte) error {
	type current FirstAttemptsResult
	return decodeLegacy(b, (*current)(r), &r.Failed)
}

// FailedDelivery is one delivery that needs the retry ladder.
type FailedDelivery struct {
	StoreID    uuid.UUID
	DeliveryID uuid.UUID
}

// recordChunk is how many first attempts are recorded per transaction.
const recordChunk = 200

// SendFirstAttempts makes the first attempt of every pending delivery of a
// batch concurrently and returns the ones that failed and need the ladder.
// Targets are read in one query and attempts recorded in chunks, so the
// database work per delivery stays small. Deliveries already recorded (a
// retried activity) are not sent again; ones sent but not yet recorded when
// a worker died are sent again, which at-least-once delivery allows.
func (a *Activities) SendFirstAttempts(ctx context.Context, in FirstAttemptsInput) (FirstAttemptsResult, error) {
	targets, err := a.DB.FindBatchTargets(ctx, in.BatchID)
	if err != nil {
		return FirstAttemptsResult{}, err
	}
	// Room for every answer: the sends go on while a chunk is recorded.
	// A fixed pool of senders, each keeping its grown stack from one send
	// to the next.
	results := make(chan storage.AttemptRecord, len(targets))
	jobs := make(chan storage.DeliveryTarget)
	var senders sync.WaitGroup
	for range min(firstAttemptConcurrency, len(targets)) {
		senders.Go(func() {
			for t := range jobs {
				results <- a.firstAttempt(ctx, t, in.Final)
			}
		})
	}
	go func() {
		for _, t := range targets {
			jobs <- t
		}
		close(jobs)
		senders.Wait()
		close(results)
	}()
	var (
		failed  []FailedDelivery
		pending []storage.AttemptRecord
		done    int
		saveErr error
	)
	flush := func() {
		if saveErr == nil {
			saveErr = a.DB.RecordAttempts(ctx, pending)
		}
		done += len(pending)
		pending = pending[:0]
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, done)
		}
	}
	for rec := range results {
		// Every answer is progress: the SDK throttles the heartbeats, and a
		// worker that died mid-batch is noticed after DispatchHeartbeat.
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, done)
		}
		a.Metrics.Delivery(string(rec.Status))
		if rec.Status == storage.DeliveryRetrying {
			failed = append(failed, FailedDelivery{StoreID: rec.StoreID, DeliveryID: rec.Attempt.DeliveryID})
		}
		if pending = append(pending, rec); len(pending) >= recordChunk {
			flush()
		}
	}
	flush()
	if saveErr != nil {
		// Retry the activity: recorded deliveries are skipped next time.
		return FirstAttemptsResult{}, fmt.Errorf("record first attempts: %w", saveErr)
	}
	return FirstAttemptsResult{Failed: failed}, nil
}

func (a *Activities) firstAttempt(ctx context.Context, t storage.DeliveryTarget, final bool) storage.AttemptRecord {
	now := time.Now().UTC()
	rec := storage.AttemptRecord{StoreID: t.StoreID, SubscriptionID: t.SubscriptionID,
		Attempt: storage.Attempt{DeliveryID: t.ID, Attempt: 1, AttemptedAt: now}}
	if !t.IsActive {
		rec.Attempt.Status, rec.Attempt.Error, rec.Status = storage.DeliverySkipped, "subscription is switched off", storage.DeliverySkipped
		return rec
	}
	res := webhook.Send(ctx, a.HTTPClient, webhook.Request{URL: t.URL, Secret: t.Secret, DeliveryID: t.ID.String(),
		Event: t.Event, Body: t.Body}, now)
	rec.Attempt.Status, rec.Status = outcomeStatus(res, final, false)
	if res.StatusCode != 0 {
		code := res.StatusCode
		rec.Attempt.ResponseCode = &code
	}
	rec.Attempt.ResponseBody, rec.Attempt.Error, rec.Attempt.Duration = res.Body, res.Err, res.Duration
	return rec
}

// outcomeStatus maps an answer to the logged attempt status and the
// delivery's new status.
func outcomeStatus(res webhook.Result, final, ping bool) (logStatus, status storage.DeliveryStatus) {
	switch {
	case res.OK():
		return storage.DeliverySucceeded, storage.DeliverySucceeded
	case res.Gone():
		return storage.DeliveryGone, storage.DeliveryGone
	case ping:
		return storage.DeliveryFailed, storage.DeliveryFailed
	case final:
		return storage.DeliveryExhausted, storage.DeliveryExhausted
	default:
		return storage.DeliveryFailed, storage.DeliveryRetrying
	}
}
