package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/storage"
)

// Every list answers the same pagination: on a page past the end, no items
// and the true total (two lists used to answer total 0 there). The orders
// are placed for the first customer's phone, so there stay two customers.
func TestListsAnswerTheTotalOnAPagePastTheEnd(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "lists", 5)
	for i := range 2 {
		require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: storePath(s.m.storeID, "/customers"), auth: bearer(s.token),
			body: map[string]any{"name": fmt.Sprintf("Customer %d", i), "phone": fmt.Sprintf("+2010000000%02d", i)}}).Status)
		require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: storePath(s.m.storeID, "/categories"), auth: bearer(s.token),
			body: map[string]any{"name": fmt.Sprintf("Category %d", i)}}).Status)
		require.NoError(t, h.db.InTx(context.Background(), func(tx *storage.Tx) error {
			return tx.CreateNotification(context.Background(), storage.Notification{StoreID: uuid.MustParse(s.m.storeID),
				Kind: "webhook.disabled", Title: "t", TitleAr: "t", Body: "b", BodyAr: "b", Data: []byte(`{}`)})
		}))
	}
	h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Second", "price": 100}) // newShop made the first
	for range 2 {
		require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
			body: orderBody(s.variantID, 1, "+201000000000")}).Status)
	}
	for _, path := range []string{"/customers", "/categories", "/notifications", "/products", "/orders"} {
		for _, page := range []int{1, 3, 50} {
			resp := h.do(request{method: "GET", path: storePath(s.m.storeID, fmt.Sprintf("%s?page=%d&limit=1", path, page)), auth: s.m.auth()})
			require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
			pagination := resp.data()["pagination"].(map[string]any)
			require.EqualValues(t, 2, pagination["total"], "%s page %d", path, page)
			require.EqualValues(t, 2, pagination["total_pages"], "%s page %d", path, page)
			require.Len(t, resp.data()["items"], map[bool]int{true: 1, false: 0}[page == 1], "%s page %d", path, page)
		}
	}
}
