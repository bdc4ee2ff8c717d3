package activities

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/storage"
)

// defaultImportBatch is how many rows one transaction applies: a 10 000-row
// file moves a merchant's progress bar ten times.
const defaultImportBatch = 1000

// importConcurrency is how many batches are applied at once.
const importConcurrency = 2

// importNotifyAfter: imports that ran longer leave a dashboard notification
// (the merchant got a 202 and is not watching).
const importNotifyAfter = 20 * time.Second

// ImportInput names an import. With For set, the activity returns after
// about that long with the import's progress (Done false) and the workflow
// calls it again; without it (histories recorded before), it runs to the end.
type ImportInput struct {
	StoreID  uuid.UUID
	ImportID uuid.UUID
	For      time.Duration
}

// ImportResult is how an import ended, or how far it got when Done is false.
type ImportResult struct {
	Status        string
	Created       int
	Updated       int
	Unchanged     int
	Failed        int
	Done          bool
	TotalRows     int
	ProcessedRows int
	Batches       int // of the file
	BatchesDone   int
}

// ImportHeartbeat is what an import's activity heartbeats after each batch;
// the Temporal UI shows it as the pending activity's details.
type ImportHeartbeat struct {
	RowsDone   int `json:"rows_done"`
	RowsFailed int `json:"rows_failed"`
	Batch      int `json:"batch"`
	Batches    int `json:"batches"`
}

// RunProductImport applies an uploaded CSV in batches, each in one
// transaction with the import's progress, heartbeating after each. A retry
// (a crashed or stopped worker) resumes after the last committed batch, so
// every row is applied exactly once. Row errors never stop the import.
func (a *Activities) RunProductImport(ctx context.Context, in ImportInput) (ImportResult, error) {
	imp, batches, done, err := a.runImport(ctx, in)
	return ImportResult{Status: string(imp.Status), Created: imp.Created, Updated: imp.Updated, Unchanged: imp.Unchanged, Failed: imp.Failed,
		Done: imp.Status != storage.ImportRunning, TotalRows: imp.TotalRows, ProcessedRows: imp.ProcessedRows, Batches: batches, BatchesDone: done}, err
}

// runImport applies the import's batches not yet applied, for up to in.For
// when set, and returns the import as it then stands, with the file's
// batches and how many are applied.
func (a *Activities) runImport(ctx context.Context, in ImportInput) (imp storage.ProductImport, total, applied int, err error) {
	imp, n, done, err := a.applyImport(ctx, in)
	if err != nil || imp.Status != storage.ImportRunning {
		return imp, n, done, err
	}
	// Stopped for the workflow to record progress: read the counts the
	// batches committed.
	imp, err = a.DB.FindImport(ctx, in.StoreID, in.ImportID)
	return imp, n, done, err
}

