package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"

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
}

func newVariantResponse(v storage.Variant) variantResponse {
	return variantResponse{ID: v.ID, ProductID: v.ProductID, SKU: v.SKU, Barcode: v.Barcode, Price: v.Price,
		CostPrice: v.CostPrice, Quantity: v.Quantity, Options: v.Options, Position: v.Position, IsDefault: v.IsDefault, WeightGrams: v.WeightGrams,
		CreatedAt: v.CreatedAt.UTC(), UpdatedAt: v.UpdatedAt.UTC()}
}

const maxBarcodeLength = 64

// maxWeightGrams is a tonne: more is a typo, not a parcel.
const maxWeightGrams = 1_000_000

type createVariantRequest struct {
	SKU         *string         `json:"sku"`
	Barcode     *string         `json:"barcode"`
	Price       *int64          `json:"price"`
	CostPrice   *int64          `json:"cost_price"`
	Quantity    *int            `json:"quantity"`
	Options     json.RawMessage `json:"options"`
	WeightGrams *int            `json:"weight_grams"`
}

func (req createVariantRequest) Valid() []fieldError {
	var c checker
	if req.SKU != nil {
		checkSKU(&c, "sku", *req.SKU)
	}
	if req.Barcode != nil {
		c.text("barcode", *req.Barcode, 1, maxBarcodeLength)
	}
	if req.Price != nil {
		c.amount("price", *req.Price)
	}
	if req.CostPrice != nil {
		c.amount("cost_price", *req.CostPrice)
	}
	if req.Quantity != nil {
		c.minInt("quantity", int64(*req.Quantity), 0)
	}
	if req.Options != nil && string(req.Options) != "null" && !isJSONObject(req.Options) {
		c.add("options", "invalid_type", "must be an object")
	}
	if req.WeightGrams != nil {
		c.intRange("weight_grams", int64(*req.WeightGrams), 0, maxWeightGrams)
	}
	return c.result()
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
		req, err := decode[createVariantRequest](r)
		if err != nil {
			return err
		}
		v := storage.Variant{StoreID: storeIDFrom(r.Context()), ProductID: productID, SKU: req.SKU, Barcode: req.Barcode,
			CostPrice: req.CostPrice, WeightGrams: req.WeightGrams}
		if req.Quantity != nil {
			v.Quantity = *req.Quantity
		}
		if req.Price != nil {
			v.Price = *req.Price
		}
		if isJSONObject(req.Options) {
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

type updateVariantRequest struct {
	SKU         optional[string]          `json:"sku"`
	Barcode     optional[string]          `json:"barcode"`
	Price       optional[int64]           `json:"price"`
	CostPrice   optional[int64]           `json:"cost_price"`
	Quantity    optional[int]             `json:"quantity"`
	Options     optional[json.RawMessage] `json:"options"`
	Position    optional[int]             `json:"position"`
	WeightGrams optional[int]             `json:"weight_grams"`
}

func (req updateVariantRequest) Valid() []fieldError {
	var c checker
	if req.SKU.Set && !req.SKU.Null {
		checkSKU(&c, "sku", req.SKU.Value)
	}
	if req.Barcode.Set && !req.Barcode.Null {
		c.text("barcode", req.Barcode.Value, 1, maxBarcodeLength)
	}
	if notNull(&c, "price", req.Price) {
		c.amount("price", req.Price.Value)
	}
	if req.CostPrice.Set && !req.CostPrice.Null {
		c.amount("cost_price", req.CostPrice.Value)
	}
	if notNull(&c, "quantity", req.Quantity) {
		c.minInt("quantity", int64(req.Quantity.Value), 0)
	}
	if req.Options.Set && !req.Options.Null && !isJSONObject(req.Options.Value) {
		c.add("options", "invalid_type", "must be an object")
	}
	if notNull(&c, "position", req.Position) {
		c.minInt("position", int64(req.Position.Value), 1)
	}
	if req.WeightGrams.Set && !req.WeightGrams.Null {
		c.intRange("weight_grams", int64(req.WeightGrams.Value), 0, maxWeightGrams)
	}
	return c.result()
}

func (req updateVariantRequest) update() storage.VariantUpdate {
	upd := storage.VariantUpdate{
		SKU:         storage.Field[string](req.SKU),
		Barcode:     storage.Field[string](req.Barcode),
		CostPrice:   storage.Field[int64](req.CostPrice),
		WeightGrams: storage.Field[int](req.WeightGrams),
	}
	if req.Price.Set {
		upd.Price = &req.Price.Value
	}
	if req.Quantity.Set {
		upd.Quantity = &req.Quantity.Value
	}
	if req.Options.Set {
		upd.Options = json.RawMessage(`{}`)
		if !req.Options.Null {
			upd.Options = req.Options.Value
		}
	}
	if req.Position.Set {
		upd.Position = &req.Position.Value
	}
	return upd
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
		req, err := decode[updateVariantRequest](r)
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusOK, func(tx *storage.Tx) (any, error) {
			v, err := tx.UpdateVariant(r.Context(), storeIDFrom(r.Context()), productID, id, req.update())
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
