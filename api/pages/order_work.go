package pages

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// The background work page (issue 18): what is still processing or
// waiting on the merchant.

// WorkPage serves GET /stores/{store_id}/work: images still processing and
// the orders whose side effects need the merchant (autopilot exceptions).
// The page is orders:read, as the exceptions' API twin; the images are the
// catalog's (product names), so a member without catalog:read does not get
// that section.
func (p *Pages) WorkPage() http.Handler {
	return p.handleStore("orders:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
		store := mp.store
		lang := mp.lang
		readsCatalog := mp.member.Allows("catalog:read")
		var images []storage.ProcessingImage
		if readsCatalog {
			var err error
			if images, err = p.db.FindProcessingImages(r.Context(), store.ID, 50); err != nil {
				return err
			}
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
		p.storePage(w, mp, "order_work.html", "work", map[string]any{"Title": word(lang, "work.title"),
			"ReadsCatalog": readsCatalog, "Images": imgs, "Exceptions": excs})
		return nil
	})
}
