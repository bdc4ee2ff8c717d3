package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Variant is a purchasable version of a product, ordered by Position.
type Variant struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	ProductID uuid.UUID
	SKU       *string
	Barcode   *string
	Price     int64
	CostPrice *int64
	Quantity  int
	Options   json.RawMessage
	Position  int
	IsDefault bool // the variant a product without options sells as (decisions §11)
	// WeightGrams is the shipping weight; nil when not given.
	WeightGrams *int
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Value is, for a variant of a gift card product (§19), the balance a
	// unit sold issues, never below Price; nil on other products.
	Value *int64
}

// VariantUpdate is a partial update; null clears sku, barcode and cost_price.
type VariantUpdate struct {
	SKU         Field[string]
	Barcode     Field[string]
	Price       *int64
	CostPrice   Field[int64]
	Quantity    *int
	Options     json.RawMessage
	Position    *int
	WeightGrams Field[int]
	Value       *int64 // gift card products only
}

const variantColumns = `id, store_id, product_id, sku, barcode, price, cost_price, quantity, options, position, is_default, weight_grams, created_at, updated_at, value`

func scanVariant(row pgx.Row) (Variant, error) {
	var v Variant
	err := row.Scan(&v.ID, &v.StoreID, &v.ProductID, &v.SKU, &v.Barcode, &v.Price, &v.CostPrice, &v.Quantity,
		&v.Options, &v.Position, &v.IsDefault, &v.WeightGrams, &v.CreatedAt, &v.UpdatedAt, &v.Value)
	return v, err
}

// ErrLastVariant refuses deleting a product's only variant.
var ErrLastVariant = errors.New("last variant")

// createDefaultVariant gives a new product its default variant (no options,
// no SKU, the product's price) holding p.Quantity at the default location.
func (tx *Tx) createDefaultVariant(ctx context.Context, p Product) error {
	v := Variant{ID: NewID(), StoreID: p.StoreID, ProductID: p.ID, Price: p.Price, CostPrice: p.CostPrice,
		Options: json.RawMessage(`{}`), Position: 1, IsDefault: true, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
	if p.Kind == ProductKindGiftCard {
		v.Value = p.Value
		if v.Value == nil {
			v.Value = &p.Price
		}
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO variants (`+variantColumns+`) VALUES ($1, $2, $3, NULL, NULL, $4, $5, 0, $6, 1, true, NULL, $7, $7, $8)`,
		v.ID, v.StoreID, v.ProductID, v.Price, v.CostPrice, v.Options, v.CreatedAt, v.Value); err != nil {
		return fmt.Errorf("create default variant: %w", err)
	}
	return tx.setDefaultOnHand(ctx, p.StoreID, v.ID, p.Quantity, tx.movementActor())
}

// followDefaultVariant carries a product update to its default variant:
// price and cost follow the product, and a quantity write is the default
// variant's. A product with real variants refuses `quantity`. It returns
// the product's quantity after the update.
func (tx *Tx) followDefaultVariant(ctx context.Context, p Product, upd ProductUpdate) (int, error) {
	if upd.Quantity == nil && upd.Price == nil && !upd.CostPrice.Set {
		return p.Quantity, nil // read with the product; nothing here moves it
	}
	var (
		defaultID *uuid.UUID
		others    bool
	)
	rows, err := tx.tx.Query(ctx, `SELECT id, is_default FROM variants WHERE store_id = $1 AND product_id = $2 ORDER BY id FOR UPDATE`, p.StoreID, p.ID)
	if err != nil {
		return 0, fmt.Errorf("read variants: %w", err)
	}
	for rows.Next() {
		var (
			id        uuid.UUID
			isDefault bool
		)
		if err := rows.Scan(&id, &isDefault); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read variants: %w", err)
		}
		if isDefault {
			defaultID = &id
		} else {
			others = true
		}
	}
	rows.Close()
	if upd.Quantity != nil {
		if others || defaultID == nil {
			return 0, &InvalidError{Field: "quantity", Code: "managed_by_variants",
				Message: "the product has variants; write each variant's quantity instead"}
		}
		if err := tx.setDefaultOnHand(ctx, p.StoreID, *defaultID, *upd.Quantity, tx.movementActor()); err != nil {
			return 0, err
		}
	}
	if defaultID != nil && (upd.Price != nil || upd.CostPrice.Set) {
		if _, err := tx.tx.Exec(ctx, `UPDATE variants SET price = $3, cost_price = $4, updated_at = $5 WHERE store_id = $1 AND id = $2`,
			p.StoreID, *defaultID, p.Price, p.CostPrice, tx.now()); isValueCheckViolation(err) {
			return 0, &InvalidError{Field: "price", Code: "exceeds_value", Message: "the price must not exceed the gift card's value"}
		} else if err != nil {
			return 0, fmt.Errorf("update default variant: %w", err)
		}
	}
	var quantity int
	if err := tx.tx.QueryRow(ctx, `SELECT COALESCE(sum(quantity), 0)::bigint FROM variants WHERE store_id = $1 AND product_id = $2`,
		p.StoreID, p.ID).Scan(&quantity); err != nil {
		return 0, fmt.Errorf("read product quantity: %w", err)
	}
	return quantity, nil
}

// FindVariants lists a product's variants by position.
func (r reader) FindVariants(ctx context.Context, storeID, productID uuid.UUID) ([]Variant, error) {
	if _, err := r.FindProductByID(ctx, storeID, productID); err != nil {
		return nil, err
	}
	return r.productVariants(ctx, storeID, productID)
}

// productVariants lists a product's variants by position, the product
// taken as existing.
func (r reader) productVariants(ctx context.Context, storeID, productID uuid.UUID) ([]Variant, error) {
	rows, err := r.q.Query(ctx, `SELECT `+variantColumns+` FROM variants WHERE store_id = $1 AND product_id = $2 ORDER BY position, id`,
		storeID, productID)
	if err != nil {
		return nil, fmt.Errorf("find variants: %w", err)
	}
	variants, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Variant, error) { return scanVariant(row) })
	if err != nil {
		return nil, fmt.Errorf("find variants: %w", err)
	}
	return variants, nil
}

// lockProduct takes the product row so concurrent variant writes on one
// product serialise (positions stay distinct).
func (tx *Tx) lockProduct(ctx context.Context, storeID, productID uuid.UUID) (Product, error) {
	p, err := scanProduct(tx.tx.QueryRow(ctx, `SELECT `+productColumns+` FROM products WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, productID))
	if err != nil {
		return Product{}, notFoundIfNoRows(err, "find product "+productID.String())
	}
	return p, nil
}

