package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/workflows"
)

// newCardTestEnv is a test environment with the activities registered, for
// a test to mock.
func newCardTestEnv() (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var acts *activities.Activities
	env.RegisterActivity(acts)
	return env, acts
}

// cardEnv is a test environment whose payment opens at the gateway and is
// due timeout after the workflow starts.
func cardEnv(t *testing.T, in workflows.CardPaymentInput, timeout time.Duration) (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	env, acts := newCardTestEnv()
	due := env.Now().Add(timeout)
	env.OnActivity(acts.OpenCardIntent, mock.Anything, activities.CardPaymentInput(in)).
		Return(activities.OpenCardIntentResult{Payable: true, Status: "open", ExpiresAt: due}, nil).Once()
	return env, acts
}

// Nobody pays: the durable timer fires at the store's timeout (time
// skipped), the payment and the order are expired, and nothing is settled.
func TestCardPaymentExpiresAtTheStoresTimeout(t *testing.T) {
	in := workflows.CardPaymentInput{StoreID: uuid.New(), OrderID: uuid.New()}
	env, acts := cardEnv(t, in, 30*time.Minute)
	var expiredAt time.Time
	env.OnActivity(acts.ExpireCardPayment, mock.Anything, activities.CardPaymentInput(in)).Return(
		func(context.Context, activities.CardPaymentInput) (activities.ExpireCardPaymentResult, error) {
			expiredAt = env.Now()
			return activities.ExpireCardPaymentResult{Status: "expired"}, nil
		}).Once()
	start := env.Now()
	env.ExecuteWorkflow(workflows.CardPayment, in)
	var out workflows.CardPaymentResult
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "expired", out.Outcome)
	require.WithinDuration(t, start.Add(30*time.Minute), expiredAt, time.Second, "the timer is the store's timeout")
	env.AssertExpectations(t)
}

// The gateway's success before the timeout settles the payment and the
// timer never fires; a success for another payment is ignored and the
// workflow keeps waiting.
func TestCardPaymentSettlesOnTheGatewaysSignal(t *testing.T) {
	in := workflows.CardPaymentInput{StoreID: uuid.New(), OrderID: uuid.New()}
	env, acts := cardEnv(t, in, 30*time.Minute)
	other := activities.SettleCardPaymentInput{CardPaymentInput: activities.CardPaymentInput(in), IntentID: "pi_other", Amount: 100, Currency: "egp"}
	ours := activities.SettleCardPaymentInput{CardPaymentInput: activities.CardPaymentInput(in), IntentID: "pi_ours", Amount: 45000, Currency: "egp"}
	env.OnActivity(acts.SettleCardPayment, mock.Anything, other).Return(activities.SettleCardPaymentResult{Outcome: "ignored"}, nil).Once()
	env.OnActivity(acts.SettleCardPayment, mock.Anything, ours).Return(activities.SettleCardPaymentResult{Outcome: "paid"}, nil).Once()
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.GatewayPaymentSignal, workflows.GatewayPayment{EventID: "evt_1", IntentID: "pi_other", Amount: 100, Currency: "egp"})
	}, 5*time.Minute)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.GatewayPaymentSignal, workflows.GatewayPayment{EventID: "evt_2", IntentID: "pi_ours", Amount: 45000, Currency: "egp"})
	}, 10*time.Minute)
	start := env.Now()
	env.ExecuteWorkflow(workflows.CardPayment, in)
	var out workflows.CardPaymentResult
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "paid", out.Outcome)
	require.Less(t, env.Now().Sub(start), 30*time.Minute, "ended at the payment, not at the timeout")
	env.AssertExpectations(t) // ExpireCardPayment was never called
}

// At the timeout the gateway says the payment succeeded after all (the
// cancel was refused): the workflow settles it instead of expiring.
func TestCardPaymentTakenAtTheTimeoutIsSettled(t *testing.T) {
	in := workflows.CardPaymentInput{StoreID: uuid.New(), OrderID: uuid.New()}
	env, acts := cardEnv(t, in, 10*time.Minute)
	env.OnActivity(acts.ExpireCardPayment, mock.Anything, activities.CardPaymentInput(in)).
		Return(activities.ExpireCardPaymentResult{Status: "succeeded", IntentID: "pi_1", Amount: 500, Currency: "EGP"}, nil).Once()
	env.OnActivity(acts.SettleCardPayment, mock.Anything, activities.SettleCardPaymentInput{CardPaymentInput: activities.CardPaymentInput(in),
		IntentID: "pi_1", Amount: 500, Currency: "EGP"}).Return(activities.SettleCardPaymentResult{Outcome: "paid"}, nil).Once()
	env.ExecuteWorkflow(workflows.CardPayment, in)
	var out workflows.CardPaymentResult
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "paid", out.Outcome)
	env.AssertExpectations(t)
}

