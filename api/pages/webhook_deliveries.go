package pages

import (
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// The webhook deliveries page (issue 18): each subscription's recent
// deliveries, with redeliver and recover through the JSON API.

// DeliveriesPage serves GET /stores/{store_id}/deliveries.
func (p *Pages) DeliveriesPage() http.Handler {
	return p.handleStore("settings:read", func(w http.ResponseWriter, r *http.Request, mp memberPage) error {
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
			one := delivery{ID: d.ID, Event: d.Event, Status: string(d.Status), Label: word(lang, "deliveries.d_"+string(d.Status)),
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
		p.storePage(w, mp, "webhook_deliveries.html", "deliveries", map[string]any{"Title": word(lang, "deliveries.title"),
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
