package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// ProductImportInput names the import.
type ProductImportInput struct {
	StoreID  uuid.UUID
	ImportID uuid.UUID
}

// ProductImportResult is how the import ended, with its counts.
type ProductImportResult struct {
	Status    string
	Created   int
	Updated   int
	Unchanged int
	Failed    int
}

// ProductImportWorkflowID is the id of one import.
func ProductImportWorkflowID(importID uuid.UUID) string {
	return "product-import:" + importID.String()
}

// importHeartbeat is how soon a dead worker's import moves to another worker.
const importHeartbeat = 30 * time.Second

// ProductImport runs an uploaded CSV to the end, surviving worker restarts.
func ProductImport(ctx workflow.Context, in ProductImportInput) (ProductImportResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    importHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 20},
	})
	imp := activities.ImportInput{StoreID: in.StoreID, ImportID: in.ImportID}
	var out activities.ImportResult
	err := workflow.ExecuteActivity(actx, a.RunProductImport, imp).Get(ctx, &out)
	if err != nil {
		_ = workflow.ExecuteActivity(actx, a.FailProductImport, imp).Get(ctx, nil)
		return ProductImportResult{}, err
	}
	return ProductImportResult{Status: out.Status, Created: out.Created, Updated: out.Updated,
		Unchanged: out.Unchanged, Failed: out.Failed}, nil
}