// CreateVariant adds a variant at the end of the product's list. Price
// defaults to the product's when not set. On a product that still sells as
// its default variant, the new variant converts that one in place: same
// id, stock and history (decisions §11). A set quantity is a quantity write
// at the default location.
func (tx *Tx) CreateVariant(ctx context.Context, v *Variant, priceSet, quantitySet bool) error {
	p, err := tx.lockProduct(ctx, v.StoreID, v.ProductID)
	if err != nil {
		return err
	}
	if !priceSet {
		v.Price = p.Price
	}
	if p.Kind == ProductKindGiftCard && v.Value == nil {
		v.Value = new(v.Price) // a card worth what it costs unless told
	}
	if err := checkGiftCardValue(p.Kind, v.Price, v.Value, "price"); err != nil {
		return err
	}
	if len(v.Options) == 0 {
		v.Options = json.RawMessage(`{}`)
	}
	now := tx.now()
	var only []Variant
	rows, err := tx.tx.Query(ctx, `SELECT `+variantColumns+` FROM variants WHERE store_id = $1 AND product_id = $2 ORDER BY id LIMIT 2 FOR UPDATE`,
		v.StoreID, v.ProductID)
	if err != nil {
		return fmt.Errorf("read variants: %w", err)
	}
	if only, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Variant, error) { return scanVariant(row) }); err != nil {
		return fmt.Errorf("read variants: %w", err)
	}
	if len(only) == 1 && only[0].IsDefault {
		d := only[0]
		v.ID, v.Position, v.CreatedAt, v.UpdatedAt = d.ID, d.Position, d.CreatedAt, now
		if err := tx.claimSKU(ctx, v.StoreID, "variant", v.ID, nil, v.SKU); err != nil {
			return err
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE variants SET sku = $3, barcode = $4, price = $5, cost_price = $6, options = $7,
				is_default = false, weight_grams = $9, value = $10, updated_at = $8 WHERE store_id = $1 AND id = $2`,
			v.StoreID, v.ID, v.SKU, v.Barcode, v.Price, v.CostPrice, v.Options, now, v.WeightGrams, v.Value); err != nil {
			return fmt.Errorf("convert default variant: %w", err)
		}
	} else {
		v.ID = NewID()
		if err := tx.claimSKU(ctx, v.StoreID, "variant", v.ID, nil, v.SKU); err != nil {
			return err
		}
		v.CreatedAt, v.UpdatedAt = now, now
		err = tx.tx.QueryRow(ctx, `INSERT INTO variants (`+variantColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8,
			        (SELECT COALESCE(max(position), 0) + 1 FROM variants WHERE store_id = $2 AND product_id = $3), false, $10, $9, $9, $11)
			RETURNING position`,
			v.ID, v.StoreID, v.ProductID, v.SKU, v.Barcode, v.Price, v.CostPrice, v.Options, now, v.WeightGrams, v.Value).Scan(&v.Position)
		if err != nil {
			return fmt.Errorf("create variant: %w", err)
		}
		quantitySet = true // a new variant's level starts at its quantity (0 when none is given)
	}
	v.IsDefault = false
	if quantitySet {
		if err := tx.setDefaultOnHand(ctx, v.StoreID, v.ID, v.Quantity, tx.movementActor()); err != nil {
			return err
		}
	}
	if err := tx.tx.QueryRow(ctx, `SELECT quantity FROM variants WHERE store_id = $1 AND id = $2`, v.StoreID, v.ID).Scan(&v.Quantity); err != nil {
		return fmt.Errorf("read variant quantity: %w", err)
	}
	return tx.touchProduct(ctx, v.StoreID, v.ProductID)
}

