package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/storage"
)

// ProductImportInput names the import; HeartbeatTimeout (default 30 s) is
// how soon a dead worker's import moves to another worker.
type ProductImportInput struct {
	activities.ImportInput
	HeartbeatTimeout time.Duration
}

// ProductImportResult is the finished import.
type ProductImportResult = storage.ProductImport

// ProductImportWorkflowID is the id of one import.
func ProductImportWorkflowID(in ProductImportInput) string {
	return "product-import:" + in.ImportID.String()
}

// ProductImport runs an uploaded CSV to the end, surviving worker restarts.
func ProductImport(ctx workflow.Context, in ProductImportInput) (ProductImportResult, error) {
	heartbeat := in.HeartbeatTimeout
	if heartbeat == 0 {
		heartbeat = 30 * time.Second
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    heartbeat,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 20},
	})
	var result ProductImportResult
	err := workflow.ExecuteActivity(actx, a.RunProductImport, in.ImportInput).Get(ctx, &result)
	if err != nil {
		_ = workflow.ExecuteActivity(actx, a.FailProductImport, in.ImportInput).Get(ctx, nil)
	}
	return result, err
}
