package pages

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/internal/waybill"
	"github.com/merchantsvc/svc/storage"
)

// The shipments page (decisions §12): a day's shipments with their status
// and waybill, and the day's waybills as one print run (one A6 page each,
// the same template the waybill workflow prints).

// shipmentDay is the day a page shows: ?date=YYYY-MM-DD, else today (UTC).
func shipmentDay(r *http.Request) (time.Time, bool) {
	raw := r.URL.Query().Get("date")
	if raw == "" {
		now := time.Now().UTC()
		return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC), true
	}
	day, err := time.Parse(time.DateOnly, raw)
	return day, err == nil
}

// ShipmentsPage serves GET /stores/{store_id}/shipments.
func (p *Pages) ShipmentsPage() http.Handler {
	return p.handleStore("orders:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		store := mp.store
		lang := mp.lang
		day, ok := shipmentDay(r)
		if !ok {
			p.problemPage(w, http.StatusBadRequest, lang, "problem.bad_date")
			return errAnswered
		}
		next := day.AddDate(0, 0, 1)
		list, _, err := p.db.FindShipments(r.Context(), store.ID, storage.ShipmentFilter{CreatedFrom: &day, CreatedTo: &next,
			Page: storage.Page{Page: 1, Limit: 100}})
		if err != nil {
			return err
		}
		type row struct {
			ID, OrderID                                uuid.UUID
			Number, OrderNumber, Carrier, Tracking     string
			Status, StatusLabel, Waybill, WaybillLabel string
			COD                                        string
		}
		rows := make([]row, 0, len(list))
		for _, s := range list {
			one := row{ID: s.ID, OrderID: s.OrderID, Number: s.Number, OrderNumber: s.OrderNumber, Carrier: s.Carrier, Status: string(s.Status),
				StatusLabel: word(lang, "shipments.s_"+string(s.Status)), Waybill: s.WaybillStatus, WaybillLabel: word(lang, "shipments.w_"+s.WaybillStatus),
				COD: storage.FormatPrice(s.CODAmount, storage.CurrencyExponent(store.Currency)) + " " + store.Currency}
			if s.TrackingNumber != nil {
				one.Tracking = *s.TrackingNumber
			}
			rows = append(rows, one)
		}
		p.storePage(w, mp, "ship_shipments.html", "shipments", map[string]any{"Title": word(lang, "shipments.title"),
			"Shipments": rows, "Day": day.Format(time.DateOnly)})
		return nil
	})
}

// WaybillsPrint serves GET /stores/{store_id}/shipments/print: the day's
// waybills (all but cancelled shipments), one A6 page each, for the
// browser to print as one PDF.
func (p *Pages) WaybillsPrint() http.Handler {
	return p.handleStore("orders:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		user, store := mp.user, mp.store
		day, ok := shipmentDay(r)
		if !ok {
			p.problemPage(w, http.StatusBadRequest, p.pageLang(r, user), "problem.bad_date")
			return errAnswered
		}
		if p.cfg.ExpensiveRead != nil && !p.cfg.ExpensiveRead(w, user.ID) {
			p.problemPage(w, http.StatusTooManyRequests, mp.lang, "problem.rate_limited")
			return errAnswered
		}
		docs, err := p.db.FindWaybillDocuments(r.Context(), store.ID, day, day.AddDate(0, 0, 1), 500)
		if err != nil {
			return err
		}
		html, err := waybill.HTML(docs...)
		if err != nil {
			return err
		}
		// The barcodes are data: images; nothing else loads.
		pageHeaders(w, "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(html)
		return nil
	})
}
