package storage

import (
	"context"
	"encoding/json"
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
	CreatedAt time.Time
	UpdatedAt time.Time
}

// VariantUpdate is a partial update; null clears sku, barcode and cost_price.
type VariantUpdate struct {
	SKU       Field[string]
	Barcode   Field[string]
	Price     *int64
	CostPrice Field[int64]
	Quantity  *int
	Options   json.RawMessage
	Position  *int
}

const variantColumns = `id, store_id, product_id, sku, barcode, price, cost_price, quantity, options, position, created_at, updated_at`

func scanVariant(row pgx.Row) (Variant, error) {
	var v Variant
	err := row.Scan(&v.ID, &v.StoreID, &v.ProductID, &v.SKU, &v.Barcode, &v.Price, &v.CostPrice, &v.Quantity,
		&v.Options, &v.Position, &v.CreatedAt, &v.UpdatedAt)
	return v, err
}

// FindVariants lists a product's variants by position.
func (r reader) FindVariants(ctx context.Context, storeID, productID uuid.UUID) ([]Variant, error) {
	if _, err := r.FindProductByID(ctx, storeID, productID); err != nil {
		return nil, err
	}
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
// defaults to the product's when zero-valued Price is not explicitly set.
func (tx *Tx) CreateVariant(ctx context.Context, v *Variant, priceSet bool) error {
	p, err := tx.lockProduct(ctx, v.StoreID, v.ProductID)
	if err != nil {
		return err
	}
	v.ID = NewID()
	if !priceSet {
		v.Price = p.Price
	}
	if len(v.Options) == 0 {
		v.Options = json.RawMessage(`{}`)
	}
	if err := tx.claimSKU(ctx, v.StoreID, "variant", v.ID, nil, v.SKU); err != nil {
		return err
	}
	now := tx.now()
	v.CreatedAt, v.UpdatedAt = now, now
	err = tx.tx.QueryRow(ctx, `INSERT INTO variants (`+variantColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,
		        (SELECT COALESCE(max(position), 0) + 1 FROM variants WHERE store_id = $2 AND product_id = $3), $10, $10)
		RETURNING position`,
		v.ID, v.StoreID, v.ProductID, v.SKU, v.Barcode, v.Price, v.CostPrice, v.Quantity, v.Options, now).Scan(&v.Position)
	if err != nil {
		return fmt.Errorf("create variant: %w", err)
	}
	return tx.touchProduct(ctx, v.StoreID, v.ProductID)
}

// UpdateVariant writes only the fields present in upd.
func (tx *Tx) UpdateVariant(ctx context.Context, storeID, productID, id uuid.UUID, upd VariantUpdate) (Variant, error) {
	if _, err := tx.lockProduct(ctx, storeID, productID); err != nil {
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
	if upd.Quantity != nil {
		v.Quantity, set["quantity"] = *upd.Quantity, *upd.Quantity
	}
	if upd.Options != nil {
		v.Options, set["options"] = upd.Options, upd.Options
	}
	if upd.Position != nil {
		v.Position, set["position"] = *upd.Position, *upd.Position
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
	return v, tx.touchProduct(ctx, storeID, productID)
}

// DeleteVariant hard-deletes a variant and frees its SKU.
func (tx *Tx) DeleteVariant(ctx context.Context, storeID, productID, id uuid.UUID) error {
	if _, err := tx.lockProduct(ctx, storeID, productID); err != nil {
		return err
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
