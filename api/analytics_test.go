package api_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// analyticsShop is a shop whose token may also read analytics.
func analyticsShop(t *testing.T, h *harness, name string) shop {
	s := newShop(t, h, name, 1000)
	s.token = h.pat(s.m, "catalog:write", "orders:write", "customers:write", "settings:write", "analytics:read")
	return s
}

func (h *harness) sales(s shop, query string) response {
	h.t.Helper()
	return h.do(request{method: "GET", path: storePath(s.m.storeID, "/analytics/sales?"+query), auth: bearer(s.token)})
}

func (h *harness) moveStatus(s shop, orderID, status string) response {
	h.t.Helper()
	return h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/orders/"+orderID+"/status"), auth: bearer(s.token),
		body: map[string]any{"status": status}})
}

// placeAt moves an order's placement to at: the rollup triggers move its
// figures to the new quarter hour like any other change.
func (h *harness) placeAt(orderID string, at time.Time) {
	h.t.Helper()
	_, err := testenv.SQL(h.t, h.db).Exec(context.Background(), `UPDATE orders SET placed_at = $2 WHERE id = $1`, orderID, at)
	require.NoError(h.t, err)
}

func (h *harness) firstLineID(order map[string]any) string {
	return order["lines"].([]any)[0].(map[string]any)["id"].(string)
}

// rawOrder is an order as the tables hold it, for figures computed here
// from the definitions of §17 rather than from the rollups.
type rawOrder struct {
	status, method                                  string
	subtotal, discount, shippingFee, collected      int64
	shippingDiscount, lineReturns, succeededRefunds int64
	placedAt                                        *time.Time
}

func (h *harness) rawOrders(storeID string) []rawOrder {
	h.t.Helper()
	ctx, db := context.Background(), testenv.SQL(h.t, h.db)
	rows, err := db.Query(ctx, `SELECT o.status, o.payment_method, o.subtotal, o.discount, o.shipping_fee, o.collected_total, o.discounts, o.placed_at,
			COALESCE((SELECT json_agg(json_build_array(l.quantity, l.unit_price, l.discount, l.returned_quantity)) FROM order_lines l WHERE l.order_id = o.id), '[]'),
			COALESCE((SELECT sum(r.amount) FROM order_refunds r WHERE r.order_id = o.id AND r.status = 'succeeded'), 0)
		FROM orders o WHERE o.store_id = $1`, storeID)
	require.NoError(h.t, err)
	defer rows.Close()
	var out []rawOrder
	for rows.Next() {
		var (
			o                rawOrder
			discounts, lines []byte
		)
		require.NoError(h.t, rows.Scan(&o.status, &o.method, &o.subtotal, &o.discount, &o.shippingFee, &o.collected, &discounts, &o.placedAt,
			&lines, &o.succeededRefunds))
		var applied []storage.AppliedDiscount
		require.NoError(h.t, json.Unmarshal(discounts, &applied))
		for _, d := range applied {
			o.shippingDiscount += d.ShippingAmount
		}
		var ls [][4]int64
		require.NoError(h.t, json.Unmarshal(lines, &ls))
		for _, l := range ls {
			quantity, price, discount, returned := l[0], l[1], l[2], l[3]
			o.lineReturns += returned*price - storage.ProrateDiscount(discount, int(returned), int(quantity))
		}
		out = append(out, o)
	}
	require.NoError(h.t, rows.Err())
	return out
}

