package activities

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/storage"
)

// MediaInput names an uploaded image of the media library.
type MediaInput struct {
	StoreID uuid.UUID
	MediaID uuid.UUID
}

// ProcessMediaResult is the processed image's largest size.
type ProcessMediaResult struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// ProcessMedia runs a media library image through the product image
// pipeline (resizeToWebP: EXIF applied and stripped, WebP q85 at 150, 600
// and 1200 px) and marks it ready. An image deleted meanwhile is a
// permanent failure.
func (a *Activities) ProcessMedia(ctx context.Context, in MediaInput) (ProcessMediaResult, error) {
	variants, err := a.resizeToWebP(ctx, storage.MediaKey(in.StoreID, in.MediaID, "original"),
		func(size string) string {
			return storage.MediaKey(in.StoreID, in.MediaID, storage.MediaFileName(storage.MediaImage, size))
		})
	if err != nil {
		return ProcessMediaResult{}, err
	}
	largest := variants[0]
	if _, err := a.DB.MarkMediaReady(ctx, in.StoreID, in.MediaID, largest.Width, largest.Height); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return ProcessMediaResult{}, temporal.NewNonRetryableApplicationError("the media item is gone", "not_found", err)
		}
		return ProcessMediaResult{}, err
	}
	return ProcessMediaResult{Width: largest.Width, Height: largest.Height}, nil
}

// FailMediaInput names the image and why it failed.
type FailMediaInput struct {
	MediaInput
	Reason string
}

// FailMediaResult is empty: the failure is recorded on the item.
type FailMediaResult struct{}

// FailMedia records that a media library image could not be processed.
func (a *Activities) FailMedia(ctx context.Context, in FailMediaInput) (FailMediaResult, error) {
	return FailMediaResult{}, a.DB.FailMedia(ctx, in.StoreID, in.MediaID, in.Reason)
}
