package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/blob"
	"github.com/merchantsvc/svc/workflows"
)

// The media library (decisions §22), scopes media:read / media:write.

// Limits of a media upload: images as product images (spec §8), a PDF twice that.
const (
	maxMediaImageBytes = 5 << 20
	maxMediaFileBytes  = 10 << 20
)

var (
	errMediaTooLarge = newError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE",
		"The file is larger than 10 MB, the limit of a PDF", "حجم الملف أكبر من 10 ميجابايت، حد ملفات PDF")
	errMediaImageTooLarge = newError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE",
		"The image is larger than 5 MB", "حجم الصورة أكبر من 5 ميجابايت")
	errUnsupportedMedia = newError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
		"The file is not a JPEG, PNG, WebP or GIF image, nor a PDF", "الملف ليس صورة بصيغة JPEG أو PNG أو WebP أو GIF ولا ملف PDF")
)

// mediaAltResponse is an item's alt text, with text in the reader's language.
type mediaAltResponse struct {
	Ar   *string `json:"ar,omitempty"`
	En   *string `json:"en,omitempty"`
	Text string  `json:"text"`
}

// mediaURLs are a ready image's three sizes.
type mediaURLs struct {
	Thumbnail string `json:"thumbnail"`
	Medium    string `json:"medium"`
	Large     string `json:"large"`
}

// mediaResponse is one media item: an image has urls once ready, a file its url.
type mediaResponse struct {
	ID        uuid.UUID         `json:"id"`
	Kind      storage.MediaKind `json:"kind"`
	Filename  string            `json:"filename"`
	Mime      string            `json:"mime"`
	Size      int64             `json:"size"`
	Width     *int              `json:"width,omitempty"`
	Height    *int              `json:"height,omitempty"`
	Alt       *mediaAltResponse `json:"alt,omitempty"`
	URLs      *mediaURLs        `json:"urls,omitempty"`
	URL       *string           `json:"url,omitempty"`
	Status    string            `json:"status"`
	CreatedAt time.Time         `json:"created_at"`
}

func (s *Server) newMediaResponse(m storage.Media, lang string) mediaResponse {
	resp := mediaResponse{ID: m.ID, Kind: m.Kind, Filename: m.Filename, Mime: m.Mime, Size: m.Size, Width: m.Width, Height: m.Height,
		Status: string(m.Status), CreatedAt: m.CreatedAt}
	if m.Alt.Ar != nil || m.Alt.En != nil {
		first, second := m.Alt.En, m.Alt.Ar
		if lang == "ar" {
			first, second = m.Alt.Ar, m.Alt.En
		}
		if first == nil {
			first = second
		}
		resp.Alt = &mediaAltResponse{Ar: m.Alt.Ar, En: m.Alt.En, Text: *first}
	}
	if m.Status != storage.ImageReady {
		return resp
	}
	url := func(size string) string {
		return s.cfg.BaseURL + storage.MediaURLPath(m.StoreID, m.ID, storage.MediaFileName(m.Kind, size))
	}
	if m.Kind == storage.MediaFile {
		resp.URL = new(url(""))
	} else {
		resp.URLs = &mediaURLs{Thumbnail: url("thumbnail"), Medium: url("medium"), Large: url("large")}
	}
	return resp
}

// contentLanguage is the language of a read's `text` (part three's shared
// rules): the request's Accept-Language if it names Arabic or English, else
// the store's language.
func (s *Server) contentLanguage(r *http.Request, storeID uuid.UUID) string {
	if header := r.Header.Get("Accept-Language"); header != "" {
		if tags, _, err := language.ParseAcceptLanguage(header); err == nil {
			for _, t := range tags {
				if base, _ := t.Base(); base.String() == "ar" || base.String() == "en" {
					return base.String()
				}
			}
		}
	}
	if store, err := s.db.FindStoreByID(r.Context(), storeID); err == nil && store.DefaultLanguage == "ar" {
		return "ar"
	}
	return "en"
}