// expectedFigures are §17's figures of the orders placed on each local
// date, worked out from the raw orders.
func expectedFigures(orders []rawOrder, loc *time.Location) map[string]map[string]any {
	type sums struct {
		orders, cancelled, gross, discounts, returns, shipping, refunds, delivered, returned, cod, codDelivered, codReturned, collected int64
	}
	byDay := map[string]*sums{}
	for _, o := range orders {
		if o.status == "DRAFT" || o.placedAt == nil {
			continue
		}
		day := o.placedAt.In(loc).Format("2006-01-02")
		if byDay[day] == nil {
			byDay[day] = &sums{}
		}
		d := byDay[day]
		d.orders++
		d.returns += o.lineReturns
		d.refunds += o.succeededRefunds
		switch o.status {
		case "DELIVERED":
			d.delivered++
		case "RETURNED":
			d.returned++
		}
		if o.status == "CANCELLED" {
			d.cancelled++
			continue
		}
		d.gross += o.subtotal
		d.discounts += o.discount - o.shippingDiscount
		d.shipping += o.shippingFee - o.shippingDiscount
		if o.method == "cod" {
			d.cod++
			d.collected += o.collected
			switch o.status {
			case "DELIVERED":
				d.codDelivered++
			case "RETURNED":
				d.codReturned++
			}
		}
	}
	ratio := func(part, whole int64) any {
		if whole == 0 {
			return nil
		}
		return math.Round(float64(part)/float64(whole)*10000) / 10000
	}
	out := map[string]map[string]any{}
	for day, d := range byDay {
		net := d.gross - d.discounts - d.returns
		var aov any
		if live := d.orders - d.cancelled; live > 0 {
			aov = float64(int64(math.Floor(float64(net)/float64(live) + 0.5)))
		}
		out[day] = map[string]any{"orders": float64(d.orders), "cancelled_orders": float64(d.cancelled), "gross_sales": float64(d.gross),
			"discounts": float64(d.discounts), "returns": float64(d.returns), "net_sales": float64(net), "shipping": float64(d.shipping),
			"refunds": float64(d.refunds), "aov": aov, "return_rate": ratio(d.returned, d.delivered+d.returned),
			"cod": map[string]any{"orders": float64(d.cod), "delivered": float64(d.codDelivered), "returned": float64(d.codReturned),
				"pending": float64(d.cod - d.codDelivered - d.codReturned), "collected": float64(d.collected),
				"collection_rate": ratio(d.codDelivered, d.codDelivered+d.codReturned)}}
	}
	return out
}

// orderFigures is a bucket's answer without the checkouts, for comparing
// with expectedFigures.
func orderFigures(bucket map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range bucket {
		switch k {
		case "start", "end", "checkouts", "gift_cards_sold": // gift cards sold: TestAnalyticsGiftCardsSold
		default:
			out[k] = v
		}
	}
	return out
}

