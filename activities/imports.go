package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/storage"
)

// defaultImportBatch is how many rows one transaction applies.
const defaultImportBatch = 5000

// importNotifyAfter: imports that ran longer leave a dashboard notification
// (the merchant got a 202 and is not watching).
const importNotifyAfter = 20 * time.Second

// ImportInput names an import.
type ImportInput struct {
	StoreID  uuid.UUID
	ImportID uuid.UUID
}

// RunProductImport applies an uploaded CSV in batches, each in one
// transaction with the import's progress, heartbeating after each. A retry
// (a crashed or stopped worker) resumes after the last committed batch, so
// every row is applied exactly once. Row errors never stop the import.
func (a *Activities) RunProductImport(ctx context.Context, in ImportInput) (storage.ProductImport, error) {
	imp, err := a.DB.FindImport(ctx, in.StoreID, in.ImportID)
	if err != nil || imp.Status != storage.ImportRunning {
		return imp, err
	}
	data, err := a.Blob.Get(ctx, imp.ObjectKey)
	if err != nil {
		return imp, err
	}
	records, err := storage.ReadCSV(data)
	if err != nil {
		return a.failImport(ctx, in, "the file is not a readable CSV: "+err.Error())
	}
	header, err := storage.ParseCSVHeader(records[0])
	if err != nil {
		return a.failImport(ctx, in, "the header row is wrong: "+err.Error())
	}
	rows := records[1:]
	if imp.TotalRows != len(rows) {
		if err := a.DB.SetImportTotal(ctx, in.StoreID, in.ImportID, len(rows)); err != nil {
			return imp, err
		}
	}
	store, err := a.DB.FindStoreByID(ctx, in.StoreID)
	if err != nil {
		return imp, err
	}
	exponent := storage.CurrencyExponent(store.Currency)
	// SKUs seen earlier in the file, rebuilt from the rows already applied
	// when resuming, so a repeat is reported the same way either way.
	seen := map[string]int{}
	parse := func(i int) (storage.ImportRow, []storage.RowError) {
		row, errs := storage.ParseCSVRow(header, rows[i], i+2, exponent)
		if len(errs) > 0 {
			return row, errs
		}
		if first, dup := seen[row.SKU]; dup {
			return row, []storage.RowError{{Row: row.Row, Column: "sku", Code: "duplicate_in_file",
				Message: fmt.Sprintf("the SKU is already on row %d of this file", first)}}
		}
		seen[row.SKU] = row.Row
		return row, nil
	}
	for i := range imp.ProcessedRows {
		parse(i)
	}
	size := a.ImportBatchSize
	if size <= 0 {
		size = defaultImportBatch
	}
	for start := imp.ProcessedRows; start < len(rows); start += size {
		if err := ctx.Err(); err != nil {
			return imp, err
		}
		batch := storage.ImportBatch{Start: start, Count: min(size, len(rows)-start)}
		for i := start; i < start+batch.Count; i++ {
			row, errs := parse(i)
			if len(errs) > 0 {
				batch.Errors = append(batch.Errors, errs...)
				continue
			}
			batch.Rows = append(batch.Rows, row)
		}
		if err := a.DB.ApplyImportBatch(ctx, in.StoreID, in.ImportID, batch); err != nil {
			return imp, err
		}
		activity.RecordHeartbeat(ctx, start+batch.Count)
		if a.ImportBatchDelay > 0 {
			select {
			case <-ctx.Done():
				return imp, ctx.Err()
			case <-time.After(a.ImportBatchDelay):
			}
		}
	}
	return a.DB.FinishImport(ctx, in.StoreID, in.ImportID, storage.ImportSucceeded, "", importNotifyAfter)
}

func (a *Activities) failImport(ctx context.Context, in ImportInput, reason string) (storage.ProductImport, error) {
	imp, err := a.DB.FinishImport(ctx, in.StoreID, in.ImportID, storage.ImportFailed, reason, importNotifyAfter)
	if err != nil {
		return imp, err
	}
	return imp, temporal.NewNonRetryableApplicationError(reason, "IMPORT_FAILED", nil)
}

// FailProductImport ends an import whose activity gave up.
func (a *Activities) FailProductImport(ctx context.Context, in ImportInput) error {
	_, err := a.DB.FinishImport(ctx, in.StoreID, in.ImportID, storage.ImportFailed, "the import stopped after repeated errors", importNotifyAfter)
	return err
}
