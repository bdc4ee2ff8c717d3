package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// EInvoiceSyncInput names an e-invoice.
type EInvoiceSyncInput struct {
	StoreID   uuid.UUID
	InvoiceID uuid.UUID
}

// EInvoiceSyncResult is the invoice's status once the authority answered.
type EInvoiceSyncResult struct {
	Status string
}

// EInvoiceWorkflowID is the id of an e-invoice's sync with the authority.
// One id per invoice: a cancel waits for an issue still in flight.
func EInvoiceWorkflowID(invoiceID uuid.UUID) string {
	return "e-invoice:" + invoiceID.String()
}

// EInvoiceSync tells the tax authority about an invoice, retrying for up
// to a day while the authority is unreachable, then prints its PDFs.
func EInvoiceSync(ctx workflow.Context, in EInvoiceSyncInput) (EInvoiceSyncResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 5 * time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Minute},
	})
	var out activities.SyncEInvoiceResult
	err := workflow.ExecuteActivity(actx, a.SyncEInvoice,
		activities.SyncEInvoiceInput{StoreID: in.StoreID, InvoiceID: in.InvoiceID}).Get(ctx, &out)
	if err != nil {
		return EInvoiceSyncResult{Status: out.Status}, err
	}
	// Then its PDFs, once the authority took it (histories from before
	// the PDFs end here).
	if workflow.GetVersion(ctx, "invoice-pdf", workflow.DefaultVersion, 1) == 1 {
		pctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: 2 * time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumAttempts: 5},
		})
		err = workflow.ExecuteActivity(pctx, a.RenderInvoicePDF,
			activities.RenderInvoicePDFInput{StoreID: in.StoreID, InvoiceID: in.InvoiceID}).Get(ctx, nil)
	}
	return EInvoiceSyncResult{Status: out.Status}, err
}
