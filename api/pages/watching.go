package pages

import (
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// The pages that watch long work (issue 18): imports with a live progress
// bar, webhook deliveries with redeliver and recover, and the background
// work still processing or needing the merchant. They read the store's own
// rows on the server; what they change goes through the JSON API, so its
// rules, scopes and Idempotency-Keys hold for the page too.

var watchWords = map[string]map[string]string{
	"ar": {
		"nav_imports": "الاستيراد", "nav_deliveries": "إشعارات الويب هوك", "nav_work": "الأعمال الجارية",
		"imports_title": "استيراد المنتجات", "upload": "رفع الملف", "dry_run": "تجربة دون حفظ", "file": "ملف CSV",
		"no_imports": "لا توجد عمليات استيراد بعد.", "status_running": "جارٍ", "status_succeeded": "اكتمل", "status_failed": "فشل",
		"rows": "صف", "created": "أُنشئ", "updated": "حُدّث", "unchanged": "بلا تغيير", "failed_rows": "صفوف بها أخطاء",
		"row": "الصف", "column": "العمود", "code": "الرمز", "message": "الرسالة", "download_errors": "تنزيل تقرير الأخطاء (CSV)",
		"dry_run_badge": "تجربة", "started": "بدأ", "upload_failed": "تعذّر رفع الملف",
		"deliveries_title": "إشعارات الويب هوك", "no_subscriptions": "لا توجد اشتراكات ويب هوك.", "active": "مفعّل", "inactive": "متوقف",
		"event": "الحدث", "status": "الحالة", "attempts": "المحاولات", "response": "رد الخادم", "next_retry": "المحاولة التالية",
		"created_at": "التاريخ", "redeliver": "إعادة الإرسال", "recover": "استعادة الإشعارات المتعثرة (آخر 3 أيام)",
		"no_deliveries": "لا توجد إشعارات بعد.", "enable": "إعادة تفعيل الاشتراك", "enabled": "فُعّل الاشتراك", "queued": "أُضيفت إلى قائمة الإرسال", "retrying_wait": "يُعاد تلقائيًا",
		"work_title": "الأعمال الجارية", "images_processing": "صور قيد المعالجة", "no_images": "لا توجد صور قيد المعالجة.",
		"product": "المنتج", "since": "منذ", "exceptions": "طلبات تحتاج انتباهك", "no_exceptions": "لا توجد طلبات تحتاج انتباهك.",
		"order": "الطلب", "reason": "السبب", "nav_shipments": "الشحنات", "nav_staff": "الفريق والأدوار", "nav_analytics": "التحليلات", "switch_store": "متاجرك الأخرى",
		"d_pending": "بانتظار الإرسال", "d_retrying": "تُعاد المحاولة", "d_succeeded": "وصل", "d_failed": "فشل",
		"d_exhausted": "استُنفدت المحاولات", "d_gone": "العنوان لم يعد موجودًا", "d_skipped": "تُخطّي",
	},
	"en": {
		"nav_imports": "Imports", "nav_deliveries": "Webhook deliveries", "nav_work": "Background work",
		"imports_title": "Product imports", "upload": "Upload", "dry_run": "Dry run (save nothing)", "file": "CSV file",
		"no_imports": "No imports yet.", "status_running": "Running", "status_succeeded": "Finished", "status_failed": "Failed",
		"rows": "rows", "created": "created", "updated": "updated", "unchanged": "unchanged", "failed_rows": "rows with errors",
		"row": "Row", "column": "Column", "code": "Code", "message": "Message", "download_errors": "Download the error report (CSV)",
		"dry_run_badge": "dry run", "started": "Started", "upload_failed": "The file could not be uploaded",
		"deliveries_title": "Webhook deliveries", "no_subscriptions": "No webhook subscriptions.", "active": "active", "inactive": "switched off",
		"event": "Event", "status": "Status", "attempts": "Attempts", "response": "Response", "next_retry": "Next retry",
		"created_at": "Created", "redeliver": "Redeliver", "recover": "Recover failed deliveries (last 3 days)",
		"no_deliveries": "No deliveries yet.", "enable": "Switch the subscription back on", "enabled": "Switched on", "queued": "Queued", "retrying_wait": "retried automatically",
		"work_title": "Background work", "images_processing": "Images processing", "no_images": "No images are processing.",
		"product": "Product", "since": "Since", "exceptions": "Orders that need you", "no_exceptions": "No orders need you.",
		"order": "Order", "reason": "Reason", "nav_shipments": "Shipments", "nav_staff": "Staff and roles", "nav_analytics": "Analytics", "switch_store": "Your other stores",
		"d_pending": "pending", "d_retrying": "retrying", "d_succeeded": "succeeded", "d_failed": "failed",
		"d_exhausted": "exhausted", "d_gone": "gone", "d_skipped": "skipped",
	},
}

// watchPage renders one of the watching pages with what every one of them shows.
// A member of more than one store switches between them on every page.
func (p *Pages) watchPage(w http.ResponseWriter, mp memberPage, name, lang, section string, data map[string]any) {
	data["T"], data["W"], data["Lang"] = pageWords[lang], watchWords[lang], lang
	data["StoreID"], data["StoreName"], data["Section"] = mp.store.ID, mp.store.Name, section
	type otherStore struct {
		ID         uuid.UUID
		Name, Role string
	}
	var others []otherStore
	for _, m := range mp.stores {
		if m.Store.ID != mp.store.ID {
			others = append(others, otherStore{ID: m.Store.ID, Name: m.Store.Name, Role: roleLabel(lang, m.Membership.RoleName, m.Membership.BuiltIn)})
		}
	}
	data["OtherStores"], data["SwitchPath"] = others, section
	if section == "orders" { // an order is one store's: the other store opens on its shipments
		data["SwitchPath"] = "shipments"
	}
	renderPage(w, http.StatusOK, name, data)
}

// utcTime is how the pages show a time: UTC, to the second.
func utcTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// ImportsPage serves GET /stores/{store_id}/imports.
func (p *Pages) ImportsPage() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		mp, err := p.editorStore(w, r)
		if err != nil {
			return err
		}
		user, store := mp.user, mp.store
		imports, err := p.db.FindRecentImports(r.Context(), store.ID, 20)
		if err != nil {
			return err
		}
		type row struct {
			ID        uuid.UUID
			Status    string
			DryRun    bool
			TotalRows int
			Started   string
		}
		rows := make([]row, 0, len(imports))
		for _, imp := range imports {
			rows = append(rows, row{imp.ID, string(imp.Status), imp.DryRun, imp.TotalRows, utcTime(imp.CreatedAt)})
		}
		lang := p.pageLang(r, user)
		p.watchPage(w, mp, "imports.html", lang, "imports", map[string]any{"Title": watchWords[lang]["imports_title"], "Imports": rows})
		return nil
	})
}

