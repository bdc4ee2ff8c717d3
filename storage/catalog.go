package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/merchantsvc/svc/storage/handle"
)

// Field is an update to one column of a PATCH: Set false leaves the column
// alone; Set with Null clears a nullable column; otherwise Value is written.
type Field[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// ptr returns the value to write, nil for null.
func (f Field[T]) ptr() *T {
	if f.Null {
		return nil
	}
	v := f.Value
	return &v
}

// Product statuses.
var ProductStatuses = []string{"draft", "active", "archived"}

// Product is a catalog item.
type Product struct {
	ID      uuid.UUID
	StoreID uuid.UUID
	Name    string
	// Handle is the product's storefront address, /products/{handle}:
	// made from the name at creation, kept when the name changes.
	Handle      string
	Description string
	SKU         *string
	Price       int64
	CostPrice   *int64
	Status      string
	Quantity    int
	CategoryID  *uuid.UUID
	Attributes  json.RawMessage
	Images      json.RawMessage
	MediaURLs   json.RawMessage
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Kind is standard or gift_card (§19), set at creation: a gift card
	// product's variants carry a Value and hold no stock.
	Kind string
	// Value is, on creation only, a gift card product's default variant's
	// value (nil: its price).
	Value *int64
	// TaxClass is standard (the store's rate), zero or exempt (§27).
	TaxClass string
}

// ProductUpdate is a partial update; nil pointers and unset fields are left alone.
type ProductUpdate struct {
	Name        *string
	Handle      *string // normalised; the old address redirects to the new
	Description *string
	SKU         Field[string]
	Price       *int64
	CostPrice   Field[int64]
	Status      *string
	Quantity    *int
	CategoryID  Field[uuid.UUID]
	Attributes  json.RawMessage // replaces the whole object when present
	TaxClass    *string
}

// Sort columns a product list may order by.
var ProductSortColumns = []string{"name", "price", "created_at", "updated_at", "quantity"}

// ProductFilter narrows and orders a product list.
type ProductFilter struct {
	CategoryID *uuid.UUID
	Status     *string
	Search     *string
	SKU        *string
	PriceMin   *int64
	PriceMax   *int64
	HasCost    *bool
	SortBy     string // one of ProductSortColumns; created_at when empty
	Descending bool
	Page       Page
}

// productColumns read a product; its quantity is the sum of its variants'
// (each the available stock over active locations, decisions §11).
const productColumns = `id, store_id, name, description, sku, price, cost_price, status,
	(SELECT COALESCE(sum(v.quantity), 0)::bigint FROM variants v WHERE v.store_id = products.store_id AND v.product_id = products.id) AS quantity,
	category_id, attributes, images, media_urls, created_at, updated_at, handle, kind, tax_class`

const productInsertColumns = `id, store_id, name, description, sku, price, cost_price, status, category_id, attributes, images, media_urls, created_at, updated_at, handle, kind, tax_class`

func scanProduct(row pgx.Row) (Product, error) {
	var p Product
	err := row.Scan(productFields(&p)...)
	return p, err
}

// productFields are where productColumns are read into, in their order:
// one list for every read of a product, whatever it reads after them.
func productFields(p *Product) []any {
	return []any{&p.ID, &p.StoreID, &p.Name, &p.Description, &p.SKU, &p.Price, &p.CostPrice, &p.Status,
		&p.Quantity, &p.CategoryID, &p.Attributes, &p.Images, &p.MediaURLs, &p.CreatedAt, &p.UpdatedAt, &p.Handle, &p.Kind, &p.TaxClass}
}

// productEvent is the data of product.* events (docs/webhooks.md).
type productEvent struct {
	StoreID   uuid.UUID `json:"store_id"`
	ProductID uuid.UUID `json:"product_id"`
	SKU       *string   `json:"sku"`
	UpdatedAt string    `json:"updated_at"`
}

func (tx *Tx) emitProduct(ctx context.Context, event string, p Product) error {
	return tx.emit(ctx, p.StoreID, event, productEvent{
		StoreID: p.StoreID, ProductID: p.ID, SKU: p.SKU, UpdatedAt: p.UpdatedAt.Format(time.RFC3339Nano),
	})
}

// FindProductByID returns one product of the store.
func (r reader) FindProductByID(ctx context.Context, storeID, id uuid.UUID) (Product, error) {
	p, err := scanProduct(r.q.QueryRow(ctx, `SELECT `+productColumns+` FROM products WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Product{}, notFoundIfNoRows(err, "find product "+id.String())
	}
	return p, nil
}

// ProductListQuery builds the SQL of a product page and of its total count.
// It is exported so the benchmark's bare baseline runs exactly the same SQL.
func ProductListQuery(storeID uuid.UUID, f ProductFilter) (page sq.SelectBuilder, count sq.SelectBuilder) {
	where := sq.And{sq.Eq{"store_id": storeID}}
	if f.CategoryID != nil {
		where = append(where, sq.Eq{"category_id": *f.CategoryID})
	}
	if f.Status != nil {
		where = append(where, sq.Eq{"status": *f.Status})
	}
	if f.Search != nil {
		pattern := "%" + escapeLike(*f.Search) + "%"
		where = append(where, sq.Or{sq.ILike{"name": pattern}, sq.ILike{"description": pattern}, sq.ILike{"sku": pattern}})
	}
	if f.SKU != nil {
		pattern := "%" + escapeLike(*f.SKU) + "%"
		where = append(where, sq.Or{
			sq.ILike{"sku": pattern},
			sq.Expr(`EXISTS (SELECT 1 FROM variants v WHERE v.store_id = products.store_id AND v.product_id = products.id AND v.sku ILIKE ?)`, pattern),
		})
	}
	if f.PriceMin != nil {
		where = append(where, sq.GtOrEq{"price": *f.PriceMin})
	}
	if f.PriceMax != nil {
		where = append(where, sq.LtOrEq{"price": *f.PriceMax})
	}
	if f.HasCost != nil {
		if *f.HasCost {
			where = append(where, sq.NotEq{"cost_price": nil})
		} else {
			where = append(where, sq.Eq{"cost_price": nil})
		}
	}
	sortBy := f.SortBy
	if sortBy == "" {
		sortBy = "created_at"
	}
	direction := "ASC"
	if f.Descending {
		direction = "DESC"
	}
	page = psql.Select(productColumns).From("products").Where(where).
		OrderBy(sortBy+" "+direction, "id "+direction).
		Limit(uint64(f.Page.Limit)).Offset(f.Page.Offset())
	count = psql.Select("count(*)").From("products").Where(where)
	return page, count
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// FindProducts returns one page of the store's products and the total that match.
func (r reader) FindProducts(ctx context.Context, storeID uuid.UUID, f ProductFilter) ([]Product, int, error) {
	pageQuery, countQuery := ProductListQuery(storeID, f)
	pageSQL, pageArgs, err := pageQuery.ToSql()
	if err != nil {
		return nil, 0, fmt.Errorf("find products: %w", err)
	}
	countSQL, countArgs, err := countQuery.ToSql()
	if err != nil {
		return nil, 0, fmt.Errorf("find products: %w", err)
	}
	rows, err := r.q.Query(ctx, pageSQL, pageArgs...)
	if err != nil {
		return nil, 0, fmt.Errorf("find products: %w", err)
	}
	products, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Product, error) { return scanProduct(row) })
	if err != nil {
		return nil, 0, fmt.Errorf("find products: %w", err)
	}
	var total int
	switch {
	case len(products) < f.Page.Limit && (len(products) > 0 || f.Page.Page == 1):
		// A short page tells the total without counting.
		total = int(f.Page.Offset()) + len(products)
	case f.countedByStatus():
		// The kept counts (migration 0071): counting the rows grew with
		// the catalog (issue 59).
		err = r.q.QueryRow(ctx, productTotalQuery, storeID, f.Status).Scan(&total)
	default:
		err = r.q.QueryRow(ctx, countSQL, countArgs...).Scan(&total)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("count products: %w", err)
	}
	return products, total, nil
}

// countedByStatus reports a filter whose total the kept per-status counts
// answer: none, or a status alone (its order and page change no total).
func (f ProductFilter) countedByStatus() bool {
	f.Status, f.SortBy, f.Descending, f.Page = nil, "", false, Page{}
	return f == ProductFilter{}
}

const productTotalQuery = `SELECT COALESCE(sum(n), 0) FROM product_status_counts WHERE store_id = $1 AND ($2::text IS NULL OR status = $2)`

// ProductTotalStatement is the statement a product list with no filter
// but status reads its total with; the growth benchmark EXPLAINs it.
func ProductTotalStatement(storeID uuid.UUID, status *string) Statement {
	return Statement{Name: "The catalog list's kept total", SQL: productTotalQuery, Args: []any{storeID, status}}
}

// checkSKUFree refuses a SKU already used in the store by another owner.
func (tx *Tx) checkSKUFree(ctx context.Context, storeID uuid.UUID, sku string, ownerID uuid.UUID) error {
	var owner uuid.UUID
	err := tx.tx.QueryRow(ctx, `SELECT owner_id FROM skus WHERE store_id = $1 AND sku = $2`, storeID, sku).Scan(&owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("check sku: %w", err)
	case owner == ownerID:
		return nil
	default:
		return fmt.Errorf("sku %q: %w", sku, ErrDuplicateSKU)
	}
}

// claimSKU moves ownerID's SKU from old to new within the store's namespace.
// The check runs before any write; the primary key catches a concurrent claim.
func (tx *Tx) claimSKU(ctx context.Context, storeID uuid.UUID, kind string, ownerID uuid.UUID, old, new *string) error {
	if new != nil {
		if err := tx.checkSKUFree(ctx, storeID, *new, ownerID); err != nil {
			return err
		}
	}
	if old != nil {
		if _, err := tx.tx.Exec(ctx, `DELETE FROM skus WHERE store_id = $1 AND sku = $2 AND owner_id = $3`, storeID, *old, ownerID); err != nil {
			return fmt.Errorf("release sku: %w", err)
		}
	}
	if new != nil {
		_, err := tx.tx.Exec(ctx, `INSERT INTO skus (store_id, sku, owner_kind, owner_id) VALUES ($1, $2, $3, $4)`, storeID, *new, kind, ownerID)
		if isUniqueViolation(err, "skus_pkey") {
			return fmt.Errorf("sku %q: %w", *new, ErrDuplicateSKU)
		}
		if err != nil {
			return fmt.Errorf("claim sku: %w", err)
		}
	}
	return nil
}

func categoryRefError(err error) error {
	if isForeignKeyViolation(err) {
		return &InvalidError{Field: "category_id", Code: "not_found", Message: "category does not exist in this store"}
	}
	return err
}

// CreateProduct adds a product and writes product.created.
func (tx *Tx) CreateProduct(ctx context.Context, p *Product) error {
	p.ID = NewID()
	now := tx.now()
	p.CreatedAt, p.UpdatedAt = now, now
	if p.Status == "" {
		p.Status = "active"
	}
	if p.Kind == "" {
		p.Kind = ProductKindStandard
	}
	if err := checkGiftCardValue(p.Kind, p.Price, p.Value, "value"); err != nil {
		return err
	}
	if len(p.Attributes) == 0 {
		p.Attributes = json.RawMessage(`{}`)
	}
	if p.TaxClass == "" {
		p.TaxClass = TaxClassStandard
	}
	p.Images, p.MediaURLs = json.RawMessage(`[]`), json.RawMessage(`{}`)
	if err := tx.claimSKU(ctx, p.StoreID, "product", p.ID, nil, p.SKU); err != nil {
		return err
	}
	if p.Handle == "" {
		free, err := tx.freeHandles(ctx, "products", p.StoreID, []string{productStem(p.Name)})
		if err != nil {
			return err
		}
		p.Handle = free[0]
	}
	_, err := tx.tx.Exec(ctx, `INSERT INTO products (`+productInsertColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		p.ID, p.StoreID, p.Name, p.Description, p.SKU, p.Price, p.CostPrice, p.Status, p.CategoryID,
		p.Attributes, p.Images, p.MediaURLs, p.CreatedAt, p.UpdatedAt, p.Handle, p.Kind, p.TaxClass)
	if isUniqueViolation(err, "products_store_handle_key") {
		return fmt.Errorf("product handle %q: %w", p.Handle, ErrDuplicateHandle)
	}
	if err != nil {
		return fmt.Errorf("create product: %w", categoryRefError(err))
	}
	if err := tx.createDefaultVariant(ctx, *p); err != nil {
		return err
	}
	if err := tx.syncSmartMembership(ctx, p.StoreID, p.ID); err != nil {
		return err
	}
	return tx.emitProduct(ctx, EventProductCreated, *p)
}

// UpdateProduct applies a partial update and writes product.updated.
// media_urls is never touched here, so alt text survives every update.
func (tx *Tx) UpdateProduct(ctx context.Context, storeID, id uuid.UUID, upd ProductUpdate) (Product, error) {
	p, err := scanProduct(tx.tx.QueryRow(ctx, `SELECT `+productColumns+` FROM products WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Product{}, notFoundIfNoRows(err, "update product "+id.String())
	}
	if upd.SKU.Set {
		newSKU := upd.SKU.ptr()
		if err := tx.claimSKU(ctx, storeID, "product", id, p.SKU, newSKU); err != nil {
			return Product{}, err
		}
		p.SKU = newSKU
	}
	if upd.Name != nil {
		p.Name = *upd.Name
	}
	oldHandle := p.Handle
	if upd.Handle != nil {
		p.Handle = *upd.Handle
	}
	if upd.Description != nil {
		p.Description = *upd.Description
	}
	if upd.Price != nil {
		p.Price = *upd.Price
	}
	if upd.CostPrice.Set {
		p.CostPrice = upd.CostPrice.ptr()
	}
	if upd.Status != nil {
		p.Status = *upd.Status
	}
	if upd.CategoryID.Set {
		p.CategoryID = upd.CategoryID.ptr()
	}
	if upd.Attributes != nil {
		p.Attributes = upd.Attributes
	}
	if upd.TaxClass != nil {
		p.TaxClass = *upd.TaxClass
	}
	p.UpdatedAt = tx.now()
	_, err = tx.tx.Exec(ctx, `UPDATE products SET name = $3, description = $4, sku = $5, price = $6, cost_price = $7,
		status = $8, category_id = $9, attributes = $10, updated_at = $11, handle = $12, tax_class = $13
		WHERE store_id = $1 AND id = $2`,
		storeID, id, p.Name, p.Description, p.SKU, p.Price, p.CostPrice, p.Status, p.CategoryID, p.Attributes, p.UpdatedAt, p.Handle, p.TaxClass)
	if isUniqueViolation(err, "products_store_handle_key") {
		return Product{}, fmt.Errorf("product handle %q: %w", p.Handle, ErrDuplicateHandle)
	}
	if err != nil {
		return Product{}, fmt.Errorf("update product: %w", categoryRefError(err))
	}
	if p.Handle != oldHandle {
		// The old address keeps working (decisions §23: renamed ones 301).
		if err := tx.redirectRenamed(ctx, storeID, "/products/"+oldHandle, "/products/"+p.Handle); err != nil {
			return Product{}, err
		}
	}
	if p.Quantity, err = tx.followDefaultVariant(ctx, p, upd); err != nil {
		return Product{}, err
	}
	if err := tx.syncSmartMembership(ctx, storeID, id); err != nil {
		return Product{}, err
	}
	return p, tx.emitProduct(ctx, EventProductUpdated, p)
}

// DeleteProduct removes a product with its variants and SKUs and writes product.deleted.
func (tx *Tx) DeleteProduct(ctx context.Context, storeID, id uuid.UUID) (Product, error) {
	// The product leaves its collections under the membership lock, so no
	// rebuild running now adds it back.
	if err := tx.lockSmartMembership(ctx, storeID, false); err != nil {
		return Product{}, err
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM collection_products WHERE store_id = $1 AND product_id = $2`, storeID, id); err != nil {
		return Product{}, fmt.Errorf("remove product from collections: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM skus WHERE store_id = $1 AND
		(owner_id = $2 OR owner_id IN (SELECT id FROM variants WHERE store_id = $1 AND product_id = $2))`,
		storeID, id); err != nil {
		return Product{}, fmt.Errorf("release product skus: %w", err)
	}
	var reserved bool
	if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM inventory_levels WHERE store_id = $1 AND product_id = $2 AND reserved > 0)`,
		storeID, id).Scan(&reserved); err != nil {
		return Product{}, fmt.Errorf("check reservations: %w", err)
	}
	if reserved {
		return Product{}, fmt.Errorf("delete product %s: %w", id, ErrVariantInUse)
	}
	// Variants and their levels go with the product (ON DELETE CASCADE).
	p, err := scanProduct(tx.tx.QueryRow(ctx, `DELETE FROM products WHERE store_id = $1 AND id = $2 RETURNING `+productColumns, storeID, id))
	if isForeignKeyViolation(err) { // a variant is in an open cart
		return Product{}, fmt.Errorf("delete product %s: %w", id, ErrVariantInUse)
	}
	if err != nil {
		return Product{}, notFoundIfNoRows(err, "delete product "+id.String())
	}
	p.UpdatedAt = tx.now()
	return p, tx.emitProduct(ctx, EventProductDeleted, p)
}

// touchProduct bumps a product's updated_at after a change to its variants and
// writes product.updated, as Shopify does for variant changes.
func (tx *Tx) touchProduct(ctx context.Context, storeID, productID uuid.UUID) error {
	p, err := scanProduct(tx.tx.QueryRow(ctx, `UPDATE products SET updated_at = $3 WHERE store_id = $1 AND id = $2 RETURNING `+productColumns,
		storeID, productID, tx.now()))
	if err != nil {
		return notFoundIfNoRows(err, "touch product")
	}
	// A variant's price, SKU or stock feeds smart collections' rules.
	if err := tx.syncSmartMembership(ctx, storeID, productID); err != nil {
		return err
	}
	return tx.emitProduct(ctx, EventProductUpdated, p)
}

// productStem is the handle a product's name makes (decisions §23), before
// a number keeps it unique: "product" when nothing of the name is usable.
func productStem(name string) string {
	if stem := handle.FromTitle(name); stem != "" {
		return stem
	}
	return "product"
}
