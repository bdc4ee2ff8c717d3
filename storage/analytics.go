package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// SalesFigures are the order counters of decisions §17 summed over a
// period of placement, in minor units where they are money. The database
// keeps them per store and UTC quarter hour (order_rollups), written by
// triggers in the transaction of every change that moves one.
type SalesFigures struct {
	Orders          int64
	CancelledOrders int64
	GrossSales      int64
	Discounts       int64
	Returns         int64
	Shipping        int64
	Refunds         int64
	DeliveredOrders int64
	ReturnedOrders  int64
	CODOrders       int64
	CODDelivered    int64
	CODReturned     int64
	CODCollected    int64
	// GiftCardsSold is what gift card lines sold for (§19), left out of
	// GrossSales; cancelled orders excluded.
	GiftCardsSold int64
	// Checkouts abandoned in the period (by abandoned_at): still abandoned,
	// and recovered since.
	CheckoutsAbandoned int64
	CheckoutsRecovered int64
}

// Add adds other's figures to f.
func (f *SalesFigures) Add(other SalesFigures) {
	f.Orders += other.Orders
	f.CancelledOrders += other.CancelledOrders
	f.GrossSales += other.GrossSales
	f.Discounts += other.Discounts
	f.Returns += other.Returns
	f.Shipping += other.Shipping
	f.Refunds += other.Refunds
	f.DeliveredOrders += other.DeliveredOrders
	f.ReturnedOrders += other.ReturnedOrders
	f.CODOrders += other.CODOrders
	f.CODDelivered += other.CODDelivered
	f.CODReturned += other.CODReturned
	f.CODCollected += other.CODCollected
	f.GiftCardsSold += other.GiftCardsSold
	f.CheckoutsAbandoned += other.CheckoutsAbandoned
	f.CheckoutsRecovered += other.CheckoutsRecovered
}

// rollupSums sums order_rollups columns (or the same columns of the
// recomputation) into the periods between consecutive bounds.
const rollupSums = `SELECT width_bucket(bucket, $2::timestamptz[]), sum(orders), sum(cancelled_orders), sum(gross_sales), sum(discounts),
	sum(returns), sum(shipping), sum(refunds), sum(delivered_orders), sum(returned_orders), sum(cod_orders), sum(cod_delivered),
	sum(cod_returned), sum(cod_collected)`

// FindSalesFigures sums a store's figures into the periods between
// consecutive bounds (UTC instants, each on a quarter hour, ascending):
// len(bounds)-1 periods, empty ones zero. Carts inactive for abandonAfter
// are marked abandoned first (§6), so the checkout counts are current.
func (db *DB) FindSalesFigures(ctx context.Context, storeID uuid.UUID, bounds []time.Time, abandonAfter time.Duration) ([]SalesFigures, error) {
	if err := db.InTx(ctx, func(tx *Tx) error {
		_, err := tx.MarkCartsAbandoned(ctx, storeID, abandonAfter)
		return err
	}); err != nil {
		return nil, err
	}
	return db.sumSales(ctx, storeID, bounds, rollupSums+` FROM order_rollups WHERE store_id = $1 AND bucket >= $3 AND bucket < $4 GROUP BY 1`)
}

// RecomputeSalesFigures is FindSalesFigures computed from the orders
// themselves instead of the rollups: the reference the consistency test
// and the benchmark hold the rollups to.
func (db *DB) RecomputeSalesFigures(ctx context.Context, storeID uuid.UUID, bounds []time.Time) ([]SalesFigures, error) {
	return db.sumSales(ctx, storeID, bounds, rollupSums+` FROM recompute_order_rollups($1, $3, $4) GROUP BY 1`)
}