// DeliveriesPage serves GET /stores/{store_id}/deliveries.
func (p *Pages) DeliveriesPage() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		mp, err := p.editorStore(w, r)
		if err != nil {
			return err
		}
		store := mp.store
		lang := mp.lang
		subs, err := p.db.FindSubscriptions(r.Context(), store.ID)
		if err != nil {
			return err
		}
		recent, err := p.db.FindRecentDeliveries(r.Context(), store.ID, 20)
		if err != nil {
			return err
		}
		type delivery struct {
			ID        uuid.UUID
			Event     string
			Status    string
			Label     string
			Attempts  int
			Response  string
			NextRetry string
			Created   string
		}
		type subscription struct {
			ID         uuid.UUID
			URL        string
			Active     bool
			Deliveries []delivery
		}
		bySub := map[uuid.UUID][]delivery{}
		for _, d := range recent {
			one := delivery{ID: d.ID, Event: d.Event, Status: string(d.Status), Label: watchWords[lang]["d_"+string(d.Status)],
				Attempts: d.Attempts, Created: utcTime(d.CreatedAt), Response: "—"}
			if d.LastResponseCode != nil {
				one.Response = strconv.Itoa(*d.LastResponseCode)
			}
			if next, ok := p.nextRetry(d); ok {
				one.NextRetry = utcTime(next)
			}
			bySub[d.SubscriptionID] = append(bySub[d.SubscriptionID], one)
		}
		list := make([]subscription, 0, len(subs))
		for _, s := range subs {
			list = append(list, subscription{ID: s.ID, URL: s.URL, Active: s.IsActive, Deliveries: bySub[s.ID]})
		}
		p.watchPage(w, mp, "deliveries.html", lang, "deliveries", map[string]any{"Title": watchWords[lang]["deliveries_title"],
			"Subscriptions": list})
		return nil
	})
}

// nextRetry is when a retrying delivery's ladder makes its next attempt:
// the wait of its place on the retry schedule after its last attempt.
func (p *Pages) nextRetry(d storage.RecentDelivery) (time.Time, bool) {
	schedule := p.cfg.WebhookRetrySchedule
	if d.Status != storage.DeliveryRetrying || d.LastAttemptAt == nil || len(schedule) == 0 || d.Attempts < 1 {
		return time.Time{}, false
	}
	step := min(d.Attempts-1, len(schedule)-1)
	return d.LastAttemptAt.Add(schedule[step]), true
}

// WorkPage serves GET /stores/{store_id}/work: images still processing and
// the orders whose side effects need the merchant (autopilot exceptions).
func (p *Pages) WorkPage() http.Handler {
	return p.handle(func(w http.ResponseWriter, r *http.Request) error {
		mp, err := p.editorStore(w, r)
		if err != nil {
			return err
		}
		store := mp.store
		lang := mp.lang
		images, err := p.db.FindProcessingImages(r.Context(), store.ID, 50)
		if err != nil {
			return err
		}
		exceptions, _, err := p.db.FindAutopilotExceptions(r.Context(), store.ID, 50, 0)
		if err != nil {
			return err
		}
		type image struct {
			ID, ProductID      uuid.UUID
			ProductName, Since string
		}
		type exception struct {
			OrderID                    uuid.UUID
			OrderNumber, Reason, Reads string
			Since                      string
		}
		imgs := make([]image, 0, len(images))
		for _, i := range images {
			imgs = append(imgs, image{i.ID, i.ProductID, i.ProductName, utcTime(i.CreatedAt)})
		}
		excs := make([]exception, 0, len(exceptions))
		for _, e := range exceptions {
			reads := e.Message
			if lang == "ar" {
				reads = e.MessageAr
			}
			excs = append(excs, exception{e.OrderID, e.OrderNumber, e.Reason, reads, utcTime(e.CreatedAt)})
		}
		p.watchPage(w, mp, "work.html", lang, "work", map[string]any{"Title": watchWords[lang]["work_title"],
			"Images": imgs, "Exceptions": excs})
		return nil
	})
}
