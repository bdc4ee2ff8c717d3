package api

import (
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// Analytics (decisions §17): figures by local day, week or month of
// placement, summed from the store's quarter-hour rollups.

const (
	maxSalesBuckets     = 400
	maxTopProductsDays  = 366
	defaultAnalyticDays = 30
	dateLayout          = "2006-01-02"
)

var analyticsIntervals = []string{"day", "week", "month"}

// localDate is a calendar date with no zone: the date a merchant reads.
type localDate struct {
	year  int
	month time.Month
	day   int
}

func dateOf(t time.Time) localDate {
	y, m, d := t.Date()
	return localDate{y, m, d}
}

// civil is the date at noon UTC, for calendar arithmetic that no zone moves.
func (d localDate) civil() time.Time { return time.Date(d.year, d.month, d.day, 12, 0, 0, 0, time.UTC) }

func (d localDate) addDays(n int) localDate { return dateOf(d.civil().AddDate(0, 0, n)) }

func (d localDate) before(other localDate) bool { return d.civil().Before(other.civil()) }

func (d localDate) String() string { return d.civil().Format(dateLayout) }

// startOfDay is the first instant of date d in loc. Where a DST change
// skips midnight (Cairo's spring change, say) the day starts when the
// clocks land; every offset in use is a whole number of quarter hours, so
// the answer is a quarter hour and a rollup bucket boundary.
func startOfDay(d localDate, loc *time.Location) time.Time {
	t := time.Date(d.year, d.month, d.day, 0, 0, 0, 0, loc)
	for dateOf(t.In(loc)).before(d) {
		t = t.Add(15 * time.Minute)
	}
	for earlier := t.Add(-15 * time.Minute); dateOf(earlier.In(loc)) == d; earlier = t.Add(-15 * time.Minute) {
		t = earlier
	}
	return t.UTC()
}

// period is one bucket of a report: local dates first..last, inclusive.
type period struct {
	first, last localDate
}

var weekdays = map[string]time.Weekday{"saturday": time.Saturday, "sunday": time.Sunday, "monday": time.Monday}

// periods cuts from..to into local days, weeks starting on weekStart, or
// Gregorian months; the first and last are clipped to the range, so the
// buckets add up to the totals.
func periods(from, to localDate, interval string, weekStart time.Weekday) []period {
	var out []period
	for first := from; !to.before(first); {
		var next localDate
		switch interval {
		case "week":
			days := (int(weekStart) - int(first.civil().Weekday()) + 7) % 7
			if days == 0 {
				days = 7
			}
			next = first.addDays(days)
		case "month":
			next = localDate{first.year, first.month + 1, 1}
			next = dateOf(next.civil())
		default:
			next = first.addDays(1)
		}
		last := next.addDays(-1)
		if to.before(last) {
			last = to
		}
		out = append(out, period{first, last})
		first = next
	}
	return out
}

// countPeriods is len(periods(...)) without building them, to refuse a
// range that is too large before doing the work.
func countPeriods(from, to localDate, interval string, weekStart time.Weekday) int {
	days := int(to.civil().Sub(from.civil()).Hours()/24) + 1
	switch interval {
	case "week":
		lead := (int(weekStart) - int(from.civil().Weekday()) + 7) % 7
		if lead == 0 || lead >= days {
			return (days + 6) / 7
		}
		return 1 + (days-lead+6)/7
	case "month":
		return (to.year-from.year)*12 + int(to.month) - int(from.month) + 1
	}
	return days
}

// bounds are the UTC instants that separate the periods: each period's
// first instant, then the instant after the last one.
func bounds(ps []period, loc *time.Location) []time.Time {
	out := make([]time.Time, 0, len(ps)+1)
	for _, p := range ps {
		out = append(out, startOfDay(p.first, loc))
	}
	return append(out, startOfDay(ps[len(ps)-1].last.addDays(1), loc))
}

// analyticsRange is a parsed, checked date_from..date_to in the store's zone.
type analyticsRange struct {
	from, to localDate
	loc      *time.Location
	settings storage.StoreSettings
}

// parseRange reads date_from and date_to (local dates, inclusive; the last
// 30 days by default) and checks date_to ≥ date_from.
func (s *Server) parseRange(r *http.Request, q *queryParser) (analyticsRange, error) {
	storeID := storeIDFrom(r.Context())
	settings, err := s.db.FindStoreSettings(r.Context(), storeID)
	if err != nil {
		return analyticsRange{}, err
	}
	loc, err := time.LoadLocation(settings.Timezone)
	if err != nil {
		return analyticsRange{}, fmt.Errorf("store time zone %q: %w", settings.Timezone, err)
	}
	today := dateOf(time.Now().In(loc))
	rg := analyticsRange{to: today, loc: loc, settings: settings}
	fromSet, toSet := false, false
	for _, f := range []struct {
		name string
		into *localDate
		set  *bool
	}{{"date_from", &rg.from, &fromSet}, {"date_to", &rg.to, &toSet}} {
		raw := q.values.Get(f.name)
		if raw == "" {
			continue
		}
		t, err := time.Parse(dateLayout, raw)
		if err != nil {
			q.Add(f.name, "invalid_type", "must be a date YYYY-MM-DD such as 2026-11-01")
			continue
		}
		*f.into, *f.set = dateOf(t), true
	}
	if !fromSet {
		rg.from = rg.to.addDays(1 - defaultAnalyticDays)
	}
	if fromSet && toSet && rg.to.before(rg.from) {
		q.Add("date_to", "out_of_range", "must not be before date_from")
	} else if !toSet && rg.to.before(rg.from) {
		q.Add("date_from", "out_of_range", "must not be after date_to (today when not given)")
	}
	return rg, nil
}

// figuresResponse is one bucket's (or the totals') figures.
type figuresResponse struct {
	Orders          int64             `json:"orders"`
	CancelledOrders int64             `json:"cancelled_orders"`
	GrossSales      int64             `json:"gross_sales"`
	Discounts       int64             `json:"discounts"`
	Returns         int64             `json:"returns"`
	NetSales        int64             `json:"net_sales"`
	Shipping        int64             `json:"shipping"`
	Refunds         int64             `json:"refunds"`
	AOV             *int64            `json:"aov"`
	COD             codResponse       `json:"cod"`
	ReturnRate      *float64          `json:"return_rate"`
	Checkouts       checkoutsResponse `json:"checkouts"`
	// GiftCardsSold is what gift card products sold for (§19), not part of
	// gross_sales.
	GiftCardsSold int64 `json:"gift_cards_sold"`
}

type codResponse struct {
	Orders         int64    `json:"orders"`
	Delivered      int64    `json:"delivered"`
	Returned       int64    `json:"returned"`
	Pending        int64    `json:"pending"`
	Collected      int64    `json:"collected"`
	CollectionRate *float64 `json:"collection_rate"`
}

type checkoutsResponse struct {
	Abandoned    int64    `json:"abandoned"`
	Recovered    int64    `json:"recovered"`
	RecoveryRate *float64 `json:"recovery_rate"`
}

type bucketResponse struct {
	Start string `json:"start"`
	End   string `json:"end"`
	figuresResponse
}

type salesResponse struct {
	Currency  string           `json:"currency"`
	Timezone  string           `json:"timezone"`
	Interval  string           `json:"interval"`
	WeekStart string           `json:"week_start"`
	DateFrom  string           `json:"date_from"`
	DateTo    string           `json:"date_to"`
	AsOf      time.Time        `json:"as_of"`
	Totals    figuresResponse  `json:"totals"`
	Buckets   []bucketResponse `json:"buckets"`
}

// rate is part ÷ whole to 4 decimals, null when whole is zero.
func rate(part, whole int64) *float64 {
	if whole == 0 {
		return nil
	}
	v := math.Round(float64(part)/float64(whole)*10000) / 10000
	return &v
}

// divideHalfUp is n ÷ d rounded half away from zero, null when d is zero.
func divideHalfUp(n, d int64) *int64 {
	if d == 0 {
		return nil
	}
	neg := (n < 0) != (d < 0)
	n, d = abs64(n), abs64(d)
	q := (2*n + d) / (2 * d)
	if neg {
		q = -q
	}
	return &q
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func newFiguresResponse(f storage.SalesFigures) figuresResponse {
	net := f.GrossSales - f.Discounts - f.Returns
	return figuresResponse{Orders: f.Orders, CancelledOrders: f.CancelledOrders, GrossSales: f.GrossSales, Discounts: f.Discounts,
		Returns: f.Returns, NetSales: net, Shipping: f.Shipping, Refunds: f.Refunds, AOV: divideHalfUp(net, f.Orders-f.CancelledOrders),
		GiftCardsSold: f.GiftCardsSold,
		COD: codResponse{Orders: f.CODOrders, Delivered: f.CODDelivered, Returned: f.CODReturned,
			Pending: f.CODOrders - f.CODDelivered - f.CODReturned, Collected: f.CODCollected,
			CollectionRate: rate(f.CODDelivered, f.CODDelivered+f.CODReturned)},
		ReturnRate: rate(f.ReturnedOrders, f.DeliveredOrders+f.ReturnedOrders),
		Checkouts: checkoutsResponse{Abandoned: f.CheckoutsAbandoned, Recovered: f.CheckoutsRecovered,
			RecoveryRate: rate(f.CheckoutsRecovered, f.CheckoutsAbandoned+f.CheckoutsRecovered)}}
}

// handleSales serves GET /stores/{store_id}/analytics/sales.
func (s *Server) handleSales() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		rg, err := s.parseRange(r, q)
		if err != nil {
			return err
		}
		interval := q.enum("interval", analyticsIntervals, "day")
		weekStart := q.enum("week_start", storage.WeekStarts, rg.settings.WeekStart)
		format, lang := q.enum("format", []string{"json", "csv"}, "json"), q.enum("lang", []string{"en", "ar"}, "en")
		if len(q.Fields) == 0 {
			if n := countPeriods(rg.from, rg.to, interval, weekdays[weekStart]); n > maxSalesBuckets {
				q.Add("date_from", "range_too_large", fmt.Sprintf("the range holds %d %ss; at most %d buckets are read at once", n, interval, maxSalesBuckets))
			}
		}
		if err := q.err(); err != nil {
			return err
		}
		ps := periods(rg.from, rg.to, interval, weekdays[weekStart])
		asOf := storage.Now()
		figures, err := s.db.FindSalesFigures(r.Context(), storeIDFrom(r.Context()), bounds(ps, rg.loc),
			time.Duration(rg.settings.AbandonmentMinutes)*time.Minute)
		if err != nil {
			return err
		}
		var totals storage.SalesFigures
		resp := salesResponse{Currency: rg.settings.Currency, Timezone: rg.settings.Timezone, Interval: interval, WeekStart: weekStart,
			DateFrom: rg.from.String(), DateTo: rg.to.String(), AsOf: asOf, Buckets: make([]bucketResponse, len(ps))}
		for i, p := range ps {
			totals.Add(figures[i])
			resp.Buckets[i] = bucketResponse{Start: p.first.String(), End: p.last.String(), figuresResponse: newFiguresResponse(figures[i])}
		}
		resp.Totals = newFiguresResponse(totals)
		if format == "csv" {
			return writeSalesCSV(w, resp, lang)
		}
		respond(w, http.StatusOK, resp)
		return nil
	}
}

