package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// ImportStatus is where a CSV import is.
type ImportStatus string

// Import statuses.
const (
	ImportRunning   ImportStatus = "running"
	ImportSucceeded ImportStatus = "succeeded"
	ImportFailed    ImportStatus = "failed"
)

// maxStoredRowErrors caps the errors kept for one import; counts stay exact.
const maxStoredRowErrors = 1000

// ProductImport is one CSV import and its progress.
type ProductImport struct {
	ID            uuid.UUID
	StoreID       uuid.UUID
	Status        ImportStatus
	DryRun        bool
	ObjectKey     string
	TotalRows     int
	ProcessedRows int
	Created       int
	Updated       int
	Unchanged     int
	Failed        int
	// BatchSize is fixed by the first attempt (0 until then).
	BatchSize  int
	Errors     []RowError
	Error      *string
	CreatedAt  time.Time
	FinishedAt *time.Time
}

// ImportKey is where an import's file is kept.
func ImportKey(storeID, importID uuid.UUID) string {
	return fmt.Sprintf("stores/%s/imports/%s.csv", storeID, importID)
}

// CreateImport records a new import.
func (tx *Tx) CreateImport(ctx context.Context, imp *ProductImport) error {
	if imp.ID == uuid.Nil { // the caller may name it to store the file first
		imp.ID = NewID()
	}
	imp.Status = ImportRunning
	imp.ObjectKey = ImportKey(imp.StoreID, imp.ID)
	imp.CreatedAt = tx.now()
	imp.Errors = []RowError{}
	_, err := tx.tx.Exec(ctx, `INSERT INTO product_imports (id, store_id, status, dry_run, object_key, total_rows, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, imp.ID, imp.StoreID, imp.Status, imp.DryRun, imp.ObjectKey, imp.TotalRows, imp.CreatedAt)
	if err != nil {
		return fmt.Errorf("create import: %w", err)
	}
	return nil
}

// FindImport returns one import of the store.
func (r reader) FindImport(ctx context.Context, storeID, id uuid.UUID) (ProductImport, error) {
	var (
		imp    ProductImport
		errors []byte
	)
	err := r.q.QueryRow(ctx, `SELECT id, store_id, status, dry_run, object_key, total_rows, processed_rows, created, updated,
			unchanged, failed, batch_size, errors, error, created_at, finished_at
		FROM product_imports WHERE store_id = $1 AND id = $2`, storeID, id).
		Scan(&imp.ID, &imp.StoreID, &imp.Status, &imp.DryRun, &imp.ObjectKey, &imp.TotalRows, &imp.ProcessedRows, &imp.Created,
			&imp.Updated, &imp.Unchanged, &imp.Failed, &imp.BatchSize, &errors, &imp.Error, &imp.CreatedAt, &imp.FinishedAt)
	if err != nil {
		return ProductImport{}, notFoundIfNoRows(err, "find import "+id.String())
	}
	if err := json.Unmarshal(errors, &imp.Errors); err != nil {
		return ProductImport{}, fmt.Errorf("read import errors: %w", err)
	}
	return imp, nil
}

// ApplyImportBatch creates products for unknown SKUs and updates matching
// ones, in one transaction that also records the batch in
// product_import_batches and adds to the import's progress. A batch already
// recorded (a retried or resumed activity) is skipped: every row is applied
// exactly once, and different batches may be applied concurrently.
// Counts are of rows: in the products format a row is a product, in the
// variants format a variant.
func (db *DB) ApplyImportBatch(ctx context.Context, storeID, importID uuid.UUID, b ImportBatch) error {
	return db.InTx(ctx, func(tx *Tx) error {
		var dryRun bool
		err := tx.tx.QueryRow(ctx, `SELECT dry_run FROM product_imports WHERE store_id = $1 AND id = $2`, storeID, importID).Scan(&dryRun)
		if err != nil {
			return notFoundIfNoRows(err, "find import")
		}
		tag, err := tx.tx.Exec(ctx, `INSERT INTO product_import_batches (import_id, start_row) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
			importID, b.Start)
		if err != nil {
			return fmt.Errorf("record import batch: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil // applied before
		}
		// The tables grow fast during an import; a generic plan made when
		// they were small (a sequential scan against 1000 SKUs) turns each
		// batch quadratic. Plan every statement with its real arguments.
		if _, err := tx.tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_custom_plan`); err != nil {
			return fmt.Errorf("set plan mode: %w", err)
		}
		rowErrs := b.Errors
		products, errs, err := tx.checkImportRefs(ctx, storeID, b.Products)
		if err != nil {
			return err
		}
		rowErrs = append(rowErrs, errs...)
		plan, errs, err := tx.planImport(ctx, storeID, products)
		if err != nil {
			return err
		}
		rowErrs = append(rowErrs, errs...)
		var stock []levelChange
		plan.updates, stock, errs, err = tx.planImportStock(ctx, storeID, plan.updates)
		if err != nil {
			return err
		}
		rowErrs = append(rowErrs, errs...)
		if !dryRun {
			if err := tx.insertProducts(ctx, plan.creates); err != nil {
				return err
			}
			if err := tx.updateProducts(ctx, plan.updates); err != nil {
				return err
			}
			if _, err := tx.writeLevelChanges(ctx, storeID, stock, movementSource{reason: ReasonCorrection, note: "CSV import",
				actor: tx.movementActor()}); err != nil {
				return err
			}
		}
		// Variant rows of products that exist go one at a time, each in a
		// savepoint; a dry run undoes them all.
		outcome, errs, err := tx.applyVariantRows(ctx, plan.existing, !dryRun)
		if err != nil {
			return err
		}
		rowErrs = append(rowErrs, errs...)
		if !dryRun {
			created := make([]Product, len(plan.creates))
			for i, c := range plan.creates {
				created[i] = c.product
			}
			if err := tx.syncImportedMembership(ctx, storeID, created, updatedProducts(plan.updates), outcome.changed); err != nil {
				return err
			}
			if err := tx.emitProducts(ctx, EventProductCreated, created); err != nil {
				return err
			}
			if err := tx.emitProducts(ctx, EventProductUpdated, append(updatedProducts(plan.updates), outcome.changed...)); err != nil {
				return err
			}
		}
		if rowErrs == nil {
			rowErrs = []RowError{} // not JSON null, which || would append as an element
		}
		failedRows := map[int]bool{}
		for _, e := range rowErrs {
			failedRows[e.Row] = true
		}
		errJSON, err := json.Marshal(rowErrs)
		if err != nil {
			return err
		}
		_, err = tx.tx.Exec(ctx, `UPDATE product_imports SET processed_rows = processed_rows + $3, created = created + $4, updated = updated + $5,
				unchanged = unchanged + $6, failed = failed + $7,
				errors = CASE WHEN jsonb_array_length(errors) >= $9 THEN errors
				              ELSE (SELECT COALESCE(jsonb_agg(e), '[]') FROM (SELECT e FROM jsonb_array_elements(errors || $8::jsonb) e LIMIT $9) x) END
			WHERE store_id = $1 AND id = $2`,
			storeID, importID, b.Count, plan.createdRows+outcome.created, len(plan.updates)+outcome.updated,
			plan.unchanged+outcome.unchanged, len(failedRows), errJSON, maxStoredRowErrors)
		if err != nil {
			return fmt.Errorf("record import progress: %w", err)
		}
		return nil
	})
}

// failProduct reports e on a product's first row and its later rows as
// not imported because of it.
func failProduct(p ImportProduct, e RowError) []RowError {
	errs := []RowError{e}
	for _, r := range p.Rows()[1:] {
		errs = append(errs, RowError{Row: r.Row, Column: "sku", Code: "product_row_invalid",
			Message: fmt.Sprintf("the product's first row (row %d) has errors, so its variants are not imported", p.Row)})
	}
	return errs
}

// checkImportRefs refuses products whose category is not one of the store's.
func (tx *Tx) checkImportRefs(ctx context.Context, storeID uuid.UUID, products []ImportProduct) ([]ImportProduct, []RowError, error) {
	var ids []uuid.UUID
	for _, p := range products {
		if p.CategoryID != nil {
			ids = append(ids, *p.CategoryID)
		}
	}
	if len(ids) == 0 {
		return products, nil, nil
	}
	catRows, err := tx.tx.Query(ctx, `SELECT id FROM categories WHERE store_id = $1 AND id = ANY ($2)`, storeID, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("check import categories: %w", err)
	}
	found, err := pgx.CollectRows(catRows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, nil, fmt.Errorf("check import categories: %w", err)
	}
	known := map[uuid.UUID]bool{}
	for _, id := range found {
		known[id] = true
	}
	var (
		keep []ImportProduct
		errs []RowError
	)
	for _, p := range products {
		if p.CategoryID != nil && !known[*p.CategoryID] {
			errs = append(errs, failProduct(p, RowError{Row: p.Row, Column: "category_id", Code: "not_found", Message: "no such category in this store"})...)
			continue
		}
		keep = append(keep, p)
	}
	return keep, errs, nil
}

// importPlan is what a batch does: products to create with their
// variants, products-format rows that update products, and variants-format
// products that exist, applied row by row.
type importPlan struct {
	creates     []importCreate
	createdRows int
	updates     []importUpdate
	existing    []existingImport
	unchanged   int
}

// importCreate is a new product with its variants (its default one in the
// products format).
type importCreate struct {
	product  Product
	variants []Variant
}

// existingImport is a product that exists and the variants-format rows
// that name it.
type existingImport struct {
	before, after Product
	rows          []ImportRow
}

// importUpdate is a product a products-format row changes.
type importUpdate struct {
	row           ImportRow
	before, after Product
}

// planImport sorts products into ones to create and ones to update,
// counting rows that would change nothing and refusing SKUs owned
// elsewhere in the store. It locks the existing products.
func (tx *Tx) planImport(ctx context.Context, storeID uuid.UUID, products []ImportProduct) (importPlan, []RowError, error) {
	var (
		plan importPlan
		errs []RowError
		skus []string
	)
	for _, p := range products {
		skus = append(skus, p.SKU)
		for _, r := range p.Variants {
			if r.VariantSKU != nil {
				skus = append(skus, *r.VariantSKU)
			}
		}
	}
	type owner struct {
		kind string
		id   uuid.UUID
	}
	owners := map[string]owner{}
	ownerRows, err := tx.tx.Query(ctx, `SELECT sku, owner_kind, owner_id FROM skus WHERE store_id = $1 AND sku = ANY ($2)`, storeID, skus)
	if err != nil {
		return plan, nil, fmt.Errorf("find import skus: %w", err)
	}
	var productIDs []uuid.UUID
	for ownerRows.Next() {
		var (
			sku string
			o   owner
		)
		if err := ownerRows.Scan(&sku, &o.kind, &o.id); err != nil {
			ownerRows.Close()
			return plan, nil, fmt.Errorf("find import skus: %w", err)
		}
		owners[sku] = o
		if o.kind == "product" {
			productIDs = append(productIDs, o.id)
		}
	}
	ownerRows.Close()
	existing := map[uuid.UUID]Product{}
	if len(productIDs) > 0 {
		prodRows, err := tx.tx.Query(ctx, `SELECT `+productColumns+` FROM products WHERE store_id = $1 AND id = ANY ($2) ORDER BY id FOR UPDATE`,
			storeID, productIDs)
		if err != nil {
			return plan, nil, fmt.Errorf("load import products: %w", err)
		}
		list, err := pgx.CollectRows(prodRows, func(row pgx.CollectableRow) (Product, error) { return scanProduct(row) })
		if err != nil {
			return plan, nil, fmt.Errorf("load import products: %w", err)
		}
		for _, p := range list {
			existing[p.ID] = p
		}
	}
	now := tx.now()
	for _, ip := range products {
		o, owned := owners[ip.SKU]
		switch {
		case owned && o.kind == "variant":
			errs = append(errs, failProduct(ip, RowError{Row: ip.Row, Column: "sku", Code: "sku_in_use",
				Message: "the SKU belongs to a variant in this store"})...)
		case owned:
			before := existing[o.id]
			after := applyImport(ip, before)
			after.UpdatedAt = now
			switch {
			case ip.Variants != nil: // applied row by row, each row counted
				plan.existing = append(plan.existing, existingImport{before: before, after: after, rows: ip.Variants})
			case after.sameAs(before):
				plan.unchanged++
			default:
				plan.updates = append(plan.updates, importUpdate{row: ip.ImportRow, before: before, after: after})
			}
		default:
			sku := ip.SKU
			p := applyImport(ip, Product{ID: NewID(), StoreID: storeID, SKU: &sku, Status: "active",
				Attributes: json.RawMessage(`{}`), Images: json.RawMessage(`[]`), MediaURLs: json.RawMessage(`{}`), CreatedAt: now})
			p.UpdatedAt = now
			c, rowErrs := newImportCreate(p, ip, func(sku string) bool { _, taken := owners[sku]; return taken })
			errs = append(errs, rowErrs...)
			if len(c.variants) > 0 {
				plan.creates = append(plan.creates, c)
				plan.createdRows += len(c.variants)
			}
		}
	}
	return plan, errs, nil
}

// newImportCreate gives a new product its variants: the default one for a
// products-format row or a variants-format row without options, else one
// per row. A row whose variant SKU is taken fails; on the first row, the
// whole product does.
func newImportCreate(p Product, ip ImportProduct, taken func(sku string) bool) (importCreate, []RowError) {
	c := importCreate{product: p}
	if ip.Variants == nil {
		c.variants = []Variant{{ID: NewID(), StoreID: p.StoreID, ProductID: p.ID, Price: p.Price, CostPrice: p.CostPrice,
			Quantity: ip.Quantity, Options: json.RawMessage(`{}`), Position: 1, IsDefault: true, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}}
		return c, nil
	}
	var errs []RowError
	for i, r := range ip.Variants {
		if r.VariantSKU != nil && taken(*r.VariantSKU) {
			e := RowError{Row: r.Row, Column: "variant_sku", Code: "sku_in_use", Message: "the SKU belongs to another product or variant in this store"}
			if i == 0 {
				return importCreate{}, failProduct(ip, e)
			}
			errs = append(errs, e)
			continue
		}
		price, cost := variantPrices(p, r)
		v := Variant{ID: NewID(), StoreID: p.StoreID, ProductID: p.ID, SKU: r.VariantSKU, Barcode: r.Barcode, Price: price,
			CostPrice: cost, Quantity: r.Quantity, Options: r.OptionsJSON(), Position: len(c.variants) + 1,
			IsDefault: !r.HasOptions(), WeightGrams: r.WeightGrams, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
		c.variants = append(c.variants, v)
	}
	return c, errs
}

// planImportStock turns the quantity of updated rows into corrections of
// their default variants at the default location (decisions §11). A
// product with real variants, or stocked at another location, refuses the
// row. The products are locked; this locks their variants, then levels.
func (tx *Tx) planImportStock(ctx context.Context, storeID uuid.UUID, updates []importUpdate) ([]importUpdate, []levelChange, []RowError, error) {
	var productIDs []uuid.UUID
	for _, u := range updates {
		if u.row.Has["quantity"] && u.after.Quantity != u.before.Quantity {
			productIDs = append(productIDs, u.after.ID)
		}
	}
	if len(productIDs) == 0 {
		return updates, nil, nil, nil
	}
	rows, err := tx.tx.Query(ctx, `SELECT product_id, id, is_default FROM variants WHERE store_id = $1 AND product_id = ANY ($2)
		ORDER BY id FOR UPDATE`, storeID, productIDs)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("lock import variants: %w", err)
	}
	defaultOf, managed := map[uuid.UUID]uuid.UUID{}, map[uuid.UUID]bool{}
	var variantIDs []uuid.UUID
	for rows.Next() {
		var (
			productID, id uuid.UUID
			isDefault     bool
		)
		if err := rows.Scan(&productID, &id, &isDefault); err != nil {
			rows.Close()
			return nil, nil, nil, fmt.Errorf("lock import variants: %w", err)
		}
		if isDefault {
			defaultOf[productID] = id
			variantIDs = append(variantIDs, id)
		} else {
			managed[productID] = true
		}
	}
	rows.Close()
	levels, err := tx.lockLevels(ctx, storeID, variantIDs)
	if err != nil {
		return nil, nil, nil, err
	}
	defaultID, err := tx.defaultLocationID(ctx, storeID)
	if err != nil {
		return nil, nil, nil, err
	}
	atDefault, elsewhere := map[uuid.UUID]lockedLevel{}, map[uuid.UUID]bool{}
	for _, l := range levels {
		if l.LocationID == defaultID {
			atDefault[l.VariantID] = l
		} else if l.OnHand > 0 {
			elsewhere[l.VariantID] = true
		}
	}
	var (
		keep    []importUpdate
		changes []levelChange
		errs    []RowError
	)
	for _, u := range updates {
		if !u.row.Has["quantity"] || u.after.Quantity == u.before.Quantity {
			keep = append(keep, u)
			continue
		}
		variantID, ok := defaultOf[u.after.ID]
		switch {
		case managed[u.after.ID] || !ok:
			errs = append(errs, RowError{Row: u.row.Row, Column: "quantity", Code: "managed_by_variants",
				Message: "the product has variants; give each variant's quantity on its own row"})
			continue
		case elsewhere[variantID]:
			errs = append(errs, RowError{Row: u.row.Row, Column: "quantity", Code: "multiple_locations",
				Message: "the product is stocked at more than one location; use /inventory/adjustments"})
			continue
		}
		l := atDefault[variantID]
		changes = append(changes, levelChange{variantID: variantID, locationID: defaultID, onHand: u.after.Quantity + l.Reserved - l.OnHand})
		keep = append(keep, u)
	}
	return keep, changes, errs, nil
}

// applyImport writes the import product's columns onto p; columns the file
// lacks stay as they are. In the variants format quantity is each
// variant's, not the product's.
func applyImport(ip ImportProduct, p Product) Product {
	r := ip.ImportRow
	p.Name, p.Price = r.Name, r.Price
	if r.Has["description"] {
		p.Description = r.Description
	}
	if r.Has["status"] {
		p.Status = r.Status
	}
	if r.Has["cost_price"] {
		p.CostPrice = r.CostPrice
	}
	if r.Has["quantity"] && ip.Variants == nil {
		p.Quantity = r.Quantity
	}
	if r.Has["category_id"] {
		p.CategoryID = r.CategoryID
	}
	return p
}

func (p Product) sameAs(o Product) bool {
	return p.Name == o.Name && p.Description == o.Description && p.Status == o.Status && p.Price == o.Price &&
		equalPtr(p.CostPrice, o.CostPrice) && p.Quantity == o.Quantity && equalPtr(p.CategoryID, o.CategoryID)
}

// insertProducts writes new products and their variants, each variant
// holding its quantity at the default location (a correction in the
// ledger), and claims their SKUs, all with COPY, the fastest way into
// Postgres, inside the batch's transaction.
func (tx *Tx) insertProducts(ctx context.Context, cs []importCreate) error {
	if len(cs) == 0 {
		return nil
	}
	storeID := cs[0].product.StoreID
	defaultID, err := tx.defaultLocationID(ctx, storeID)
	if err != nil {
		return err
	}
	actor := tx.movementActor()
	stems := make([]string, len(cs))
	for i, c := range cs {
		stems[i] = productStem(c.product.Name)
	}
	handles, err := tx.freeHandles(ctx, "products", storeID, stems)
	if err != nil {
		return err
	}
	var productRows, skuRows, variantRows, levelRows, movementRows [][]any
	for i, c := range cs {
		p := c.product
		productRows = append(productRows, []any{p.ID, p.StoreID, p.Name, p.Description, *p.SKU, p.Price, p.CostPrice, p.Status,
			p.CategoryID, p.Attributes, p.Images, p.MediaURLs, p.CreatedAt, p.UpdatedAt, handles[i]})
		skuRows = append(skuRows, []any{p.StoreID, *p.SKU, "product", p.ID})
		for _, v := range c.variants {
			quantity := int32(v.Quantity)
			variantRows = append(variantRows, []any{v.ID, v.StoreID, v.ProductID, v.SKU, v.Barcode, v.Price, v.CostPrice, quantity,
				[]byte(v.Options), int32(v.Position), v.IsDefault, v.WeightGrams, v.CreatedAt, v.UpdatedAt})
			levelRows = append(levelRows, []any{v.StoreID, v.ID, defaultID, p.ID, quantity, int32(0), v.UpdatedAt})
			if quantity > 0 {
				movementRows = append(movementRows, []any{NewID(), v.StoreID, v.ID, defaultID, ReasonCorrection, quantity, int32(0),
					quantity, int32(0), "CSV import", actor.Type, actor.ID, v.UpdatedAt})
			}
			if v.SKU != nil {
				skuRows = append(skuRows, []any{v.StoreID, *v.SKU, "variant", v.ID})
			}
		}
	}
	copies := []struct {
		table   string
		columns []string
		rows    [][]any
	}{
		{"products", []string{"id", "store_id", "name", "description", "sku", "price", "cost_price", "status", "category_id",
			"attributes", "images", "media_urls", "created_at", "updated_at", "handle"}, productRows},
		{"variants", []string{"id", "store_id", "product_id", "sku", "barcode", "price", "cost_price", "quantity", "options", "position",
			"is_default", "weight_grams", "created_at", "updated_at"}, variantRows},
		{"inventory_levels", []string{"store_id", "variant_id", "location_id", "product_id", "on_hand", "reserved", "updated_at"}, levelRows},
		{"inventory_movements", []string{"id", "store_id", "variant_id", "location_id", "reason", "on_hand_delta", "reserved_delta",
			"on_hand_after", "reserved_after", "note", "actor_type", "actor_id", "created_at"}, movementRows},
	}
	for _, c := range copies {
		if len(c.rows) == 0 {
			continue
		}
		if _, err := tx.tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.columns, pgx.CopyFromRows(c.rows)); err != nil {
			return fmt.Errorf("insert imported %s: %w", c.table, err)
		}
	}
	_, err = tx.tx.CopyFrom(ctx, pgx.Identifier{"skus"}, []string{"store_id", "sku", "owner_kind", "owner_id"}, pgx.CopyFromRows(skuRows))
	if isUniqueViolation(err, "skus_pkey") {
		return fmt.Errorf("claim imported skus: %w", ErrDuplicateSKU)
	}
	if err != nil {
		return fmt.Errorf("claim imported skus: %w", err)
	}
	return nil
}

func (tx *Tx) updateProducts(ctx context.Context, us []importUpdate) error {
	if len(us) == 0 {
		return nil
	}
	n := len(us)
	ids, names, descs, statuses := make([]uuid.UUID, n), make([]string, n), make([]string, n), make([]string, n)
	prices, costs, cats := make([]int64, n), make([]*int64, n), make([]*uuid.UUID, n)
	for i, u := range us {
		p := u.after
		ids[i], names[i], descs[i], statuses[i] = p.ID, p.Name, p.Description, p.Status
		prices[i], costs[i], cats[i] = p.Price, p.CostPrice, p.CategoryID
	}
	_, err := tx.tx.Exec(ctx, `WITH u AS (
			SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::uuid[])
				AS u(id, name, description, price, cost_price, status, category_id)
		), p AS (
			UPDATE products p SET name = u.name, description = u.description, price = u.price, cost_price = u.cost_price,
				status = u.status, category_id = u.category_id, updated_at = $9
			FROM u WHERE p.store_id = $1 AND p.id = u.id
		)
		UPDATE variants v SET price = u.price, cost_price = u.cost_price, updated_at = $9
		FROM u WHERE v.store_id = $1 AND v.product_id = u.id AND v.is_default`,
		us[0].after.StoreID, ids, names, descs, prices, costs, statuses, cats, us[0].after.UpdatedAt)
	if err != nil {
		return fmt.Errorf("update imported products: %w", err)
	}
	return nil
}

func updatedProducts(us []importUpdate) []Product {
	ps := make([]Product, len(us))
	for i, u := range us {
		ps[i] = u.after
	}
	return ps
}

// emitProducts writes one outbox row per product with COPY, then wakes the
// dispatcher once.
func (tx *Tx) emitProducts(ctx context.Context, event string, ps []Product) error {
	if len(ps) == 0 {
		return nil
	}
	now := tx.now()
	rows := make([][]any, len(ps))
	for i, p := range ps {
		body, err := json.Marshal(eventBody{Event: event, Timestamp: now.Format(time.RFC3339), Data: productEvent{
			StoreID: p.StoreID, ProductID: p.ID, SKU: p.SKU, UpdatedAt: p.UpdatedAt.Format(time.RFC3339Nano)}})
		if err != nil {
			return err
		}
		rows[i] = []any{NewID(), p.StoreID, event, body, now}
	}
	if _, err := tx.tx.CopyFrom(ctx, pgx.Identifier{"outbox"}, []string{"id", "store_id", "event", "body", "created_at"},
		pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("write %s events: %w", event, err)
	}
	if _, err := tx.tx.Exec(ctx, `SELECT pg_notify('`+OutboxChannel+`', '')`); err != nil {
		return fmt.Errorf("notify outbox: %w", err)
	}
	return nil
}

// StartImport records the file's row count and fixes the batch size on the
// first attempt; it returns the batch size every attempt must use.
func (db *DB) StartImport(ctx context.Context, storeID, importID uuid.UUID, total, batchSize int) (int, error) {
	err := db.pool.QueryRow(ctx, `UPDATE product_imports SET total_rows = $3,
			batch_size = CASE WHEN batch_size = 0 THEN $4 ELSE batch_size END
		WHERE store_id = $1 AND id = $2 RETURNING batch_size`, storeID, importID, total, batchSize).Scan(&batchSize)
	if err != nil {
		return 0, notFoundIfNoRows(err, "start import")
	}
	return batchSize, nil
}

// FinishImport ends an import; a long one leaves a dashboard notification.
func (db *DB) FinishImport(ctx context.Context, storeID, importID uuid.UUID, status ImportStatus, reason string, notifyAfter time.Duration) (ProductImport, error) {
	var imp ProductImport
	err := db.InTx(ctx, func(tx *Tx) error {
		var errPtr *string
		if reason != "" {
			errPtr = &reason
		}
		tag, err := tx.tx.Exec(ctx, `UPDATE product_imports SET status = $3, error = $4, finished_at = $5
			WHERE store_id = $1 AND id = $2 AND status = 'running'`, storeID, importID, status, errPtr, tx.now())
		if err != nil {
			return fmt.Errorf("finish import: %w", err)
		}
		imp, err = tx.FindImport(ctx, storeID, importID)
		if err != nil || tag.RowsAffected() == 0 || imp.FinishedAt.Sub(imp.CreatedAt) < notifyAfter {
			return err
		}
		data, _ := json.Marshal(map[string]any{"import_id": importID, "status": status, "created": imp.Created,
			"updated": imp.Updated, "failed": imp.Failed})
		return tx.CreateNotification(ctx, Notification{StoreID: storeID, Kind: NotificationImportFinished,
			Title: "Product import finished", TitleAr: "اكتمل استيراد المنتجات",
			Body:   fmt.Sprintf("%d created, %d updated, %d unchanged, %d rows with errors.", imp.Created, imp.Updated, imp.Unchanged, imp.Failed),
			BodyAr: fmt.Sprintf("تم إنشاء %d وتحديث %d، ولم يتغير %d، و%d صفوف بها أخطاء.", imp.Created, imp.Updated, imp.Unchanged, imp.Failed),
			Data:   data})
	})
	return imp, err
}

// ExportProducts streams a store's products in creation order to fn, one
// at a time, so memory stays flat however many there are.
func (db *DB) ExportProducts(ctx context.Context, storeID uuid.UUID, fn func(Product) error) error {
	rows, err := db.pool.Query(ctx, `SELECT `+productColumns+` FROM products WHERE store_id = $1 ORDER BY created_at, id`, storeID)
	if err != nil {
		return fmt.Errorf("export products: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		p, err := scanProduct(rows)
		if err != nil {
			return fmt.Errorf("export products: %w", err)
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ExportVariants streams a store's variants to fn, product by product in
// creation order and by position within a product, with each variant's
// product (its quantity not read); first is set on a product's first
// variant. Memory stays flat however many there are.
func (db *DB) ExportVariants(ctx context.Context, storeID uuid.UUID, fn func(p Product, v Variant, first bool) error) error {
	rows, err := db.pool.Query(ctx, `SELECT p.id, p.sku, p.name, p.description, p.status, p.price, p.cost_price, p.category_id,
			v.id, v.sku, v.barcode, v.price, v.cost_price, v.quantity, v.options, v.position, v.is_default, v.weight_grams
		FROM products p JOIN variants v ON v.store_id = p.store_id AND v.product_id = p.id
		WHERE p.store_id = $1 ORDER BY p.created_at, p.id, v.position, v.id`, storeID)
	if err != nil {
		return fmt.Errorf("export variants: %w", err)
	}
	defer rows.Close()
	var last uuid.UUID
	for rows.Next() {
		p, v := Product{StoreID: storeID}, Variant{StoreID: storeID}
		if err := rows.Scan(&p.ID, &p.SKU, &p.Name, &p.Description, &p.Status, &p.Price, &p.CostPrice, &p.CategoryID,
			&v.ID, &v.SKU, &v.Barcode, &v.Price, &v.CostPrice, &v.Quantity, &v.Options, &v.Position, &v.IsDefault, &v.WeightGrams); err != nil {
			return fmt.Errorf("export variants: %w", err)
		}
		v.ProductID = p.ID
		first := p.ID != last
		last = p.ID
		if err := fn(p, v, first); err != nil {
			return err
		}
	}
	return rows.Err()
}

// OrderedOptions lists an options object's names and values in the order
// the object has them (a string value's text, else its JSON).
func OrderedOptions(raw json.RawMessage) []CSVOption {
	var out []CSVOption
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return out
		}
		out = append(out, CSVOption{Name: name, Value: optionText(value)})
	}
	return out
}

// AppliedImportBatches lists the start rows of an import's applied batches.
func (r reader) AppliedImportBatches(ctx context.Context, importID uuid.UUID) (map[int]bool, error) {
	rows, err := r.q.Query(ctx, `SELECT start_row FROM product_import_batches WHERE import_id = $1`, importID)
	if err != nil {
		return nil, fmt.Errorf("find applied import batches: %w", err)
	}
	starts, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("find applied import batches: %w", err)
	}
	applied := make(map[int]bool, len(starts))
	for _, s := range starts {
		applied[int(s)] = true
	}
	return applied, nil
}

// variantOutcome counts what the variants-format rows of existing products
// did, and lists the products they changed.
type variantOutcome struct {
	created, updated, unchanged int
	changed                     []Product
}

// applyVariantRows applies the variants-format rows of products that exist,
// each row in its own savepoint, so a refused row (a taken SKU, stock at
// several locations) changes nothing while the others apply. The first
// row also carries the product's fields. keep false (a dry run) undoes
// everything after counting.
func (tx *Tx) applyVariantRows(ctx context.Context, existing []existingImport, keep bool) (variantOutcome, []RowError, error) {
	var (
		out  variantOutcome
		errs []RowError
	)
	if len(existing) == 0 {
		return out, nil, nil
	}
	err := tx.savepoint(ctx, keep, func(tx *Tx) error {
		for _, e := range existing {
			productChanged := !e.after.sameAs(e.before)
			changed := false
			for i, r := range e.rows {
				var result string
				err := tx.savepoint(ctx, true, func(tx *Tx) error {
					if i == 0 && productChanged {
						if err := tx.updateProducts(ctx, []importUpdate{{row: r, before: e.before, after: e.after}}); err != nil {
							return err
						}
					}
					var err error
					result, err = tx.applyVariantRow(ctx, e.after, r)
					return err
				})
				if rowErr, ok := importRowError(r.Row, err); ok {
					errs = append(errs, rowErr)
					continue
				}
				if err != nil {
					return err
				}
				if i == 0 && productChanged && result == "unchanged" {
					result = "updated"
				}
				switch result {
				case "created":
					out.created++
				case "updated":
					out.updated++
				default:
					out.unchanged++
				}
				changed = changed || result != "unchanged"
			}
			if changed {
				out.changed = append(out.changed, e.after)
			}
		}
		return nil
	})
	return out, errs, err
}

// importRowError turns what refuses one row into its row error; ok is
// false for nil and for errors that are not the row's fault.
func importRowError(row int, err error) (RowError, bool) {
	var invalid *InvalidError
	switch {
	case err == nil:
		return RowError{}, false
	case errors.Is(err, ErrDuplicateSKU):
		return RowError{Row: row, Column: "variant_sku", Code: "sku_in_use", Message: "the SKU belongs to another product or variant in this store"}, true
	case errors.As(err, &invalid):
		return RowError{Row: row, Column: invalid.Field, Code: invalid.Code, Message: invalid.Message}, true
	}
	return RowError{}, false
}

// applyVariantRow writes one variants-format row onto the product's
// variant it names: the one with its variant_sku, else the one with its
// options (the default variant has none); a row naming no variant adds
// one, converting a default variant in place. Only the columns the file
// has are written. It says "created", "updated" or "unchanged".
func (tx *Tx) applyVariantRow(ctx context.Context, p Product, r ImportRow) (string, error) {
	variants, err := tx.productVariants(ctx, p.StoreID, p.ID)
	if err != nil {
		return "", err
	}
	var target *Variant
	for i, v := range variants {
		if r.VariantSKU != nil && v.SKU != nil && *v.SKU == *r.VariantSKU {
			target = &variants[i]
		}
	}
	wantOptions := optionsKey(r.OptionsJSON())
	for i, v := range variants {
		if target == nil && optionsKey(v.Options) == wantOptions {
			target = &variants[i]
		}
	}
	price, cost := variantPrices(p, r)
	if target == nil {
		if !r.HasOptions() {
			return "", &InvalidError{Field: "option1_value", Code: "managed_by_variants",
				Message: "the product has variants; name the variant by its options or its variant_sku"}
		}
		v := Variant{StoreID: p.StoreID, ProductID: p.ID, SKU: r.VariantSKU, Barcode: r.Barcode, Price: price, CostPrice: cost,
			Quantity: r.Quantity, Options: r.OptionsJSON(), WeightGrams: r.WeightGrams}
		return "created", tx.CreateVariant(ctx, &v, true, r.Has["quantity"])
	}
	var upd VariantUpdate
	changed := false
	if r.VariantSKU != nil && !equalPtr(target.SKU, r.VariantSKU) {
		upd.SKU, changed = Field[string]{Set: true, Value: *r.VariantSKU}, true
	}
	if r.Has["barcode"] && !equalPtr(target.Barcode, r.Barcode) {
		upd.Barcode, changed = fieldOf(r.Barcode), true
	}
	if r.Has["variant_price"] && target.Price != price {
		upd.Price, changed = &price, true
	}
	if r.Has["variant_cost_price"] && !equalPtr(target.CostPrice, cost) {
		upd.CostPrice, changed = fieldOf(cost), true
	}
	if r.Has["weight_grams"] && !equalPtr(target.WeightGrams, r.WeightGrams) {
		upd.WeightGrams, changed = fieldOf(r.WeightGrams), true
	}
	if r.Has["quantity"] && target.Quantity != r.Quantity {
		upd.Quantity, changed = &r.Quantity, true
	}
	if !changed {
		return "unchanged", nil
	}
	_, err = tx.UpdateVariant(ctx, p.StoreID, p.ID, target.ID, upd)
	return "updated", err
}

// variantPrices are a row's variant price and cost: a blank variant_price
// is the product's (as in the API); a blank variant_cost_price is none,
// except on a row without options, whose default variant is the product
// and takes its cost.
func variantPrices(p Product, r ImportRow) (int64, *int64) {
	price, cost := p.Price, r.VariantCostPrice
	if r.VariantPrice != nil {
		price = *r.VariantPrice
	}
	if cost == nil && !r.HasOptions() {
		cost = p.CostPrice
	}
	return price, cost
}

// equalPtr reports whether two optional values are both absent or equal.
func equalPtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// fieldOf is a write of v, null when v is nil.
func fieldOf[T any](v *T) Field[T] {
	if v == nil {
		return Field[T]{Set: true, Null: true}
	}
	return Field[T]{Set: true, Value: *v}
}

// optionsKey is an options object in a form two equal objects share: its
// names in order, each with its value (a string's text, else its JSON).
func optionsKey(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return string(raw)
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString(name + "\x00" + optionText(m[name]) + "\x00")
	}
	return b.String()
}

// optionText is an option value as a CSV cell shows it.
func optionText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// RecentImport is an import as the imports page lists it.
type RecentImport struct {
	ID        uuid.UUID
	Status    ImportStatus
	DryRun    bool
	TotalRows int
	CreatedAt time.Time
}

// FindRecentImports lists the store's newest imports, running ones first.
func (r reader) FindRecentImports(ctx context.Context, storeID uuid.UUID, limit int) ([]RecentImport, error) {
	rows, err := r.q.Query(ctx, `SELECT id, status, dry_run, total_rows, created_at FROM product_imports
		WHERE store_id = $1 ORDER BY status = 'running' DESC, created_at DESC, id LIMIT $2`, storeID, limit)
	if err != nil {
		return nil, fmt.Errorf("find recent imports: %w", err)
	}
	imports, err := pgx.CollectRows(rows, pgx.RowToStructByPos[RecentImport])
	if err != nil {
		return nil, fmt.Errorf("find recent imports: %w", err)
	}
	return imports, nil
}

// syncImportedMembership brings the smart collections of every product the
// import wrote up to date, in the import's transaction.
func (tx *Tx) syncImportedMembership(ctx context.Context, storeID uuid.UUID, lists ...[]Product) error {
	var ids []uuid.UUID
	for _, list := range lists {
		for _, p := range list {
			ids = append(ids, p.ID)
		}
	}
	return tx.syncSmartMembership(ctx, storeID, ids...)
}
