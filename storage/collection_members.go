package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Membership of collections. Smart membership is exact at commit: every
// product write re-evaluates the store's applied rules against the product
// as it now is (syncSmartMembership) and writes only what changed, in its
// own transaction; a rule change is applied by the rebuild
// (RebuildCollection), which swaps the whole set in one transaction.
//
// The two are kept apart by one advisory lock per store: product writes
// take it shared, the rebuild exclusive. The rebuild therefore reads the
// products after every write in flight has committed, and writes that come
// later wait for it and evaluate the rules it applied.

// lockSmartMembership takes the store's membership lock, shared or not.
func (tx *Tx) lockSmartMembership(ctx context.Context, storeID uuid.UUID, exclusive bool) error {
	fn := "pg_advisory_xact_lock_shared"
	if exclusive {
		fn = "pg_advisory_xact_lock"
	}
	if _, err := tx.tx.Exec(ctx, `SELECT `+fn+`(hashtextextended('collection-members:' || $1::text, 0))`, storeID); err != nil {
		return fmt.Errorf("lock collection membership: %w", err)
	}
	return nil
}

// productFactsSQL reads what the rules see of products: $1 the store, $2
// the product ids, or every product of the store when $2 is null.
const productFactsSQL = `WITH RECURSIVE chain (store_id, start, id, parent_id) AS (
		SELECT store_id, id, id, parent_id FROM categories WHERE store_id = $1
		UNION
		SELECT c.store_id, ch.start, c.id, c.parent_id FROM chain ch JOIN categories c ON c.store_id = ch.store_id AND c.id = ch.parent_id
	)
	SELECT p.id, p.category_id IS NOT NULL,
		COALESCE((SELECT array_agg(ch.id) FROM chain ch WHERE p.category_id IS NOT NULL AND ch.start = p.category_id), '{}'),
		array_append(COALESCE((SELECT array_agg(v.price) FROM variants v WHERE v.store_id = p.store_id AND v.product_id = p.id), '{}'), p.price),
		CASE WHEN jsonb_typeof(p.attributes->'tags') = 'array'
			THEN ARRAY(SELECT t FROM jsonb_array_elements_text(p.attributes->'tags') t) ELSE '{}' END,
		p.name,
		array_remove(array_append(COALESCE((SELECT array_agg(v.sku) FROM variants v WHERE v.store_id = p.store_id AND v.product_id = p.id), '{}'), p.sku), NULL),
		p.kind = 'gift_card' OR COALESCE((SELECT sum(v.quantity) FROM variants v WHERE v.store_id = p.store_id AND v.product_id = p.id), 0) > 0,
		p.created_at, p.kind
	FROM products p WHERE p.store_id = $1 AND ($2::uuid[] IS NULL OR p.id = ANY ($2))`

func scanFacts(rows pgx.Rows) ([]productFacts, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (productFacts, error) {
		var f productFacts
		err := row.Scan(&f.ID, &f.HasCat, &f.Categories, &f.Prices, &f.Tags, &f.Title, &f.SKUs, &f.Available, &f.CreatedAt, &f.Kind)
		return f, err
	})
}

// smartRule is one smart collection's applied rules.
type smartRule struct {
	id    uuid.UUID
	rules compiledRules
}

// smartRulesSQL reads the digest of a store's applied smart rules ($1 the
// store): how many smart collections it has and the sum of a 64-bit hash of
// each one's id and applied_version, which together name its applied_rules
// for good (they change only by the rebuild, which stores the rules of a
// version committed before it and bumps the version, and a new collection
// has a new id). A sum keeps the digest one pass over the store's
// collections, without sorting them or writing their ids as text. Unless
// the digest is $2, the rules the process knows by it, the collections'
// applied rules follow; the row without an id carries the digest alone.
const smartRulesSQL = `WITH d AS (
		SELECT count(*) || ':' || COALESCE(sum(uuid_hash_extended(id, applied_version)), 0) AS digest
		FROM collections WHERE store_id = $1 AND kind = 'smart')
	SELECT digest, NULL::uuid, NULL::jsonb FROM d
	UNION ALL
	SELECT d.digest, c.id, c.applied_rules FROM d JOIN collections c ON c.store_id = $1 AND c.kind = 'smart' WHERE d.digest <> $2`

