// Package orderref tells an order id from an order number in the reference
// a buyer or merchant types. It is a package of its own so that its fuzz
// test links nothing but it.
package orderref

import "github.com/google/uuid"

// Parse reports whether an order reference is an order id (a uuid in its
// 36-character form); anything else is an order number.
func Parse(ref string) (uuid.UUID, bool) {
	id, err := uuid.Parse(ref)
	return id, err == nil && len(ref) == 36
}
