package api

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
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
	fields := make([]wire.FieldError, 0, len(errs))
	for _, e := range errs {
		fields = append(fields, wire.FieldError{Field: e.Pointer, Code: e.Code, Message: e.Message, MessageAr: wire.ArabicFieldMessage(e.Code)})
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

// handleGetCustomization serves GET /stores/{store_id}/themes/v3/customization.
func (s *Server) handleGetCustomization() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.db.FindCustomization(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			return err
		}
		w.Header().Set("ETag", c.ETag)
		respond(w, http.StatusOK, newCustomizationResponse(c))
		return nil
	}
}

// handleSaveDraft serves PUT /stores/{store_id}/themes/v3/customization: it replaces the draft when
// If-Match is its current tag: missing 428, stale 412 with the current draft and tag, invalid 422 with
// every invalid place as a JSON Pointer.
func (s *Server) handleSaveDraft() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ifMatch := strings.TrimSpace(r.Header.Get("If-Match"))
		if ifMatch == "" {
			return errPreconditionRequired
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			return wire.ErrUnsupportedMediaType
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, wire.MaxJSONBody))
		if err != nil {
			return wire.ErrPayloadTooLarge
		}
		if !json.Valid(body) {
			return wire.ErrMalformedJSON
		}
		c, err := s.db.SaveDraft(r.Context(), storeIDFrom(r.Context()), ifMatch, body)
		if err != nil {
			return err
		}
		w.Header().Set("ETag", c.ETag)
		respond(w, http.StatusOK, map[string]any{"draft": c.Draft, "etag": c.ETag, "revision": c.Revision, "saved_at": c.SavedAt.UTC()})
		return nil
	}
}

type versionResponse struct {
	ID           uuid.UUID       `json:"id"`
	Name         string          `json:"name"`
	Source       string          `json:"source"`
	RestoredFrom *uuid.UUID      `json:"restored_from"`
	CreatedAt    time.Time       `json:"created_at"`
	ThemeID      string          `json:"theme_id"`
	Document     json.RawMessage `json:"document,omitempty"`
}

func newVersionResponse(v storage.ThemeVersion, withDocument bool) versionResponse {
	resp := versionResponse{ID: v.ID, Name: v.Name, Source: v.Source, RestoredFrom: v.RestoredFrom, CreatedAt: v.CreatedAt.UTC(), ThemeID: v.ThemeID}
	if withDocument {
		resp.Document = v.Document
	}
	return resp
}

// handlePublishTheme serves POST /stores/{store_id}/themes/v3/customization/publish.
func (s *Server) handlePublishTheme() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req request.Publish
		if r.ContentLength != 0 {
			var err error
			if req, err = wire.Decode[request.Publish](r); err != nil {
				return err
			}
		}
		name := ""
		if req.Name != nil {
			name = strings.TrimSpace(*req.Name)
		}
		v, err := s.db.PublishDraft(r.Context(), storeIDFrom(r.Context()), name)
		if err != nil {
			return err
		}
		respond(w, http.StatusCreated, newVersionResponse(v, false))
		return nil
	}
}

// handleListThemeVersions serves GET /stores/{store_id}/themes/v3/versions.
func (s *Server) handleListThemeVersions() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		versions, err := s.db.FindThemeVersions(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			return err
		}
		items := make([]versionResponse, 0, len(versions))
		for _, v := range versions {
			items = append(items, newVersionResponse(v, false))
		}
		respond(w, http.StatusOK, items)
		return nil
	}
}

// handleGetThemeVersion serves GET /stores/{store_id}/themes/v3/versions/{version_id}.
func (s *Server) handleGetThemeVersion() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "version_id")
		if err != nil {
			return err
		}
		v, err := s.db.FindThemeVersion(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newVersionResponse(v, true))
		return nil
	}
}

// handleRestoreThemeVersion serves POST /stores/{store_id}/themes/v3/versions/{version_id}/restore.
func (s *Server) handleRestoreThemeVersion() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "version_id")
		if err != nil {
			return err
		}
		v, c, err := s.db.RestoreThemeVersion(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		// Answered like publish (decisions §9: 201 with the new version); the
		// replaced draft's tag rides in the ETag header.
		w.Header().Set("ETag", c.ETag)
		respond(w, http.StatusCreated, newVersionResponse(v, false))
		return nil
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

// handleCompareThemes serves GET /stores/{store_id}/themes/v3/versions/compare: it answers an RFC 6902
// patch from one side to the other (from + patch = to) and the readable list of changes.
func (s *Server) handleCompareThemes() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.db.FindCustomization(r.Context(), storeIDFrom(r.Context()))
		if err != nil {
			return err
		}
		from, err := s.themeDocument(r, c, r.URL.Query().Get("from"))
		if err != nil {
			return err
		}
		to, err := s.themeDocument(r, c, r.URL.Query().Get("to"))
		if err != nil {
			return err
		}
		patch, changes, err := theme.Diff(from, to)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, map[string]any{"patch": patch, "changes": changes})
		return nil
	}
}

// handleThemeSchemas serves GET /stores/{store_id}/themes/v3/schemas.
func (s *Server) handleThemeSchemas() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		t := theme.Default()
		respond(w, http.StatusOK, map[string]any{"name": t.Name, "version": t.Version, "settings_schema": t.Settings, "sections": t.Sections})
		return nil
	}
}
