package pages

import "net/http"

// The analytics page (decisions §17): the sales chart over a chosen range
// and interval, the totals and the top products. It reads the JSON API
// from the browser with the member's session, so analytics:read decides
// who sees figures, and the CSV links are the API's own exports.

var analyticsWords = map[string]map[string]string{
	"ar": {
		"title": "التحليلات", "from": "من", "to": "إلى", "interval": "الفاصل", "day": "يوم", "week": "أسبوع", "month": "شهر", "show": "عرض",
		"orders": "الطلبات", "cancelled": "ملغاة", "gross_sales": "إجمالي المبيعات", "discounts": "الخصومات", "returns": "المرتجعات",
		"net_sales": "صافي المبيعات", "shipping": "الشحن", "refunds": "المبالغ المستردة", "aov": "متوسط قيمة الطلب",
		"collection_rate": "نسبة تحصيل الدفع عند الاستلام", "return_rate": "نسبة الإرجاع", "recovery_rate": "نسبة استعادة السلال",
		"cod_pending": "طلبات الدفع عند الاستلام قيد التوصيل", "collected": "المبلغ المحصَّل",
		"chart": "صافي المبيعات حسب تاريخ الطلب", "top_products": "المنتجات الأكثر مبيعًا", "product": "المنتج", "units": "القطع",
		"download": "تنزيل CSV", "loading": "جارٍ التحميل…", "no_products": "لا مبيعات في هذه الفترة.", "as_of": "حتى",
		"attribution": "تُحسب الطلبات في يوم إنشائها بتوقيت المتجر؛ ما يصل لاحقًا من تسليم أو إرجاع يُضاف إلى ذلك اليوم.",
	},
	"en": {
		"title": "Analytics", "from": "From", "to": "To", "interval": "Interval", "day": "Day", "week": "Week", "month": "Month", "show": "Show",
		"orders": "Orders", "cancelled": "cancelled", "gross_sales": "Gross sales", "discounts": "Discounts", "returns": "Returns",
		"net_sales": "Net sales", "shipping": "Shipping", "refunds": "Refunds", "aov": "Average order value",
		"collection_rate": "COD collection rate", "return_rate": "Return rate", "recovery_rate": "Checkout recovery rate",
		"cod_pending": "COD orders still out", "collected": "Cash collected",
		"chart": "Net sales by order date", "top_products": "Top products", "product": "Product", "units": "Units",
		"download": "Download CSV", "loading": "Loading…", "no_products": "No sales in this range.", "as_of": "as of",
		"attribution": "Orders count on the day they were placed, in the store's time zone; deliveries and returns that arrive later change that day.",
	},
}

// AnalyticsPage serves GET /stores/{store_id}/analytics.
func (p *Pages) AnalyticsPage() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		mp, err := p.storeMember(w, r)
		if err != nil {
			return err
		}
		lang := mp.lang
		words := analyticsWords[lang]
		p.storePage(w, mp, "analytics.html", lang, "analytics", map[string]any{"Title": words["title"], "S": words})
		return nil
	})
}