// A success delivered after the order expired starts a new run of the
// same id (signal-with-start): the payment is closed, so the run settles
// the late payment (the activity pays it back) and ends without a timer.
func TestLateCardPaymentIsPaidBack(t *testing.T) {
	in := workflows.CardPaymentInput{StoreID: uuid.New(), OrderID: uuid.New()}
	env, acts := newCardTestEnv()
	env.OnActivity(acts.OpenCardIntent, mock.Anything, activities.CardPaymentInput(in)).
		Return(activities.OpenCardIntentResult{Closed: true, Status: "expired"}, nil).Once()
	late := activities.SettleCardPaymentInput{CardPaymentInput: activities.CardPaymentInput(in), IntentID: "pi_1", Amount: 500, Currency: "egp"}
	env.OnActivity(acts.SettleCardPayment, mock.Anything, late).Return(activities.SettleCardPaymentResult{Outcome: "refunded_late"}, nil).Once()
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.GatewayPaymentSignal, workflows.GatewayPayment{EventID: "evt_late", IntentID: "pi_1", Amount: 500, Currency: "egp"})
	}, 0)
	env.ExecuteWorkflow(workflows.CardPayment, in)
	var out workflows.CardPaymentResult
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "expired", out.Outcome)
	env.AssertExpectations(t)
}

// A gateway down at checkout: the local attempts give up after a minute
// and a regular activity keeps trying (here it answers at the fifth
// minute), so the payment still opens and the payment-ready update
// answers; the order is not expired early.
func TestCardPaymentOpensAfterTheGatewayComesBack(t *testing.T) {
	in := workflows.CardPaymentInput{StoreID: uuid.New(), OrderID: uuid.New()}
	env, acts := newCardTestEnv()
	start := env.Now()
	env.OnActivity(acts.OpenCardIntent, mock.Anything, activities.CardPaymentInput(in)).Return(
		func(context.Context, activities.CardPaymentInput) (activities.OpenCardIntentResult, error) {
			if env.Now().Before(start.Add(5 * time.Minute)) {
				return activities.OpenCardIntentResult{}, errors.New("the gateway answered 503")
			}
			return activities.OpenCardIntentResult{Payable: true, Status: "open", ExpiresAt: start.Add(30 * time.Minute)}, nil
		})
	env.OnActivity(acts.SettleCardPayment, mock.Anything, mock.Anything).Return(activities.SettleCardPaymentResult{Outcome: "paid"}, nil).Once()
	var readyErr error
	answered := false
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(workflows.PaymentReadyUpdate, "ready-1", &testsuite.TestUpdateCallback{
			OnAccept:   func() {},
			OnReject:   func(err error) { readyErr, answered = err, true },
			OnComplete: func(_ any, err error) { readyErr, answered = err, true },
		})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		require.True(t, answered, "the update answered once the payment opened")
		env.SignalWorkflow(workflows.GatewayPaymentSignal, workflows.GatewayPayment{EventID: "evt_1", IntentID: "pi_1", Amount: 100, Currency: "egp"})
	}, 10*time.Minute)
	env.ExecuteWorkflow(workflows.CardPayment, in)
	var out workflows.CardPaymentResult
	require.NoError(t, env.GetWorkflowResult(&out))
	require.NoError(t, readyErr, "the payment opened")
	require.Equal(t, "paid", out.Outcome)
}

// The merchant cancels the order while its payment is open: the signal
// closes the payment at once (CloseCancelledCardPayment), not at the
// store's timeout, and the timer's expiry never runs. A signal for an
// order still waiting on its payment changes nothing: the payment stays
// open and expires at the timeout.
func TestCardPaymentClosesAtTheMerchantsCancel(t *testing.T) {
	in := workflows.CardPaymentInput{StoreID: uuid.New(), OrderID: uuid.New()}
	env, acts := cardEnv(t, in, 30*time.Minute)
	env.OnActivity(acts.CloseCancelledCardPayment, mock.Anything, activities.CardPaymentInput(in)).
		Return(activities.ExpireCardPaymentResult{Status: "cancelled"}, nil).Once()
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.OrderCancelledSignal, nil) }, 5*time.Minute)
	start := env.Now()
	env.ExecuteWorkflow(workflows.CardPayment, in)
	var out workflows.CardPaymentResult
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "cancelled", out.Outcome)
	require.Less(t, env.Now().Sub(start), 30*time.Minute, "closed at the cancel, not at the timeout")
	env.AssertExpectations(t) // ExpireCardPayment was never called

	env, acts = cardEnv(t, in, 30*time.Minute)
	env.OnActivity(acts.CloseCancelledCardPayment, mock.Anything, activities.CardPaymentInput(in)).
		Return(activities.ExpireCardPaymentResult{Status: "open"}, nil).Once()
	env.OnActivity(acts.ExpireCardPayment, mock.Anything, activities.CardPaymentInput(in)).
		Return(activities.ExpireCardPaymentResult{Status: "expired"}, nil).Once()
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.OrderCancelledSignal, nil) }, 5*time.Minute)
	env.ExecuteWorkflow(workflows.CardPayment, in)
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "expired", out.Outcome, "an order still waiting keeps its payment until the timeout")
	env.AssertExpectations(t)
}
