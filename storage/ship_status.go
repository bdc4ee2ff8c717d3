package storage

// ShipmentStatus is where a shipment is (decisions §12).
type ShipmentStatus string

// Shipment statuses.
const (
	ShipmentLabelCreated     ShipmentStatus = "label_created"
	ShipmentInTransit        ShipmentStatus = "in_transit"
	ShipmentOutForDelivery   ShipmentStatus = "out_for_delivery"
	ShipmentFailedAttempt    ShipmentStatus = "failed_attempt"
	ShipmentDelivered        ShipmentStatus = "delivered"
	ShipmentReturnedToSender ShipmentStatus = "returned_to_sender"
	ShipmentCancelled        ShipmentStatus = "cancelled"
)

// ShipmentStatuses lists every shipment status in lifecycle order.
var ShipmentStatuses = []ShipmentStatus{ShipmentLabelCreated, ShipmentInTransit, ShipmentOutForDelivery, ShipmentFailedAttempt,
	ShipmentDelivered, ShipmentReturnedToSender, ShipmentCancelled}

// onTheRoad are the statuses of a shipment that has left and not ended.
var onTheRoad = []ShipmentStatus{ShipmentInTransit, ShipmentOutForDelivery, ShipmentFailedAttempt}

// ShipmentAllowedNext lists the statuses a shipment may move to from
// status (decisions §12): a label leaves (in transit, out for delivery,
// straight to delivered) or is cancelled; on the road it moves among the
// three road statuses or ends delivered or returned to sender; delivered,
// returned and cancelled are final. Never to the status it already has.
func ShipmentAllowedNext(status ShipmentStatus) []ShipmentStatus {
	switch status {
	case ShipmentLabelCreated:
		return []ShipmentStatus{ShipmentInTransit, ShipmentOutForDelivery, ShipmentDelivered, ShipmentCancelled}
	case ShipmentInTransit, ShipmentOutForDelivery, ShipmentFailedAttempt:
		next := []ShipmentStatus{}
		for _, s := range onTheRoad {
			if s != status {
				next = append(next, s)
			}
		}
		return append(next, ShipmentDelivered, ShipmentReturnedToSender)
	}
	return []ShipmentStatus{}
}

// ShipmentCanMove reports whether a shipment may move from from to to.
func ShipmentCanMove(from, to ShipmentStatus) bool {
	for _, s := range ShipmentAllowedNext(from) {
		if s == to {
			return true
		}
	}
	return false
}

// Final reports whether nothing follows the status.
func (s ShipmentStatus) Final() bool {
	return s == ShipmentDelivered || s == ShipmentReturnedToSender || s == ShipmentCancelled
}

// Departed reports whether a shipment in the status has left its location:
// the first move into one of these writes its order_ship movements.
func (s ShipmentStatus) Departed() bool {
	return s != ShipmentLabelCreated && s != ShipmentCancelled && s != ""
}

// Valid reports whether s is a shipment status.
func (s ShipmentStatus) Valid() bool {
	for _, v := range ShipmentStatuses {
		if v == s {
			return true
		}
	}
	return false
}