// Every figure of §17, for a store in Cairo with orders of every outcome
// spread over three local days, equals what the raw orders say: orders
// count on the local day of their placement (00:30 in Cairo is the
// previous UTC day), drafts never, converted drafts at conversion, and an
// outcome that arrives later changes the day the order was placed on.
func TestAnalyticsFiguresFromRawOrders(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := analyticsShop(t, h, "figures")
	cairo, err := time.LoadLocation("Africa/Cairo")
	require.NoError(t, err)
	at := func(day, clock string) time.Time {
		t0, err := time.ParseInLocation("2006-01-02 15:04", day+" "+clock, cairo)
		require.NoError(t, err)
		return t0
	}
	place := func(method string, qty int, when time.Time) map[string]any {
		o := h.placeOrder(s, method, qty)
		h.placeAt(o["id"].(string), when)
		return o
	}
	mustOK := func(resp response) {
		t.Helper()
		require.Contains(t, []int{http.StatusOK, http.StatusCreated, http.StatusNoContent}, resp.Status, string(resp.Raw))
	}

	// 2026-03-02: a delivered and a refused COD order, a cancelled one, one
	// still out, at 00:30 local (22:30 UTC on 03-01).
	delivered := place("cod", 2, at("2026-03-02", "00:30"))
	mustOK(h.moveStatus(s, delivered["id"].(string), "SHIPPED"))
	mustOK(h.moveStatus(s, delivered["id"].(string), "DELIVERED"))
	refused := place("cod", 1, at("2026-03-02", "09:00"))
	mustOK(h.moveStatus(s, refused["id"].(string), "SHIPPED"))
	mustOK(h.moveStatus(s, refused["id"].(string), "RETURNED"))
	cancelled := place("cod", 3, at("2026-03-02", "12:00"))
	mustOK(h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+cancelled["id"].(string)), auth: bearer(s.token)}))
	place("cod", 1, at("2026-03-02", "23:59"))

	// 2026-03-03: a partial acceptance, a paid bank transfer delivered then
	// partly returned and refunded.
	partial := place("cod", 4, at("2026-03-03", "10:00"))
	mustOK(h.moveStatus(s, partial["id"].(string), "SHIPPED"))
	mustOK(h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+partial["id"].(string)+"/partial-acceptance"), auth: bearer(s.token),
		body: map[string]any{"lines": []any{map[string]any{"line_id": h.firstLineID(partial), "accepted_quantity": 1}}}}))
	bank := place("bank_transfer", 3, at("2026-03-03", "18:00"))
	bankID := bank["id"].(string)
	mustOK(h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+bankID+"/mark-paid"), auth: bearer(s.token)}))
	mustOK(h.moveStatus(s, bankID, "SHIPPED"))
	mustOK(h.moveStatus(s, bankID, "DELIVERED"))
	ret := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+bankID+"/returns"), auth: bearer(s.token),
		body: map[string]any{"approve": true, "lines": []any{map[string]any{"line_id": h.firstLineID(bank), "quantity": 1, "reason": "size_or_fit"}}}})
	mustOK(ret)
	mustOK(h.do(request{method: "POST", path: storePath(s.m.storeID, "/returns/"+ret.data()["id"].(string)+"/receive"), auth: bearer(s.token),
		body: map[string]any{"lines": []any{map[string]any{"line_id": h.firstLineID(bank), "received_quantity": 1, "restock": true}}}}))
	refund := h.refund(s, bankID, "figures-refund", map[string]any{"amount": 20000, "method": "cash", "reason": "returned piece"})
	mustOK(refund)
	mustOK(h.settle(s, refund.data()["id"].(string), "figures-settle", map[string]any{"status": "succeeded"}))
	pendingRefund := h.refund(s, bankID, "figures-refund-2", map[string]any{"amount": 1000, "method": "cash", "reason": "goodwill"})
	mustOK(pendingRefund)

	// 2026-03-05: a draft (never counted) and a converted draft, placed at
	// its conversion.
	body := orderBody(s.variantID, 1, "+201001110001")
	h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token), body: body})
	draft := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token), body: orderBody(s.variantID, 2, "+201001110002")})
	mustOK(draft)
	mustOK(h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+draft.data()["id"].(string)+"/convert"), auth: bearer(s.token)}))
	h.placeAt(draft.data()["id"].(string), at("2026-03-05", "08:15"))

	resp := h.sales(s, "date_from=2026-03-01&date_to=2026-03-06&interval=day")
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	data := resp.data()
	require.Equal(t, "EGP", data["currency"])
	require.Equal(t, "Africa/Cairo", data["timezone"], "EGP's default zone")
	require.Regexp(t, rfc3339Micro, data["as_of"], "microseconds, like every timestamp")
	want := expectedFigures(h.rawOrders(s.m.storeID), cairo)
	require.Len(t, want, 3, "three local days hold orders")
	buckets := data["buckets"].([]any)
	require.Len(t, buckets, 6, "every day of the range, empty ones too")
	zero := map[string]any{"orders": 0.0, "cancelled_orders": 0.0, "gross_sales": 0.0, "discounts": 0.0, "returns": 0.0, "net_sales": 0.0,
		"shipping": 0.0, "refunds": 0.0, "aov": nil, "return_rate": nil,
		"cod": map[string]any{"orders": 0.0, "delivered": 0.0, "returned": 0.0, "pending": 0.0, "collected": 0.0, "collection_rate": nil}}
	for i, raw := range buckets {
		b := raw.(map[string]any)
		day := fmt.Sprintf("2026-03-%02d", i+1)
		require.Equal(t, day, b["start"])
		require.Equal(t, day, b["end"])
		expected, ok := want[day]
		if !ok {
			expected = zero
		}
		require.Equal(t, expected, orderFigures(b), day)
	}
	// Spot checks of what the comparison above rests on.
	second := buckets[1].(map[string]any)
	require.EqualValues(t, 4, second["orders"], "the 00:30 order counts on its local day")
	require.EqualValues(t, 1, second["cancelled_orders"])
	require.EqualValues(t, 0.5, second["cod"].(map[string]any)["collection_rate"], "one delivered, one refused")
	third := buckets[2].(map[string]any)
	require.EqualValues(t, 20000, third["refunds"], "succeeded refunds only")
	require.Positive(t, third["returns"].(float64))
	require.EqualValues(t, 1, third["cod"].(map[string]any)["delivered"], "a partial acceptance is delivered")
	require.EqualValues(t, 1, buckets[4].(map[string]any)["orders"], "the converted draft, not the draft")

	require.EqualValues(t, 7, data["totals"].(map[string]any)["orders"])

	// By week starting Saturday, Sun 03-01..Fri 03-06 is one clipped
	// bucket holding the totals; starting Monday it is two.
	weekly := h.sales(s, "date_from=2026-03-01&date_to=2026-03-06&interval=week").data()
	require.Equal(t, "saturday", weekly["week_start"])
	require.Len(t, weekly["buckets"].([]any), 1)
	require.Equal(t, orderFigures(data["totals"].(map[string]any)), orderFigures(weekly["buckets"].([]any)[0].(map[string]any)))
	monday := h.sales(s, "date_from=2026-03-01&date_to=2026-03-06&interval=week&week_start=monday").data()["buckets"].([]any)
	require.Len(t, monday, 2)
	require.Equal(t, []any{"2026-03-01", "2026-03-01", "2026-03-02", "2026-03-06"}, []any{monday[0].(map[string]any)["start"],
		monday[0].(map[string]any)["end"], monday[1].(map[string]any)["start"], monday[1].(map[string]any)["end"]})
	require.EqualValues(t, 0, monday[0].(map[string]any)["orders"])
}

