package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Variant operations answer the variant itself, or a bare array (spec §2.1).
type variantResponse struct {
	ID          uuid.UUID       `json:"id"`
	ProductID   uuid.UUID       `json:"product_id"`
	SKU         *string         `json:"sku"`
	Barcode     *string         `json:"barcode"`
	Price       int64           `json:"price"`
	CostPrice   *int64          `json:"cost_price"`
	Quantity    int             `json:"quantity"`
	Options     json.RawMessage `json:"options"`
	Position    int             `json:"position"`
	IsDefault   bool            `json:"is_default"`
	WeightGrams *int            `json:"weight_grams"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
	Value       *int64          `json:"value"` // a gift card product's issued balance (§19); null otherwise
}

func newVariantResponse(v storage.Variant) variantResponse {
	return variantResponse{ID: v.ID, ProductID: v.ProductID, SKU: v.SKU, Barcode: v.Barcode, Price: v.Price,
		CostPrice: v.CostPrice, Quantity: v.Quantity, Options: v.Options, Position: v.Position, IsDefault: v.IsDefault, WeightGrams: v.WeightGrams,
		CreatedAt: v.CreatedAt.UTC(), UpdatedAt: v.UpdatedAt.UTC(), Value: v.Value}
}

// handleListVariants serves GET /stores/{store_id}/products/{product_id}/variants.
func (s *Server) handleListVariants() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		productID, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		variants, err := s.db.FindVariants(r.Context(), storeIDFrom(r.Context()), productID)
		if err != nil {
			return err
		}
		list := make([]variantResponse, 0, len(variants))
		for _, v := range variants {
			list = append(list, newVariantResponse(v))
		}
		encode(w, http.StatusOK, list)
		return nil
	}
}

// handleCreateVariant serves POST /stores/{store_id}/products/{product_id}/variants.
func (s *Server) handleCreateVariant() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		productID, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.CreateVariant](r)
		if err != nil {
			return err
		}
		v := storage.Variant{StoreID: storeIDFrom(r.Context()), ProductID: productID, SKU: req.SKU, Barcode: req.Barcode,
			CostPrice: req.CostPrice, WeightGrams: req.WeightGrams, Value: req.Value}
		if req.Quantity != nil {
			v.Quantity = *req.Quantity
		}
		if req.Price != nil {
			v.Price = *req.Price
		}
		if request.IsJSONObject(req.Options) {
			v.Options = req.Options
		}
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			if err := tx.CreateVariant(r.Context(), &v, req.Price != nil, req.Quantity != nil); err != nil {
				return nil, err
			}
			return newVariantResponse(v), nil
		})
	}
}

// handleUpdateVariant serves PATCH /stores/{store_id}/products/{product_id}/variants/{variant_id}.
func (s *Server) handleUpdateVariant() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		productID, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		id, err := pathUUID(r, "variant_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateVariant](r)
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
			v, err := tx.UpdateVariant(r.Context(), storeIDFrom(r.Context()), productID, id, req.Update())
			if err != nil {
				return nil, err
			}
			return newVariantResponse(v), nil
		})
	}
}

// handleDeleteVariant serves DELETE /stores/{store_id}/products/{product_id}/variants/{variant_id}.
func (s *Server) handleDeleteVariant() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		productID, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		id, err := pathUUID(r, "variant_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.DeleteVariant(r.Context(), storeIDFrom(r.Context()), productID, id)
		})
	}
}
