package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
)

// Collections (decisions §21): merchandising sets, manual or smart.

var (
	errCollectionIsSmart = newError(http.StatusConflict, "COLLECTION_IS_SMART",
		"A smart collection's products follow its rules; change the rules instead", "منتجات المجموعة الذكية تتبع شروطها؛ عدّل الشروط بدلًا من ذلك")
)

// collectionError maps the errors only collections answer.
func collectionError(err error) *apiError {
	switch {
	case errors.Is(err, storage.ErrCollectionIsSmart):
		return errCollectionIsSmart
	}
	return nil
}

// pickText is a bilingual text in the language asked for (Accept-Language,
// else the store's), falling back to the other.
func pickText(t storage.CollectionText, lang string) string {
	if lang == "en" && t.En != "" || t.Ar == "" {
		return t.En
	}
	return t.Ar
}

// requestLanguage is the first of ar and en the Accept-Language header
// names, else the store's language.
func requestLanguage(r *http.Request, storeLanguage string) string {
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag := strings.ToLower(strings.TrimSpace(strings.SplitN(part, ";", 2)[0]))
		switch {
		case tag == "ar" || strings.HasPrefix(tag, "ar-"):
			return "ar"
		case tag == "en" || strings.HasPrefix(tag, "en-"):
			return "en"
		}
	}
	return storeLanguage
}

type collectionTextResponse struct {
	Ar   *string `json:"ar"`
	En   *string `json:"en"`
	Text string  `json:"text"`
}

// nullIfEmpty answers an empty text as null.
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func newCollectionText(t storage.CollectionText, lang string) collectionTextResponse {
	return collectionTextResponse{Ar: nullIfEmpty(t.Ar), En: nullIfEmpty(t.En), Text: pickText(t, lang)}
}

type collectionSEOResponse struct {
	Title       *string `json:"title"`
	Description *string `json:"description"`
}

func newCollectionSEO(seo storage.CollectionSEO) collectionSEOResponse {
	return collectionSEOResponse{Title: nullIfEmpty(seo.Title), Description: nullIfEmpty(seo.Description)}
}

type collectionResponse struct {
	ID            uuid.UUID                `json:"id"`
	Handle        string                   `json:"handle"`
	Title         collectionTextResponse   `json:"title"`
	Description   collectionTextResponse   `json:"description"`
	ImageID       *uuid.UUID               `json:"image_id"`
	Kind          string                   `json:"kind"`
	Rules         *storage.CollectionRules `json:"rules"`
	Sort          string                   `json:"sort"`
	Published     bool                     `json:"published"`
	SEO           collectionSEOResponse    `json:"seo"`
	ProductsCount int                      `json:"products_count"`
	Rebuild       string                   `json:"rebuild"`
	CreatedAt     time.Time                `json:"created_at"`
	UpdatedAt     time.Time                `json:"updated_at"`
}

func newCollectionResponse(c storage.Collection, lang string) collectionResponse {
	rebuild := "idle"
	if c.Rebuilding {
		rebuild = "running"
	}
	return collectionResponse{ID: c.ID, Handle: c.Handle, Title: newCollectionText(c.Title, lang), Description: newCollectionText(c.Description, lang),
		ImageID: c.ImageID, Kind: c.Kind, Rules: c.Rules, Sort: c.Sort, Published: c.Published, SEO: newCollectionSEO(c.SEO), ProductsCount: c.ProductsCount,
		Rebuild: rebuild, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
}

// merchantLanguage is the language of a merchant request's texts.
func (s *Server) merchantLanguage(r *http.Request) string {
	lang := "ar"
	if store, err := s.db.FindStoreByID(r.Context(), storeIDFrom(r.Context())); err == nil {
		lang = store.DefaultLanguage
	}
	return requestLanguage(r, lang)
}

// handleCreateCollection serves POST /stores/{store_id}/collections.
func (s *Server) handleCreateCollection() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateCollection](r)
		if err != nil {
			return err
		}
		c := storage.Collection{StoreID: storeIDFrom(r.Context()), Title: req.Title.Stored(), Description: req.Description.Stored(),
			Kind: req.Kind, SEO: storage.CollectionSEO(req.SEO), Published: true}
		if req.Kind == "smart" {
			c.Rules = req.Rules
		}
		if req.Sort != nil {
			c.Sort = *req.Sort
		}
		if req.Published != nil {
			c.Published = *req.Published
		}
		if req.Handle != nil {
			c.Handle, _ = handle.Normalize(*req.Handle)
		}
		if req.ImageID != nil {
			id, _ := request.ParseUUID(*req.ImageID)
			c.ImageID = &id
		}
		lang := s.merchantLanguage(r)
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			if c.Handle == "" {
				h, err := tx.FreeCollectionHandle(r.Context(), c.StoreID, pickText(c.Title, lang))
				if err != nil {
					return nil, err
				}
				c.Handle = h
			}
			if err := tx.CreateCollection(r.Context(), &c); err != nil {
				return nil, err
			}
			return ok(newCollectionResponse(c, lang)), nil
		})
	}
}

