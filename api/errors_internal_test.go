package api

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// A 500's log line names the Postgres failure without the row data its
// message and detail can quote; the answer says only "Internal error".
func TestServerErrorLogHasNoRowData(t *testing.T) {
	var logs bytes.Buffer
	handler := withLogger(slog.New(slog.NewJSONHandler(&logs, nil)))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, fmt.Errorf("update customer: %w", &pgconn.PgError{Code: "22P02",
			Message: `invalid input syntax for type uuid: "+201005556667"`, Detail: "Failing row contains (Salma Hassan)"}))
	}))
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/v1/x", nil))
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Contains(t, logs.String(), "SQLSTATE 22P02")
	for _, leak := range []string{"+201005556667", "Salma"} {
		require.NotContains(t, logs.String(), leak)
		require.NotContains(t, rec.Body.String(), leak)
	}
}
