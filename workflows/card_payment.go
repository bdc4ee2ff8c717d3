package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// CardPaymentInput names an order paid by card.
type CardPaymentInput struct {
	StoreID uuid.UUID
	OrderID uuid.UUID
}

// CardPaymentResult is how the payment ended: paid, mismatched,
// refunded_late, expired, or the status a closed payment already had.
type CardPaymentResult struct {
	Outcome string
}

// CardPaymentWorkflowID is the id of an order's card-payment workflow.
func CardPaymentWorkflowID(orderID uuid.UUID) string {
	return "card-payment:" + orderID.String()
}

// CardPaymentWork names an order's card-payment workflow to operators.
func CardPaymentWork(storeID, orderID uuid.UUID, orderNumber, store string) Work {
	return Work{Kind: KindCardPayment, StoreID: storeID, ResourceID: orderID, OrderNumber: orderNumber,
		Summary: "card payment · " + orderNumber + " · " + store}
}

// GatewayPaymentSignal carries the gateway's word that the order's
// payment succeeded (a verified webhook, decisions §18).
const GatewayPaymentSignal = "gateway-payment"

// GatewayPayment is a GatewayPaymentSignal's content.
type GatewayPayment struct {
	EventID  string
	IntentID string
	Amount   int64
	Currency string
}

// OrderCancelledSignal says the merchant cancelled the order while its
// payment was open: the workflow closes the payment at the gateway at once
// rather than at the store's timeout. The API sends it after the cancel
// commits; a signal that is lost leaves the close to the timeout, as
// before it.
const OrderCancelledSignal = "order-cancelled"

// PaymentReadyUpdate returns once the order's payment is open at the
// gateway (the client secret is then stored), or fails when it cannot be.
const PaymentReadyUpdate = "payment-ready"

// openIntentLocally are the local attempts at opening a payment: a minute
// in all.
var openIntentLocally = workflow.LocalActivityOptions{
	ScheduleToCloseTimeout: time.Minute,
	StartToCloseTimeout:    30 * time.Second,
	RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second},
}

// intentWindow bounds how long an unreachable gateway is retried to open a
// payment: the longest card payment timeout.
const intentWindow = 24 * time.Hour

// CardPayment owns a card order's payment (decisions §18): it opens the
// payment at the gateway, then waits on a durable timer until the store's
// timeout for the gateway's success. A success pays the order through the
// mark-paid routine; the timeout cancels the payment and the order. A
// success after the timeout (delivered to a new run of the same id) is
// paid back.
func CardPayment(ctx workflow.Context, in CardPaymentInput) (CardPaymentResult, error) {
	var (
		opened *activities.OpenCardIntentResult
		ended  bool
	)
	if err := workflow.SetUpdateHandler(ctx, PaymentReadyUpdate, func(ctx workflow.Context) error {
		if err := workflow.Await(ctx, func() bool { return opened != nil || ended }); err != nil {
			return err
		}
		if opened == nil || !opened.Payable || ended {
			return temporal.NewNonRetryableApplicationError("the order cannot be paid by card now", "NotPayable", nil)
		}
		return nil
	}); err != nil {
		return CardPaymentResult{}, err
	}
	payments := workflow.GetSignalChannel(ctx, GatewayPaymentSignal)
	cancels := workflow.GetSignalChannel(ctx, OrderCancelledSignal)
	gatewayOptions := workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: intentWindow,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute},
	}
	actx := workflow.WithActivityOptions(ctx, gatewayOptions)
	settle := func(p GatewayPayment) (string, error) {
		var out activities.SettleCardPaymentResult
		err := workflow.ExecuteActivity(actx, a.SettleCardPayment, activities.SettleCardPaymentInput{
			CardPaymentInput: activities.CardPaymentInput(in), IntentID: p.IntentID, Amount: p.Amount, Currency: p.Currency}).Get(ctx, &out)
		return out.Outcome, err
	}
	finish := func(outcome string, err error) (CardPaymentResult, error) {
		ended = true
		// Successes that arrived meanwhile are settled too (one of them may
		// be a late payment that must go back).
		var p GatewayPayment
		for err == nil && payments.ReceiveAsync(&p) {
			_, err = settle(p)
		}
		if werr := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err == nil {
			err = werr
		}
		return CardPaymentResult{Outcome: outcome}, err
	}

	// The payment is opened in a local activity (in this workflow task: the
	// buyer's checkout waits on it); a gateway that does not answer within
	// a minute is then retried by a regular activity for up to a day.
	var o activities.OpenCardIntentResult
	lctx := workflow.WithLocalActivityOptions(ctx, openIntentLocally)
	if err := workflow.ExecuteLocalActivity(lctx, a.OpenCardIntent, activities.CardPaymentInput(in)).Get(ctx, &o); err != nil {
		if err := workflow.ExecuteActivity(actx, a.OpenCardIntent, activities.CardPaymentInput(in)).Get(ctx, &o); err != nil {
			// The gateway stayed unreachable: nobody can pay; the order expires.
			o = activities.OpenCardIntentResult{Reason: err.Error()}
		}
	}
	opened = &o
	if o.Closed {
		return finish(o.Status, nil)
	}

	timerCtx, stopTimer := workflow.WithCancel(ctx)
	defer stopTimer()
	timer := workflow.NewTimer(timerCtx, max(o.ExpiresAt.Sub(workflow.Now(ctx)), 0))
	for {
		var (
			outcome string
			err     error
			done    bool
		)
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(payments, func(c workflow.ReceiveChannel, _ bool) {
			var p GatewayPayment
			c.Receive(ctx, &p)
			outcome, err = settle(p)
			done = err != nil || outcome != "ignored"
		})
		// At the timeout the payment is closed at the gateway and the
		// order expired; at the merchant's cancel the payment is closed
		// at once (an order still waiting on it keeps it open).
		closeWith := func(activity any) {
			var exp activities.ExpireCardPaymentResult
			if err = workflow.ExecuteActivity(actx, activity, activities.CardPaymentInput(in)).Get(ctx, &exp); err != nil {
				done = true
				return
			}
			outcome, done = exp.Status, exp.Status != "open"
			if exp.Status == "succeeded" { // the gateway took it after all
				outcome, err = settle(GatewayPayment{IntentID: exp.IntentID, Amount: exp.Amount, Currency: exp.Currency})
			}
		}
		sel.AddFuture(timer, func(workflow.Future) {
			closeWith(a.ExpireCardPayment)
			done = true
		})
		sel.AddReceive(cancels, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			closeWith(a.CloseCancelledCardPayment)
		})
		sel.Select(ctx)
		if done {
			return finish(outcome, err)
		}
	}
}