// UpdateVariant writes only the fields present in upd.
func (tx *Tx) UpdateVariant(ctx context.Context, storeID, productID, id uuid.UUID, upd VariantUpdate) (Variant, error) {
	p, err := tx.lockProduct(ctx, storeID, productID)
	if err != nil {
		return Variant{}, err
	}
	// The row lock orders this edit after any checkout holding the variant
	// (orders lock variants the same way), so it reads the stock as it is.
	v, err := scanVariant(tx.tx.QueryRow(ctx, `SELECT `+variantColumns+` FROM variants WHERE store_id = $1 AND product_id = $2 AND id = $3 FOR UPDATE`,
		storeID, productID, id))
	if err != nil {
		return Variant{}, notFoundIfNoRows(err, "find variant "+id.String())
	}
	set := map[string]any{}
	if upd.SKU.Set {
		newSKU := upd.SKU.ptr()
		if err := tx.claimSKU(ctx, storeID, "variant", id, v.SKU, newSKU); err != nil {
			return Variant{}, err
		}
		v.SKU, set["sku"] = newSKU, newSKU
	}
	if upd.Barcode.Set {
		v.Barcode = upd.Barcode.ptr()
		set["barcode"] = v.Barcode
	}
	if upd.Price != nil {
		v.Price, set["price"] = *upd.Price, *upd.Price
	}
	if upd.CostPrice.Set {
		v.CostPrice = upd.CostPrice.ptr()
		set["cost_price"] = v.CostPrice
	}
	if upd.Options != nil {
		v.Options, set["options"] = upd.Options, upd.Options
	}
	if upd.Position != nil {
		v.Position, set["position"] = *upd.Position, *upd.Position
	}
	if upd.WeightGrams.Set {
		v.WeightGrams = upd.WeightGrams.ptr()
		set["weight_grams"] = v.WeightGrams
	}
	if upd.Value != nil {
		v.Value, set["value"] = upd.Value, *upd.Value
	}
	field := "value"
	if upd.Price != nil {
		field = "price"
	}
	if err := checkGiftCardValue(p.Kind, v.Price, v.Value, field); err != nil {
		return Variant{}, err
	}
	v.UpdatedAt = tx.now()
	set["updated_at"] = v.UpdatedAt
	// Only the fields given are written.
	query, args, err := psql.Update("variants").SetMap(set).Where(sq.Eq{"store_id": storeID, "product_id": productID, "id": id}).ToSql()
	if err != nil {
		return Variant{}, fmt.Errorf("update variant: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, query, args...); err != nil {
		return Variant{}, fmt.Errorf("update variant: %w", err)
	}
	if upd.Quantity != nil {
		if err := tx.setDefaultOnHand(ctx, storeID, id, *upd.Quantity, tx.movementActor()); err != nil {
			return Variant{}, err
		}
		if err := tx.tx.QueryRow(ctx, `SELECT quantity FROM variants WHERE store_id = $1 AND id = $2`, storeID, id).Scan(&v.Quantity); err != nil {
			return Variant{}, fmt.Errorf("read variant quantity: %w", err)
		}
	}
	return v, tx.touchProduct(ctx, storeID, productID)
}

// DeleteVariant hard-deletes a variant and frees its SKU.
func (tx *Tx) DeleteVariant(ctx context.Context, storeID, productID, id uuid.UUID) error {
	if _, err := tx.lockProduct(ctx, storeID, productID); err != nil {
		return err
	}
	var (
		count         int
		exists, inUse bool
	)
	if err := tx.tx.QueryRow(ctx, `SELECT count(*), COALESCE(bool_or(id = $3), false),
			EXISTS (SELECT 1 FROM inventory_levels WHERE store_id = $1 AND variant_id = $3 AND reserved > 0)
			OR EXISTS (SELECT 1 FROM cart_lines WHERE store_id = $1 AND variant_id = $3)
		FROM variants WHERE store_id = $1 AND product_id = $2`, storeID, productID, id).Scan(&count, &exists, &inUse); err != nil {
		return fmt.Errorf("check variant: %w", err)
	}
	switch {
	case !exists:
		return fmt.Errorf("delete variant %s: %w", id, ErrNotFound)
	case inUse:
		return fmt.Errorf("delete variant %s: %w", id, ErrVariantInUse)
	case count == 1:
		return ErrLastVariant
	}
	var sku *string
	err := tx.tx.QueryRow(ctx, `DELETE FROM variants WHERE store_id = $1 AND product_id = $2 AND id = $3 RETURNING sku`,
		storeID, productID, id).Scan(&sku)
	if err != nil {
		if isForeignKeyViolation(err) {
			return fmt.Errorf("delete variant %s: %w", id, ErrVariantInUse)
		}
		return notFoundIfNoRows(err, "delete variant "+id.String())
	}
	if err := tx.claimSKU(ctx, storeID, "variant", id, sku, nil); err != nil {
		return err
	}
	return tx.touchProduct(ctx, storeID, productID)
}