// smartRuleSet is a store's applied smart rules, compiled, and the digest
// of what they were compiled from.
type smartRuleSet struct {
	digest string
	rules  []smartRule
}

// smartRuleCache keeps each store's compiled rules between transactions, so
// a product write reads a digest rather than every collection's rules
// (decoding 500 collections' JSON was most of a write's CPU,
// docs/benchmarks.md). A transaction uses the rules only when the digest
// it reads, under the membership lock, is theirs: a rule applied by any
// process is seen at once.
type smartRuleCache struct {
	mu     sync.Mutex
	stores map[uuid.UUID]smartRuleSet
}

// smartRuleCacheStores bounds the cache: past it, it starts afresh.
const smartRuleCacheStores = 2048

func newSmartRuleCache() *smartRuleCache {
	return &smartRuleCache{stores: map[uuid.UUID]smartRuleSet{}}
}

func (c *smartRuleCache) get(storeID uuid.UUID) (smartRuleSet, bool) {
	if c == nil {
		return smartRuleSet{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	set, ok := c.stores[storeID]
	return set, ok
}

func (c *smartRuleCache) put(storeID uuid.UUID, set smartRuleSet) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.stores) >= smartRuleCacheStores {
		clear(c.stores)
	}
	c.stores[storeID] = set
}

// syncSmartMembership brings the smart membership of products up to date
// with the store's applied rules: the caller has just written them (or
// their variants, stock or category) in this transaction.
func (tx *Tx) syncSmartMembership(ctx context.Context, storeID uuid.UUID, productIDs ...uuid.UUID) error {
	if len(productIDs) == 0 {
		return nil
	}
	if err := tx.lockSmartMembership(ctx, storeID, false); err != nil {
		return err
	}
	var (
		rules   []smartRule
		facts   []productFacts
		current = map[uuid.UUID]map[uuid.UUID]bool{} // product → smart collections it is in
	)
	batch := &pgx.Batch{}
	cached, known := tx.rules.get(storeID)
	asked := cached.digest
	if !known {
		asked = "-" // no digest is this: read the rules
	}
	var (
		digest string
		loaded []smartRule
	)
	batch.Queue(smartRulesSQL, storeID, asked).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var (
				id  *uuid.UUID
				raw *CollectionRules
			)
			if err := rows.Scan(&digest, &id, &raw); err != nil {
				return err
			}
			if id != nil && raw != nil {
				loaded = append(loaded, smartRule{id: *id, rules: compileRules(*raw)})
			}
		}
		return rows.Err()
	})
	batch.Queue(productFactsSQL, storeID, productIDs).Query(func(rows pgx.Rows) error {
		var err error
		facts, err = scanFacts(rows)
		return err
	})
	batch.Queue(`SELECT m.product_id, m.collection_id FROM collection_products m JOIN collections c ON c.id = m.collection_id AND c.kind = 'smart'
		WHERE m.store_id = $1 AND m.product_id = ANY ($2)`, storeID, productIDs).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var p, c uuid.UUID
			if err := rows.Scan(&p, &c); err != nil {
				return err
			}
			if current[p] == nil {
				current[p] = map[uuid.UUID]bool{}
			}
			current[p][c] = true
		}
		return rows.Err()
	})
	if err := tx.tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("read smart collections: %w", err)
	}
	if known && digest == cached.digest {
		rules = cached.rules
	} else {
		rules = loaded
		tx.rules.put(storeID, smartRuleSet{digest: digest, rules: rules})
	}
	if len(rules) == 0 {
		return nil
	}
	now := tx.now()
	var addC, addP, delC, delP []uuid.UUID
	for _, f := range facts {
		for _, r := range rules {
			in, want := current[f.ID][r.id], r.rules.matches(f, now)
			switch {
			case want && !in:
				addC, addP = append(addC, r.id), append(addP, f.ID)
			case in && !want:
				delC, delP = append(delC, r.id), append(delP, f.ID)
			}
		}
	}
	return tx.writeMembershipChanges(ctx, storeID, addC, addP, delC, delP)
}