type topProductResponse struct {
	ProductID  uuid.UUID `json:"product_id"`
	Name       string    `json:"name"`
	Units      int64     `json:"units"`
	GrossSales int64     `json:"gross_sales"`
	NetSales   int64     `json:"net_sales"`
	Orders     int64     `json:"orders"`
}

type topProductsResponse struct {
	Currency string               `json:"currency"`
	Timezone string               `json:"timezone"`
	By       string               `json:"by"`
	DateFrom string               `json:"date_from"`
	DateTo   string               `json:"date_to"`
	AsOf     time.Time            `json:"as_of"`
	Items    []topProductResponse `json:"items"`
}

// handleTopProducts serves GET /stores/{store_id}/analytics/top-products.
func (s *Server) handleTopProducts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		rg, err := s.parseRange(r, q)
		if err != nil {
			return err
		}
		by := q.enum("by", []string{string(storage.TopByNetSales), string(storage.TopByUnits)}, string(storage.TopByNetSales))
		limit := q.intIn("limit", 1, 50, 10)
		format, lang := q.enum("format", []string{"json", "csv"}, "json"), q.enum("lang", []string{"en", "ar"}, "en")
		if len(q.Fields) == 0 {
			if n := countPeriods(rg.from, rg.to, "day", time.Saturday); n > maxTopProductsDays {
				q.Add("date_from", "range_too_large", fmt.Sprintf("the range holds %d days; top products read at most %d", n, maxTopProductsDays))
			}
		}
		if err := q.err(); err != nil {
			return err
		}
		asOf := storage.Now()
		from, to := startOfDay(rg.from, rg.loc), startOfDay(rg.to.addDays(1), rg.loc)
		products, err := s.db.FindTopProducts(r.Context(), storeIDFrom(r.Context()), from, to, storage.TopProductsBy(by), limit)
		if err != nil {
			return err
		}
		resp := topProductsResponse{Currency: rg.settings.Currency, Timezone: rg.settings.Timezone, By: by, DateFrom: rg.from.String(),
			DateTo: rg.to.String(), AsOf: asOf, Items: make([]topProductResponse, len(products))}
		for i, p := range products {
			resp.Items[i] = topProductResponse{ProductID: p.ProductID, Name: p.Name, Units: p.Units, GrossSales: p.GrossSales,
				NetSales: p.NetSales, Orders: p.Orders}
		}
		if format == "csv" {
			return writeTopProductsCSV(w, resp, lang)
		}
		respond(w, http.StatusOK, resp)
		return nil
	}
}

