package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/webhook"
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
		return AttemptOutcome{Status: storage.DeliverySkipped}, nil
	}
	if err != nil {
		return AttemptOutcome{}, err
	}
	if target.Attempts >= in.Attempt || terminal(target.Status) {
		// This attempt was already made and recorded (the activity is being
		// retried after recording it): report it instead of sending again.
		return AttemptOutcome{Status: target.Status}, nil
	}
	now := time.Now().UTC()
	if !target.IsActive && !in.Ping {
		err := a.DB.RecordAttempt(ctx, in.StoreID, storage.Attempt{DeliveryID: in.DeliveryID, Attempt: in.Attempt,
			Status: storage.DeliverySkipped, Error: "subscription is switched off", AttemptedAt: now}, storage.DeliverySkipped)
		return AttemptOutcome{Status: storage.DeliverySkipped, Error: "subscription is switched off"}, err
	}
	res := webhook.Send(ctx, a.HTTPClient, webhook.Request{URL: target.URL, Secret: target.Secret,
		DeliveryID: target.ID.String(), Event: target.Event, Body: target.Body}, now)
	logStatus, status := "failed", storage.DeliveryRetrying
	switch {
	case res.OK():
		logStatus, status = storage.DeliverySucceeded, storage.DeliverySucceeded
	case res.Gone():
		logStatus, status = storage.DeliveryGone, storage.DeliveryGone
	case in.Ping:
		status = storage.DeliveryFailed
	case in.Final:
		logStatus, status = storage.DeliveryExhausted, storage.DeliveryExhausted
	}
	var code *int
	if res.StatusCode != 0 {
		code = &res.StatusCode
	}
	err = a.DB.RecordAttempt(ctx, in.StoreID, storage.Attempt{DeliveryID: in.DeliveryID, Attempt: in.Attempt, Status: logStatus,
		ResponseCode: code, ResponseBody: res.Body, Error: res.Err, Duration: res.Duration, AttemptedAt: now}, status)
	if err != nil {
		return AttemptOutcome{}, fmt.Errorf("record attempt: %w", err)
	}
	return AttemptOutcome{Status: status, StatusCode: res.StatusCode, ResponseBody: res.Body, Error: res.Err,
		DurationMS: res.Duration.Milliseconds()}, nil
}

func terminal(status string) bool {
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

// SendFirstAttempts makes the first attempt of every pending delivery of a
// batch concurrently and returns the ones that failed and need the ladder.
// Deliveries already attempted (a retried activity) are not sent again.
func (a *Activities) SendFirstAttempts(ctx context.Context, in FirstAttemptsInput) ([]storage.DeliveryRef, error) {
	refs, err := a.DB.FindBatchDeliveries(ctx, in.BatchID)
	if err != nil {
		return nil, err
	}
	var (
		mu       sync.Mutex
		failed   []storage.DeliveryRef
		firstErr error
		wg       sync.WaitGroup
		sem      = make(chan struct{}, firstAttemptConcurrency)
		done     int
	)
	for _, ref := range refs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out, err := a.attempt(ctx, AttemptInput{StoreID: ref.StoreID, DeliveryID: ref.DeliveryID, Attempt: 1, Final: in.Final})
			mu.Lock()
			defer mu.Unlock()
			done++
			if activity.IsActivity(ctx) && done%50 == 0 {
				activity.RecordHeartbeat(ctx, done)
			}
			switch {
			case err != nil && firstErr == nil:
				firstErr = err
			case err == nil && out.Status == storage.DeliveryRetrying:
				failed = append(failed, ref)
			}
		}()
	}
	wg.Wait()
	// Recording failed for some: retry the activity; what was recorded is skipped next time.
	if firstErr != nil {
		return nil, firstErr
	}
	return failed, nil
}
