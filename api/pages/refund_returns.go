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

var returnWords = map[string]map[string]string{
	"ar": {
		"title": "المرتجعات والاستردادات", "order": "الطلب", "order_status": "حالة الطلب", "payment_status": "حالة الدفع", "paid": "المدفوع",
		"refunded": "المُسترد", "pending_refunds": "استردادات معلّقة", "refundable": "المتاح للاسترداد",
		"returns": "المرتجعات", "no_returns": "لا توجد مرتجعات لهذا الطلب.", "return": "مرتجع", "created": "أُنشئ", "tracking": "رقم التتبع",
		"suggested_refund": "الاسترداد المقترح", "item": "المنتج", "quantity": "الكمية", "reason": "السبب", "received": "المُستلَم",
		"restocked": "أُعيد للمخزون", "location": "الموقع", "restock": "إعادة للمخزون", "receive": "استلام المرتجع",
		"receive_help": "اكتب لكل سطر الكمية المستلمة واختر إعادتها للمخزون أو لا، ثم اضغط استلام المرتجع.",
		"received_ok":  "تم الاستلام", "refunds": "الاستردادات", "no_refunds": "لا توجد استردادات لهذا الطلب.", "amount": "المبلغ",
		"method": "الطريقة", "status": "الحالة", "reference": "المرجع", "settled": "تمت التسوية", "history": "السجل", "when": "الوقت", "step": "الخطوة",
		"by": "بواسطة", "by_staff": "فريق المتجر", "by_system": "النظام", "no_history": "لا توجد خطوات بعد.",
		"r_requested": "مطلوب", "r_approved": "مقبول", "r_received": "مُستلَم", "r_declined": "مرفوض", "r_cancelled": "ملغى",
		"f_pending": "معلّق", "f_succeeded": "ناجح", "f_failed": "فشل",
		"m_original": "طريقة الدفع الأصلية", "m_cash": "نقدًا", "m_wallet": "محفظة إلكترونية", "m_bank_transfer": "تحويل بنكي",
		"why_damaged": "تالف", "why_defective": "به عيب", "why_wrong_item": "منتج خاطئ", "why_not_as_described": "غير مطابق للوصف",
		"why_size_or_fit": "المقاس غير مناسب", "why_changed_mind": "غيّر رأيه", "why_late_delivery": "تأخر التسليم",
		"why_refused_delivery": "رُفض الاستلام", "why_other": "سبب آخر",
		"k_return_requested": "طُلب مرتجع", "k_return_approved": "قُبل المرتجع", "k_return_declined": "رُفض المرتجع",
		"k_return_cancelled": "أُلغي المرتجع", "k_return_received": "استُلم المرتجع", "k_refund_created": "أُنشئ استرداد",
		"k_refund_succeeded": "نجح الاسترداد", "k_refund_failed": "فشل الاسترداد",
		"o_DRAFT": "مسودة", "o_PENDING": "قيد الانتظار", "o_CONFIRMED": "مؤكد", "o_PROCESSING": "قيد التجهيز", "o_READY_TO_SHIP": "جاهز للشحن",
		"o_SHIPPED": "تم الشحن", "o_DELIVERED": "تم التسليم", "o_RETURNED": "مُرتجع", "o_CANCELLED": "ملغى",
		"p_pending": "لم يُدفع", "p_awaiting_review": "بانتظار المراجعة", "p_partially_paid": "مدفوع جزئيًا", "p_paid": "مدفوع",
		"p_partially_refunded": "مُسترد جزئيًا", "p_refunded": "مُسترد",
	},
	"en": {
		"title": "Returns and refunds", "order": "Order", "order_status": "Order status", "payment_status": "Payment", "paid": "Paid",
		"refunded": "Refunded", "pending_refunds": "Pending refunds", "refundable": "Refundable",
		"returns": "Returns", "no_returns": "No returns for this order.", "return": "Return", "created": "Created", "tracking": "Tracking",
		"suggested_refund": "Suggested refund", "item": "Item", "quantity": "Quantity", "reason": "Reason", "received": "Received",
		"restocked": "Restocked", "location": "Location", "restock": "Restock", "receive": "Receive return",
		"receive_help": "Enter each line's received quantity, choose whether it goes back to stock, then receive the return.",
		"received_ok":  "Received", "refunds": "Refunds", "no_refunds": "No refunds for this order.", "amount": "Amount",
		"method": "Method", "status": "Status", "reference": "Reference", "settled": "Settled", "history": "History", "when": "When", "step": "Step",
		"by": "By", "by_staff": "store staff", "by_system": "system", "no_history": "No steps yet.",
		"r_requested": "requested", "r_approved": "approved", "r_received": "received", "r_declined": "declined", "r_cancelled": "cancelled",
		"f_pending": "pending", "f_succeeded": "succeeded", "f_failed": "failed",
		"m_original": "original payment", "m_cash": "cash", "m_wallet": "mobile wallet", "m_bank_transfer": "bank transfer",
		"why_damaged": "damaged", "why_defective": "defective", "why_wrong_item": "wrong item", "why_not_as_described": "not as described",
		"why_size_or_fit": "size or fit", "why_changed_mind": "changed mind", "why_late_delivery": "late delivery",
		"why_refused_delivery": "refused at the door", "why_other": "other",
		"k_return_requested": "return requested", "k_return_approved": "return approved", "k_return_declined": "return declined",
		"k_return_cancelled": "return cancelled", "k_return_received": "return received", "k_refund_created": "refund created",
		"k_refund_succeeded": "refund succeeded", "k_refund_failed": "refund failed",
		"o_DRAFT": "draft", "o_PENDING": "pending", "o_CONFIRMED": "confirmed", "o_PROCESSING": "processing", "o_READY_TO_SHIP": "ready to ship",
		"o_SHIPPED": "shipped", "o_DELIVERED": "delivered", "o_RETURNED": "returned", "o_CANCELLED": "cancelled",
		"p_pending": "unpaid", "p_awaiting_review": "awaiting review", "p_partially_paid": "partially paid", "p_paid": "paid",
		"p_partially_refunded": "partially refunded", "p_refunded": "refunded",
	},
}

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
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		mp, err := p.storeMember(w, r)
		if err != nil {
			return err
		}
		store := mp.store
		lang := mp.lang
		orderID, err := uuid.Parse(chi.URLParam(r, "order_id"))
		if err != nil {
			p.problemPage(w, http.StatusNotFound, lang, "no such order")
			return errAnswered
		}
		ctx := r.Context()
		order, err := p.db.FindOrderByRef(ctx, store.ID, orderID.String())
		if err != nil {
			p.problemPage(w, http.StatusNotFound, lang, "no such order")
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
		history, _, err := p.db.FindOrderActivities(ctx, store.ID, order.ID, historyKinds, storage.Page{Page: 1, Limit: 500}, true)
		if err != nil {
			return err
		}
		locations, _, err := p.db.FindLocations(ctx, store.ID, storage.Page{Page: 1, Limit: 100})
		if err != nil {
			return err
		}
		words := returnWords[lang]
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
			row := returnRow{ID: ret.ID, Status: string(ret.Status), StatusLabel: words["r_"+string(ret.Status)], Created: utcTime(ret.CreatedAt),
				Suggested: money(ret.SuggestedRefund), Receivable: ret.Status == storage.ReturnApproved}
			if ret.TrackingNumber != nil {
				row.Tracking = *ret.TrackingNumber
			}
			for _, l := range ret.Lines {
				line := returnLineRow{LineID: l.LineID, Item: lines[l.LineID].Name, Reason: words["why_"+l.Reason], Quantity: l.Quantity,
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
			row := refundRow{ID: f.ID, Amount: money(f.Amount), Method: words["m_"+f.Method], Status: f.Status, StatusLabel: words["f_"+f.Status],
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

		historyRows := make([]historyRow, 0, len(history))
		for _, a := range history {
			row := historyRow{When: utcTime(a.CreatedAt), Step: words["k_"+string(a.Kind)], By: words["by_system"], Detail: a.Body}
			if a.AuthorUserID != nil {
				row.By = words["by_staff"]
			}
			var data struct {
				Amount *int64 `json:"amount"`
			}
			if json.Unmarshal(a.Data, &data) == nil && data.Amount != nil {
				row.Detail = strings.TrimSpace(money(*data.Amount) + " " + row.Detail)
			}
			historyRows = append(historyRows, row)
		}

		p.storePage(w, mp, "refund_returns.html", lang, "orders", map[string]any{"Title": words["title"] + " — " + unbroken(order.OrderNumber), "R": words,
			"OrderID": order.ID, "OrderNumber": order.OrderNumber, "OrderStatus": cmp.Or(words["o_"+string(order.Status)], string(order.Status)),
			"PaymentStatus": cmp.Or(words["p_"+string(order.PaymentStatus)], string(order.PaymentStatus)),
			"Paid":          money(order.PaidTotal), "Refunded": money(refunded), "Pending": money(pending),
			"Refundable": money(max(order.PaidTotal-refunded-pending, 0)),
			"Returns":    returnRows, "Refunds": refundRows, "History": historyRows, "Locations": options})
		return nil
	})
}

// unbroken keeps an order number whole and left to right inside a
// right-to-left heading: a left-to-right isolate, hyphens that do not break.
func unbroken(number string) string {
	return "\u2066" + strings.ReplaceAll(number, "-", "\u2011") + "\u2069"
}