// mediaFilename is the name an upload is listed under: the client's base
// name without any directory, control character or surrounding space, in
// NFC, at most 255 characters ("upload" when nothing is left).
func mediaFilename(raw string) string {
	name := raw[strings.LastIndexAny(raw, `/\`)+1:]
	name = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, norm.NFC.String(name)))
	if runes := []rune(name); len(runes) > 255 {
		name = string(runes[:255])
	}
	if name == "" || name == "." || name == ".." {
		return "upload"
	}
	return name
}

// sniffMedia decides an upload's kind and type from its content, never its
// name or the client's type: an image must pass the product image checks
// (header readable, at most 40 megapixels) and be at most 5 MB.
func sniffMedia(data []byte) (storage.MediaKind, string, error) {
	contentType := http.DetectContentType(data)
	switch {
	case contentType == "application/pdf":
		return storage.MediaFile, contentType, nil
	case slices.Contains(acceptedImageTypes, contentType):
		if len(data) > maxMediaImageBytes {
			return "", "", errMediaImageTooLarge
		}
		contentType, err := checkImage(data)
		return storage.MediaImage, contentType, err
	default:
		return "", "", errUnsupportedMedia
	}
}

// handleUploadMedia serves POST /stores/{store_id}/media. A PDF is ready at
// once; an image runs through the product image pipeline in the
// media:<id> workflow, which the request waits for as long as a product
// image upload does (ImageWait): ready within it, else it answers with
// status processing and GET /media/{id} shows when it is ready.
func (s *Server) handleUploadMedia() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		up, err := wire.ReadUploadLimit(r, "file", maxMediaFileBytes, errMediaTooLarge)
		if err != nil {
			return err
		}
		kind, contentType, err := sniffMedia(up.File)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang := s.contentLanguage(r, storeID)
		m := storage.Media{ID: storage.NewID(), StoreID: storeID, Kind: kind, Filename: mediaFilename(up.Filename), Mime: contentType,
			Size: int64(len(up.File))}
		m.OriginalKey = storage.MediaKey(storeID, m.ID, "original")
		// The original is stored first: a refusal of the object store leaves
		// nothing behind, and the row commits only once it is there.
		if err := s.blob.Put(r.Context(), m.OriginalKey, up.File, contentType); err != nil {
			loggerFrom(r.Context()).WarnContext(r.Context(), "store media original", slog.Any("error", err))
			return errObjectStoreDown
		}
		var created mediaResponse
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			if err := tx.CreateMedia(r.Context(), &m); err != nil {
				return err
			}
			created = s.newMediaResponse(m, lang)
			body, err := encodeBody(ok(created))
			if err != nil {
				return err
			}
			noteAnswer(r.Context(), body)
			return completeKeyIn(r, tx, http.StatusCreated, created)
		})
		if err != nil {
			s.removeObjects(r.Context(), storage.MediaPrefix(storeID, m.ID))
			return err
		}
		if kind == storage.MediaFile {
			respond(w, http.StatusCreated, created)
			return nil
		}
		work := workflows.Work{Kind: workflows.KindMedia, StoreID: storeID, ResourceID: m.ID,
			Summary: workflows.MediaSummary(m.Filename, s.storeLabel(r.Context(), storeID))}
		run, err := s.startWork(r.Context(), workflows.MediaWorkflowID(m.ID), work, workflows.Media,
			workflows.MediaInput{StoreID: storeID, MediaID: m.ID},
			func(ctx context.Context) error { return s.db.MarkMediaStarted(ctx, storeID, m.ID) })
		if err != nil {
			respond(w, http.StatusCreated, created) // the dispatcher starts it
			return nil
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ImageWait)
		defer cancel()
		err = run.Get(ctx, nil)
		var failed *temporal.WorkflowExecutionError
		switch {
		case err == nil:
			ready, err := s.db.FindMedia(r.Context(), storeID, m.ID)
			if err != nil {
				return err
			}
			respond(w, http.StatusCreated, s.newMediaResponse(ready, lang))
		case errors.As(err, &failed):
			// As a product image: the item stays, listed as failed.
			return validationError([]wire.FieldError{{Field: "file", Code: "unprocessable",
				Message: "the image could not be processed", MessageAr: "تعذّرت معالجة الصورة"}})
		case r.Context().Err() == nil:
			respond(w, http.StatusCreated, created) // still processing
		default:
			return r.Context().Err()
		}
		return nil
	}
}

// handleListMedia serves GET /stores/{store_id}/media (?kind, q, page, limit).
func (s *Server) handleListMedia() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		var f storage.MediaFilter
		if kind := q.enum("kind", []string{string(storage.MediaImage), string(storage.MediaFile)}, ""); kind != "" {
			f.Kind = new(storage.MediaKind(kind))
		}
		if search := strings.TrimSpace(norm.NFKC.String(q.values.Get("q"))); search != "" {
			f.Search = &search
		}
		if err := q.err(); err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		list, total, err := s.db.FindMedias(r.Context(), storeID, f, storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		lang := s.contentLanguage(r, storeID)
		items := make([]mediaResponse, 0, len(list))
		for _, m := range list {
			items = append(items, s.newMediaResponse(m, lang))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleGetMedia serves GET /stores/{store_id}/media/{media_id}.
func (s *Server) handleGetMedia() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "media_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		m, err := s.db.FindMedia(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, s.newMediaResponse(m, s.contentLanguage(r, storeID)))
		return nil
	}
}

// handleUpdateMedia serves PATCH /stores/{store_id}/media/{media_id}: the
// alt text, language by language (absent kept, null or "" cleared).
func (s *Server) handleUpdateMedia() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "media_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateMedia](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang := s.contentLanguage(r, storeID)
		return s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
			m, err := tx.FindMedia(r.Context(), storeID, id)
			if err != nil {
				return nil, err
			}
			auditBefore(r.Context(), s.newMediaResponse(m, lang))
			alt := m.Alt
			apply := func(to **string, text wire.Optional[string]) {
				switch {
				case req.Alt.Null:
					*to = nil
				case text.Set && (text.Null || strings.TrimSpace(text.Value) == ""):
					*to = nil
				case text.Set:
					*to = new(strings.TrimSpace(text.Value))
				}
			}
			apply(&alt.Ar, req.Alt.Value.Ar)
			apply(&alt.En, req.Alt.Value.En)
			m, err = tx.UpdateMediaAlt(r.Context(), storeID, id, alt)
			if err != nil {
				return nil, err
			}
			return ok(s.newMediaResponse(m, lang)), nil
		})
	}
}

// handleDeleteMedia serves DELETE /stores/{store_id}/media/{media_id}: 204,
// or 409 CONTENT_IN_USE naming what still uses it. The objects are removed
// once the row is gone (a failure there leaves orphans, never a dangling
// reference).
func (s *Server) handleDeleteMedia() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "media_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		if err := s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			_, err := tx.DeleteMedia(r.Context(), storeID, id)
			return nil, err
		}); err != nil {
			return err
		}
		s.removeObjects(r.Context(), storage.MediaPrefix(storeID, id))
		return nil
	}
}

// mediaInUseError is the 409 of a media delete something still names:
// error.details.pointers are the JSON Pointers into the theme (draft or
// published), details.referrers every referrer with its kind.
func mediaInUseError(e *storage.MediaInUseError) *apiError {
	pointers := []string{}
	for _, ref := range e.Referrers {
		if ref.Pointer != "" && !slices.Contains(pointers, ref.Pointer) {
			pointers = append(pointers, ref.Pointer)
		}
	}
	return &apiError{Status: http.StatusConflict, Code: "CONTENT_IN_USE",
		Message:   fmt.Sprintf("This media is used in %d places; remove it from them first", len(e.Referrers)),
		MessageAr: "هذه الوسائط مستخدمة؛ أزلها من أماكن استخدامها أولًا",
		Details:   map[string]any{"pointers": pointers, "referrers": contentReferrers(e.Referrers)}}
}

// contentReferrer is one place a 409 CONTENT_IN_USE names, in
// error.details.referrers.
type contentReferrer struct {
	Kind    string     `json:"kind"`
	ID      *uuid.UUID `json:"id,omitempty"`
	Pointer string     `json:"pointer,omitempty"`
}

func contentReferrers(refs []storage.ContentReferrer) []contentReferrer {
	out := make([]contentReferrer, 0, len(refs))
	for _, ref := range refs {
		out = append(out, contentReferrer{Kind: ref.Kind, ID: ref.ID, Pointer: ref.Pointer})
	}
	return out
}

// handleMediaFile serves GET /files/{store_id}/{media_id}/{name}: a ready
// media item's bytes from the object store. The URLs are public
// (storefronts embed them) and unguessable (ids are random); the bytes never
// change, so they are cached for a year. A PDF downloads as an attachment
// under its name, sandboxed should a browser open it anyway.
func (s *Server) handleMediaFile() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		storeID, err1 := request.ParseUUID(chi.URLParam(r, "store_id"))
		mediaID, err2 := request.ParseUUID(chi.URLParam(r, "media_id"))
		name := chi.URLParam(r, "name")
		if err1 != nil || err2 != nil {
			return errNotFound
		}
		m, err := s.db.FindMedia(r.Context(), storeID, mediaID)
		if err != nil || m.Status != storage.ImageReady || !slices.Contains(m.ServedNames(), name) {
			return errNotFound
		}
		key, contentType := storage.MediaKey(storeID, mediaID, name), "image/webp"
		if m.Kind == storage.MediaFile {
			key, contentType = m.OriginalKey, m.Mime
		}
		body, size, err := s.blob.Open(r.Context(), key)
		if errors.Is(err, blob.ErrNotFound) {
			return errNotFound
		}
		if err != nil {
			return err
		}
		defer body.Close()
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if m.Kind == storage.MediaFile {
			filename := m.Filename
			if !strings.EqualFold(path.Ext(filename), ".pdf") {
				filename += ".pdf"
			}
			w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
			w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
		}
		_, _ = io.Copy(w, body)
		return nil
	}
}