// writeMembershipChanges adds (collection, product) pairs last in their
// collections and removes others.
func (tx *Tx) writeMembershipChanges(ctx context.Context, storeID uuid.UUID, addC, addP, delC, delP []uuid.UUID) error {
	if len(delC) > 0 {
		if _, err := tx.tx.Exec(ctx, `DELETE FROM collection_products m USING unnest($2::uuid[], $3::uuid[]) AS d(c, p)
			WHERE m.store_id = $1 AND m.collection_id = d.c AND m.product_id = d.p`, storeID, delC, delP); err != nil {
			return fmt.Errorf("remove collection members: %w", err)
		}
	}
	if len(addC) > 0 {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO collection_products (store_id, collection_id, product_id, position, added_at)
			SELECT $1, a.c, a.p,
				COALESCE((SELECT max(position) FROM collection_products m WHERE m.collection_id = a.c), 0) + row_number() OVER (PARTITION BY a.c ORDER BY a.n),
				$4
			FROM unnest($2::uuid[], $3::uuid[]) WITH ORDINALITY AS a(c, p, n)
			ON CONFLICT DO NOTHING`, storeID, addC, addP, tx.now()); err != nil {
			return fmt.Errorf("add collection members: %w", err)
		}
	}
	return nil
}

// applyRules makes a smart collection's members those of its rules, and
// its applied rules the rules, in this transaction (the rebuild's swap).
func (tx *Tx) applyRules(ctx context.Context, storeID, id uuid.UUID) error {
	if err := tx.lockSmartMembership(ctx, storeID, true); err != nil {
		return err
	}
	var (
		rules   CollectionRules
		version int
	)
	if err := tx.tx.QueryRow(ctx, `SELECT rules, rules_version FROM collections WHERE store_id = $1 AND id = $2 AND kind = 'smart' FOR NO KEY UPDATE`,
		storeID, id).Scan(&rules, &version); err != nil {
		return notFoundIfNoRows(err, "rebuild collection "+id.String())
	}
	rows, err := tx.tx.Query(ctx, productFactsSQL, storeID, nil)
	if err != nil {
		return fmt.Errorf("read products for rebuild: %w", err)
	}
	facts, err := scanFacts(rows)
	if err != nil {
		return fmt.Errorf("read products for rebuild: %w", err)
	}
	rows, err = tx.tx.Query(ctx, `SELECT product_id FROM collection_products WHERE store_id = $1 AND collection_id = $2`, storeID, id)
	if err != nil {
		return fmt.Errorf("read collection members: %w", err)
	}
	members, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return fmt.Errorf("read collection members: %w", err)
	}
	in := make(map[uuid.UUID]bool, len(members))
	for _, m := range members {
		in[m] = true
	}
	compiled, now := compileRules(rules), tx.now()
	// New members join in the order products were created.
	slices.SortFunc(facts, func(a, b productFacts) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return slices.Compare(a.ID[:], b.ID[:])
	})
	var addC, addP, delC, delP []uuid.UUID
	for _, f := range facts {
		want := compiled.matches(f, now)
		switch {
		case want && !in[f.ID]:
			addC, addP = append(addC, id), append(addP, f.ID)
		case !want && in[f.ID]:
			delC, delP = append(delC, id), append(delP, f.ID)
		}
	}
	if err := tx.writeMembershipChanges(ctx, storeID, addC, addP, delC, delP); err != nil {
		return err
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE collections SET applied_rules = rules, applied_version = $3 WHERE store_id = $1 AND id = $2`,
		storeID, id, version); err != nil {
		return fmt.Errorf("apply collection rules: %w", err)
	}
	return nil
}

