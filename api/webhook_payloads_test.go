package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
)

// Every event the service writes matches its schema under the document's
// webhooks, and a documented field is never missing: order.status_changed
// carries tracking_number as null when the order has none (spec §6.1).
func TestWebhookPayloadsMatchTheDocument(t *testing.T) {
	h := newHarness(t, api.Config{WebhookGuard: webhook.Guard{AllowPrivate: true}})
	rec := newReceiver(t, func(int) int { return http.StatusOK })
	s := newShop(t, h, "payloads", 10)
	product := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Scarf", "price": 100})
	productPath := storePath(s.m.storeID, "/products/"+product["id"].(string))
	require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: productPath, auth: bearer(s.token), body: map[string]any{"price": 200}}).Status)
	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: productPath, auth: bearer(s.token)}).Status)
	order := h.placeOrder(s, "cod", 1)
	statusPath := storePath(s.m.storeID, "/orders/"+order["id"].(string)+"/status")
	require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: statusPath, auth: bearer(s.token), body: map[string]any{"status": "CONFIRMED"}}).Status)
	require.Equal(t, http.StatusOK, h.do(request{method: "PATCH", path: statusPath, auth: bearer(s.token),
		body: map[string]any{"status": "SHIPPED", "tracking_number": "EG123"}}).Status)
	paid := h.placeOrder(s, "instapay", 1)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+paid["id"].(string)+"/mark-paid"), auth: bearer(s.token)}).Status)
	hook := h.do(request{method: "POST", path: storePath(s.m.storeID, "/webhooks"), auth: bearer(s.token),
		body: map[string]any{"url": rec.url(), "events": []string{"order.paid"}}})
	require.Equal(t, http.StatusCreated, hook.Status, string(hook.Raw))

	raw, err := api.OpenAPIDocument()
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	require.NoError(t, err)
	schemaOf := func(event string) *openapi3.Schema {
		item := doc.Webhooks[event]
		require.NotNil(t, item, "the document has no webhook %s", event)
		return item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	}

	bodies := map[string][][]byte{}
	rows, err := testenv.SQL(t, h.db).Query(context.Background(), `SELECT event, body FROM outbox WHERE store_id = $1`, s.m.storeID)
	require.NoError(t, err)
	for rows.Next() {
		var (
			event string
			body  []byte
		)
		require.NoError(t, rows.Scan(&event, &body))
		bodies[event] = append(bodies[event], body)
	}
	require.NoError(t, rows.Err())
	// The ping is a delivery of its own, recorded as the test operation records it.
	require.NoError(t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
		ping, err := tx.CreatePingDelivery(context.Background(), uuid.MustParse(s.m.storeID), uuid.MustParse(hook.data()["id"].(string)))
		bodies["webhook.ping"] = append(bodies["webhook.ping"], ping.Body)
		return err
	}))

	for _, event := range []string{"webhook.ping", "product.created", "product.updated", "product.deleted", "order.created", "order.status_changed", "order.paid"} {
		require.NotEmpty(t, bodies[event], "no %s was written", event)
	}
	for event, list := range bodies {
		for _, body := range list {
			var value any
			require.NoError(t, json.Unmarshal(body, &value))
			require.NoError(t, schemaOf(event).VisitJSON(value, openapi3.EnableJSONSchema2020()), "%s: %s", event, body)
		}
	}
	var untracked map[string]any
	require.NoError(t, json.Unmarshal(bodies["order.status_changed"][0], &untracked))
	data := untracked["data"].(map[string]any)
	require.Contains(t, data, "tracking_number", "present even when there is none")
	if data["new_status"] == "CONFIRMED" {
		require.Nil(t, data["tracking_number"])
	}
}
