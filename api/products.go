package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

type productResponse struct {
	ID          uuid.UUID       `json:"id"`
	StoreID     uuid.UUID       `json:"store_id"`
	Name        string          `json:"name"`
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
}

func newProductResponse(p storage.Product) productResponse {
	return productResponse{ID: p.ID, StoreID: p.StoreID, Name: p.Name, Description: p.Description, SKU: p.SKU,
		Price: p.Price, CostPrice: p.CostPrice, Status: p.Status, Quantity: p.Quantity, CategoryID: p.CategoryID,
		Attributes: p.Attributes, Images: p.Images, MediaURLs: p.MediaURLs,
		CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
}

const (
	maxNameLength        = 255
	maxDescriptionLength = 20000
	maxSKULength         = 100
)

// isJSONObject reports whether raw holds a JSON object.
func isJSONObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimSpace(raw)
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// checkSKU validates a SKU value: 1-100 characters, no surrounding spaces.
func checkSKU(c *checker, field, sku string) {
	if strings.TrimSpace(sku) != sku {
		c.add(field, "invalid", "must not start or end with spaces")
		return
	}
	c.text(field, sku, 1, maxSKULength)
}

type createProductRequest struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	SKU         *string         `json:"sku"`
	Price       *int64          `json:"price"`
	CostPrice   *int64          `json:"cost_price"`
	Status      *string         `json:"status"`
	Quantity    int             `json:"quantity"`
	CategoryID  *string         `json:"category_id"`
	Attributes  json.RawMessage `json:"attributes"`
}

func (req createProductRequest) Valid() []fieldError {
	var c checker
	c.text("name", req.Name, 1, maxNameLength)
	c.text("description", req.Description, 0, maxDescriptionLength)
	if req.SKU != nil {
		checkSKU(&c, "sku", *req.SKU)
	}
	if req.Price == nil {
		c.add("price", "required", "is required (integer, smallest currency unit)")
	} else {
		c.amount("price", *req.Price)
	}
	if req.CostPrice != nil {
		c.amount("cost_price", *req.CostPrice)
	}
	if req.Status != nil {
		c.oneOf("status", *req.Status, storage.ProductStatuses)
	}
	c.minInt("quantity", int64(req.Quantity), 0)
	if req.CategoryID != nil {
		c.uuid("category_id", *req.CategoryID)
	}
	if req.Attributes != nil && string(req.Attributes) != "null" && !isJSONObject(req.Attributes) {
		c.add("attributes", "invalid_type", "must be an object")
	}
	return c.result()
}

// handleCreateProduct serves POST /stores/{store_id}/products.
func (s *Server) handleCreateProduct() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[createProductRequest](r)
		if err != nil {
			return err
		}
		p := storage.Product{StoreID: storeIDFrom(r.Context()), Name: strings.TrimSpace(req.Name), Description: req.Description,
			SKU: req.SKU, Price: *req.Price, CostPrice: req.CostPrice, Quantity: req.Quantity}
		if req.Status != nil {
			p.Status = *req.Status
		}
		if req.CategoryID != nil {
			id, _ := parseUUID(*req.CategoryID)
			p.CategoryID = &id
		}
		if isJSONObject(req.Attributes) {
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
			q.oneOf("status", *status, storage.ProductStatuses)
			f.Status = status
		}
		if f.PriceMin != nil && f.PriceMax != nil && *f.PriceMin > *f.PriceMax {
			q.add("price_min", "out_of_range", "must not exceed price_max")
		}
		if err := q.err(); err != nil {
			return err
		}
		products, total, err := s.db.FindProducts(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		items := make([]productResponse, 0, len(products))
		for _, p := range products {
			items = append(items, newProductResponse(p))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
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

type updateProductRequest struct {
	Name        optional[string]          `json:"name"`
	Description optional[string]          `json:"description"`
	SKU         optional[string]          `json:"sku"`
	Price       optional[int64]           `json:"price"`
	CostPrice   optional[int64]           `json:"cost_price"`
	Status      optional[string]          `json:"status"`
	Quantity    optional[int]             `json:"quantity"`
	CategoryID  optional[string]          `json:"category_id"`
	Attributes  optional[json.RawMessage] `json:"attributes"`
}

// notNull refuses null for a field that cannot be cleared.
func notNull[T any](c *checker, field string, o optional[T]) bool {
	if o.Null {
		c.add(field, "required", "cannot be null")
		return false
	}
	return o.Set
}

func (req updateProductRequest) Valid() []fieldError {
	var c checker
	if notNull(&c, "name", req.Name) {
		c.text("name", req.Name.Value, 1, maxNameLength)
	}
	if notNull(&c, "description", req.Description) {
		c.text("description", req.Description.Value, 0, maxDescriptionLength)
	}
	if req.SKU.Set && !req.SKU.Null {
		checkSKU(&c, "sku", req.SKU.Value)
	}
	if notNull(&c, "price", req.Price) {
		c.amount("price", req.Price.Value)
	}
	if req.CostPrice.Set && !req.CostPrice.Null {
		c.amount("cost_price", req.CostPrice.Value)
	}
	if notNull(&c, "status", req.Status) {
		c.oneOf("status", req.Status.Value, storage.ProductStatuses)
	}
	if notNull(&c, "quantity", req.Quantity) {
		c.minInt("quantity", int64(req.Quantity.Value), 0)
	}
	if req.CategoryID.Set && !req.CategoryID.Null {
		c.uuid("category_id", req.CategoryID.Value)
	}
	if req.Attributes.Set && !req.Attributes.Null && !isJSONObject(req.Attributes.Value) {
		c.add("attributes", "invalid_type", "must be an object")
	}
	return c.result()
}

func (req updateProductRequest) update() storage.ProductUpdate {
	var upd storage.ProductUpdate
	if req.Name.Set {
		name := strings.TrimSpace(req.Name.Value)
		upd.Name = &name
	}
	if req.Description.Set {
		upd.Description = &req.Description.Value
	}
	upd.SKU = storage.Field[string](req.SKU)
	if req.Price.Set {
		upd.Price = &req.Price.Value
	}
	upd.CostPrice = storage.Field[int64](req.CostPrice)
	if req.Status.Set {
		upd.Status = &req.Status.Value
	}
	if req.Quantity.Set {
		upd.Quantity = &req.Quantity.Value
	}
	if req.CategoryID.Set {
		upd.CategoryID.Set, upd.CategoryID.Null = true, req.CategoryID.Null
		upd.CategoryID.Value, _ = parseUUID(req.CategoryID.Value)
	}
	if req.Attributes.Set {
		upd.Attributes = json.RawMessage(`{}`)
		if !req.Attributes.Null {
			upd.Attributes = req.Attributes.Value
		}
	}
	return upd
}

// handleUpdateProduct serves PATCH /stores/{store_id}/products/{product_id}.
func (s *Server) handleUpdateProduct() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		req, err := decode[updateProductRequest](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, newProductResponse, func(tx *storage.Tx) (storage.Product, error) {
			return tx.UpdateProduct(r.Context(), storeIDFrom(r.Context()), id, req.update())
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
			_, err := tx.DeleteProduct(r.Context(), storeID, id)
			return nil, err
		}); err != nil {
			return err
		}
		s.removeObjects(r.Context(), storage.ProductPrefix(storeID, id))
		return nil
	}
}
