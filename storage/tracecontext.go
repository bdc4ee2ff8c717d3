package storage

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
)

// traceParent is the span in ctx as a W3C traceparent, empty without one.
// Rows whose work continues after commit (an order's order-placed workflow,
// an event's webhook dispatch) keep it, so that work joins or links to the
// trace of the request or activity that wrote them.
func traceParent(ctx context.Context) string {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier["traceparent"]
}
