package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// The profiles and the API's metrics are served on the debug address and
// nowhere else: the public API answers 404 for them (for /metrics unless
// SVC_METRICS_TOKEN is set, issue 48 §9).
func TestProfilesOnlyOnTheDebugAddress(t *testing.T) {
	public := httptest.NewServer(api.NewServer(apiConfig(Config{}, nil, nil), nil, nil, nil, slog.New(slog.DiscardHandler)))
	defer public.Close()
	debug := httptest.NewServer(debugHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "svc_metrics 1\n")
	})))
	defer debug.Close()
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline", "/metrics"} {
		resp, err := http.Get(debug.URL + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.NotEmpty(t, body, path)
	}

	for _, path := range []string{"/debug/pprof/", "/debug/pprof/profile?seconds=1", "/debug/pprof/heap", "/metrics"} {
		resp, err := http.Get(public.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}

	// Unset, nothing listens and the wait returns at once.
	serveDebug(context.Background(), "", slog.New(slog.DiscardHandler), nil)()
}
