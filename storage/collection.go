package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	sq "github.com/Masterminds/squirrel"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/merchantsvc/svc/storage/handle"
	"github.com/merchantsvc/svc/storage/theme"
)

// Collections (decisions §21): files collection.go (records, reads, writes),
// collection_rules.go (conditions and their evaluation) and
// collection_members.go (membership: manual changes, the smart set kept
// exact by product writes, the rebuild).

// Errors of collections the API maps to their own codes.
var (
	// ErrCollectionIsSmart: a smart collection's members follow its rules.
	ErrCollectionIsSmart = errors.New("collection is smart")
)

// MaxSmartCollections is how many smart collections a store keeps.
const MaxSmartCollections = 500

// CollectionSorts are the orders a collection shows its products in.
var CollectionSorts = []string{"manual", "best_selling", "price_asc", "price_desc", "newest", "title"}

// CollectionText is bilingual text: one language at least.
type CollectionText struct {
	Ar string `json:"ar,omitempty"`
	En string `json:"en,omitempty"`
}

// CollectionSEO is what search engines see.
type CollectionSEO struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Collection is a merchandising set of products.
type Collection struct {
	ID          uuid.UUID
	StoreID     uuid.UUID
	Handle      string
	Title       CollectionText
	Description CollectionText
	ImageID     *uuid.UUID
	Kind        string // manual or smart
	Rules       *CollectionRules
	Sort        string
	Published   bool
	SEO         CollectionSEO
	// ProductsCount counts the stored members (the applied set).
	ProductsCount int
	// Rebuilding: the rules changed and the members do not follow them yet.
	Rebuilding bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// CollectionUpdate is a partial update; nil fields are left alone.
type CollectionUpdate struct {
	Handle      *string
	Title       *CollectionText
	Description *CollectionText
	ImageID     *uuid.NullUUID // an image of the store's media; Valid false removes it
	Rules       *CollectionRules
	Sort        *string
	Published   *bool
	SEO         *CollectionSEO
}

// CollectionFilter narrows a list of collections.
type CollectionFilter struct {
	Kind      *string
	Published *bool
	Search    *string
	Page      Page
}

const collectionColumns = `c.id, c.store_id, c.handle, c.title, c.description, c.image_id, c.kind, c.rules, c.sort, c.published, c.seo,
	(SELECT count(*) FROM collection_products m WHERE m.collection_id = c.id)::int, c.applied_version < c.rules_version,
	c.created_at, c.updated_at`

func scanCollection(row pgx.Row) (Collection, error) {
	var c Collection
	err := row.Scan(&c.ID, &c.StoreID, &c.Handle, &c.Title, &c.Description, &c.ImageID, &c.Kind, &c.Rules, &c.Sort, &c.Published, &c.SEO,
		&c.ProductsCount, &c.Rebuilding, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// FindCollectionByID returns one collection of the store.
func (r reader) FindCollectionByID(ctx context.Context, storeID, id uuid.UUID) (Collection, error) {
	c, err := scanCollection(r.q.QueryRow(ctx, `SELECT `+collectionColumns+` FROM collections c WHERE c.store_id = $1 AND c.id = $2`, storeID, id))
	if err != nil {
		return Collection{}, notFoundIfNoRows(err, "find collection "+id.String())
	}
	return c, nil
}

// FindPublishedCollectionPage returns what a page of a published
// collection's products needs of it, found by its handle: its id and sort.
// (The storefront's page answers no more of the collection, so it does not
// count its members.)
func (r reader) FindPublishedCollectionPage(ctx context.Context, storeID uuid.UUID, h string) (uuid.UUID, string, error) {
	var (
		id   uuid.UUID
		sort string
	)
	err := r.q.QueryRow(ctx, `SELECT id, sort FROM collections WHERE store_id = $1 AND handle = $2 AND published`, storeID, h).Scan(&id, &sort)
	if err != nil {
		return uuid.Nil, "", notFoundIfNoRows(err, "find collection "+h)
	}
	return id, sort, nil
}

// FindCollections returns a page of the store's collections, oldest first.
func (r reader) FindCollections(ctx context.Context, storeID uuid.UUID, f CollectionFilter) ([]Collection, int, error) {
	where := sq.And{sq.Eq{"c.store_id": storeID}}
	if f.Kind != nil {
		where = append(where, sq.Eq{"c.kind": *f.Kind})
	}
	if f.Published != nil {
		where = append(where, sq.Eq{"c.published": *f.Published})
	}
	if f.Search != nil {
		pattern := "%" + escapeLike(*f.Search) + "%"
		where = append(where, sq.Or{sq.ILike{"c.handle": pattern}, sq.Expr("c.title->>'ar' ILIKE ?", pattern), sq.Expr("c.title->>'en' ILIKE ?", pattern)})
	}
	cond, args, err := dollarSQL(where)
	if err != nil {
		return nil, 0, fmt.Errorf("find collections: %w", err)
	}
	return findPage(ctx, r, "collections", listQuery{
		columns: collectionColumns, from: "FROM collections c WHERE " + cond, args: args, orderBy: "c.created_at, c.id",
	}, f.Page.Limit, int(f.Page.Offset()), func(row pgx.CollectableRow) (Collection, error) { return scanCollection(row) })
}

// lockCollectionLimit serialises the smart-collection count of a store.
func (tx *Tx) lockCollectionLimit(ctx context.Context, storeID uuid.UUID) error {
	if _, err := tx.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('collection-limit:' || $1::text, 0))`, storeID); err != nil {
		return fmt.Errorf("lock collection limit: %w", err)
	}
	return nil
}

// checkRuleCategories refuses a category condition naming a category the
// store does not have.
func (tx *Tx) checkRuleCategories(ctx context.Context, storeID uuid.UUID, rules CollectionRules) error {
	for i, c := range compileRules(rules).conditions {
		if c.field != "category" || (c.relation != RelEquals && c.relation != RelNotEquals) {
			continue
		}
		var exists bool
		if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM categories WHERE store_id = $1 AND id = $2)`, storeID, c.id).Scan(&exists); err != nil {
			return fmt.Errorf("check rule category: %w", err)
		}
		if !exists {
			return &InvalidError{Field: "rules.conditions[" + strconv.Itoa(i) + "].value", Code: "not_found",
				Message: "no such category in this store"}
		}
	}
	return nil
}

