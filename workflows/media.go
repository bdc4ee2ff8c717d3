package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/merchantsvc/svc/activities"
)

// MediaInput names an uploaded image of the media library.
type MediaInput struct {
	StoreID uuid.UUID
	MediaID uuid.UUID
}

// MediaResult is the processed image's largest size.
type MediaResult struct {
	Width  int
	Height int
}

// MediaWorkflowID is the id of one media library image's pipeline.
func MediaWorkflowID(mediaID uuid.UUID) string {
	return "media:" + mediaID.String()
}

// MediaSummary is a media image's line in the Temporal UI.
func MediaSummary(filename, store string) string {
	return "media image " + filename + " · " + store
}

// Media runs an uploaded image through the product image pipeline (orient,
// strip, three WebP sizes) and marks it ready; a failure is recorded on the
// item. Files (PDFs) are stored as uploaded and need no workflow.
func Media(ctx workflow.Context, in MediaInput) (MediaResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	item := activities.MediaInput{StoreID: in.StoreID, MediaID: in.MediaID}
	var out activities.ProcessMediaResult
	err := workflow.ExecuteActivity(actx, a.ProcessMedia, item).Get(ctx, &out)
	if err == nil {
		return MediaResult{Width: out.Width, Height: out.Height}, nil
	}
	failure := activities.FailMediaInput{MediaInput: item, Reason: "the image could not be processed"}
	if failErr := workflow.ExecuteActivity(actx, a.FailMedia, failure).Get(ctx, nil); failErr != nil {
		return MediaResult{}, failErr
	}
	return MediaResult{}, err
}
