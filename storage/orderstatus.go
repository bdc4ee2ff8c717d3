package storage

// Order statuses (decisions §4).
const (
	OrderDraft       = "DRAFT"
	OrderPending     = "PENDING"
	OrderConfirmed   = "CONFIRMED"
	OrderProcessing  = "PROCESSING"
	OrderReadyToShip = "READY_TO_SHIP"
	OrderShipped     = "SHIPPED"
	OrderDelivered   = "DELIVERED"
	OrderReturned    = "RETURNED"
	OrderCancelled   = "CANCELLED"
)

// OrderStatuses lists every status in lifecycle order.
var OrderStatuses = []string{OrderDraft, OrderPending, OrderConfirmed, OrderProcessing, OrderReadyToShip,
	OrderShipped, OrderDelivered, OrderReturned, OrderCancelled}

// forwardPath is the line along which forward skips are allowed.
var forwardPath = []string{OrderPending, OrderConfirmed, OrderProcessing, OrderReadyToShip, OrderShipped}

// AllowedNext lists the statuses the status endpoints may move an order to
// from status (decisions §4): forward along PENDING…SHIPPED (skips allowed),
// READY_TO_SHIP back to PROCESSING, SHIPPED to DELIVERED or RETURNED,
// DELIVERED to RETURNED, and CANCELLED from any non-terminal status before
// shipping. A DRAFT leaves only through conversion.
func AllowedNext(status string) []string {
	if status == OrderDraft {
		return []string{}
	}
	next := []string{}
	for i, s := range forwardPath {
		if s != status {
			continue
		}
		next = append(next, forwardPath[i+1:]...)
	}
	switch status {
	case OrderReadyToShip:
		next = append(next, OrderProcessing)
	case OrderShipped:
		next = append(next, OrderDelivered, OrderReturned)
	case OrderDelivered:
		next = append(next, OrderReturned)
	}
	if Cancellable(status) {
		next = append(next, OrderCancelled)
	}
	return next
}

// Cancellable reports whether an order in status may be cancelled: not once
// shipped, delivered, returned or already cancelled. A DRAFT is cancelled
// silently by DELETE.
func Cancellable(status string) bool {
	switch status {
	case OrderPending, OrderConfirmed, OrderProcessing, OrderReadyToShip, OrderDraft:
		return true
	}
	return false
}

// CanMove reports whether the status endpoints may move from to to.
func CanMove(from, to string) bool {
	for _, s := range AllowedNext(from) {
		if s == to {
			return true
		}
	}
	return false
}
