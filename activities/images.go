package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/activities/imaging"
	"github.com/merchantsvc/svc/storage"
)

// ImageInput names an uploaded image.
type ImageInput struct {
	StoreID   uuid.UUID
	ProductID uuid.UUID
	ImageID   uuid.UUID
}

// ProcessProductImageResult is the attached image and its sizes' addresses.
// The JSON names are the ones workers before this struct recorded, so their
// histories decode the same.
type ProcessProductImageResult struct {
	ImageID      uuid.UUID `json:"id"`
	URL          string    `json:"url"`
	ThumbnailURL string    `json:"thumbnail_url"`
	MediumURL    string    `json:"medium_url"`
	LargeURL     string    `json:"large_url"`
	Width        int       `json:"width"`
	Height       int       `json:"height"`
	Position     int       `json:"position"`
}

// ProcessProductImage reads the original, writes the three WebP sizes to the
// object store and attaches the image to its product. An image libvips
// cannot read fails for good (no retry).
func (a *Activities) ProcessProductImage(ctx context.Context, in ImageInput) (ProcessProductImageResult, error) {
	e, err := a.processImage(ctx, in)
	if err != nil {
		return ProcessProductImageResult{}, err
	}
	return ProcessProductImageResult{ImageID: e.ID, URL: e.URL, ThumbnailURL: e.ThumbnailURL, MediumURL: e.MediumURL,
		LargeURL: e.LargeURL, Width: e.Width, Height: e.Height, Position: e.Position}, nil
}

func (a *Activities) processImage(ctx context.Context, in ImageInput) (storage.ImageEntry, error) {
	variants, err := a.resizeToWebP(ctx, storage.ImageKey(in.StoreID, in.ProductID, in.ImageID, "original"),
		func(size string) string { return storage.ImageKey(in.StoreID, in.ProductID, in.ImageID, size+".webp") })
	if err != nil {
		return storage.ImageEntry{}, err
	}
	entry := storage.ImageEntry{ID: in.ImageID}
	for _, v := range variants {
		url := a.mediaURL(in.StoreID, in.ImageID, v.Name)
		switch v.Name {
		case "large":
			entry.URL, entry.LargeURL, entry.Width, entry.Height = url, url, v.Width, v.Height
		case "medium":
			entry.MediumURL = url
		case "thumbnail":
			entry.ThumbnailURL = url
		}
	}
	return a.DB.AttachProductImage(ctx, in.StoreID, in.ImageID, entry)
}

// resizeToWebP is the image pipeline both product images and the media
// library run: it reads the original at originalKey, orients, strips and
// resizes it into the three WebP sizes (imaging.Sizes, largest first) and
// stores each under keyOf(size). An image libvips cannot read fails for
// good (no retry).
func (a *Activities) resizeToWebP(ctx context.Context, originalKey string, keyOf func(size string) string) ([]imaging.Variant, error) {
	original, err := a.Blob.Get(ctx, originalKey)
	if err != nil {
		return nil, err
	}
	variants, err := imaging.Process(original, imaging.Sizes)
	if errors.Is(err, imaging.ErrUnreadable) {
		return nil, temporal.NewNonRetryableApplicationError("the image cannot be decoded", "UNREADABLE_IMAGE", err)
	}
	if err != nil {
		return nil, err
	}
	for _, v := range variants {
		if err := a.Blob.Put(ctx, keyOf(v.Name), v.WebP, "image/webp"); err != nil {
			return nil, err
		}
	}
	return variants, nil
}

// mediaURL is the public address of one image size (served by the API from the object store).
func (a *Activities) mediaURL(storeID, imageID uuid.UUID, size string) string {
	return fmt.Sprintf("%s/media/%s/%s/%s.webp", a.BaseURL, storeID, imageID, size)
}

// FailProductImageInput names the image and why it failed.
type FailProductImageInput struct {
	ImageInput
	Reason string
}

// FailProductImageResult is empty: the failure is recorded on the image.
type FailProductImageResult struct{}

// FailProductImage records that an image could not be processed.
func (a *Activities) FailProductImage(ctx context.Context, in FailProductImageInput) (FailProductImageResult, error) {
	return FailProductImageResult{}, a.DB.FailProductImage(ctx, in.StoreID, in.ImageID, in.Reason)
}
