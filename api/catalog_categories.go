package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

type categoryResponse struct {
	ID        uuid.UUID  `json:"id"`
	Name      string     `json:"name"`
	ParentID  *uuid.UUID `json:"parent_id"`
	Position  int        `json:"position"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

func newCategoryResponse(c storage.Category) categoryResponse {
	return categoryResponse{ID: c.ID, Name: c.Name, ParentID: c.ParentID, Position: c.Position,
		CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
}

// handleCreateCategory serves POST /stores/{store_id}/categories.
func (s *Server) handleCreateCategory() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateCategory](r)
		if err != nil {
			return err
		}
		c := storage.Category{StoreID: storeIDFrom(r.Context()), Name: strings.TrimSpace(req.Name), Position: req.Position}
		if req.ParentID != nil {
			id, _ := request.ParseUUID(*req.ParentID)
			c.ParentID = &id
		}
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			if err := tx.CreateCategory(r.Context(), &c); err != nil {
				return nil, err
			}
			return ok(newCategoryResponse(c)), nil
		})
	}
}

// handleListCategories serves GET /stores/{store_id}/categories.
func (s *Server) handleListCategories() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		categories, total, err := s.db.FindCategories(r.Context(), storeIDFrom(r.Context()), storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(categories, newCategoryResponse), page, limit, total))
		return nil
	}
}

// handleGetCategory serves GET /stores/{store_id}/categories/{category_id}.
func (s *Server) handleGetCategory() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "category_id")
		if err != nil {
			return err
		}
		c, err := s.db.FindCategoryByID(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newCategoryResponse(c))
		return nil
	}
}

// handleUpdateCategory serves PATCH /stores/{store_id}/categories/{category_id}.
func (s *Server) handleUpdateCategory() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "category_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateCategory](r)
		if err != nil {
			return err
		}
		var upd storage.CategoryUpdate
		if req.Name.Set {
			name := strings.TrimSpace(req.Name.Value)
			upd.Name = &name
		}
		if req.ParentID.Set {
			upd.ParentID.Set, upd.ParentID.Null = true, req.ParentID.Null
			upd.ParentID.Value, _ = request.ParseUUID(req.ParentID.Value)
		}
		if req.Position.Set {
			upd.Position = &req.Position.Value
		}
		return writeView(s, w, r, http.StatusOK, newCategoryResponse, func(tx *storage.Tx) (storage.Category, error) {
			return tx.UpdateCategory(r.Context(), storeIDFrom(r.Context()), id, upd)
		})
	}
}

// handleDeleteCategory serves DELETE /stores/{store_id}/categories/{category_id}.
func (s *Server) handleDeleteCategory() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "category_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			if err := tx.DeleteCategory(r.Context(), storeID, id); err != nil {
				return nil, err
			}
			return nil, s.removeMenuItems(r.Context(), tx, storeID, storage.MenuItemCategory, id)
		})
	}
}
