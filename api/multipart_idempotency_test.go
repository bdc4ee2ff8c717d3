package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
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

// An upload's Idempotency-Key commits with its row: while the first request
// still waits for the image workflow, a retry replays the 202 the row
// committed with (not 409 in progress), and no second image is made.
func TestUploadKeyCommitsWithItsRow(t *testing.T) {
	h := newHarness(t, api.Config{ImageWait: 3 * time.Second}) // no worker: the workflow never finishes
	s := newShop(t, h, "upload-idem", 10)
	productID := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Lamp", "price": 100})["id"].(string)
	path := storePath(s.m.storeID, "/products/"+productID+"/images")
	send := func() response {
		body, contentType := multipartBody(t, "file", photo(t, "coffee.jpg"), nil)
		return h.do(request{method: "POST", path: path, auth: bearer(s.token), body: body,
			headers: map[string]string{"Content-Type": contentType, "Idempotency-Key": "image-1"}})
	}
	first := make(chan response, 1)
	go func() { first <- send() }()
	waitFor(t, "the image row", func() bool {
		var n int
		require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM product_images`).Scan(&n))
		return n == 1
	})
	during := send()
	require.Equal(t, http.StatusAccepted, during.Status, string(during.Raw))
	require.Equal(t, "true", during.Header.Get("Idempotent-Replayed"))
	answer := <-first
	require.Equal(t, http.StatusAccepted, answer.Status, string(answer.Raw))
	require.Equal(t, answer.data()["id"], during.data()["id"])
	after := send()
	require.Equal(t, answer.data()["id"], after.data()["id"])
	var images int
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM product_images`).Scan(&images))
	require.Equal(t, 1, images)
}