func (a *Activities) applyImport(ctx context.Context, in ImportInput) (storage.ProductImport, int, int, error) {
	started := time.Now()
	imp, err := a.DB.FindImport(ctx, in.StoreID, in.ImportID)
	if err != nil || imp.Status != storage.ImportRunning {
		return imp, 0, 0, err
	}
	data, err := a.Blob.Get(ctx, imp.ObjectKey)
	if err != nil {
		return imp, 0, 0, err
	}
	records, err := storage.ReadCSV(data)
	if err != nil {
		imp, err := a.failImport(ctx, in, "the file is not a readable CSV: "+err.Error())
		return imp, 0, 0, err
	}
	header, err := storage.ParseCSVHeader(records[0])
	if err != nil {
		imp, err := a.failImport(ctx, in, "the header row is wrong: "+err.Error())
		return imp, 0, 0, err
	}
	rows := records[1:]
	size := a.ImportBatchSize
	if size <= 0 {
		size = defaultImportBatch
	}
	// Batch boundaries are fixed by the first attempt: a retry on a worker
	// configured differently must cut the file the same way.
	if size, err = a.DB.StartImport(ctx, in.StoreID, in.ImportID, len(rows), size); err != nil {
		return imp, 0, 0, err
	}
	store, err := a.DB.FindStoreByID(ctx, in.StoreID)
	if err != nil {
		return imp, 0, 0, err
	}
	exponent := storage.CurrencyExponent(store.Currency)
	batches := storage.SplitImport(header, rows, exponent, size)
	applied, err := a.DB.AppliedImportBatches(ctx, in.ImportID)
	if err != nil {
		return imp, 0, 0, err
	}
	// Two batches at a time: each is its own transaction on its own
	// connection, so Postgres applies them on both cores.
	var (
		mu       sync.Mutex
		done     = len(applied)
		failed   = 0
		rowsDone = 0
		firstErr error
		wg       sync.WaitGroup
		sem      = make(chan struct{}, importConcurrency)
	)
	for i, batch := range batches {
		if applied[batch.Start] {
			failed += rowsWithErrors(batch.Errors)
			rowsDone += batch.Count
			continue
		}
		// At least one batch per call, so a slow parse cannot stall it.
		mu.Lock()
		progressed := done > len(applied)
		mu.Unlock()
		if in.For > 0 && progressed && time.Since(started) >= in.For {
			// Time to tell the workflow how far it got; it calls again.
			wg.Wait()
			return imp, len(batches), done, firstErr
		}
		sem <- struct{}{}
		if err := ctx.Err(); err != nil {
			<-sem
			break
		}
		if stopping(ctx) {
			// The worker is shutting down: finish the batches in flight and
			// hand the rest to another worker (the applied ones are recorded).
			<-sem
			wg.Wait()
			return imp, 0, 0, temporal.NewApplicationError("the worker is stopping; the import resumes on another worker", "WORKER_STOPPING")
		}
		mu.Lock()
		stop := firstErr != nil
		mu.Unlock()
		if stop {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := a.DB.ApplyImportBatch(ctx, in.StoreID, in.ImportID, batch)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			done++
			failed += rowsWithErrors(batch.Errors)
			a.Metrics.ImportedRows(batch.Count)
			rowsDone += batch.Count
			activity.RecordHeartbeat(ctx, ImportHeartbeat{RowsDone: rowsDone, RowsFailed: failed,
				Batch: i + 1, Batches: len(batches)})
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return imp, 0, 0, firstErr
	}
	if err := ctx.Err(); err != nil {
		return imp, 0, 0, err
	}
	imp, err = a.DB.FinishImport(ctx, in.StoreID, in.ImportID, storage.ImportSucceeded, "", importNotifyAfter)
	return imp, len(batches), done, err
}

// rowsWithErrors counts the rows a batch's errors are on (a row may have several).
func rowsWithErrors(errs []storage.RowError) int {
	rows := map[int]bool{}
	for _, e := range errs {
		rows[e.Row] = true
	}
	return len(rows)
}

// stopping reports whether the worker running the activity is shutting down.
func stopping(ctx context.Context) bool {
	select {
	case <-activity.GetWorkerStopChannel(ctx):
		return true
	default:
		return false
	}
}

func (a *Activities) failImport(ctx context.Context, in ImportInput, reason string) (storage.ProductImport, error) {
	imp, err := a.DB.FinishImport(ctx, in.StoreID, in.ImportID, storage.ImportFailed, reason, importNotifyAfter)
	if err != nil {
		return imp, err
	}
	return imp, temporal.NewNonRetryableApplicationError(reason, "IMPORT_FAILED", nil)
}

// FailProductImportResult is empty: the failure is recorded on the import.
type FailProductImportResult struct{}

// FailProductImport ends an import whose activity gave up.
func (a *Activities) FailProductImport(ctx context.Context, in ImportInput) (FailProductImportResult, error) {
	_, err := a.DB.FinishImport(ctx, in.StoreID, in.ImportID, storage.ImportFailed, "the import stopped after repeated errors", importNotifyAfter)
	return FailProductImportResult{}, err
}
