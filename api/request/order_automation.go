package request

import "github.com/merchantsvc/svc/api/wire"

// Resolve is the JSON body handleResolveAutopilot reads (api/order_automation.go).
type Resolve struct {
	Note string `json:"note"`
}

func (req Resolve) Valid() []wire.FieldError {
	var c Checker
	c.Text("note", req.Note, 0, 1000)
	return c.Result()
}