// rollupRows are a store's non-zero rollup rows, or the same computed from
// its orders, bucket by bucket.
func (h *harness) rollupRows(storeID, source string) []map[string]any {
	h.t.Helper()
	rows, err := testenv.SQL(h.t, h.db).Query(context.Background(), `SELECT * FROM (`+source+`) r
		WHERE (r.orders, r.cancelled_orders, r.gross_sales, r.discounts, r.returns, r.shipping, r.refunds, r.delivered_orders,
		       r.returned_orders, r.cod_orders, r.cod_delivered, r.cod_returned, r.cod_collected) <> (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
		ORDER BY r.bucket`, storeID)
	require.NoError(h.t, err)
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		values, err := rows.Values()
		require.NoError(h.t, err)
		row := map[string]any{}
		for i, f := range rows.FieldDescriptions() {
			row[f.Name] = values[i]
		}
		out = append(out, row)
	}
	require.NoError(h.t, rows.Err())
	return out
}

// A random sequence of order operations (placing, drafts and their
// conversion, every status move, cancels, payments, partial acceptance,
// returns received, refunds settled either way, placements moved across
// quarter hours) leaves the rollups equal, bucket by bucket, to a
// recomputation from the orders table.
func TestRollupsMatchARecomputationAfterRandomOperations(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := analyticsShop(t, h, "rollupconsistency")
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	var orders []map[string]any
	var refunds []string
	ok := func(resp response) bool { return resp.Status == http.StatusOK || resp.Status == http.StatusCreated }
	orderPath := func(o map[string]any, rest string) string {
		return storePath(s.m.storeID, "/orders/"+o["id"].(string)+rest)
	}
	base := time.Date(2026, 5, 10, 21, 0, 0, 0, time.UTC)
	for step := range 90 {
		var o map[string]any
		if len(orders) > 0 {
			o = orders[rng.IntN(len(orders))]
		}
		op := rng.IntN(11)
		if o == nil {
			op = 0
		}
		switch op {
		case 0:
			orders = append(orders, h.placeOrder(s, []string{"cod", "cod", "bank_transfer"}[rng.IntN(3)], 1+rng.IntN(3)))
		case 1:
			d := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/drafts"), auth: bearer(s.token),
				body: orderBody(s.variantID, 1+rng.IntN(2), fmt.Sprintf("+2011%08d", step))})
			require.Equal(t, http.StatusCreated, d.Status, string(d.Raw))
			orders = append(orders, d.data())
		case 2:
			h.do(request{method: "POST", path: orderPath(o, "/convert"), auth: bearer(s.token)})
		case 3, 4:
			h.moveStatus(s, o["id"].(string), []string{"CONFIRMED", "SHIPPED", "DELIVERED", "RETURNED"}[rng.IntN(4)])
		case 5:
			h.do(request{method: "DELETE", path: orderPath(o, ""), auth: bearer(s.token)})
		case 6:
			h.do(request{method: "POST", path: orderPath(o, "/mark-paid"), auth: bearer(s.token)})
		case 7:
			h.do(request{method: "POST", path: orderPath(o, "/partial-acceptance"), auth: bearer(s.token),
				body: map[string]any{"lines": []any{map[string]any{"line_id": h.firstLineID(o), "accepted_quantity": 0}}}})
		case 8:
			ret := h.do(request{method: "POST", path: orderPath(o, "/returns"), auth: bearer(s.token),
				body: map[string]any{"approve": true, "lines": []any{map[string]any{"line_id": h.firstLineID(o), "quantity": 1, "reason": "size_or_fit"}}}})
			if ok(ret) {
				h.do(request{method: "POST", path: storePath(s.m.storeID, "/returns/"+ret.data()["id"].(string)+"/receive"), auth: bearer(s.token),
					body: map[string]any{"lines": []any{map[string]any{"line_id": h.firstLineID(o), "received_quantity": 1, "restock": rng.IntN(2) == 0}}}})
			}
		case 9:
			if r := h.refund(s, o["id"].(string), fmt.Sprintf("random-%d", step), map[string]any{"amount": 1000 + rng.IntN(5000), "method": "cash", "reason": "goodwill"}); ok(r) {
				refunds = append(refunds, r.data()["id"].(string))
			}
			if len(refunds) > 0 {
				h.settle(s, refunds[rng.IntN(len(refunds))], fmt.Sprintf("random-settle-%d", step),
					map[string]any{"status": []string{"succeeded", "failed"}[rng.IntN(2)]})
			}
		case 10:
			h.placeAt(o["id"].(string), base.Add(time.Duration(rng.IntN(400))*7*time.Minute))
		}
	}
	stored := h.rollupRows(s.m.storeID, "SELECT * FROM order_rollups WHERE store_id = $1")
	recomputed := h.rollupRows(s.m.storeID, "SELECT * FROM recompute_order_rollups($1, '-infinity', 'infinity')")
	require.NotEmpty(t, recomputed)
	require.Equal(t, recomputed, stored)
	// Each line's sold_at, what top products read, follows its order.
	var stale int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM order_lines l JOIN orders o ON o.id = l.order_id
		WHERE o.store_id = $1 AND l.sold_at IS DISTINCT FROM CASE WHEN o.status NOT IN ('DRAFT', 'CANCELLED') THEN o.placed_at END`, s.m.storeID).Scan(&stale))
	require.Zero(t, stale)
}

// Bad ranges and enums answer 422 with the field and change nothing.
func TestAnalyticsRefusesBadRanges(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := analyticsShop(t, h, "analyticsranges")
	for _, c := range []struct {
		path, query, field, code string
	}{
		{"sales", "date_from=2026-3-01", "date_from", "invalid_type"},
		{"sales", "date_to=2026-02-30", "date_to", "invalid_type"},
		{"sales", "date_from=2026-03-05&date_to=2026-03-04", "date_to", "out_of_range"},
		{"sales", "date_from=2099-01-01", "date_from", "out_of_range"},
		{"sales", "date_from=2025-01-01&date_to=2026-02-05&interval=day", "date_from", "range_too_large"},
		{"sales", "date_from=1990-01-01&date_to=2026-01-01&interval=month", "date_from", "range_too_large"},
		{"sales", "interval=hour", "interval", "one_of"},
		{"sales", "interval=week&week_start=friday", "week_start", "one_of"},
		{"sales", "format=xlsx", "format", "one_of"},
		{"top-products", "by=orders", "by", "one_of"},
		{"top-products", "limit=51", "limit", "out_of_range"},
		{"top-products", "limit=0", "limit", "out_of_range"},
		{"top-products", "date_from=2025-01-01&date_to=2026-01-02", "date_from", "range_too_large"},
	} {
		resp := h.do(request{method: "GET", path: storePath(s.m.storeID, "/analytics/"+c.path+"?"+c.query), auth: bearer(s.token)})
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, c.query)
		require.Equal(t, c.code, resp.fieldCode(c.field), "%s: %s", c.query, resp.Raw)
		require.NotEmpty(t, resp.fieldMessageAr(c.field))
	}
	// The largest ranges allowed: 400 days, 366 days of top products.
	require.Equal(t, http.StatusOK, h.sales(s, "date_from=2025-01-01&date_to=2026-02-04").Status)
	require.Equal(t, http.StatusOK, h.do(request{method: "GET", path: storePath(s.m.storeID, "/analytics/top-products?date_from=2025-01-01&date_to=2026-01-01"),
		auth: bearer(s.token)}).Status)
	// Without analytics:read a token is refused.
	other := h.pat(s.m, "orders:read")
	require.Equal(t, http.StatusForbidden, h.do(request{method: "GET", path: storePath(s.m.storeID, "/analytics/sales"), auth: bearer(other)}).Status)
}

// The store's time zone and first weekday are settings with §17's
// defaults; changing the zone re-reads the same rollups in the new zone.
func TestAnalyticsFollowTheStoreTimezone(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := analyticsShop(t, h, "analyticstz")
	settings := h.do(request{method: "GET", path: storePath(s.m.storeID, "/settings"), auth: bearer(h.pat(s.m, "settings:read"))}).data()
	require.Equal(t, "Africa/Cairo", settings["timezone"])
	require.Equal(t, "saturday", settings["week_start"])

	o := h.placeOrder(s, "cod", 1)
	h.placeAt(o["id"].(string), time.Date(2026, 1, 10, 20, 30, 0, 0, time.UTC)) // 22:30 in Cairo, 02:15 on the 11th in Kathmandu
	day := func(query string) []any {
		resp := h.sales(s, query)
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		var days []any
		for _, b := range resp.data()["buckets"].([]any) {
			if b.(map[string]any)["orders"].(float64) > 0 {
				days = append(days, b.(map[string]any)["start"])
			}
		}
		return days
	}
	require.Equal(t, []any{"2026-01-10"}, day("date_from=2026-01-09&date_to=2026-01-12"))

	patch := func(body map[string]any) response {
		return h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token), body: body})
	}
	for _, bad := range []map[string]any{{"timezone": "Mars/Olympus"}, {"timezone": "Local"}, {"timezone": ""}, {"week_start": "friday"}, {"week_start": nil}} {
		resp := patch(bad)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%v", bad)
	}
	resp := patch(map[string]any{"timezone": "Asia/Kathmandu", "week_start": "monday"})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.Equal(t, "Asia/Kathmandu", resp.data()["timezone"])
	sales := h.sales(s, "date_from=2026-01-09&date_to=2026-01-12").data()
	require.Equal(t, "Asia/Kathmandu", sales["timezone"])
	require.Equal(t, []any{"2026-01-11"}, day("date_from=2026-01-09&date_to=2026-01-12"))
	require.Equal(t, "monday", h.sales(s, "interval=week").data()["week_start"])

	resp = patch(map[string]any{"timezone": nil})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	require.Equal(t, "Africa/Cairo", resp.data()["timezone"], "null goes back to the currency's default")
}

// Checkouts count by the time they were abandoned, as §6: a cart that is
// due is marked first, a recovered one counts as recovered.
func TestAnalyticsCountCheckouts(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := analyticsShop(t, h, "analyticscarts")
	now := time.Now().UTC()
	for _, c := range []struct {
		status    string
		activity  time.Time
		abandoned *time.Time
	}{
		{"active", now.Add(-2 * time.Hour), nil},
		{"active", now.Add(-5 * time.Minute), nil},
		{"abandoned", now.Add(-3 * time.Hour), ptr(now.Add(-2 * time.Hour))},
		{"recovered", now.Add(-3 * time.Hour), ptr(now.Add(-2 * time.Hour))},
	} {
		_, err := testenv.SQL(t, h.db).Exec(context.Background(), `INSERT INTO carts (id, store_id, currency, status, subtotal, item_count,
			last_activity_at, abandoned_at, created_at, updated_at) VALUES (gen_random_uuid(), $1, 'EGP', $2, 45000, 1, $3, $4, $3, $3)`,
			s.m.storeID, c.status, c.activity, c.abandoned)
		require.NoError(t, err)
	}
	totals := h.sales(s, "").data()["totals"].(map[string]any)
	require.Equal(t, map[string]any{"abandoned": 2.0, "recovered": 1.0, "recovery_rate": 0.3333}, totals["checkouts"])
	require.Nil(t, totals["aov"], "no orders: no average")
}

func ptr[T any](v T) *T { return &v }

// The CSV export: a BOM, a row per bucket and a total row, money in major
// units, local dates, product names neutralised, Arabic headers on asking.
func TestAnalyticsCSV(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := analyticsShop(t, h, "analyticscsv")
	_, err := testenv.SQL(t, h.db).Exec(context.Background(), `UPDATE products SET name = '=HYPERLINK("x")' WHERE store_id = $1`, s.m.storeID)
	require.NoError(t, err)
	o := h.placeOrder(s, "cod", 2)
	h.placeAt(o["id"].(string), time.Date(2026, 2, 1, 22, 30, 0, 0, time.UTC)) // 2026-02-02 00:30 in Cairo

	read := func(path string) (http.Header, [][]string) {
		resp := h.do(request{method: "GET", path: storePath(s.m.storeID, path), auth: bearer(s.token)})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		require.True(t, strings.HasPrefix(string(resp.Raw), "\ufeff"), "a BOM")
		records, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(resp.Raw), "\ufeff"))).ReadAll()
		require.NoError(t, err)
		return resp.Header, records
	}
	header, rows := read("/analytics/sales?date_from=2026-02-01&date_to=2026-02-03&format=csv")
	require.Equal(t, `attachment; filename="sales_2026-02-01_2026-02-03_day.csv"`, header.Get("Content-Disposition"))
	require.Equal(t, "text/csv; charset=utf-8", header.Get("Content-Type"))
	require.Len(t, rows, 5, "a header, three days and the total")
	require.Equal(t, []string{"start", "end", "orders"}, rows[0][:3])
	gross := slices.Index(rows[0], "gross_sales")
	require.Equal(t, []string{"2026-02-02", "2026-02-02", "1"}, rows[2][:3])
	require.Equal(t, "900.00", rows[2][gross], "90000 minor units of EGP")
	require.Equal(t, "0.00", rows[1][gross])
	require.Equal(t, "total", rows[4][0])
	require.Equal(t, "900.00", rows[4][gross])
	require.Equal(t, "", rows[1][slices.Index(rows[0], "aov")], "no average on an empty day")

	_, ar := read("/analytics/sales?date_from=2026-02-01&date_to=2026-02-03&format=csv&lang=ar")
	require.Equal(t, "من", ar[0][0])
	require.Equal(t, "الإجمالي", ar[4][0])

	header, products := read("/analytics/top-products?date_from=2026-02-01&date_to=2026-02-03&format=csv")
	require.Equal(t, `attachment; filename="top_products_2026-02-01_2026-02-03_net_sales.csv"`, header.Get("Content-Disposition"))
	require.Len(t, products, 3)
	require.Equal(t, `'=HYPERLINK("x")`, products[1][1], "a formula is neutralised")
	require.Equal(t, "2", products[1][2])
	require.Equal(t, "900.00", products[1][3])
}