// CreateCollection adds a collection; a smart one is filled from its rules
// before the transaction commits, so it answers with its members.
func (tx *Tx) CreateCollection(ctx context.Context, c *Collection) error {
	if err := tx.checkMediaImage(ctx, c.StoreID, "image_id", c.ImageID); err != nil {
		return err
	}
	c.ID = NewID()
	now := tx.now()
	c.CreatedAt, c.UpdatedAt = now, now
	if c.Sort == "" {
		c.Sort = "manual"
		if c.Kind == "smart" {
			c.Sort = "best_selling"
		}
	}
	if c.Kind == "smart" {
		if err := tx.checkRuleCategories(ctx, c.StoreID, *c.Rules); err != nil {
			return err
		}
		if err := tx.lockCollectionLimit(ctx, c.StoreID); err != nil {
			return err
		}
		var n int
		if err := tx.tx.QueryRow(ctx, `SELECT count(*) FROM collections WHERE store_id = $1 AND kind = 'smart'`, c.StoreID).Scan(&n); err != nil {
			return fmt.Errorf("count smart collections: %w", err)
		}
		if n >= MaxSmartCollections {
			return &InvalidError{Field: "kind", Code: "limit_reached",
				Message: fmt.Sprintf("a store keeps at most %d smart collections", MaxSmartCollections)}
		}
	}
	if err := tx.insertCollection(ctx, *c); err != nil {
		return err
	}
	if c.Kind == "smart" {
		if err := tx.applyRules(ctx, c.StoreID, c.ID); err != nil {
			return err
		}
	}
	fresh, err := tx.FindCollectionByID(ctx, c.StoreID, c.ID)
	if err != nil {
		return err
	}
	*c = fresh
	return nil
}

func (tx *Tx) insertCollection(ctx context.Context, c Collection) error {
	var rules any
	if c.Rules != nil {
		rules = c.Rules
	}
	_, err := tx.tx.Exec(ctx, `INSERT INTO collections (id, store_id, handle, title, description, image_id, kind, rules, applied_rules,
			sort, published, seo, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $12, $12)`,
		c.ID, c.StoreID, c.Handle, c.Title, c.Description, c.ImageID, c.Kind, rules, c.Sort, c.Published, c.SEO, c.CreatedAt)
	if isUniqueViolation(err, "collections_store_id_handle_key") {
		return fmt.Errorf("collection handle %q: %w", c.Handle, ErrDuplicateHandle)
	}
	if err != nil {
		return fmt.Errorf("create collection: %w", err)
	}
	return nil
}

