package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // DecodeConfig for GIF uploads
	_ "image/jpeg" // DecodeConfig for JPEG uploads
	_ "image/png"  // DecodeConfig for PNG uploads
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	_ "golang.org/x/image/webp" // DecodeConfig for WebP uploads

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/blob"
	"github.com/merchantsvc/svc/workflows"
)

// maxImagePixels refuses decompression bombs before any pixel is decoded.
const maxImagePixels = 40_000_000

var acceptedImageTypes = []string{"image/jpeg", "image/png", "image/webp", "image/gif"}

var errUnsupportedImage = newError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
	"The file is not a JPEG, PNG, WebP or GIF image", "الملف ليس صورة بصيغة JPEG أو PNG أو WebP أو GIF")

// imageResponse is an image; the addresses and size are null until it is
// ready, and status_url is set only on the 202 of a slow upload.
type imageResponse struct {
	ID           uuid.UUID `json:"id"`
	Status       string    `json:"status"`
	URL          *string   `json:"url"`
	ThumbnailURL *string   `json:"thumbnail_url"`
	MediumURL    *string   `json:"medium_url"`
	LargeURL     *string   `json:"large_url"`
	Width        *int      `json:"width"`
	Height       *int      `json:"height"`
	Position     int       `json:"position"`
	StatusURL    *string   `json:"status_url"`
}

func newImageResponse(e storage.ImageEntry) imageResponse {
	return imageResponse{ID: e.ID, Status: string(storage.ImageReady), URL: &e.URL, ThumbnailURL: &e.ThumbnailURL, MediumURL: &e.MediumURL,
		LargeURL: &e.LargeURL, Width: &e.Width, Height: &e.Height, Position: e.Position}
}

// checkImage sniffs the content (never the name or the client's type) and
// reads only the header's dimensions.
func checkImage(data []byte) (string, error) {
	contentType := http.DetectContentType(data)
	if !slices.Contains(acceptedImageTypes, contentType) {
		return "", errUnsupportedImage
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return "", validationError([]wire.FieldError{{Field: "file", Code: "unreadable", Message: "the image header cannot be read",
			MessageAr: "تعذّرت قراءة ترويسة الصورة"}})
	}
	if int64(cfg.Width)*int64(cfg.Height) > maxImagePixels {
		return "", validationError([]wire.FieldError{{Field: "file", Code: "too_many_pixels",
			Message:   fmt.Sprintf("the image is %d×%d; at most 40 megapixels are accepted", cfg.Width, cfg.Height),
			MessageAr: "الصورة أكبر من 40 ميجابكسل"}})
	}
	return contentType, nil
}

// handleUploadImage serves POST /stores/{store_id}/products/{product_id}/images.
func (s *Server) handleUploadImage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		productID, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		up, err := wire.ReadUpload(r)
		if err != nil {
			return err
		}
		contentType, err := checkImage(up.File)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		// The original is stored first: a refusal of the object store leaves
		// nothing behind, and the row, with the Idempotency-Key's answer,
		// commits only once the workflow has what it needs.
		img := storage.ProductImage{ID: storage.NewID(), StoreID: storeID, ProductID: productID, ContentType: contentType}
		original := storage.ImageKey(storeID, productID, img.ID, "original")
		if err := s.blob.Put(r.Context(), original, up.File, contentType); err != nil {
			loggerFrom(r.Context()).WarnContext(r.Context(), "store image original", slog.Any("error", err))
			return errObjectStoreDown
		}
		var processing imageResponse
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			if err := tx.CreateProductImage(r.Context(), &img); err != nil {
				return err
			}
			processing = imageResponse{ID: img.ID, Status: string(storage.ImageProcessing), Position: img.Position,
				StatusURL: new(fmt.Sprintf("%s/api/v1/stores/%s/products/%s/images/%s", s.cfg.BaseURL, storeID, productID, img.ID))}
			return completeKeyIn(r, tx, http.StatusAccepted, processing)
		})
		if err != nil {
			s.removeObject(r.Context(), original)
			return err
		}
		work := workflows.Work{Kind: workflows.KindProductImage, StoreID: storeID, ResourceID: img.ID,
			Summary: "image of product " + productID.String()[:8] + " · " + s.storeLabel(r.Context(), storeID)}
		run, err := s.startWork(r.Context(), workflows.ProductImageWorkflowID(img.ID), work, workflows.ProductImage,
			workflows.ProductImageInput{StoreID: storeID, ProductID: productID, ImageID: img.ID},
			func(ctx context.Context) error { return s.db.MarkImageStarted(ctx, storeID, img.ID) })
		if err != nil {
			respond(w, http.StatusAccepted, processing) // the dispatcher starts it
			return nil
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ImageWait)
		defer cancel()
		var out workflows.ProductImageResult
		err = run.Get(ctx, &out)
		var failed *temporal.WorkflowExecutionError
		switch {
		case err == nil:
			respond(w, http.StatusCreated, newImageResponse(storage.ImageEntry{ID: out.ImageID, URL: out.URL, ThumbnailURL: out.ThumbnailURL,
				MediumURL: out.MediumURL, LargeURL: out.LargeURL, Width: out.Width, Height: out.Height, Position: out.Position}))
		case errors.As(err, &failed):
			return validationError([]wire.FieldError{{Field: "file", Code: "unprocessable",
				Message: "the image could not be processed", MessageAr: "تعذّرت معالجة الصورة"}})
		case r.Context().Err() == nil:
			// Not done within the wait (the gRPC layer may report the deadline
			// a moment before ctx does): processing goes on.
			respond(w, http.StatusAccepted, processing)
		default:
			return r.Context().Err()
		}
		return nil
	}
}

