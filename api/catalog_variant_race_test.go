package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// Price edits racing orders of one variant lose no reservation: the stock
// ends exactly at the start less what was sold (issue 17, finding 7: the
// edit read the variant unlocked and wrote every column back).
func TestVariantEditsRacingOrdersLoseNoStock(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "race", 50)
	var productID string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT product_id FROM variants WHERE id = $1`, s.variantID).Scan(&productID))
	variantPath := storePath(s.m.storeID, "/products/"+productID+"/variants/"+s.variantID)

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		sold  int
		edits []int
	)
	for i := range 30 {
		wg.Go(func() {
			resp := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token),
				body: orderBody(s.variantID, 1, fmt.Sprintf("+2010%08d", i))})
			mu.Lock()
			defer mu.Unlock()
			if resp.Status == http.StatusCreated {
				sold++
			}
		})
		wg.Go(func() {
			resp := h.do(request{method: "PATCH", path: variantPath, auth: bearer(s.token), body: map[string]any{"price": 45000 + i}})
			mu.Lock()
			defer mu.Unlock()
			edits = append(edits, resp.Status)
		})
	}
	wg.Wait()
	require.Equal(t, 30, sold, "every order placed")
	for _, status := range edits {
		require.Equal(t, http.StatusOK, status)
	}
	require.Equal(t, 50-sold, h.variantQuantity(s), "stock is the start less what was sold")
}