func (db *DB) sumSales(ctx context.Context, storeID uuid.UUID, bounds []time.Time, query string) ([]SalesFigures, error) {
	if len(bounds) < 2 {
		return nil, fmt.Errorf("sum sales: %d bounds", len(bounds))
	}
	periods := make([]SalesFigures, len(bounds)-1)
	first, last := bounds[0], bounds[len(bounds)-1]
	rows, err := db.pool.Query(ctx, query, storeID, bounds, first, last)
	if err != nil {
		return nil, fmt.Errorf("sum sales: %w", err)
	}
	var i int
	var f SalesFigures
	if _, err := pgx.ForEachRow(rows, []any{&i, &f.Orders, &f.CancelledOrders, &f.GrossSales, &f.Discounts, &f.Returns, &f.Shipping,
		&f.Refunds, &f.DeliveredOrders, &f.ReturnedOrders, &f.CODOrders, &f.CODDelivered, &f.CODReturned, &f.CODCollected}, func() error {
		if i >= 1 && i <= len(periods) {
			periods[i-1].Add(f)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("sum sales: %w", err)
	}
	// Cards sold are summed from the orders (placed, not cancelled) on read:
	// few orders hold gift cards, and the rollups keep their counters.
	rows, err = db.pool.Query(ctx, `SELECT width_bucket(placed_at, $2::timestamptz[]), sum(gift_cards_sold)::bigint
		FROM orders WHERE store_id = $1 AND placed_at >= $3 AND placed_at < $4 AND status NOT IN ('DRAFT', 'CANCELLED') AND gift_cards_sold > 0
		GROUP BY 1`, storeID, bounds, first, last)
	if err != nil {
		return nil, fmt.Errorf("sum gift cards sold: %w", err)
	}
	var sold int64
	if _, err := pgx.ForEachRow(rows, []any{&i, &sold}, func() error {
		if i >= 1 && i <= len(periods) {
			periods[i-1].GiftCardsSold += sold
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("sum gift cards sold: %w", err)
	}
	rows, err = db.pool.Query(ctx, `SELECT width_bucket(abandoned_at, $2::timestamptz[]),
			count(*) FILTER (WHERE status = 'abandoned'), count(*) FILTER (WHERE status = 'recovered')
		FROM carts WHERE store_id = $1 AND abandoned_at >= $3 AND abandoned_at < $4 GROUP BY 1`, storeID, bounds, first, last)
	if err != nil {
		return nil, fmt.Errorf("count checkouts: %w", err)
	}
	var abandoned, recovered int64
	if _, err := pgx.ForEachRow(rows, []any{&i, &abandoned, &recovered}, func() error {
		if i >= 1 && i <= len(periods) {
			periods[i-1].CheckoutsAbandoned += abandoned
			periods[i-1].CheckoutsRecovered += recovered
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("count checkouts: %w", err)
	}
	return periods, nil
}

// ProductSales is one product's sales in a period, cancelled orders and
// drafts left out: units kept (sold less returned), line totals before
// discounts, the same less discounts and returns, and the orders it was in.
type ProductSales struct {
	ProductID  uuid.UUID
	Name       string
	Units      int64
	GrossSales int64
	NetSales   int64
	Orders     int64
}

// TopProductsBy orders the top products.
type TopProductsBy string

// The orders of the top products.
const (
	TopByNetSales TopProductsBy = "net_sales"
	TopByUnits    TopProductsBy = "units"
)

// FindTopProducts lists the products that sold most in orders placed in
// [from, to), computed from the order lines; the name is the product's
// current one, or the last line's when the product is gone.
func (r reader) FindTopProducts(ctx context.Context, storeID uuid.UUID, from, to time.Time, by TopProductsBy, limit int) ([]ProductSales, error) {
	order := "net_sales DESC, units DESC"
	if by == TopByUnits {
		order = "units DESC, net_sales DESC"
	}
	// One covering index range (order_lines_store_sold_idx) and one
	// aggregate: lines of orders placed in the range and not cancelled;
	// an order holding a product on two lines (two variants) counts once
	// for it, on the line flagged first_of_product.
	rows, err := r.q.Query(ctx, `WITH sold AS (
			SELECT l.product_id, sum(l.quantity - l.returned_quantity) AS units, sum(l.total) AS gross_sales,
			       sum(l.total - l.discount - line_returns(l.quantity, l.returned_quantity, l.unit_price, l.discount)) AS net_sales,
			       count(*) FILTER (WHERE l.first_of_product) AS orders
			FROM order_lines l
			WHERE l.store_id = $1 AND l.sold_at >= $2 AND l.sold_at < $3 AND l.product_id IS NOT NULL
			GROUP BY l.product_id
			ORDER BY `+order+`, product_id LIMIT $4
		)
		SELECT s.product_id, COALESCE(p.name, (SELECT l.name FROM order_lines l WHERE l.store_id = $1 AND l.product_id = s.product_id
			                                      AND l.sold_at >= $2 AND l.sold_at < $3 LIMIT 1)),
		       s.units, s.gross_sales, s.net_sales, s.orders
		FROM sold s LEFT JOIN products p ON p.store_id = $1 AND p.id = s.product_id
		ORDER BY `+order+`, s.product_id`, storeID, from, to, limit)
	if err != nil {
		return nil, fmt.Errorf("find top products: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ProductSales, error) {
		var p ProductSales
		err := row.Scan(&p.ProductID, &p.Name, &p.Units, &p.GrossSales, &p.NetSales, &p.Orders)
		return p, err
	})
}
