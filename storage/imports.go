package storage

import (
	"context"
	"encoding/json"
	"fmt"
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

// ImportBatch is one batch of an import: rows that parsed, and the errors
// of rows that did not (already numbered).
type ImportBatch struct {
	Start  int // index of the first data row of the batch
	Count  int // data rows the batch covers
	Rows   []ImportRow
	Errors []RowError
}

// ApplyImportBatch creates products for unknown SKUs and updates matching
// ones, in one transaction that also records the batch in
// product_import_batches and adds to the import's progress. A batch already
// recorded (a retried or resumed activity) is skipped: every row is applied
// exactly once, and different batches may be applied concurrently.
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
		rows, errs, err := tx.checkImportRefs(ctx, storeID, b.Rows)
		if err != nil {
			return err
		}
		rowErrs = append(rowErrs, errs...)
		creates, updates, unchanged, errs, err := tx.planImport(ctx, storeID, rows)
		if err != nil {
			return err
		}
		rowErrs = append(rowErrs, errs...)
		var stock []levelChange
		updates, stock, errs, err = tx.planImportStock(ctx, storeID, updates)
		if err != nil {
			return err
		}
		rowErrs = append(rowErrs, errs...)
		if !dryRun {
			if err := tx.insertProducts(ctx, creates); err != nil {
				return err
			}
			if err := tx.updateProducts(ctx, updates); err != nil {
				return err
			}
			if _, err := tx.writeLevelChanges(ctx, storeID, stock, movementSource{reason: ReasonCorrection, note: "CSV import",
				actor: tx.movementActor()}); err != nil {
				return err
			}
			if err := tx.emitProducts(ctx, EventProductCreated, creates); err != nil {
				return err
			}
			if err := tx.emitProducts(ctx, EventProductUpdated, updatedProducts(updates)); err != nil {
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
			storeID, importID, b.Count, len(creates), len(updates), unchanged, len(failedRows), errJSON, maxStoredRowErrors)
		if err != nil {
			return fmt.Errorf("record import progress: %w", err)
		}
		return nil
	})
}

// checkImportRefs refuses rows whose category is not one of the store's.
func (tx *Tx) checkImportRefs(ctx context.Context, storeID uuid.UUID, rows []ImportRow) ([]ImportRow, []RowError, error) {
	var ids []uuid.UUID
	for _, r := range rows {
		if r.CategoryID != nil {
			ids = append(ids, *r.CategoryID)
		}
	}
	if len(ids) == 0 {
		return rows, nil, nil
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
		keep []ImportRow
		errs []RowError
	)
	for _, r := range rows {
		if r.CategoryID != nil && !known[*r.CategoryID] {
			errs = append(errs, RowError{Row: r.Row, Column: "category_id", Code: "not_found", Message: "no such category in this store"})
			continue
		}
		keep = append(keep, r)
	}
	return keep, errs, nil
}

// planImport sorts rows into products to create and to update, counting
// rows that would change nothing.
func (tx *Tx) planImport(ctx context.Context, storeID uuid.UUID, rows []ImportRow) (creates []Product, updates []importUpdate, unchanged int, errs []RowError, err error) {
	skus := make([]string, len(rows))
	for i, r := range rows {
		skus[i] = r.SKU
	}
	owners := map[string]struct {
		kind string
		id   uuid.UUID
	}{}
	ownerRows, err := tx.tx.Query(ctx, `SELECT sku, owner_kind, owner_id FROM skus WHERE store_id = $1 AND sku = ANY ($2)`, storeID, skus)
	if err != nil {
		return nil, nil, 0, nil, fmt.Errorf("find import skus: %w", err)
	}
	var productIDs []uuid.UUID
	for ownerRows.Next() {
		var (
			sku, kind string
			id        uuid.UUID
		)
		if err := ownerRows.Scan(&sku, &kind, &id); err != nil {
			ownerRows.Close()
			return nil, nil, 0, nil, fmt.Errorf("find import skus: %w", err)
		}
		owners[sku] = struct {
			kind string
			id   uuid.UUID
		}{kind, id}
		if kind == "product" {
			productIDs = append(productIDs, id)
		}
	}
	ownerRows.Close()
	existing := map[uuid.UUID]Product{}
	if len(productIDs) > 0 {
		prodRows, err := tx.tx.Query(ctx, `SELECT `+productColumns+` FROM products WHERE store_id = $1 AND id = ANY ($2) FOR UPDATE`, storeID, productIDs)
		if err != nil {
			return nil, nil, 0, nil, fmt.Errorf("load import products: %w", err)
		}
		list, err := pgx.CollectRows(prodRows, func(row pgx.CollectableRow) (Product, error) { return scanProduct(row) })
		if err != nil {
			return nil, nil, 0, nil, fmt.Errorf("load import products: %w", err)
		}
		for _, p := range list {
			existing[p.ID] = p
		}
	}
	now := tx.now()
	for _, r := range rows {
		owner, ok := owners[r.SKU]
		switch {
		case ok && owner.kind == "variant":
			errs = append(errs, RowError{Row: r.Row, Column: "sku", Code: "sku_in_use", Message: "the SKU belongs to a variant in this store"})
		case ok:
			p := existing[owner.id]
			next := r.apply(p)
			if next.sameAs(p) {
				unchanged++
				continue
			}
			next.UpdatedAt = now
			updates = append(updates, importUpdate{row: r, before: p, after: next})
		default:
			sku := r.SKU
			p := r.apply(Product{ID: NewID(), StoreID: storeID, SKU: &sku, Status: "active",
				Attributes: json.RawMessage(`{}`), Images: json.RawMessage(`[]`), MediaURLs: json.RawMessage(`{}`), CreatedAt: now})
			p.UpdatedAt = now
			creates = append(creates, p)
		}
	}
	return creates, updates, unchanged, errs, nil
}