// Top products: units kept, gross and net of discounts and returns, the
// orders each was in, ordered by net sales or units; cancelled orders and
// other stores' orders left out.
func TestAnalyticsTopProducts(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := analyticsShop(t, h, "topproducts")
	cheap := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Scarf", "price": 5000})
	cheapVariant := h.do(request{method: "POST", path: storePath(s.m.storeID, "/products/"+cheap["id"].(string)+"/variants"), auth: bearer(s.token),
		body: map[string]any{"sku": "SCARF-1", "quantity": 100, "options": map[string]any{"size": "M"}}}).Body["id"].(string)
	when := time.Date(2026, 4, 10, 10, 0, 0, 0, time.UTC)
	for i, qty := range []int{1, 2} {
		o := h.placeOrder(s, "cod", qty)
		h.placeAt(o["id"].(string), when)
		if i == 1 {
			require.Equal(t, http.StatusOK, h.moveStatus(s, o["id"].(string), "SHIPPED").Status)
			require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+o["id"].(string)+"/partial-acceptance"), auth: bearer(s.token),
				body: map[string]any{"lines": []any{map[string]any{"line_id": h.firstLineID(o), "accepted_quantity": 1}}}}).Status)
		}
	}
	scarves := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: orderBody(cheapVariant, 9, "+201002220001")}).data()
	h.placeAt(scarves["id"].(string), when)
	// Two variants of the scarf in one order: one order for the scarf.
	otherScarf := h.do(request{method: "POST", path: storePath(s.m.storeID, "/products/"+cheap["id"].(string)+"/variants"), auth: bearer(s.token),
		body: map[string]any{"sku": "SCARF-2", "quantity": 100, "options": map[string]any{"size": "L"}}}).Body["id"].(string)
	twoScarves := orderBody(cheapVariant, 1, "+201002220002")
	twoScarves["lines"] = []map[string]any{{"variant_id": cheapVariant, "quantity": 1}, {"variant_id": otherScarf, "quantity": 1}}
	pair := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: twoScarves})
	require.Equal(t, http.StatusCreated, pair.Status, string(pair.Raw))
	h.placeAt(pair.data()["id"].(string), when)
	gone := h.placeOrder(s, "cod", 5)
	h.placeAt(gone["id"].(string), when)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: storePath(s.m.storeID, "/orders/"+gone["id"].(string)), auth: bearer(s.token)}).Status)
	other := analyticsShop(t, h, "topproductsother")
	h.placeAt(h.placeOrder(other, "cod", 7)["id"].(string), when)

	top := func(query string) []any {
		resp := h.do(request{method: "GET", path: storePath(s.m.storeID, "/analytics/top-products?date_from=2026-04-01&date_to=2026-04-30&"+query), auth: bearer(s.token)})
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
		return resp.data()["items"].([]any)
	}
	items := top("")
	require.Len(t, items, 2)
	abaya := items[0].(map[string]any)
	require.Equal(t, "Abaya", abaya["name"])
	require.EqualValues(t, 2, abaya["units"], "3 sold, 1 refused at the door")
	require.EqualValues(t, 3*45000, abaya["gross_sales"])
	require.EqualValues(t, 2, abaya["orders"])
	// orderBody's 1000 discount spreads over each order's one line.
	require.EqualValues(t, 3*45000-2*1000-(45000-storage.ProrateDiscount(1000, 1, 2)), abaya["net_sales"])
	byUnits := top("by=units")
	require.Equal(t, "Scarf", byUnits[0].(map[string]any)["name"])
	require.EqualValues(t, 11, byUnits[0].(map[string]any)["units"])
	require.EqualValues(t, 2, byUnits[0].(map[string]any)["orders"], "the order of two scarf variants counts once")
	require.Len(t, top("limit=1"), 1)
}
