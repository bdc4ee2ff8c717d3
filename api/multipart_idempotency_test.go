package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// A retried multipart request with the same Idempotency-Key replays the
// first answer though the client chose a new boundary; a different file
// under the same key is another request (issue 17, finding 9).
func TestMultipartRetriesReplay(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "multipart-idem", 10)
	order := h.placeOrder(s, "instapay", 1)
	path := storePath(s.m.storeID, "/orders/"+order["id"].(string)+"/payments")
	send := func(photoName string) response {
		body, contentType := multipartBody(t, "receipt", photo(t, photoName), map[string]string{"amount": "1000"})
		return h.do(request{method: "POST", path: path, auth: bearer(s.token), body: body,
			headers: map[string]string{"Content-Type": contentType, "Idempotency-Key": "receipt-1"}})
	}
	first := send("coffee.jpg")
	require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))
	retried := send("coffee.jpg") // a new random boundary
	require.Equal(t, http.StatusCreated, retried.Status, string(retried.Raw))
	require.Equal(t, "true", retried.Header.Get("Idempotent-Replayed"))
	require.Equal(t, first.data()["proof"].(map[string]any)["id"], retried.data()["proof"].(map[string]any)["id"])

	other := send("chelsea.jpg")
	require.Equal(t, http.StatusUnprocessableEntity, other.Status, string(other.Raw))
	require.Equal(t, "IDEMPOTENCY_KEY_REUSED", other.errorCode())
}
