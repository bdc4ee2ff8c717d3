package request

import "github.com/merchantsvc/svc/api/wire"

// MarkRecovered is the JSON body handleMarkRecovered reads (api/checkout.go).
type MarkRecovered struct {
	OrderID *string `json:"order_id"`
	Note    *string `json:"note"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req MarkRecovered) Valid() []wire.FieldError {
	var c Checker
	if req.OrderID != nil {
		c.UUID("order_id", *req.OrderID)
	}
	if req.Note != nil {
		c.Text("note", *req.Note, 0, 1000)
	}
	return c.Result()
}
