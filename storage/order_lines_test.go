package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// An order's lines are written in one statement: each keeps its id, its
// position in the order as asked, a SKU or none, and first_of_product on
// the first line of each product only; a placed order's lines carry its
// time as sold_at, a draft's none.
func TestOrderLinesKeepTheirPositionsAndFirstOfProduct(t *testing.T) {
	cs := newCartStore(t, 60)
	db, conn := cs.db, testenv.SQL(t, cs.db)
	ctx := context.Background()
	var abaya uuid.UUID
	require.NoError(t, conn.QueryRow(ctx, `SELECT product_id FROM variants WHERE id = $1`, cs.variant).Scan(&abaya))

	var otherVariant, otherProductVariant uuid.UUID
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		large := storage.Variant{StoreID: cs.storeID, ProductID: abaya, SKU: ptr("ABAYA-L"), Price: 47000, Quantity: 100}
		if err := tx.CreateVariant(ctx, &large, true, true); err != nil {
			return err
		}
		scarf := storage.Product{StoreID: cs.storeID, Name: "Scarf", Price: 9000, Status: "active"}
		if err := tx.CreateProduct(ctx, &scarf); err != nil {
			return err
		}
		v := storage.Variant{StoreID: cs.storeID, ProductID: scarf.ID, Price: 9000, Quantity: 100}
		if err := tx.CreateVariant(ctx, &v, true, true); err != nil {
			return err
		}
		otherVariant, otherProductVariant = large.ID, v.ID
		return nil
	}))

	type storedLine struct {
		id             uuid.UUID
		position       int
		sku            *string
		quantity       int
		firstOfProduct bool
		soldAt         *time.Time
	}
	for _, draft := range []bool{false, true} {
		var order storage.Order
		require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
			var err error
			order, err = tx.CreateOrder(ctx, storage.NewOrder{StoreID: cs.storeID, PaymentMethod: "cod", Draft: draft,
				ShippingAddress: []byte(`{"name":"Mona","phone":"+201001234567","line1":"12 Tahrir St","city":"Cairo","country":"EG"}`),
				Customer:        &storage.OrderCustomer{Name: "Mona", Phone: ptr("+201001234567")},
				Lines: []storage.NewOrderLine{{VariantID: otherProductVariant, Quantity: 1}, {VariantID: cs.variant, Quantity: 2},
					{VariantID: otherVariant, Quantity: 3}}})
			return err
		}))
		require.Len(t, order.Lines, 3)
		rows, err := conn.Query(ctx, `SELECT id, position, sku, quantity, first_of_product, sold_at FROM order_lines
			WHERE store_id = $1 AND order_id = $2 ORDER BY position`, cs.storeID, order.ID)
		require.NoError(t, err)
		stored, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storedLine, error) {
			var l storedLine
			return l, row.Scan(&l.id, &l.position, &l.sku, &l.quantity, &l.firstOfProduct, &l.soldAt)
		})
		require.NoError(t, err)
		require.Len(t, stored, 3, "draft %v", draft)
		for i, l := range stored {
			require.Equal(t, order.Lines[i].ID, l.id, "line %d", i)
			require.Equal(t, i+1, l.position)
			require.Equal(t, order.Lines[i].Quantity, l.quantity)
			require.Equal(t, draft, l.soldAt == nil, "sold_at of line %d (draft %v)", i, draft)
		}
		require.Equal(t, []int{1, 2, 3}, []int{stored[0].quantity, stored[1].quantity, stored[2].quantity}, "in the order asked")
		require.Equal(t, []bool{true, true, false}, []bool{stored[0].firstOfProduct, stored[1].firstOfProduct, stored[2].firstOfProduct},
			"the second variant of a product does not count the order for it again")
		require.Nil(t, stored[0].sku)
		require.Equal(t, "ABAYA-L", *stored[2].sku)
		if !draft {
			require.WithinDuration(t, order.CreatedAt, *stored[0].soldAt, time.Millisecond)
		}
	}
}
