package request

import "github.com/merchantsvc/svc/api/wire"

// Resolve is the JSON body handleResolveAutopilot reads (api/order_automation.go).
type Resolve struct {
	Note string `json:"note"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Resolve) Valid() []wire.FieldError {
	var c Checker
	c.Text("note", req.Note, 0, 1000)
	return c.Result()
}
