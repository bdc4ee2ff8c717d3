package storage_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// A process keeps a store's compiled smart rules between product writes;
// rules applied, collections created and collections deleted by another
// process (another handle on the database) are seen by its next write.
func TestCollectionSmartRulesFollowOtherProcesses(t *testing.T) {
	ctx := context.Background()
	url := testenv.DatabaseURL(t, true)
	open := func() *storage.DB {
		db, err := storage.Open(ctx, url)
		require.NoError(t, err)
		t.Cleanup(db.Close)
		return db
	}
	writer, other := open(), open()

	user := storage.User{Email: "rules@example.com", PasswordHash: "x", Name: "Rules"}
	store := storage.Store{Name: "Rules", Subdomain: "rules-cache", Currency: "EGP", DefaultLanguage: "ar"}
	p := storage.Product{Name: "Hat", Price: 1000}
	value := func(v any) json.RawMessage { raw, _ := json.Marshal(v); return raw }
	smart := func(field, relation string, v any) storage.Collection {
		return storage.Collection{StoreID: store.ID, Kind: "smart", Published: true, Title: storage.CollectionText{En: field}, Handle: field,
			Rules: &storage.CollectionRules{Match: "all", Conditions: []storage.CollectionCondition{{Field: field, Relation: relation, Value: value(v)}}}}
	}
	var cheap storage.Collection
	require.NoError(t, writer.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		p.StoreID = store.ID
		if err := tx.CreateProduct(ctx, &p); err != nil {
			return err
		}
		cheap = smart("price", storage.RelLessThan, 2000)
		return tx.CreateCollection(ctx, &cheap)
	}))
	members := func(c storage.Collection) []uuid.UUID {
		products, _, err := writer.FindCollectionProducts(ctx, store.ID, c.ID, storage.CollectionProductsQuery{Sort: "manual",
			Page: storage.Page{Page: 1, Limit: 10}})
		require.NoError(t, err)
		ids := []uuid.UUID{}
		for _, p := range products {
			ids = append(ids, p.ID)
		}
		return ids
	}
	write := func(upd storage.ProductUpdate) {
		t.Helper()
		require.NoError(t, writer.InTx(ctx, func(tx *storage.Tx) error {
			_, err := tx.UpdateProduct(ctx, store.ID, p.ID, upd)
			return err
		}))
	}
	price := func(v int64) storage.ProductUpdate { return storage.ProductUpdate{Price: &v} }
	name := func(v string) storage.ProductUpdate { return storage.ProductUpdate{Name: &v} }
	require.Equal(t, []uuid.UUID{p.ID}, members(cheap))
	// The writer's process learns the rules.
	write(price(3000))
	require.Empty(t, members(cheap))
	write(price(1000))
	require.Equal(t, []uuid.UUID{p.ID}, members(cheap))

	// Another process changes the rules and rebuilds: the writer's next
	// write follows the new rules, not the ones it compiled.
	require.NoError(t, other.InTx(ctx, func(tx *storage.Tx) error {
		_, err := tx.UpdateCollection(ctx, store.ID, cheap.ID, storage.CollectionUpdate{Rules: smart("price", storage.RelGreaterThan, 5000).Rules})
		return err
	}))
	require.NoError(t, other.RebuildCollection(ctx, store.ID, cheap.ID))
	require.Empty(t, members(cheap))
	write(price(6000))
	require.Equal(t, []uuid.UUID{p.ID}, members(cheap), "the write evaluated the rules another process applied")

	// A collection another process creates is evaluated by the next write.
	shirts := smart("title", storage.RelContains, "shirt")
	require.NoError(t, other.InTx(ctx, func(tx *storage.Tx) error { return tx.CreateCollection(ctx, &shirts) }))
	write(name("Shirt"))
	require.Equal(t, []uuid.UUID{p.ID}, members(shirts), "the write evaluated the collection another process created")

	// One it deletes is not: the product matching it again writes nothing
	// for it (a member row of a deleted collection would be refused).
	write(name("Hat"))
	require.Empty(t, members(shirts))
	require.NoError(t, other.InTx(ctx, func(tx *storage.Tx) error { return tx.DeleteCollection(ctx, store.ID, shirts.ID) }))
	write(name("Shirt again"))
	require.Equal(t, []uuid.UUID{p.ID}, members(cheap))
}

// A page of a collection's products carries the total of the whole list:
// on the first page, on the last, and on one past the end (where no row
// carries it).
func TestCollectionProductsPageTotal(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	user := storage.User{Email: "pages@example.com", PasswordHash: "x", Name: "Pages"}
	store := storage.Store{Name: "Pages", Subdomain: "coll-pages", Currency: "EGP", DefaultLanguage: "ar"}
	var c storage.Collection
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		var ids []uuid.UUID
		for i := range 5 {
			p := storage.Product{StoreID: store.ID, Name: "P", Price: int64(1000 * (i + 1))}
			if i == 4 {
				p.Status = "draft"
			}
			if err := tx.CreateProduct(ctx, &p); err != nil {
				return err
			}
			ids = append(ids, p.ID)
		}
		c = storage.Collection{StoreID: store.ID, Kind: "manual", Handle: "picks", Title: storage.CollectionText{En: "Picks"}, Published: true}
		if err := tx.CreateCollection(ctx, &c); err != nil {
			return err
		}
		_, err := tx.AddCollectionProducts(ctx, store.ID, c.ID, ids)
		return err
	}))
	for _, tc := range []struct {
		page, rows, total int
		active            bool
	}{{1, 2, 5, false}, {3, 1, 5, false}, {4, 0, 5, false}, {1, 2, 4, true}, {2, 2, 4, true}, {3, 0, 4, true}, {9, 0, 4, true}} {
		products, total, err := db.FindCollectionProducts(ctx, store.ID, c.ID, storage.CollectionProductsQuery{Sort: "price_asc", ActiveOnly: tc.active,
			Page: storage.Page{Page: tc.page, Limit: 2}})
		require.NoError(t, err)
		require.Len(t, products, tc.rows, "page %d active %v", tc.page, tc.active)
		require.Equal(t, tc.total, total, "page %d active %v", tc.page, tc.active)
	}
}
