// Package worker registers the workflows and activities on the task queue.
package worker

import (
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/workflows"
)

// DefaultTaskQueue is where the API starts workflows and workers poll.
const DefaultTaskQueue = "svc"

// Register puts every workflow and activity on r.
func Register(r sdkworker.Registry, acts *activities.Activities) {
	r.RegisterWorkflow(workflows.Ping)
	r.RegisterWorkflow(workflows.Dispatch)
	r.RegisterWorkflow(workflows.Delivery)
	r.RegisterWorkflow(workflows.WebhookTest)
	r.RegisterWorkflow(workflows.ProductImage)
	r.RegisterWorkflow(workflows.ProductImport)
	r.RegisterWorkflow(workflows.OrderPlaced)
	r.RegisterWorkflow(workflows.DraftConversion)
	r.RegisterWorkflow(workflows.OrderMessage)
	r.RegisterWorkflow(workflows.PaymentProof)
	r.RegisterWorkflow(workflows.EInvoiceSync)
	r.RegisterActivity(acts)
}

// New creates a worker on taskQueue with everything registered.
func New(c client.Client, taskQueue string, acts *activities.Activities) sdkworker.Worker {
	w := sdkworker.New(c, taskQueue, sdkworker.Options{})
	Register(w, acts)
	return w
}
