package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// ProductImageInput names the uploaded image.
type ProductImageInput struct {
	StoreID   uuid.UUID
	ProductID uuid.UUID
	ImageID   uuid.UUID
}

// ProductImageResult is the attached image and the addresses of its sizes.
type ProductImageResult struct {
	ImageID      uuid.UUID
	URL          string
	ThumbnailURL string
	MediumURL    string
	LargeURL     string
	Width        int
	Height       int
	Position     int
}

// ProductImageWorkflowID is the id of one image's pipeline.
func ProductImageWorkflowID(imageID uuid.UUID) string {
	return "product-image:" + imageID.String()
}

// ProductImage orients, strips and resizes an upload into three WebP sizes
// and attaches it to the product; a failure is recorded on the image.
func ProductImage(ctx workflow.Context, in ProductImageInput) (ProductImageResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	image := activities.ImageInput{StoreID: in.StoreID, ProductID: in.ProductID, ImageID: in.ImageID}
	var out activities.ProcessProductImageResult
	err := workflow.ExecuteActivity(actx, a.ProcessProductImage, image).Get(ctx, &out)
	if err == nil {
		return ProductImageResult{ImageID: out.ImageID, URL: out.URL, ThumbnailURL: out.ThumbnailURL, MediumURL: out.MediumURL,
			LargeURL: out.LargeURL, Width: out.Width, Height: out.Height, Position: out.Position}, nil
	}
	failure := activities.FailProductImageInput{ImageInput: image, Reason: "the image could not be processed"}
	if failErr := workflow.ExecuteActivity(actx, a.FailProductImage, failure).Get(ctx, nil); failErr != nil {
		return ProductImageResult{}, failErr
	}
	return ProductImageResult{}, err
}