// importUpdate is a product a row changes.
type importUpdate struct {
	row           ImportRow
	before, after Product
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

// apply writes the row's columns onto p; columns the file lacks stay as they are.
func (r ImportRow) apply(p Product) Product {
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
	if r.Has["quantity"] {
		p.Quantity = r.Quantity
	}
	if r.Has["category_id"] {
		p.CategoryID = r.CategoryID
	}
	return p
}

func (p Product) sameAs(o Product) bool {
	eqInt := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	eqID := func(a, b *uuid.UUID) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return p.Name == o.Name && p.Description == o.Description && p.Status == o.Status && p.Price == o.Price &&
		eqInt(p.CostPrice, o.CostPrice) && p.Quantity == o.Quantity && eqID(p.CategoryID, o.CategoryID)
}

// insertProducts writes new products, each with its default variant
// holding the row's quantity at the default location (a correction in the
// ledger), and claims their SKUs, all with COPY, the fastest way into
// Postgres, inside the batch's transaction.
func (tx *Tx) insertProducts(ctx context.Context, ps []Product) error {
	if len(ps) == 0 {
		return nil
	}
	defaultID, err := tx.defaultLocationID(ctx, ps[0].StoreID)
	if err != nil {
		return err
	}
	actor := tx.movementActor()
	productRows := make([][]any, len(ps))
	skuRows := make([][]any, len(ps))
	variantRows := make([][]any, len(ps))
	levelRows := make([][]any, len(ps))
	var movementRows [][]any
	for i, p := range ps {
		productRows[i] = []any{p.ID, p.StoreID, p.Name, p.Description, *p.SKU, p.Price, p.CostPrice, p.Status,
			p.CategoryID, p.Attributes, p.Images, p.MediaURLs, p.CreatedAt, p.UpdatedAt}
		skuRows[i] = []any{p.StoreID, *p.SKU, "product", p.ID}
		variantID := NewID()
		quantity := int32(p.Quantity)
		variantRows[i] = []any{variantID, p.StoreID, p.ID, p.Price, p.CostPrice, quantity, []byte(`{}`), int32(1), true, p.CreatedAt, p.UpdatedAt}
		levelRows[i] = []any{p.StoreID, variantID, defaultID, p.ID, quantity, int32(0), p.UpdatedAt}
		if quantity > 0 {
			movementRows = append(movementRows, []any{NewID(), p.StoreID, variantID, defaultID, ReasonCorrection, quantity, int32(0),
				quantity, int32(0), "CSV import", actor.Type, actor.ID, p.UpdatedAt})
		}
	}
	copies := []struct {
		table   string
		columns []string
		rows    [][]any
	}{
		{"products", []string{"id", "store_id", "name", "description", "sku", "price", "cost_price", "status", "category_id",
			"attributes", "images", "media_urls", "created_at", "updated_at"}, productRows},
		{"variants", []string{"id", "store_id", "product_id", "price", "cost_price", "quantity", "options", "position", "is_default",
			"created_at", "updated_at"}, variantRows},
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
