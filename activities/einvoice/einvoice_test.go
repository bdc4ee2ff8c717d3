package einvoice_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/activities/einvoice"
)

// The authority's answers sort into done, final refusals (never retried)
// and failures worth retrying.
func TestHTTPAuthorityAnswers(t *testing.T) {
	for _, tc := range []struct {
		status  int
		body    string
		refused bool
		ok      bool
	}{
		{200, `{"reference":"ETA-9"}`, false, true},
		{201, `{"reference":"ETA-9"}`, false, true},
		{200, `{}`, false, false}, // no reference: retry
		{400, `{"error":"bad tax id"}`, true, false},
		{422, `{"error":"taxpayer not registered"}`, true, false},
		{409, `{"error":"duplicate"}`, true, false},
		{429, ``, false, false},
		{408, ``, false, false},
		{500, ``, false, false},
		{503, ``, false, false},
	} {
		var got map[string]any
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			require.Equal(t, "/v1/invoices", r.URL.Path)
			require.Equal(t, "Bearer secret", r.Header.Get("Authorization"))
			_ = json.NewDecoder(r.Body).Decode(&got)
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		client := &einvoice.HTTP{BaseURL: srv.URL + "/v1/", Token: "secret"}
		ref, err := client.Issue(context.Background(), einvoice.Invoice{ID: "inv-1", Amount: "490.00", Currency: "EGP"})
		srv.Close()
		var refused *einvoice.RefusedError
		require.Equal(t, tc.refused, errors.As(err, &refused), "status %d: %v", tc.status, err)
		require.Equal(t, tc.ok, err == nil, "status %d: %v", tc.status, err)
		if tc.ok {
			require.Equal(t, "ETA-9", ref)
		}
		require.Equal(t, "490.00", got["amount"])
	}
	_, err := (&einvoice.HTTP{}).Issue(context.Background(), einvoice.Invoice{})
	require.ErrorIs(t, err, einvoice.ErrNotConfigured)
}

func TestHTTPAuthorityCancel(t *testing.T) {
	var path, reason string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.EscapedPath()
		var body map[string]string
		_ = json.NewDecoder(r.Body).Decode(&body)
		reason = body["reason"]
	}))
	defer srv.Close()
	require.NoError(t, (&einvoice.HTTP{BaseURL: srv.URL}).Cancel(context.Background(), "ETA/7", "transfer bounced"))
	require.Equal(t, "/invoices/ETA%2F7/cancel", path)
	require.Equal(t, "transfer bounced", reason)
}