var salesCSVHeaders = map[string][]string{
	"en": {"start", "end", "orders", "cancelled_orders", "gross_sales", "discounts", "returns", "net_sales", "shipping", "refunds", "aov",
		"cod_orders", "cod_delivered", "cod_returned", "cod_pending", "cod_collected", "cod_collection_rate", "return_rate",
		"checkouts_abandoned", "checkouts_recovered", "checkouts_recovery_rate", "gift_cards_sold"},
	"ar": {"من", "إلى", "الطلبات", "الطلبات الملغاة", "إجمالي المبيعات", "الخصومات", "المرتجعات", "صافي المبيعات", "الشحن", "المبالغ المستردة",
		"متوسط قيمة الطلب", "طلبات الدفع عند الاستلام", "المُسلَّمة", "المُرتجَعة", "قيد التوصيل", "المبلغ المحصَّل", "نسبة التحصيل", "نسبة الإرجاع",
		"السلال المتروكة", "السلال المستعادة", "نسبة الاستعادة", "بطاقات الهدايا المبيعة"},
}

var topProductsCSVHeaders = map[string][]string{
	"en": {"product_id", "name", "units", "gross_sales", "net_sales", "orders"},
	"ar": {"معرّف المنتج", "المنتج", "القطع", "إجمالي المبيعات", "صافي المبيعات", "الطلبات"},
}

