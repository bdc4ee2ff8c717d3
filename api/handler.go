package api

import (
	"context"
	"log/slog"
	"net/http"
)

// handlerFunc is a handler that returns its error instead of writing it
// (chi's custom-handler shape): ServeHTTP hands the error to writeError, so
// every error becomes a response in one place.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP runs the handler and writes the error it returns, if any. A
// request whose Idempotency-Key was completed before gets its replay here,
// after every check of its route.
func (h handlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if idempotentHandler(w, r) {
		return
	}
	if err := h(w, r); err != nil {
		writeError(w, r, err)
	}
}

// answerError is a handler that always answers err (unknown routes and methods).
func answerError(err error) http.HandlerFunc {
	return handlerFunc(func(http.ResponseWriter, *http.Request) error { return err }).ServeHTTP
}

// withLogger gives every request the server's logger, which the error writer
// uses for the 5xx it logs.
func withLogger(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loggerKey, log)))
		})
	}
}

// loggerFrom is the request's logger (the default one outside a request).
func loggerFrom(ctx context.Context) *slog.Logger {
	if log, ok := ctx.Value(loggerKey).(*slog.Logger); ok {
		return log
	}
	return slog.Default()
}