// RebuildCollection applies a smart collection's latest rules: its members
// change at once, when the transaction commits. A collection gone or made
// current already is nothing to do.
func (db *DB) RebuildCollection(ctx context.Context, storeID, id uuid.UUID) error {
	return db.InTx(ctx, func(tx *Tx) error {
		var current bool
		err := tx.tx.QueryRow(ctx, `SELECT applied_version >= rules_version FROM collections WHERE store_id = $1 AND id = $2`, storeID, id).Scan(&current)
		if err == pgx.ErrNoRows || (err == nil && current) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("rebuild collection: %w", err)
		}
		return tx.applyRules(ctx, storeID, id)
	})
}

// CollectionRebuild is a rule change waiting for its rebuild.
type CollectionRebuild struct {
	StoreID        uuid.UUID
	CollectionID   uuid.UUID
	Version        int
	Handle         string
	StoreSubdomain string
}

// FindCollectionRebuildsDue lists collections whose latest rules have no
// rebuild started.
func (db *DB) FindCollectionRebuildsDue(ctx context.Context, limit int) ([]CollectionRebuild, error) {
	rows, err := db.pool.Query(ctx, `SELECT c.store_id, c.id, c.rules_version, c.handle, COALESCE(s.subdomain, '')
		FROM collections c LEFT JOIN stores s ON s.id = c.store_id
		WHERE c.rules_version > c.rebuild_started ORDER BY c.created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find collection rebuilds due: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (CollectionRebuild, error) {
		var r CollectionRebuild
		return r, row.Scan(&r.StoreID, &r.CollectionID, &r.Version, &r.Handle, &r.StoreSubdomain)
	})
}

// MarkCollectionRebuildStarted records that a rebuild of the version started.
func (db *DB) MarkCollectionRebuildStarted(ctx context.Context, r CollectionRebuild) error {
	if _, err := db.pool.Exec(ctx, `UPDATE collections SET rebuild_started = GREATEST(rebuild_started, $3) WHERE store_id = $1 AND id = $2`,
		r.StoreID, r.CollectionID, r.Version); err != nil {
		return fmt.Errorf("mark collection rebuild started: %w", err)
	}
	return nil
}

// CollectionMembershipChange answers a manual add or removal: the products
// changed and those skipped (already in, or not in, the collection).
type CollectionMembershipChange struct {
	Changed []uuid.UUID
	Skipped []uuid.UUID
}

// lockManualCollection locks a collection for a change of its members,
// refusing a smart one.
func (tx *Tx) lockManualCollection(ctx context.Context, storeID, id uuid.UUID) error {
	var kind string
	if err := tx.tx.QueryRow(ctx, `SELECT kind FROM collections WHERE store_id = $1 AND id = $2 FOR NO KEY UPDATE`, storeID, id).Scan(&kind); err != nil {
		return notFoundIfNoRows(err, "collection "+id.String())
	}
	if kind == "smart" {
		return fmt.Errorf("collection %s: %w", id, ErrCollectionIsSmart)
	}
	return nil
}

// AddCollectionProducts adds products to a manual collection, last in its
// order, in the order given. A product of another store is refused with
// its index; one already in is skipped.
func (tx *Tx) AddCollectionProducts(ctx context.Context, storeID, id uuid.UUID, productIDs []uuid.UUID) (CollectionMembershipChange, error) {
	// Shared, like a product write: a product deleted meanwhile waits for
	// this to commit (its key-share lock below) and then removes its row.
	if err := tx.lockSmartMembership(ctx, storeID, false); err != nil {
		return CollectionMembershipChange{}, err
	}
	if err := tx.lockManualCollection(ctx, storeID, id); err != nil {
		return CollectionMembershipChange{}, err
	}
	if err := tx.checkProductsExist(ctx, storeID, productIDs); err != nil {
		return CollectionMembershipChange{}, err
	}
	rows, err := tx.tx.Query(ctx, `INSERT INTO collection_products (store_id, collection_id, product_id, position, added_at)
		SELECT $1, $2, a.p, COALESCE((SELECT max(position) FROM collection_products m WHERE m.collection_id = $2), 0) + a.n, $4
		FROM (SELECT DISTINCT ON (p) p, n FROM unnest($3::uuid[]) WITH ORDINALITY AS a(p, n) ORDER BY p, n) a
		ON CONFLICT DO NOTHING RETURNING product_id`, storeID, id, productIDs, tx.now())
	if err != nil {
		return CollectionMembershipChange{}, fmt.Errorf("add collection products: %w", err)
	}
	added, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return CollectionMembershipChange{}, fmt.Errorf("add collection products: %w", err)
	}
	return splitChange(productIDs, added), nil
}

// RemoveCollectionProducts takes products out of a manual collection; one
// not in it is skipped.
func (tx *Tx) RemoveCollectionProducts(ctx context.Context, storeID, id uuid.UUID, productIDs []uuid.UUID) (CollectionMembershipChange, error) {
	if err := tx.lockManualCollection(ctx, storeID, id); err != nil {
		return CollectionMembershipChange{}, err
	}
	rows, err := tx.tx.Query(ctx, `DELETE FROM collection_products WHERE store_id = $1 AND collection_id = $2 AND product_id = ANY ($3)
		RETURNING product_id`, storeID, id, productIDs)
	if err != nil {
		return CollectionMembershipChange{}, fmt.Errorf("remove collection products: %w", err)
	}
	removed, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return CollectionMembershipChange{}, fmt.Errorf("remove collection products: %w", err)
	}
	return splitChange(productIDs, removed), nil
}

// splitChange orders the changed ids as asked and lists the rest once each.
func splitChange(asked, changed []uuid.UUID) CollectionMembershipChange {
	out := CollectionMembershipChange{Changed: []uuid.UUID{}, Skipped: []uuid.UUID{}}
	seen := map[uuid.UUID]bool{}
	for _, id := range asked {
		if seen[id] {
			continue
		}
		seen[id] = true
		if slices.Contains(changed, id) {
			out.Changed = append(out.Changed, id)
		} else {
			out.Skipped = append(out.Skipped, id)
		}
	}
	return out
}

func (tx *Tx) checkProductsExist(ctx context.Context, storeID uuid.UUID, ids []uuid.UUID) error {
	rows, err := tx.tx.Query(ctx, `SELECT id FROM products WHERE store_id = $1 AND id = ANY ($2) ORDER BY id FOR KEY SHARE`, storeID, ids)
	if err != nil {
		return fmt.Errorf("check products: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return fmt.Errorf("check products: %w", err)
	}
	for i, id := range ids {
		if !slices.Contains(found, id) {
			return &InvalidError{Field: fmt.Sprintf("product_ids[%d]", i), Code: "not_found", Message: "no such product in this store"}
		}
	}
	return nil
}

// OrderCollectionProducts sets a collection's manual order: ids must be
// exactly its members, each once.
func (tx *Tx) OrderCollectionProducts(ctx context.Context, storeID, id uuid.UUID, productIDs []uuid.UUID) error {
	// A smart collection's members may change with any product write: its
	// set is read under the membership lock, taken before the collection's
	// as the rebuild takes them.
	if err := tx.lockSmartMembership(ctx, storeID, true); err != nil {
		return err
	}
	if _, err := tx.tx.Exec(ctx, `SELECT 1 FROM collections WHERE store_id = $1 AND id = $2 FOR NO KEY UPDATE`, storeID, id); err != nil {
		return fmt.Errorf("lock collection: %w", err)
	}
	if _, err := tx.FindCollectionByID(ctx, storeID, id); err != nil {
		return err
	}
	rows, err := tx.tx.Query(ctx, `SELECT product_id FROM collection_products WHERE store_id = $1 AND collection_id = $2`, storeID, id)
	if err != nil {
		return fmt.Errorf("read collection members: %w", err)
	}
	members, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return fmt.Errorf("read collection members: %w", err)
	}
	given := slices.Clone(productIDs)
	sortIDs(given)
	sortIDs(members)
	if !slices.Equal(given, members) {
		return &InvalidError{Field: "product_ids", Code: "mismatch",
			Message: fmt.Sprintf("must list each of the collection's %d products once", len(members))}
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE collection_products m SET position = o.n FROM unnest($3::uuid[]) WITH ORDINALITY AS o(p, n)
		WHERE m.store_id = $1 AND m.collection_id = $2 AND m.product_id = o.p`, storeID, id, productIDs); err != nil {
		return fmt.Errorf("order collection products: %w", err)
	}
	_, err = tx.tx.Exec(ctx, `UPDATE collections SET updated_at = $3 WHERE store_id = $1 AND id = $2`, storeID, id, tx.now())
	return err
}

