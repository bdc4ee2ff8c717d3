package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
	"github.com/merchantsvc/svc/storage"
)

// ProductImageWorkflowID is the id of one image's pipeline.
func ProductImageWorkflowID(in activities.ImageInput) string {
	return "product-image:" + in.ImageID.String()
}

// ProductImageInput names the uploaded image.
type ProductImageInput = activities.ImageInput

// ProductImageResult is the attached image.
type ProductImageResult = storage.ImageEntry

// ProductImage orients, strips and resizes an upload into three WebP sizes
// and attaches it to the product; a failure is recorded on the image.
func ProductImage(ctx workflow.Context, in ProductImageInput) (ProductImageResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	var entry ProductImageResult
	err := workflow.ExecuteActivity(actx, a.ProcessProductImage, in).Get(ctx, &entry)
	if err == nil {
		return entry, nil
	}
	if failErr := workflow.ExecuteActivity(actx, a.FailProductImage, in, "the image could not be processed").Get(ctx, nil); failErr != nil {
		return entry, failErr
	}
	return entry, err
}
