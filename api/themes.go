package api

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/theme"
)

// Theme customization v3 (decisions §9), scopes themes:read / themes:write.

var (
	errPreconditionRequired = newError(http.StatusPreconditionRequired, "PRECONDITION_REQUIRED",
		"Send If-Match with the draft's current ETag", "أرسل الترويسة If-Match بقيمة ETag الحالية للمسودة")
	errVersionRef = newError(http.StatusUnprocessableEntity, "VALIDATION_FAILED",
		"from and to must each be a version id, draft or published", "يجب أن تكون from و to معرّف نسخة أو draft أو published")
)

func themeValidationError(errs []theme.ValidationError) *apiError {
	fields := make([]fieldError, 0, len(errs))
	for _, e := range errs {
		fields = append(fields, fieldError{Field: e.Pointer, Code: e.Code, Message: e.Message, MessageAr: arabicFieldMessage(e.Code)})
	}
	return validationError(fields)
}

type customizationResponse struct {
	Draft     json.RawMessage `json:"draft"`
	Published json.RawMessage `json:"published"`
	ETag      string          `json:"etag"`
	Revision  int64           `json:"revision"`
	SavedAt   time.Time       `json:"saved_at"`
}

func newCustomizationResponse(c storage.Customization) customizationResponse {
	published := c.Published
	if published == nil {
		published = json.RawMessage("null")
	}
	return customizationResponse{Draft: c.Draft, Published: published, ETag: c.ETag, Revision: c.Revision, SavedAt: c.SavedAt.UTC()}
}

func (s *Server) handleGetCustomization() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := s.db.FindCustomization(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("ETag", c.ETag)
		respond(w, http.StatusOK, newCustomizationResponse(c))
	}
}

// handleSaveDraft replaces the draft when If-Match is its current tag:
// missing 428, stale 412 with the current draft and tag, invalid 422 with
// every invalid place as a JSON Pointer.
func (s *Server) handleSaveDraft() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ifMatch := strings.TrimSpace(r.Header.Get("If-Match"))
		if ifMatch == "" {
			s.writeError(w, r, errPreconditionRequired)
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			s.writeError(w, r, errUnsupportedMediaType)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
		if err != nil {
			s.writeError(w, r, errPayloadTooLarge)
			return
		}
		if !json.Valid(body) {
			s.writeError(w, r, errMalformedJSON)
			return
		}
		c, err := s.db.SaveDraft(r.Context(), storeIDFrom(r.Context()), ifMatch, body)
		var invalid *storage.ThemeValidationError
		switch {
		case errors.As(err, &invalid):
			s.writeError(w, r, themeValidationError(invalid.Errors))
			return
		case errors.Is(err, storage.ErrStaleDraft):
			w.Header().Set("ETag", c.ETag)
			encode(w, http.StatusPreconditionFailed, map[string]any{"success": false,
				"error": errorBody{Code: "PRECONDITION_FAILED", Message: "The draft changed since you read it; here is the current one",
					MessageAr: "تغيّرت المسودة منذ قراءتها؛ هذه هي النسخة الحالية", RequestID: requestID(r.Context())},
				"current": map[string]any{"draft": c.Draft, "etag": c.ETag}})
			return
		case err != nil:
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("ETag", c.ETag)
		respond(w, http.StatusOK, map[string]any{"draft": c.Draft, "etag": c.ETag, "revision": c.Revision, "saved_at": c.SavedAt.UTC()})
	}
}

type versionResponse struct {
	ID           uuid.UUID       `json:"id"`
	Name         string          `json:"name"`
	Source       string          `json:"source"`
	RestoredFrom *uuid.UUID      `json:"restored_from"`
	CreatedAt    time.Time       `json:"created_at"`
	Document     json.RawMessage `json:"document,omitempty"`
}

func newVersionResponse(v storage.ThemeVersion, withDocument bool) versionResponse {
	resp := versionResponse{ID: v.ID, Name: v.Name, Source: v.Source, RestoredFrom: v.RestoredFrom, CreatedAt: v.CreatedAt.UTC()}
	if withDocument {
		resp.Document = v.Document
	}
	return resp
}

type publishRequest struct {
	Name *string `json:"name"`
}

func (req publishRequest) Valid() []fieldError {
	var c checker
	if req.Name != nil {
		c.text("name", *req.Name, 1, 100)
	}
	return c.result()
}

func (s *Server) handlePublishTheme() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req publishRequest
		if r.ContentLength != 0 {
			var err error
			if req, err = decode[publishRequest](r); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		name := ""
		if req.Name != nil {
			name = strings.TrimSpace(*req.Name)
		}
		v, err := s.db.PublishDraft(r.Context(), storeIDFrom(r.Context()), name)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		respond(w, http.StatusCreated, newVersionResponse(v, false))
	}
}

func (s *Server) handleListThemeVersions() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		versions, err := s.db.FindThemeVersions(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		items := make([]versionResponse, 0, len(versions))
		for _, v := range versions {
			items = append(items, newVersionResponse(v, false))
		}
		respond(w, http.StatusOK, items)
	}
}

func (s *Server) handleGetThemeVersion() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathUUID(r, "version_id")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		v, err := s.db.FindThemeVersion(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		respond(w, http.StatusOK, newVersionResponse(v, true))
	}
}

func (s *Server) handleRestoreThemeVersion() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathUUID(r, "version_id")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		v, c, err := s.db.RestoreThemeVersion(r.Context(), storeIDFrom(r.Context()), id)
		var invalid *storage.ThemeValidationError
		if errors.As(err, &invalid) {
			s.writeError(w, r, themeValidationError(invalid.Errors))
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("ETag", c.ETag)
		respond(w, http.StatusCreated, map[string]any{"version": newVersionResponse(v, false), "draft": c.Draft, "etag": c.ETag})
	}
}

// themeDocument resolves a compare side: a version id, draft or published.
func (s *Server) themeDocument(r *http.Request, c storage.Customization, ref string) (json.RawMessage, error) {
	switch ref {
	case "draft":
		return c.Draft, nil
	case "published":
		if c.Published == nil {
			return json.RawMessage("{}"), nil
		}
		return c.Published, nil
	}
	id, err := uuid.Parse(ref)
	if err != nil {
		return nil, errVersionRef
	}
	v, err := s.db.FindThemeVersion(r.Context(), storeIDFrom(r.Context()), id)
	if err != nil {
		return nil, err
	}
	return v.Document, nil
}

// handleCompareThemes answers an RFC 6902 patch from one side to the other
// (from + patch = to) and the readable list of changes.
func (s *Server) handleCompareThemes() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := s.db.FindCustomization(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		from, err := s.themeDocument(r, c, r.URL.Query().Get("from"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		to, err := s.themeDocument(r, c, r.URL.Query().Get("to"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		patch, changes, err := theme.Diff(from, to)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		respond(w, http.StatusOK, map[string]any{"patch": patch, "changes": changes})
	}
}

func (s *Server) handleThemeSchemas() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t := theme.Default()
		respond(w, http.StatusOK, map[string]any{"name": t.Name, "version": t.Version, "settings_schema": t.Settings, "sections": t.Sections})
	}
}
