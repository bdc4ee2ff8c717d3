package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
)

type productResponse struct {
	ID          uuid.UUID       `json:"id"`
	StoreID     uuid.UUID       `json:"store_id"`
	Name        string          `json:"name"`
	Handle      string          `json:"handle"`
	Description string          `json:"description"`
	SKU         *string         `json:"sku"`
	Price       int64           `json:"price"`
	CostPrice   *int64          `json:"cost_price"`
	Status      string          `json:"status"`
	Quantity    int             `json:"quantity"`
	CategoryID  *uuid.UUID      `json:"category_id"`
	Attributes  json.RawMessage `json:"attributes"`
	Images      json.RawMessage `json:"images"`
	MediaURLs   json.RawMessage `json:"media_urls"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
	Kind        string          `json:"kind"`
	TaxClass    string          `json:"tax_class"`
}

func newProductResponse(p storage.Product) productResponse {
	return productResponse{ID: p.ID, StoreID: p.StoreID, Name: p.Name, Handle: p.Handle, Description: p.Description, SKU: p.SKU,
		Price: p.Price, CostPrice: p.CostPrice, Status: p.Status, Quantity: p.Quantity, CategoryID: p.CategoryID, Kind: p.Kind, TaxClass: p.TaxClass,
		Attributes: p.Attributes, Images: p.Images, MediaURLs: p.MediaURLs,
		CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
}

// handleCreateProduct serves POST /stores/{store_id}/products.
func (s *Server) handleCreateProduct() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateProduct](r)
		if err != nil {
			return err
		}
		p := storage.Product{StoreID: storeIDFrom(r.Context()), Name: strings.TrimSpace(req.Name), Description: req.Description,
			SKU: req.SKU, Price: *req.Price, CostPrice: req.CostPrice, Quantity: req.Quantity, Value: req.Value}
		if req.Kind != nil {
			p.Kind = *req.Kind
		}
		if req.TaxClass != nil {
			p.TaxClass = *req.TaxClass
		}
		if req.Status != nil {
			p.Status = *req.Status
		}
		if req.Handle != nil {
			p.Handle, _ = handle.Normalize(*req.Handle)
		}
		if req.CategoryID != nil {
			id, _ := request.ParseUUID(*req.CategoryID)
			p.CategoryID = &id
		}
		if request.IsJSONObject(req.Attributes) {
			p.Attributes = req.Attributes
		}
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			if err := tx.CreateProduct(r.Context(), &p); err != nil {
				return nil, err
			}
			return ok(newProductResponse(p)), nil
		})
	}
}

// handleListProducts serves GET /stores/{store_id}/products.
func (s *Server) handleListProducts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := storage.ProductFilter{
			CategoryID: q.uuid("category_id"),
			Search:     q.str("search"),
			SKU:        q.str("sku"),
			PriceMin:   q.int64Min("price_min", 0),
			PriceMax:   q.int64Min("price_max", 0),
			HasCost:    q.boolean("has_cost"),
			SortBy:     q.enum("sort_by", storage.ProductSortColumns, "created_at"),
			Descending: q.enum("sort_order", []string{"asc", "desc"}, "asc") == "desc",
			Page:       storage.Page{Page: page, Limit: limit},
		}
		if status := q.str("status"); status != nil {
			q.OneOf("status", *status, storage.ProductStatuses)
			f.Status = status
		}
		if f.PriceMin != nil && f.PriceMax != nil && *f.PriceMin > *f.PriceMax {
			q.Add("price_min", "out_of_range", "must not exceed price_max")
		}
		if err := q.err(); err != nil {
			return err
		}
		products, total, err := s.db.FindProducts(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(products, newProductResponse), page, limit, total))
		return nil
	}
}

// handleGetProduct serves GET /stores/{store_id}/products/{product_id}.
func (s *Server) handleGetProduct() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		p, err := s.db.FindProductByID(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newProductResponse(p))
		return nil
	}
}

// handleUpdateProduct serves PATCH /stores/{store_id}/products/{product_id}.
func (s *Server) handleUpdateProduct() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateProduct](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, newProductResponse, func(tx *storage.Tx) (storage.Product, error) {
			return tx.UpdateProduct(r.Context(), storeIDFrom(r.Context()), id, req.Update())
		})
	}
}

// handleDeleteProduct serves DELETE /stores/{store_id}/products/{product_id}.
func (s *Server) handleDeleteProduct() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		if err := s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			if _, err := tx.DeleteProduct(r.Context(), storeID, id); err != nil {
				return nil, err
			}
			// Its menu items go with it; the answer stays 204 (decisions §22).
			return nil, s.removeMenuItems(r.Context(), tx, storeID, storage.MenuItemProduct, id)
		}); err != nil {
			return err
		}
		s.removeObjects(r.Context(), storage.ProductPrefix(storeID, id))
		return nil
	}
}
