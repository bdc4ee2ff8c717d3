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

// importStretch is how long one activity call applies batches before it
// reports progress to the workflow (for the progress query) and is called
// again. Each call reads and parses the file again, so a stretch is long
// next to that (a 5 MB file parses in about 0.2 s).
const importStretch = 5 * time.Second

// importInStretches is the GetVersion change id of running an import in
// stretches with a progress query; histories recorded before ran it in one
// activity call.
const importInStretches = "import-in-stretches"

// ProgressQuery is the query type an import answers with ImportProgress.
const ProgressQuery = "progress"

// ImportProgress is an import's progress as its workflow last heard it.
type ImportProgress struct {
	Status        string `json:"status"`
	TotalRows     int    `json:"total_rows"`
	ProcessedRows int    `json:"processed_rows"`
	FailedRows    int    `json:"failed_rows"`
	Batches       int    `json:"batches"`
	BatchesDone   int    `json:"batches_done"`
}

// ProductImport runs an uploaded CSV to the end, surviving worker restarts.
// It answers the progress query with what the last stretch reported.
func ProductImport(ctx workflow.Context, in ProductImportInput) (ProductImportResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    importHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 20},
	})
	imp := activities.ImportInput{StoreID: in.StoreID, ImportID: in.ImportID}
	var out activities.ImportResult
	if workflow.GetVersion(ctx, importInStretches, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		err := workflow.ExecuteActivity(actx, a.RunProductImport, imp).Get(ctx, &out)
		if err != nil {
			_ = workflow.ExecuteActivity(actx, a.FailProductImport, imp).Get(ctx, nil)
			return ProductImportResult{}, err
		}
		return ProductImportResult{Status: out.Status, Created: out.Created, Updated: out.Updated,
			Unchanged: out.Unchanged, Failed: out.Failed}, nil
	}
	progress := ImportProgress{Status: "running"}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (ImportProgress, error) { return progress, nil }); err != nil {
		return ProductImportResult{}, err
	}
	imp.For = importStretch
	for {
		err := workflow.ExecuteActivity(actx, a.RunProductImport, imp).Get(ctx, &out)
		if err != nil {
			_ = workflow.ExecuteActivity(actx, a.FailProductImport, imp).Get(ctx, nil)
			progress.Status = "failed"
			return ProductImportResult{}, err
		}
		progress = ImportProgress{Status: out.Status, TotalRows: out.TotalRows, ProcessedRows: out.ProcessedRows,
			FailedRows: out.Failed, Batches: out.Batches, BatchesDone: out.BatchesDone}
		if out.Done {
			return ProductImportResult{Status: out.Status, Created: out.Created, Updated: out.Updated,
				Unchanged: out.Unchanged, Failed: out.Failed}, nil
		}
	}
}