// handleListCollections serves GET /stores/{store_id}/collections.
func (s *Server) handleListCollections() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := storage.CollectionFilter{Published: q.boolean("published"), Search: q.str("search"), Page: storage.Page{Page: page, Limit: limit}}
		if kind := q.enum("kind", []string{"manual", "smart"}, ""); kind != "" {
			f.Kind = &kind
		}
		if err := q.err(); err != nil {
			return err
		}
		collections, total, err := s.db.FindCollections(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		lang := s.merchantLanguage(r)
		items := make([]collectionResponse, 0, len(collections))
		for _, c := range collections {
			items = append(items, newCollectionResponse(c, lang))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleGetCollection serves GET /stores/{store_id}/collections/{collection_id}.
func (s *Server) handleGetCollection() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "collection_id")
		if err != nil {
			return err
		}
		c, err := s.db.FindCollectionByID(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newCollectionResponse(c, s.merchantLanguage(r)))
		return nil
	}
}

// handleUpdateCollection serves PATCH /stores/{store_id}/collections/{collection_id}:
// 200, or 202 with rebuild running when the rules change (the
// collection-rebuild workflow applies them; until then the products are
// those of the old rules).
func (s *Server) handleUpdateCollection() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "collection_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateCollection](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		var upd storage.CollectionUpdate
		if req.Handle.Set {
			h, _ := handle.Normalize(req.Handle.Value)
			upd.Handle = &h
		}
		if req.Title.Set {
			upd.Title = new(req.Title.Value.Stored())
		}
		if req.Description.Set {
			upd.Description = new(req.Description.Value.Stored())
		}
		if req.ImageID.Set {
			upd.ImageID = &uuid.NullUUID{}
			if !req.ImageID.Null {
				id, _ := request.ParseUUID(req.ImageID.Value)
				upd.ImageID = &uuid.NullUUID{UUID: id, Valid: true}
			}
		}
		if req.Rules.Set {
			upd.Rules = &req.Rules.Value
		}
		if req.Sort.Set {
			upd.Sort = &req.Sort.Value
		}
		if req.Published.Set {
			upd.Published = &req.Published.Value
		}
		if req.SEO.Set {
			upd.SEO = new(storage.CollectionSEO(req.SEO.Value))
		}
		status := http.StatusOK
		if upd.Rules != nil {
			// The answer is 202 when the rules differ from the stored ones.
			current, err := s.db.FindCollectionByID(r.Context(), storeID, id)
			if err != nil {
				return err
			}
			before, _ := json.Marshal(current.Rules)
			after, _ := json.Marshal(upd.Rules)
			if current.Kind == "smart" && !bytes.Equal(before, after) {
				status = http.StatusAccepted
			}
		}
		lang := s.merchantLanguage(r)
		return s.writeTx(w, r, status, func(tx *storage.Tx) (any, error) {
			c, err := tx.UpdateCollection(r.Context(), storeID, id, upd)
			if err != nil {
				return nil, err
			}
			return ok(newCollectionResponse(c, lang)), nil
		})
	}
}

// handleDeleteCollection serves DELETE /stores/{store_id}/collections/{collection_id}.
func (s *Server) handleDeleteCollection() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "collection_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			if err := tx.DeleteCollection(r.Context(), storeID, id); err != nil {
				return nil, err
			}
			removed, err := tx.RemoveMenuItemsTargeting(r.Context(), storeID, storage.MenuItemCollection, id)
			return deleteAnswer(r.Context(), removed), err
		})
	}
}

// handleListCollectionProducts serves GET /stores/{store_id}/collections/{collection_id}/products,
// in the collection's order (or ?sort).
func (s *Server) handleListCollectionProducts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "collection_id")
		if err != nil {
			return err
		}
		q := newQueryParser(r)
		page, limit := q.page(20)
		sort := q.enum("sort", storage.CollectionSorts, "")
		if err := q.err(); err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		c, err := s.db.FindCollectionByID(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		if sort == "" {
			sort = c.Sort
		}
		products, total, err := s.db.FindCollectionProducts(r.Context(), storeID, id, storage.CollectionProductsQuery{Sort: sort,
			Page: storage.Page{Page: page, Limit: limit}})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(products, newProductResponse), page, limit, total))
		return nil
	}
}