func sortIDs(ids []uuid.UUID) {
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
}

// CollectionProductsQuery is a page of a collection's products.
type CollectionProductsQuery struct {
	Sort string // one of CollectionSorts; the collection's own when empty
	// ActiveOnly keeps the products the storefront shows.
	ActiveOnly bool
	Page       Page
}

// collectionSortKey is one key of a sort's ORDER BY over products p and
// members m.
type collectionSortKey struct{ expr, dir string }

// collectionSortKeys are each sort's keys before the final p.id ($3 is the
// start of best selling's 30 days).
var collectionSortKeys = map[string][]collectionSortKey{
	"manual":     {{"m.position", "ASC"}},
	"price_asc":  {{"p.price", "ASC"}},
	"price_desc": {{"p.price", "DESC"}},
	"newest":     {{"p.created_at", "DESC"}},
	"title":      {{`p.name COLLATE "ar-x-icu"`, "ASC"}},
	"best_selling": {{`(SELECT COALESCE(sum(l.quantity - l.returned_quantity), 0) FROM order_lines l
		WHERE l.store_id = p.store_id AND l.product_id = p.id AND l.sold_at >= $3)`, "DESC"}, {"m.position", "ASC"}},
}

// collectionOrder is each sort's ORDER BY.
var collectionOrder = func() map[string]string {
	out := map[string]string{}
	for sort, keys := range collectionSortKeys {
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(k.expr + " " + k.dir + ", ")
		}
		out[sort] = b.String() + "p.id"
	}
	return out
}()

