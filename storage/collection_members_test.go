package storage_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// The storefront's page finds the collection, orders and counts its active
// members in one query: in each sort, as the collection's own or asked
// for, it answers what the two-step read answers; a collection not there
// or not published is not found, and an empty one is an empty page.
func TestPublishedCollectionProductsInOneQuery(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	user := storage.User{Email: "front@example.com", PasswordHash: "x", Name: "Front"}
	store := storage.Store{Name: "Front", Subdomain: "coll-front-page", Currency: "EGP", DefaultLanguage: "ar"}
	var c, empty, hidden storage.Collection
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		var ids []uuid.UUID
		for i, name := range []string{"banana", "Apple", "cherry", "date", "Elder", "fig"} {
			p := storage.Product{StoreID: store.ID, Name: name, Price: int64(1000 * ((i*7)%6 + 1))}
			if i == 3 {
				p.Status = "draft"
			}
			if err := tx.CreateProduct(ctx, &p); err != nil {
				return err
			}
			ids = append(ids, p.ID)
		}
		// Added out of their creation order, so manual and newest differ.
		ids[0], ids[4] = ids[4], ids[0]
		c = storage.Collection{StoreID: store.ID, Kind: "manual", Handle: "fruit", Title: storage.CollectionText{En: "Fruit"}, Published: true}
		empty = storage.Collection{StoreID: store.ID, Kind: "manual", Handle: "empty", Title: storage.CollectionText{En: "Empty"}, Published: true}
		hidden = storage.Collection{StoreID: store.ID, Kind: "manual", Handle: "hidden", Title: storage.CollectionText{En: "Hidden"}}
		for _, col := range []*storage.Collection{&c, &empty, &hidden} {
			if err := tx.CreateCollection(ctx, col); err != nil {
				return err
			}
		}
		if _, err := tx.AddCollectionProducts(ctx, store.ID, c.ID, ids); err != nil {
			return err
		}
		_, err := tx.AddCollectionProducts(ctx, store.ID, hidden.ID, ids)
		return err
	}))
	names := func(products []storage.Product) []string {
		out := []string{}
		for _, p := range products {
			out = append(out, p.Name)
		}
		return out
	}
	seen := map[string]bool{}
	for _, sort := range storage.CollectionSorts {
		require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
			_, err := tx.UpdateCollection(ctx, store.ID, c.ID, storage.CollectionUpdate{Sort: &sort})
			return err
		}))
		for _, p := range []storage.Page{{Page: 1, Limit: 3}, {Page: 2, Limit: 3}} {
			want, wantTotal, err := db.FindCollectionProducts(ctx, store.ID, c.ID, storage.CollectionProductsQuery{Sort: sort, ActiveOnly: true, Page: p})
			require.NoError(t, err)
			for _, asked := range []string{"", sort} {
				got, total, err := db.FindPublishedCollectionProducts(ctx, store.ID, "fruit", asked, p)
				require.NoError(t, err)
				require.Equal(t, names(want), names(got), "sort %s (asked %q), page %d", sort, asked, p.Page)
				require.Equal(t, wantTotal, total)
				require.Equal(t, 5, total)
			}
			if p.Page == 1 {
				seen[fmt.Sprint(names(want))] = true
			}
		}
	}
	require.GreaterOrEqual(t, len(seen), 4, "the sorts order the fruit differently: %v", seen)
	// Asked for another sort than its own.
	got, _, err := db.FindPublishedCollectionProducts(ctx, store.ID, "fruit", "price_desc", storage.Page{Page: 1, Limit: 10})
	require.NoError(t, err)
	want, _, err := db.FindCollectionProducts(ctx, store.ID, c.ID, storage.CollectionProductsQuery{Sort: "price_desc", ActiveOnly: true,
		Page: storage.Page{Page: 1, Limit: 10}})
	require.NoError(t, err)
	require.Equal(t, names(want), names(got))

	got, total, err := db.FindPublishedCollectionProducts(ctx, store.ID, "fruit", "", storage.Page{Page: 3, Limit: 3})
	require.NoError(t, err)
	require.Empty(t, got)
	require.Equal(t, 5, total, "a page past the end still counts")
	got, total, err = db.FindPublishedCollectionProducts(ctx, store.ID, "empty", "", storage.Page{Page: 1, Limit: 3})
	require.NoError(t, err)
	require.Empty(t, got)
	require.Zero(t, total)
	for _, h := range []string{"hidden", "nothing"} {
		_, _, err := db.FindPublishedCollectionProducts(ctx, store.ID, h, "", storage.Page{Page: 1, Limit: 3})
		require.ErrorIs(t, err, storage.ErrNotFound, h)
	}
}
