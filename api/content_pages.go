package api

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
)

// Online store pages (decisions §22).

type pageResponse struct {
	ID          uuid.UUID   `json:"id"`
	Handle      string      `json:"handle"`
	URL         string      `json:"url"`
	Title       titleText   `json:"title"`
	Body        bodyText    `json:"body"`
	Template    string      `json:"template"`
	PublishedAt *time.Time  `json:"published_at"`
	Status      string      `json:"status"`
	SEO         seoResponse `json:"seo"`
	CreatedAt   time.Time   `json:"created_at"`
	UpdatedAt   time.Time   `json:"updated_at"`
}

// pageView shapes pages in a reader's language at a moment.
func pageView(lang string, now time.Time) func(storage.ContentPage) pageResponse {
	return func(p storage.ContentPage) pageResponse {
		return pageResponse{ID: p.ID, Handle: p.Handle, URL: "/pages/" + handle.Path(p.Handle), Title: newTitleText(p.Title, lang),
			Body: newBodyText(p.Body, lang), Template: p.Template, PublishedAt: utcOrNil(p.PublishedAt),
			Status: publicationStatus(p.PublishedAt, now), SEO: seoResponse(p.SEO), CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
	}
}

// handleCreatePage serves POST /stores/{store_id}/pages.
func (s *Server) handleCreatePage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreatePage](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		p := storage.ContentPage{StoreID: storeID, Title: contentText(req.Title), Template: "page"}
		if req.Handle != nil {
			p.Handle = *req.Handle
		}
		if req.Body != nil {
			p.Body = contentBody(*req.Body)
		}
		if req.Template != nil {
			p.Template = *req.Template
		}
		p.PublishedAt, _ = request.ParsePublishedAt(req.PublishedAt)
		if req.SEO != nil {
			p.SEO = contentSEO(*req.SEO)
		}
		return writeView(s, w, r, http.StatusCreated, pageView(lang, s.db.ContentClock()), func(tx *storage.Tx) (storage.ContentPage, error) {
			return p, tx.CreatePage(r.Context(), &p)
		})
	}
}

// handleListPages serves GET /stores/{store_id}/pages.
func (s *Server) handleListPages() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		status := q.enum("status", []string{"published", "scheduled", "draft"}, "")
		search := contentSearch(q)
		if err := q.err(); err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		pages, total, err := s.db.FindPages(r.Context(), storeID, storage.PageFilter{Page: storage.Page{Page: page, Limit: limit}, Status: status, Search: search})
		if err != nil {
			return err
		}
		view := pageView(lang, s.db.ContentClock())
		respond(w, http.StatusOK, newList(views(pages, view), page, limit, total))
		return nil
	}
}

// handleGetPage serves GET /stores/{store_id}/pages/{page_id}.
func (s *Server) handleGetPage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "page_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		p, err := s.db.FindPage(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, pageView(lang, s.db.ContentClock())(p))
		return nil
	}
}

// handleUpdatePage serves PATCH /stores/{store_id}/pages/{page_id}.
func (s *Server) handleUpdatePage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "page_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdatePage](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		view := pageView(lang, s.db.ContentClock())
		return writeView(s, w, r, http.StatusOK, view, func(tx *storage.Tx) (storage.ContentPage, error) {
			return tx.UpdatePage(r.Context(), storeID, id, func(p *storage.ContentPage) error {
				auditBefore(r.Context(), view(*p))
				if req.Handle.Set {
					p.Handle = req.Handle.Value
				}
				if req.Title.Set {
					p.Title = contentText(req.Title.Value)
				}
				if req.Body.Set {
					p.Body = contentBody(req.Body.Value)
				}
				if req.Template.Set {
					p.Template = req.Template.Value
				}
				if req.PublishedAt.Set {
					p.PublishedAt, _ = request.ParsePublishedAt(optionalValue(req.PublishedAt))
				}
				if req.SEO.Set {
					p.SEO = contentSEO(req.SEO.Value)
				}
				return nil
			})
		})
	}
}

// handleDeletePage serves DELETE /stores/{store_id}/pages/{page_id}.
func (s *Server) handleDeletePage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "page_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			p, err := tx.DeletePage(r.Context(), storeID, id)
			if err != nil {
				return nil, err
			}
			auditBefore(r.Context(), pageView("en", s.db.ContentClock())(p))
			removed, err := tx.RemoveMenuItemsTargeting(r.Context(), storeID, storage.MenuItemPage, id)
			return deleteAnswer(r.Context(), removed), err
		})
	}
}

// optionalValue is a present value's pointer, nil for null.
func optionalValue[T any](o wire.Optional[T]) *T {
	if o.Null {
		return nil
	}
	return &o.Value
}

// pathHandle reads a handle from the path: percent-decoded and normalised
// (so /pages/About and /pages/about are one page); one that cannot be a
// handle is 404, like one that names nothing.
func pathHandle(r *http.Request, name string) (string, error) {
	raw, err := url.PathUnescape(chi.URLParam(r, name))
	if err != nil {
		return "", errNotFound
	}
	h, err := handle.Normalize(strings.TrimSpace(raw))
	if err != nil {
		return "", errNotFound
	}
	return h, nil
}

// storefrontPageResponse is what buyers read of a page.
type storefrontPageResponse struct {
	Handle      string      `json:"handle"`
	Title       titleText   `json:"title"`
	Body        bodyText    `json:"body"`
	Template    string      `json:"template"`
	PublishedAt time.Time   `json:"published_at"`
	SEO         seoResponse `json:"seo"`
}

// handleStorefrontPage serves GET /storefront/{subdomain}/pages/{handle}:
// published pages only; drafts and pages scheduled later are 404.
func (s *Server) handleStorefrontPage() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		h, err := pathHandle(r, "handle")
		if err != nil {
			return err
		}
		p, err := s.db.FindPublishedPage(r.Context(), store.ID, h)
		if err != nil {
			return err
		}
		lang := acceptedLanguage(r.Header.Get("Accept-Language"))
		if lang == "" {
			lang = store.DefaultLanguage
		}
		respond(w, http.StatusOK, storefrontPageResponse{Handle: p.Handle, Title: newTitleText(p.Title, lang), Body: newBodyText(p.Body, lang),
			Template: p.Template, PublishedAt: p.PublishedAt.UTC(), SEO: seoResponse(p.SEO)})
		return nil
	}
}