// collectionOwnOrder orders by the sort of the collection c the query
// reads: every sort's keys, each only where c.sort is that sort (the
// others are null for every row and order nothing).
var collectionOwnOrder = func() string {
	var b strings.Builder
	for _, sort := range CollectionSorts {
		for _, k := range collectionSortKeys[sort] {
			fmt.Fprintf(&b, "CASE WHEN c.sort = '%s' THEN %s END %s, ", sort, k.expr, k.dir)
		}
	}
	return b.String() + "p.id"
}()

// FindCollectionProducts returns a page of a collection's products in its
// sort (best selling counts units sold over the last 30 days), and how many
// there are. The total comes with the page, counted over the rows the sort
// reads anyway (count(*) OVER ()); only a page past the end counts apart.
func (r reader) FindCollectionProducts(ctx context.Context, storeID, id uuid.UUID, q CollectionProductsQuery) ([]Product, int, error) {
	order, ok := collectionOrder[q.Sort]
	if !ok {
		return nil, 0, fmt.Errorf("find collection products: unknown sort %q", q.Sort)
	}
	from := `FROM collection_products m JOIN products p ON p.store_id = m.store_id AND p.id = m.product_id
		WHERE m.store_id = $1 AND m.collection_id = $2`
	if q.ActiveOnly {
		from += ` AND p.status = 'active'`
	}
	since := Now().Add(-30 * 24 * time.Hour)
	rows, err := r.q.Query(ctx, `SELECT `+qualifiedProductColumns+`, count(*) OVER () `+from+` AND $3::timestamptz IS NOT NULL ORDER BY `+order+` LIMIT $4 OFFSET $5`,
		storeID, id, since, q.Page.Limit, q.Page.Offset())
	if err != nil {
		return nil, 0, fmt.Errorf("find collection products: %w", err)
	}
	products, total, err := scanCollectionPage(rows)
	if err != nil {
		return nil, 0, err
	}
	if len(products) == 0 && q.Page.Offset() > 0 {
		if err := r.q.QueryRow(ctx, `SELECT count(*) `+from, storeID, id).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("count collection products: %w", err)
		}
	}
	return products, total, nil
}