// handleGetImage serves GET /stores/{store_id}/products/{product_id}/images/{image_id}.
func (s *Server) handleGetImage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		productID, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		imageID, err := pathUUID(r, "image_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		img, err := s.db.FindProductImage(r.Context(), storeID, imageID)
		if err == nil && img.ProductID != productID {
			err = storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		resp := imageResponse{ID: img.ID, Status: string(img.Status), Position: img.Position}
		if img.Status == storage.ImageReady {
			p, err := s.db.FindProductByID(r.Context(), storeID, productID)
			if err != nil {
				return err
			}
			for _, e := range productImages(p) {
				if e.ID == img.ID {
					resp = newImageResponse(e)
				}
			}
		}
		respond(w, http.StatusOK, resp)
		return nil
	}
}

func productImages(p storage.Product) []storage.ImageEntry {
	var entries []storage.ImageEntry
	_ = jsonUnmarshal(p.Images, &entries)
	return entries
}

// handleDeleteImage serves DELETE /stores/{store_id}/products/{product_id}/images.
func (s *Server) handleDeleteImage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		productID, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.DeleteImage](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		var img storage.ProductImage
		if err := s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			img, err = tx.DeleteProductImage(r.Context(), storeID, productID, req.URL)
			return nil, err
		}); err != nil {
			return err
		}
		s.removeObjects(r.Context(), strings.TrimSuffix(img.OriginalKey, "original"))
		return nil
	}
}

// removeObjects deletes objects after the rows that named them are gone.
// A failure leaves orphans, never a product pointing at missing files.
func (s *Server) removeObjects(ctx context.Context, prefix string) {
	if err := s.blob.RemovePrefix(context.WithoutCancel(ctx), prefix); err != nil {
		s.log.ErrorContext(ctx, "remove objects", "prefix", prefix, "error", err)
	}
}

// handleSetImageAlt serves PATCH /stores/{store_id}/products/{product_id}/images/alt.
func (s *Server) handleSetImageAlt() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		productID, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.SetAlt](r)
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
			if err := tx.SetImageAlt(r.Context(), storeIDFrom(r.Context()), productID, req.URL, req.Alt); err != nil {
				return nil, err
			}
			return ok(map[string]string{"url": req.URL, "alt": req.Alt}), nil
		})
	}
}

var mediaFiles = []string{"large.webp", "medium.webp", "thumbnail.webp"}

// handleMedia serves image bytes from the object store. The URLs are public (storefronts embed them)
// and unguessable (image ids are random); the bytes never change, so they are cached for a year.
func (s *Server) handleMedia() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		storeID, err1 := request.ParseUUID(chi.URLParam(r, "store_id"))
		imageID, err2 := request.ParseUUID(chi.URLParam(r, "image_id"))
		file := chi.URLParam(r, "file")
		if err1 != nil || err2 != nil || !slices.Contains(mediaFiles, file) {
			return errNotFound
		}
		img, err := s.db.FindProductImage(r.Context(), storeID, imageID)
		if err != nil || img.Status != storage.ImageReady {
			return errNotFound
		}
		body, size, err := s.blob.Open(r.Context(), storage.ImageKey(storeID, img.ProductID, imageID, file))
		if errors.Is(err, blob.ErrNotFound) {
			return errNotFound
		}
		if err != nil {
			return err
		}
		defer body.Close()
		w.Header().Set("Content-Type", "image/webp")
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = io.Copy(w, body)
		return nil
	}
}
