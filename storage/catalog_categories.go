package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Category groups products; categories nest through ParentID.
type Category struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Name      string
	ParentID  *uuid.UUID
	Position  int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CategoryUpdate is a partial update; a null parent makes it top-level.
type CategoryUpdate struct {
	Name     *string
	ParentID Field[uuid.UUID]
	Position *int
}

const categoryColumns = `id, store_id, name, parent_id, position, created_at, updated_at`

func scanCategory(row pgx.Row) (Category, error) {
	var c Category
	err := row.Scan(&c.ID, &c.StoreID, &c.Name, &c.ParentID, &c.Position, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// FindCategoryByID returns one category of the store.
func (r reader) FindCategoryByID(ctx context.Context, storeID, id uuid.UUID) (Category, error) {
	c, err := scanCategory(r.q.QueryRow(ctx, `SELECT `+categoryColumns+` FROM categories WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Category{}, notFoundIfNoRows(err, "find category "+id.String())
	}
	return c, nil
}

// FindCategories returns a page of the store's categories by position and name.
func (r reader) FindCategories(ctx context.Context, storeID uuid.UUID, page Page) ([]Category, int, error) {
	return findPage(ctx, r, "categories", listQuery{
		columns: categoryColumns, from: "FROM categories WHERE store_id = $1", args: []any{storeID},
		orderBy: "position, name, id",
	}, page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (Category, error) { return scanCategory(row) })
}

// checkParent refuses a parent outside the store or one that would make a cycle.
func (tx *Tx) checkParent(ctx context.Context, storeID, id uuid.UUID, parentID *uuid.UUID) error {
	if parentID == nil {
		return nil
	}
	if *parentID == id {
		return &InvalidError{Field: "parent_id", Code: "cycle", Message: "a category cannot be its own parent"}
	}
	var cycle bool
	err := tx.tx.QueryRow(ctx, `WITH RECURSIVE ancestors(id, parent_id) AS (
			SELECT id, parent_id FROM categories WHERE store_id = $1 AND id = $2
			UNION
			SELECT c.id, c.parent_id FROM categories c JOIN ancestors a ON c.id = a.parent_id WHERE c.store_id = $1
		) SELECT EXISTS (SELECT 1 FROM ancestors WHERE id = $3)`, storeID, *parentID, id).Scan(&cycle)
	if err != nil {
		return fmt.Errorf("check category parent: %w", err)
	}
	if cycle {
		return &InvalidError{Field: "parent_id", Code: "cycle", Message: "the parent is a descendant of this category"}
	}
	if _, err := tx.FindCategoryByID(ctx, storeID, *parentID); err != nil {
		return &InvalidError{Field: "parent_id", Code: "not_found", Message: "parent category does not exist in this store"}
	}
	return nil
}

// CreateCategory adds a category.
func (tx *Tx) CreateCategory(ctx context.Context, c *Category) error {
	c.ID = NewID()
	if err := tx.checkParent(ctx, c.StoreID, c.ID, c.ParentID); err != nil {
		return err
	}
	now := tx.now()
	c.CreatedAt, c.UpdatedAt = now, now
	_, err := tx.tx.Exec(ctx, `INSERT INTO categories (`+categoryColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.ID, c.StoreID, c.Name, c.ParentID, c.Position, c.CreatedAt, c.UpdatedAt)
	if err != nil {
		return fmt.Errorf("create category: %w", err)
	}
	// Every category has its smart collection (decisions §22).
	return tx.createCategoryCollection(ctx, *c)
}

// UpdateCategory applies a partial update.
func (tx *Tx) UpdateCategory(ctx context.Context, storeID, id uuid.UUID, upd CategoryUpdate) (Category, error) {
	c, err := scanCategory(tx.tx.QueryRow(ctx, `SELECT `+categoryColumns+` FROM categories WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Category{}, notFoundIfNoRows(err, "update category "+id.String())
	}
	if upd.Name != nil {
		c.Name = *upd.Name
	}
	if upd.Position != nil {
		c.Position = *upd.Position
	}
	moved := upd.ParentID.Set && !sameParent(c.ParentID, upd.ParentID.ptr())
	if upd.ParentID.Set {
		c.ParentID = upd.ParentID.ptr()
		if err := tx.checkParent(ctx, storeID, id, c.ParentID); err != nil {
			return Category{}, err
		}
	}
	c.UpdatedAt = tx.now()
	_, err = tx.tx.Exec(ctx, `UPDATE categories SET name = $3, parent_id = $4, position = $5, updated_at = $6 WHERE store_id = $1 AND id = $2`,
		storeID, id, c.Name, c.ParentID, c.Position, c.UpdatedAt)
	if err != nil {
		return Category{}, fmt.Errorf("update category: %w", err)
	}
	if moved {
		// The subtree's products have other ancestors now: category
		// conditions match descendants.
		products, err := tx.productsUnder(ctx, storeID, id)
		if err != nil {
			return Category{}, err
		}
		if err := tx.syncSmartMembership(ctx, storeID, products...); err != nil {
			return Category{}, err
		}
	}
	return c, nil
}

func sameParent(a, b *uuid.UUID) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// productsUnder lists the products of a category and of its descendants.
func (tx *Tx) productsUnder(ctx context.Context, storeID, id uuid.UUID) ([]uuid.UUID, error) {
	rows, err := tx.tx.Query(ctx, `WITH RECURSIVE tree (id) AS (
			SELECT id FROM categories WHERE store_id = $1 AND id = $2
			UNION
			SELECT c.id FROM categories c JOIN tree t ON c.parent_id = t.id WHERE c.store_id = $1
		) SELECT p.id FROM products p JOIN tree t ON p.category_id = t.id WHERE p.store_id = $1`, storeID, id)
	if err != nil {
		return nil, fmt.Errorf("find products under category: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("find products under category: %w", err)
	}
	return ids, nil
}

// DeleteCategory removes a category; its products and children lose the
// reference, and leave the smart collections that matched them through it.
// The category's own collection stays, with no members (docs/decisions.md,
// "Collections").
func (tx *Tx) DeleteCategory(ctx context.Context, storeID, id uuid.UUID) error {
	products, err := tx.productsUnder(ctx, storeID, id)
	if err != nil {
		return err
	}
	tag, err := tx.tx.Exec(ctx, `DELETE FROM categories WHERE store_id = $1 AND id = $2`, storeID, id)
	if err != nil {
		return fmt.Errorf("delete category: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete category %s: %w", id, ErrNotFound)
	}
	return tx.syncSmartMembership(ctx, storeID, products...)
}
