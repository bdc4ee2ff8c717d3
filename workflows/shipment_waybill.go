package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// ShipmentWaybillInput names a render of a shipment's waybill.
type ShipmentWaybillInput struct {
	StoreID    uuid.UUID
	ShipmentID uuid.UUID
	Generation int
}

// ShipmentWaybillWorkflowID is the id of a shipment's waybill renders: one
// at a time; a render asked for while one runs starts after it.
func ShipmentWaybillWorkflowID(shipmentID uuid.UUID) string {
	return "shipment-waybill:" + shipmentID.String()
}

// waybillAttempts is how many times a render is tried before the waybill
// is failed (a minute or so of Chromium or object-store trouble).
const waybillAttempts = 5

// ShipmentWaybill renders a shipment's waybill into the object store; after
// its retries it marks the waybill failed (autopilot exception).
func ShipmentWaybill(ctx workflow.Context, in ShipmentWaybillInput) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumAttempts: waybillAttempts},
	})
	render := activities.RenderWaybillInput{StoreID: in.StoreID, ShipmentID: in.ShipmentID, Generation: in.Generation}
	err := workflow.ExecuteActivity(actx, a.RenderWaybill, render).Get(ctx, nil)
	if err == nil {
		return nil
	}
	reason := err.Error()
	if ferr := workflow.ExecuteActivity(actx, a.FailWaybill, activities.FailWaybillInput{RenderWaybillInput: render, Reason: reason}).Get(ctx, nil); ferr != nil {
		return ferr
	}
	return nil
}
