package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/waybill"
	"github.com/merchantsvc/svc/storage"
)

// RenderWaybillInput names the render of a shipment's waybill: generation
// counts the renders asked for, and only the latest one reports.
type RenderWaybillInput struct {
	StoreID    uuid.UUID
	ShipmentID uuid.UUID
	Generation int
}

// FailWaybillInput is a render that failed for good.
type FailWaybillInput struct {
	RenderWaybillInput
	Reason string
}

// RenderWaybill prints a shipment's A6 waybill to PDF, stores it at
// stores/{store_id}/waybills/{shipment_id}.pdf and marks it ready.
func (a *Activities) RenderWaybill(ctx context.Context, in RenderWaybillInput) error {
	if a.Waybills == nil {
		return temporal.NewNonRetryableApplicationError("no waybill printer is configured", "waybill_printer", nil)
	}
	doc, err := a.DB.FindWaybillDocument(ctx, in.StoreID, in.ShipmentID)
	if errors.Is(err, storage.ErrNotFound) {
		return temporal.NewNonRetryableApplicationError("the shipment is gone", "not_found", err)
	}
	if err != nil {
		return err
	}
	html, err := waybill.HTML(doc)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "waybill_content", err)
	}
	pdf, err := a.Waybills.PDF(ctx, html)
	if err != nil {
		return err
	}
	if err := a.Blob.Put(ctx, storage.WaybillKey(in.StoreID, in.ShipmentID), pdf, "application/pdf"); err != nil {
		return fmt.Errorf("store waybill: %w", err)
	}
	return a.DB.MarkWaybillReady(ctx, in.StoreID, in.ShipmentID, in.Generation)
}

// FailWaybill records a render that failed after its retries: the
// waybill is failed and the order gets autopilot exception waybill_failed.
func (a *Activities) FailWaybill(ctx context.Context, in FailWaybillInput) error {
	return a.DB.MarkWaybillFailed(ctx, in.StoreID, in.ShipmentID, in.Generation, in.Reason)
}