// FindPublishedCollectionProducts returns a page of the active products of
// a published collection found by its handle, in sort or, when sort is
// empty, the collection's own, and how many there are: one query finds
// the collection, orders its members and counts them. Only an empty answer
// looks again, to tell a collection that is not there (ErrNotFound) from a
// page with nothing on it.
func (r reader) FindPublishedCollectionProducts(ctx context.Context, storeID uuid.UUID, h, sort string, page Page) ([]Product, int, error) {
	order := collectionOwnOrder
	if sort != "" {
		var ok bool
		if order, ok = collectionOrder[sort]; !ok {
			return nil, 0, fmt.Errorf("find collection products: unknown sort %q", sort)
		}
	}
	rows, err := r.q.Query(ctx, `WITH c AS (SELECT id, sort FROM collections WHERE store_id = $1 AND handle = $2 AND published)
		SELECT `+qualifiedProductColumns+`, count(*) OVER ()
		FROM c JOIN collection_products m ON m.store_id = $1 AND m.collection_id = c.id
			JOIN products p ON p.store_id = m.store_id AND p.id = m.product_id
		WHERE p.status = 'active' AND $3::timestamptz IS NOT NULL
		ORDER BY `+order+` LIMIT $4 OFFSET $5`, storeID, h, Now().Add(-30*24*time.Hour), page.Limit, page.Offset())
	if err != nil {
		return nil, 0, fmt.Errorf("find collection products: %w", err)
	}
	products, total, err := scanCollectionPage(rows)
	if err != nil || len(products) > 0 {
		return products, total, err
	}
	id, _, err := r.FindPublishedCollectionPage(ctx, storeID, h)
	if err != nil {
		return nil, 0, err
	}
	if page.Offset() > 0 {
		if err := r.q.QueryRow(ctx, `SELECT count(*) FROM collection_products m JOIN products p ON p.store_id = m.store_id AND p.id = m.product_id
			WHERE m.store_id = $1 AND m.collection_id = $2 AND p.status = 'active'`, storeID, id).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("count collection products: %w", err)
		}
	}
	return products, total, nil
}

// scanCollectionPage reads qualifiedProductColumns and the total after them.
func scanCollectionPage(rows pgx.Rows) ([]Product, int, error) {
	total := 0
	products, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Product, error) {
		var p Product
		err := row.Scan(append(productFields(&p), &total)...)
		return p, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("find collection products: %w", err)
	}
	return products, total, nil
}

// qualifiedProductColumns are productColumns read through the alias p (in
// productFields' order).
const qualifiedProductColumns = `p.id, p.store_id, p.name, p.description, p.sku, p.price, p.cost_price, p.status,
	(SELECT COALESCE(sum(v.quantity), 0)::bigint FROM variants v WHERE v.store_id = p.store_id AND v.product_id = p.id) AS quantity,
	p.category_id, p.attributes, p.images, p.media_urls, p.created_at, p.updated_at, p.handle, p.kind, p.tax_class`
