package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// Checkout re-checks that every product is still for sale: a product
// withdrawn after its line went into the cart refuses the checkout with the
// line named, and nothing is placed or reserved (issue 17, finding 11).
func TestCheckoutRefusesAWithdrawnProduct(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "withdrawn", 10)
	cartID, cartToken := h.openCart(s, 2, "buyer@example.com")
	h.exec(`UPDATE products SET status = 'draft' WHERE id = (SELECT product_id FROM variants WHERE id = $1)`, s.variantID)

	resp := h.buyer(s, "POST", "/carts/"+cartID+"/checkout", checkoutBody("cod"), cartToken)
	require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
	require.Equal(t, []string{"lines[0].variant_id"}, resp.fieldNames())
	require.Equal(t, 10, h.variantQuantity(s), "nothing reserved")
	orders := h.do(request{method: "GET", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token)})
	require.EqualValues(t, 0, orders.data()["pagination"].(map[string]any)["total"], "nothing placed")
}