// UpdateCollection applies a partial update. New rules of a smart collection
// are stored for the rebuild to apply (Rebuilding); until it runs, the
// members stay those of the old rules.
func (tx *Tx) UpdateCollection(ctx context.Context, storeID, id uuid.UUID, upd CollectionUpdate) (Collection, error) {
	c, err := scanCollection(tx.tx.QueryRow(ctx, `SELECT `+collectionColumns+` FROM collections c WHERE c.store_id = $1 AND c.id = $2 FOR NO KEY UPDATE`, storeID, id))
	if err != nil {
		return Collection{}, notFoundIfNoRows(err, "update collection "+id.String())
	}
	if upd.Rules != nil && c.Kind != "smart" {
		return Collection{}, &InvalidError{Field: "rules", Code: "not_allowed", Message: "a manual collection has no rules"}
	}
	rulesChanged := false
	if upd.Rules != nil {
		if err := tx.checkRuleCategories(ctx, storeID, *upd.Rules); err != nil {
			return Collection{}, err
		}
		before, _ := json.Marshal(c.Rules)
		after, _ := json.Marshal(upd.Rules)
		rulesChanged = string(before) != string(after)
		c.Rules = upd.Rules
	}
	if upd.Handle != nil {
		c.Handle = *upd.Handle
	}
	if upd.Title != nil {
		c.Title = *upd.Title
	}
	if upd.Description != nil {
		c.Description = *upd.Description
	}
	if upd.ImageID != nil {
		c.ImageID = nil
		if upd.ImageID.Valid {
			c.ImageID = &upd.ImageID.UUID
			if err := tx.checkMediaImage(ctx, storeID, "image_id", c.ImageID); err != nil {
				return Collection{}, err
			}
		}
	}
	if upd.Sort != nil {
		c.Sort = *upd.Sort
	}
	if upd.Published != nil {
		c.Published = *upd.Published
	}
	if upd.SEO != nil {
		c.SEO = *upd.SEO
	}
	c.UpdatedAt = tx.now()
	bump := 0
	if rulesChanged {
		bump = 1
	}
	var rules any
	if c.Rules != nil {
		rules = c.Rules
	}
	_, err = tx.tx.Exec(ctx, `UPDATE collections SET handle = $3, title = $4, description = $5, rules = $6, sort = $7, published = $8,
			seo = $9, updated_at = $10, rules_version = rules_version + $11, image_id = $12
		WHERE store_id = $1 AND id = $2`,
		storeID, id, c.Handle, c.Title, c.Description, rules, c.Sort, c.Published, c.SEO, c.UpdatedAt, bump, c.ImageID)
	if isUniqueViolation(err, "collections_store_id_handle_key") {
		return Collection{}, fmt.Errorf("collection handle %q: %w", c.Handle, ErrDuplicateHandle)
	}
	if err != nil {
		return Collection{}, fmt.Errorf("update collection: %w", err)
	}
	if rulesChanged {
		if err := tx.notifyDispatcher(ctx); err != nil {
			return Collection{}, err
		}
	}
	return tx.FindCollectionByID(ctx, storeID, id)
}

// DeleteCollection removes a collection and its membership, unless the
// theme's draft or published document names it.
func (tx *Tx) DeleteCollection(ctx context.Context, storeID, id uuid.UUID) error {
	// Product writes add members under the shared lock: none may be
	// adding to this collection while it goes (its key would be gone).
	if err := tx.lockSmartMembership(ctx, storeID, true); err != nil {
		return err
	}
	if _, err := tx.tx.Exec(ctx, `SELECT 1 FROM collections WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id); err != nil {
		return fmt.Errorf("lock collection: %w", err)
	}
	if err := tx.refuseThemeUses(ctx, storeID, theme.RefCollection, id.String(), "CONTENT_IN_USE"); err != nil {
		return err
	}
	tag, err := tx.tx.Exec(ctx, `DELETE FROM collections WHERE store_id = $1 AND id = $2`, storeID, id)
	if err != nil {
		return fmt.Errorf("delete collection: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete collection %s: %w", id, ErrNotFound)
	}
	return nil
}

// FreeCollectionHandle derives a free handle from a title: FromTitle, or
// "collection" when nothing of it is usable, then -2, -3 … while taken.
func (tx *Tx) FreeCollectionHandle(ctx context.Context, storeID uuid.UUID, title string) (string, error) {
	stem := handle.FromTitle(title)
	if stem == "" {
		stem = "collection"
	}
	free, err := tx.freeHandles(ctx, "collections", storeID, []string{stem})
	if err != nil {
		return "", err
	}
	return free[0], nil
}

// createCategoryCollection gives a new category its smart collection
// {category equals <id>}, with the category's id, a handle from its name and
// the name as its title in the store's language (decisions §22).
func (tx *Tx) createCategoryCollection(ctx context.Context, cat Category) error {
	h, err := tx.FreeCollectionHandle(ctx, cat.StoreID, cat.Name)
	if err != nil {
		return err
	}
	var lang string
	if err := tx.tx.QueryRow(ctx, `SELECT default_language FROM stores WHERE id = $1`, cat.StoreID).Scan(&lang); err != nil {
		return fmt.Errorf("read store language: %w", err)
	}
	title := CollectionText{En: cat.Name}
	if lang == "ar" {
		title = CollectionText{Ar: cat.Name}
	}
	value, _ := json.Marshal(cat.ID.String())
	rules := CollectionRules{Match: "all", Conditions: []CollectionCondition{{Field: "category", Relation: RelEquals, Value: value}}}
	return tx.insertCollection(ctx, Collection{ID: cat.ID, StoreID: cat.StoreID, Handle: h, Title: title, Kind: "smart", Rules: &rules,
		Sort: "best_selling", Published: true, CreatedAt: cat.CreatedAt})
}