// totalLabel names the CSV's total row.
var totalLabel = map[string]string{"en": "total", "ar": "الإجمالي"}

func rateCell(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 4, 64)
}

// csvAttachment starts a CSV download: its headers, the BOM and the header row.
func csvAttachment(w http.ResponseWriter, filename string, header []string) *csv.Writer {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, filename))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(utf8BOM)
	out := csv.NewWriter(w)
	_ = out.Write(header)
	return out
}

func writeSalesCSV(w http.ResponseWriter, resp salesResponse, lang string) error {
	exponent := storage.CurrencyExponent(resp.Currency)
	out := csvAttachment(w, fmt.Sprintf("sales_%s_%s_%s.csv", resp.DateFrom, resp.DateTo, resp.Interval), salesCSVHeaders[lang])
	row := func(start, end string, f figuresResponse) {
		money := func(v int64) string { return storage.FormatPrice(v, exponent) }
		aov := ""
		if f.AOV != nil {
			aov = money(*f.AOV)
		}
		_ = out.Write([]string{start, end, itoa64(f.Orders), itoa64(f.CancelledOrders), money(f.GrossSales), money(f.Discounts),
			money(f.Returns), money(f.NetSales), money(f.Shipping), money(f.Refunds), aov, itoa64(f.COD.Orders), itoa64(f.COD.Delivered),
			itoa64(f.COD.Returned), itoa64(f.COD.Pending), money(f.COD.Collected), rateCell(f.COD.CollectionRate), rateCell(f.ReturnRate),
			itoa64(f.Checkouts.Abandoned), itoa64(f.Checkouts.Recovered), rateCell(f.Checkouts.RecoveryRate), money(f.GiftCardsSold)})
	}
	for _, b := range resp.Buckets {
		row(b.Start, b.End, b.figuresResponse)
	}
	row(totalLabel[lang], "", resp.Totals)
	out.Flush()
	return out.Error()
}

func writeTopProductsCSV(w http.ResponseWriter, resp topProductsResponse, lang string) error {
	exponent := storage.CurrencyExponent(resp.Currency)
	out := csvAttachment(w, fmt.Sprintf("top_products_%s_%s_%s.csv", resp.DateFrom, resp.DateTo, resp.By), topProductsCSVHeaders[lang])
	var total topProductResponse
	for _, p := range resp.Items {
		_ = out.Write([]string{p.ProductID.String(), storage.NeutralizeCSVCell(p.Name), itoa64(p.Units), storage.FormatPrice(p.GrossSales, exponent),
			storage.FormatPrice(p.NetSales, exponent), itoa64(p.Orders)})
		total.Units, total.GrossSales, total.NetSales = total.Units+p.Units, total.GrossSales+p.GrossSales, total.NetSales+p.NetSales
	}
	// The listed products' sums; orders are left blank, as an order may
	// hold several of them.
	_ = out.Write([]string{totalLabel[lang], "", itoa64(total.Units), storage.FormatPrice(total.GrossSales, exponent), storage.FormatPrice(total.NetSales, exponent), ""})
	out.Flush()
	return out.Error()
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// AnalyticsBounds are the UTC bounds GET /analytics/sales sums between for
// local dates from..to (YYYY-MM-DD) in zone: the benchmark's baseline
// computes the same periods from the orders table.
func AnalyticsBounds(from, to, interval, weekStart, zone string) ([]time.Time, error) {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, err
	}
	f, err := time.Parse(dateLayout, from)
	if err != nil {
		return nil, err
	}
	t, err := time.Parse(dateLayout, to)
	if err != nil {
		return nil, err
	}
	return bounds(periods(dateOf(f), dateOf(t), interval, weekdays[weekStart]), loc), nil
}
