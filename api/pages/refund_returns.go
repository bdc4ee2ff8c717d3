package pages

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// The returns page (decisions §13): an order's returns and refunds and
// their history, with a form to receive an approved return line by line
// (received quantity, restock or not, and where), which posts to the API
// with the page's session.

// historyKinds are the timeline steps the page lists.
var historyKinds = []storage.ActivityKind{storage.ActivityReturnRequested, storage.ActivityReturnApproved, storage.ActivityReturnDeclined,
	storage.ActivityReturnCancelled, storage.ActivityReturnReceived, storage.ActivityRefundCreated, storage.ActivityRefundSucceeded,
	storage.ActivityRefundFailed}

type returnLineRow struct {
	LineID                        uuid.UUID
	Item, SKU, Reason, Note       string
	Quantity, Received, Restocked int
	Location                      string
	DefaultLocation               uuid.UUID
}

type returnRow struct {
	ID                                     uuid.UUID
	Status, StatusLabel, Created, Tracking string
	Suggested                              string
	Receivable                             bool
	Lines                                  []returnLineRow
}

type refundRow struct {
	ID                                          uuid.UUID
	Amount, Method, Status, StatusLabel, Reason string
	Reference, Failure, Created, Settled        string
}

type historyRow struct {
	When, Step, By, Detail string
}

// OrderReturnsPage serves GET /stores/{store_id}/orders/{order_id}/returns.
func (p *Pages) OrderReturnsPage() http.Handler {
	return p.handleStore("orders:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		store := mp.store
		lang := mp.lang
		orderID, err := uuid.Parse(chi.URLParam(r, "order_id"))
		if err != nil {
			p.problemPage(w, http.StatusNotFound, lang, "problem.no_order")
			return errAnswered
		}
		ctx := r.Context()
		order, err := p.db.FindOrderByRef(ctx, store.ID, orderID.String())
		if err != nil {
			p.problemPage(w, http.StatusNotFound, lang, "problem.no_order")
			return errAnswered
		}
		returns, _, err := p.db.FindReturns(ctx, store.ID, storage.ReturnFilter{OrderID: &order.ID, Page: storage.Page{Page: 1, Limit: 100}})
		if err != nil {
			return err
		}
		refunds, _, err := p.db.FindOrderRefunds(ctx, store.ID, order.ID, storage.Page{Page: 1, Limit: 100})
		if err != nil {
			return err
		}
		history, _, err := p.db.FindOrderActivities(ctx, store.ID, order.ID, storage.ActivityFilter{Kinds: historyKinds}, storage.Page{Page: 1, Limit: 500}, true)
		if err != nil {
			return err
		}
		locations, _, err := p.db.FindLocations(ctx, store.ID, storage.Page{Page: 1, Limit: 100})
		if err != nil {
			return err
		}
		money := func(minor int64) string {
			return storage.FormatPrice(minor, storage.CurrencyExponent(order.Currency)) + " " + order.Currency
		}
		lines := map[uuid.UUID]storage.OrderLine{}
		for _, l := range order.Lines {
			lines[l.ID] = l
		}
		locationNames := map[uuid.UUID]string{}
		type locationOption struct {
			ID   uuid.UUID
			Name string
		}
		var options []locationOption
		var defaultLocation uuid.UUID
		for _, l := range locations {
			locationNames[l.ID] = l.Name
			if l.IsActive {
				options = append(options, locationOption{l.ID, l.Name})
			}
			if l.IsDefault {
				defaultLocation = l.ID
			}
		}

		returnRows := make([]returnRow, 0, len(returns))
		for _, ret := range returns {
			row := returnRow{ID: ret.ID, Status: string(ret.Status), StatusLabel: word(lang, "returns.r_"+string(ret.Status)), Created: utcTime(ret.CreatedAt),
				Suggested: money(ret.SuggestedRefund), Receivable: ret.Status == storage.ReturnApproved}
			if ret.TrackingNumber != nil {
				row.Tracking = *ret.TrackingNumber
			}
			for _, l := range ret.Lines {
				line := returnLineRow{LineID: l.LineID, Item: lines[l.LineID].Name, Reason: word(lang, "returns.why_"+l.Reason), Quantity: l.Quantity,
					Received: l.ReceivedQuantity, Restocked: l.RestockedQuantity, DefaultLocation: defaultLocation}
				if sku := lines[l.LineID].SKU; sku != nil {
					line.SKU = *sku
				}
				if l.Note != nil {
					line.Note = *l.Note
				}
				if l.LocationID != nil {
					line.Location, line.DefaultLocation = locationNames[*l.LocationID], *l.LocationID
				}
				row.Lines = append(row.Lines, line)
			}
			returnRows = append(returnRows, row)
		}

		var refunded, pending int64
		refundRows := make([]refundRow, 0, len(refunds))
		for _, f := range refunds {
			switch f.Status {
			case storage.RefundSucceeded:
				refunded += f.Amount
			case storage.RefundPending:
				pending += f.Amount
			}
			row := refundRow{ID: f.ID, Amount: money(f.Amount), Method: word(lang, "returns.m_"+f.Method), Status: f.Status, StatusLabel: word(lang, "returns.f_"+f.Status),
				Reason: f.Reason, Created: utcTime(f.CreatedAt)}
			if f.Reference != nil {
				row.Reference = *f.Reference
			}
			if f.FailureReason != nil {
				row.Failure = *f.FailureReason
			}
			if f.SettledAt != nil {
				row.Settled = utcTime(*f.SettledAt)
			}
			refundRows = append(refundRows, row)
		}

		// What is refundable is storage's rule (the one CreateRefund holds a
		// refund to), card cap included, not worked out again here.
		refundable, err := p.db.FindRefundable(ctx, store.ID, order.ID)
		if err != nil {
			return err
		}
		refundableToCard := ""
		if refundable.ToCard != nil {
			refundableToCard = money(refundable.ForMethod(storage.RefundOriginal))
		}

		historyRows := make([]historyRow, 0, len(history))
		for _, a := range history {
			row := historyRow{When: utcTime(a.CreatedAt), Step: word(lang, "returns.k_"+string(a.Kind)), By: word(lang, "returns.by_system"), Detail: a.Body}
			if a.AuthorUserID != nil {
				row.By = word(lang, "returns.by_staff")
			}
			var data struct {
				Amount *int64 `json:"amount"`
			}
			if json.Unmarshal(a.Data, &data) == nil && data.Amount != nil {
				row.Detail = strings.TrimSpace(money(*data.Amount) + " " + row.Detail)
			}
			historyRows = append(historyRows, row)
		}

		p.storePage(w, mp, "refund_returns.html", "orders", map[string]any{"Title": word(lang, "returns.title") + " — " + unbroken(order.OrderNumber),
			"OrderID": order.ID, "OrderNumber": order.OrderNumber, "OrderStatus": cmp.Or(word(lang, "returns.o_"+string(order.Status)), string(order.Status)),
			"PaymentStatus": cmp.Or(word(lang, "returns.p_"+string(order.PaymentStatus)), string(order.PaymentStatus)),
			"Paid":          money(order.PaidTotal), "Refunded": money(refunded), "Pending": money(pending),
			"Refundable": money(refundable.Total), "RefundableToCard": refundableToCard,
			"Returns": returnRows, "Refunds": refundRows, "History": historyRows, "Locations": options})
		return nil
	})
}

// unbroken keeps an order number whole and left to right inside a
// right-to-left heading: a left-to-right isolate, hyphens that do not break.
func unbroken(number string) string {
	return "\u2066" + strings.ReplaceAll(number, "-", "\u2011") + "\u2069"
}