type collectionAddResponse struct {
	Added   []uuid.UUID `json:"added"`
	Skipped []uuid.UUID `json:"skipped"`
}

type collectionRemoveResponse struct {
	Removed []uuid.UUID `json:"removed"`
	Skipped []uuid.UUID `json:"skipped"`
}

func parseProductIDs(ids []string) []uuid.UUID {
	out := make([]uuid.UUID, len(ids))
	for i, id := range ids {
		out[i], _ = request.ParseUUID(id)
	}
	return out
}

// handleAddCollectionProducts serves POST /stores/{store_id}/collections/{collection_id}/products.
func (s *Server) handleAddCollectionProducts() handlerFunc {
	return s.changeCollectionProducts((*storage.Tx).AddCollectionProducts, func(c storage.CollectionMembershipChange) any {
		return collectionAddResponse{Added: c.Changed, Skipped: c.Skipped}
	})
}

// handleRemoveCollectionProducts serves DELETE /stores/{store_id}/collections/{collection_id}/products.
func (s *Server) handleRemoveCollectionProducts() handlerFunc {
	return s.changeCollectionProducts((*storage.Tx).RemoveCollectionProducts, func(c storage.CollectionMembershipChange) any {
		return collectionRemoveResponse{Removed: c.Changed, Skipped: c.Skipped}
	})
}

// changeCollectionProducts serves a manual collection's add or remove of
// {product_ids}: change writes it, answer shapes what changed.
func (s *Server) changeCollectionProducts(
	change func(*storage.Tx, context.Context, uuid.UUID, uuid.UUID, []uuid.UUID) (storage.CollectionMembershipChange, error),
	answer func(storage.CollectionMembershipChange) any) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "collection_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.CollectionProducts](r)
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
			changed, err := change(tx, r.Context(), storeIDFrom(r.Context()), id, parseProductIDs(req.ProductIDs))
			if err != nil {
				return nil, err
			}
			return ok(answer(changed)), nil
		})
	}
}

// handleOrderCollectionProducts serves PUT /stores/{store_id}/collections/{collection_id}/products/order.
func (s *Server) handleOrderCollectionProducts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "collection_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.CollectionOrder](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		lang := s.merchantLanguage(r)
		return s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
			if err := tx.OrderCollectionProducts(r.Context(), storeID, id, parseProductIDs(req.ProductIDs)); err != nil {
				return nil, err
			}
			c, err := tx.FindCollectionByID(r.Context(), storeID, id)
			if err != nil {
				return nil, err
			}
			return ok(newCollectionResponse(c, lang)), nil
		})
	}
}

// storefrontCollection is a published collection as the storefront shows it.
type storefrontCollection struct {
	ID            uuid.UUID              `json:"id"`
	Handle        string                 `json:"handle"`
	Title         collectionTextResponse `json:"title"`
	Description   collectionTextResponse `json:"description"`
	ImageID       *uuid.UUID             `json:"image_id"`
	Sort          string                 `json:"sort"`
	SEO           collectionSEOResponse  `json:"seo"`
	ProductsCount int                    `json:"products_count"`
}

// handleStorefrontCollections serves GET /storefront/{subdomain}/collections:
// the published ones.
func (s *Server) handleStorefrontCollections() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		published := true
		collections, total, err := s.db.FindCollections(r.Context(), store.ID, storage.CollectionFilter{Published: &published,
			Page: storage.Page{Page: page, Limit: limit}})
		if err != nil {
			return err
		}
		lang := requestLanguage(r, store.DefaultLanguage)
		items := make([]storefrontCollection, 0, len(collections))
		for _, c := range collections {
			items = append(items, storefrontCollection{ID: c.ID, Handle: c.Handle, Title: newCollectionText(c.Title, lang),
				Description: newCollectionText(c.Description, lang), ImageID: c.ImageID, Sort: c.Sort, SEO: newCollectionSEO(c.SEO), ProductsCount: c.ProductsCount})
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleStorefrontCollectionProducts serves
// GET /storefront/{subdomain}/collections/{handle}/products: the active
// products of a published collection, in its sort or ?sort.
func (s *Server) handleStorefrontCollectionProducts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		q := newQueryParser(r)
		page, limit := q.page(24)
		sort := q.enum("sort", storage.CollectionSorts, "")
		if err := q.err(); err != nil {
			return err
		}
		h, err := handle.Normalize(chi.URLParam(r, "handle"))
		if err != nil {
			return errNotFound
		}
		products, total, err := s.db.FindPublishedCollectionProducts(r.Context(), store.ID, h, sort, storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		items := make([]storefrontProductSummary, 0, len(products))
		for _, p := range products {
			items = append(items, newStorefrontProduct(p, store.Currency))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}
