package migrations_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/migrations"
)

// databaseAt is a database of its own migrated up to version, to be seeded
// as the code of that time wrote it.
func databaseAt(t *testing.T, version int64) *sql.DB {
	db, err := sql.Open("pgx", testenv.DatabaseURL(t, false))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, migrations.UpTo(context.Background(), db, version))
	return db
}

// Migration 0049 fills the shipment and return of movements the stock
// moves wrote without them, from rows written in the same transaction,
// and leaves null what more than one shipment could have caused.
func TestMovementReferencesMigrationFromTheOldWay(t *testing.T) {
	ctx, db := context.Background(), databaseAt(t, 48)

	const (
		store   = "00000000-0000-0000-0000-0000000049b1"
		home    = "00000000-0000-0000-0000-0000000049c1"
		alex    = "00000000-0000-0000-0000-0000000049c2"
		product = "00000000-0000-0000-0000-0000000049d1"
		abaya   = "00000000-0000-0000-0000-0000000049e1"
	)
	exec := func(q interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}, query string, args ...any) {
		t.Helper()
		_, err := q.ExecContext(ctx, query, args...)
		require.NoError(t, err, query)
	}
	exec(db, `INSERT INTO users (id, email, password_hash, name, locale, created_at, updated_at)
		VALUES ('00000000-0000-0000-0000-0000000049a1', 'refs@example.com', 'x', 'Refs', 'ar', now(), now())`)
	exec(db, `INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, created_at, updated_at)
		VALUES ($1, '00000000-0000-0000-0000-0000000049a1', 'Refs', 'old-refs', 'EGP', 'ar', 'trial', now(), now())`, store)
	exec(db, `INSERT INTO locations (id, store_id, name, is_default, created_at, updated_at)
		VALUES ($2, $1, 'المستودع الرئيسي', true, now(), now()), ($3, $1, 'Alexandria', false, now(), now())`, store, home, alex)
	exec(db, `INSERT INTO products (id, store_id, name, price) VALUES ($2, $1, 'Abaya', 45000)`, store, product)
	exec(db, `INSERT INTO variants (id, store_id, product_id, sku, price, position) VALUES ($2, $1, $3, 'ABAYA-M', 45000, 1)`, store, abaya, product)

	// order places an order of n abayas (one line, id lineOf(order)).
	lineOf := func(orderID string) string { return orderID[:24] + "5" + orderID[25:] }
	order := func(id, number string, n int) {
		exec(db, `INSERT INTO orders (id, store_id, order_number, status, payment_method, currency, customer, shipping_address, subtotal, total, collectible_total)
			VALUES ($1, $2, $3, 'SHIPPED', 'cod', 'EGP', '{}', '{}', 45000, 45000, 45000)`, id, store, number)
		exec(db, `INSERT INTO order_lines (id, store_id, order_id, variant_id, product_id, name, quantity, unit_price, total, position)
			VALUES ($1, $2, $3, $4, $5, 'Abaya', $6, 45000, 45000, 1)`, lineOf(id), store, id, abaya, product, n)
	}
	shipment := func(id, orderID, number, location string, n int, at time.Time) {
		exec(db, `INSERT INTO shipments (id, store_id, order_id, number, status, location_id, carrier, created_at, updated_at, shipped_at)
			VALUES ($1, $2, $3, $4, 'in_transit', $5, 'bosta', $6, $6, $6)`, id, store, orderID, number, location, at)
		exec(db, `INSERT INTO shipment_lines (store_id, shipment_id, line_id, quantity) VALUES ($1, $2, $3, $4)`, store, id, lineOf(orderID), n)
	}
	// oldTx writes what one transaction of the old code wrote: movements
	// stamped first, then the rows of their cause a few microseconds on.
	type movement struct {
		id, orderID, location, reason, note string
		onHand, reserved                    int
	}
	oldTx := func(at time.Time, movements []movement, causes ...string) {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		for i, m := range movements {
			exec(tx, `INSERT INTO inventory_movements (id, store_id, variant_id, location_id, reason, on_hand_delta, reserved_delta,
					on_hand_after, reserved_after, order_id, note, actor_type, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, 10, 0, $8, $9, 'user', $10)`, m.id, store, abaya, m.location, m.reason, m.onHand, m.reserved,
				m.orderID, m.note, at.Add(time.Duration(i)*time.Microsecond))
		}
		for _, c := range causes {
			exec(tx, c, store, at.Add(300*time.Microsecond))
		}
		require.NoError(t, tx.Commit())
	}
	event := func(shipmentID, status, source string) string {
		return `INSERT INTO shipment_events (store_id, shipment_id, status, occurred_at, source, applied, created_at)
			VALUES ($1, '` + shipmentID + `', '` + status + `', $2, '` + source + `', true, $2)`
	}
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

	// Two parcels of one order, each leaving on its own.
	const twoParcels, first, second = "00000000-0000-0000-0000-000000490001", "00000000-0000-0000-0000-000000491001", "00000000-0000-0000-0000-000000491002"
	order(twoParcels, "ORD-2001", 3)
	shipment(first, twoParcels, "ORD-2001-1", home, 2, start)
	shipment(second, twoParcels, "ORD-2001-2", home, 1, start)
	oldTx(start, []movement{{id: "00000000-0000-0000-0000-000000492001", orderID: twoParcels, location: home, reason: "order_ship", onHand: -2, reserved: -2}},
		event(first, "in_transit", "api"))
	oldTx(start.Add(time.Second), []movement{{id: "00000000-0000-0000-0000-000000492002", orderID: twoParcels, location: home, reason: "order_ship", onHand: -1, reserved: -1}},
		event(second, "out_for_delivery", "carrier"))

	// Two parcels of one order sent off together (the SHIPPED status
	// endpoint): either could have taken the units.
	const together, third, fourth = "00000000-0000-0000-0000-000000490002", "00000000-0000-0000-0000-000000491003", "00000000-0000-0000-0000-000000491004"
	order(together, "ORD-2002", 2)
	shipment(third, together, "ORD-2002-1", home, 1, start)
	shipment(fourth, together, "ORD-2002-2", home, 1, start)
	oldTx(start.Add(2*time.Second), []movement{{id: "00000000-0000-0000-0000-000000492003", orderID: together, location: home, reason: "order_ship", onHand: -2, reserved: -2}},
		event(third, "in_transit", "system"), event(fourth, "in_transit", "system"))

	// A reservation moved to a new parcel's location.
	const moved, movedShipment = "00000000-0000-0000-0000-000000490003", "00000000-0000-0000-0000-000000491005"
	order(moved, "ORD-2003", 2)
	shipment(movedShipment, moved, "ORD-2003-1", alex, 2, start)
	const note = "reservation moved to the shipment's location"
	oldTx(start.Add(3*time.Second), []movement{
		{id: "00000000-0000-0000-0000-000000492004", orderID: moved, location: home, reason: "order_release", note: note, reserved: -2},
		{id: "00000000-0000-0000-0000-000000492005", orderID: moved, location: alex, reason: "order_release", note: note, reserved: 2},
	}, event(movedShipment, "label_created", "api"))

	// A parcel refused at the door and its return received.
	const refusedOrder, refused, refusal = "00000000-0000-0000-0000-000000490004", "00000000-0000-0000-0000-000000491006", "00000000-0000-0000-0000-000000493001"
	order(refusedOrder, "ORD-2004", 2)
	shipment(refused, refusedOrder, "ORD-2004-1", home, 2, start)
	exec(db, `INSERT INTO returns (id, store_id, order_id, shipment_id, status, suggested_refund, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 'approved', 0, $5, $5)`, refusal, store, refusedOrder, refused, start)
	exec(db, `INSERT INTO return_lines (store_id, return_id, line_id, position, quantity, reason) VALUES ($1, $2, $3, 1, 2, 'refused_delivery')`,
		store, refusal, lineOf(refusedOrder))
	oldTx(start.Add(4*time.Second), []movement{{id: "00000000-0000-0000-0000-000000492006", orderID: refusedOrder, location: home, reason: "return_restock", onHand: 2}},
		`UPDATE return_lines SET received_quantity = 2, restocked_quantity = 2, location_id = '`+home+`' WHERE store_id = $1 AND return_id = '`+refusal+`' AND $2::timestamptz IS NOT NULL`,
		`UPDATE returns SET status = 'received', updated_at = $2 WHERE store_id = $1 AND id = '`+refusal+`'`)

	// Pieces refused at the door in a partial acceptance of a departed parcel.
	const accepted, door = "00000000-0000-0000-0000-000000490005", "00000000-0000-0000-0000-000000491007"
	order(accepted, "ORD-2005", 3)
	shipment(door, accepted, "ORD-2005-1", home, 3, start)
	oldTx(start.Add(5*time.Second), []movement{{id: "00000000-0000-0000-0000-000000492007", orderID: accepted, location: home, reason: "return_restock", onHand: 2}},
		event(door, "delivered", "system"))

	// An order_ship whose parcel's event came in another transaction.
	const elsewhere, late = "00000000-0000-0000-0000-000000490006", "00000000-0000-0000-0000-000000491008"
	order(elsewhere, "ORD-2006", 1)
	shipment(late, elsewhere, "ORD-2006-1", home, 1, start)
	oldTx(start.Add(6*time.Second), []movement{{id: "00000000-0000-0000-0000-000000492008", orderID: elsewhere, location: home, reason: "order_ship", onHand: -1, reserved: -1}})
	oldTx(start.Add(6*time.Second), nil, event(late, "in_transit", "api"))

	require.NoError(t, migrations.Up(ctx, db))

	type ref struct{ reason, shipment, ret string }
	got := map[string]ref{}
	rows, err := db.QueryContext(ctx, `SELECT id, reason, COALESCE(shipment_id::text, ''), COALESCE(return_id::text, '') FROM inventory_movements WHERE store_id = $1`, store)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id string
		var r ref
		require.NoError(t, rows.Scan(&id, &r.reason, &r.shipment, &r.ret))
		got[id] = r
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]ref{
		"00000000-0000-0000-0000-000000492001": {reason: "order_ship", shipment: first},
		"00000000-0000-0000-0000-000000492002": {reason: "order_ship", shipment: second},
		"00000000-0000-0000-0000-000000492003": {reason: "order_ship"}, // two parcels left together
		"00000000-0000-0000-0000-000000492004": {reason: "order_release", shipment: movedShipment},
		"00000000-0000-0000-0000-000000492005": {reason: "order_reserve", shipment: movedShipment},
		"00000000-0000-0000-0000-000000492006": {reason: "return_restock", shipment: refused, ret: refusal},
		"00000000-0000-0000-0000-000000492007": {reason: "return_restock", shipment: door},
		"00000000-0000-0000-0000-000000492008": {reason: "order_ship"}, // no event in its transaction
	}, got)
}
