package request

import (
	"fmt"
	"strings"

	"github.com/merchantsvc/svc/api/wire"
)

// Reason is RejectRequest, VoidPaymentRequest and UnmarkPaidRequest.
type Reason struct {
	Reason string `json:"reason"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Reason) Valid() []wire.FieldError {
	var c Checker
	c.Text("reason", strings.TrimSpace(req.Reason), 1, 1000)
	return c.Result()
}

type acceptedLineRequest struct {
	LineID           string `json:"line_id"`
	AcceptedQuantity *int   `json:"accepted_quantity"`
}

// PartialAcceptance is the JSON body handlePartialAcceptance reads (api/pay_payments.go).
type PartialAcceptance struct {
	Lines []acceptedLineRequest `json:"lines"`
	Note  string                `json:"note"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req PartialAcceptance) Valid() []wire.FieldError {
	var c Checker
	if len(req.Lines) == 0 || len(req.Lines) > maxOrderLines {
		c.Add("lines", "out_of_range", fmt.Sprintf("must list 1 to %d lines", maxOrderLines))
	}
	seen := map[string]bool{}
	for i, l := range req.Lines {
		field := fmt.Sprintf("lines[%d]", i)
		if _, err := ParseUUID(l.LineID); err != nil {
			c.Add(field+".line_id", "invalid_uuid", "must be a uuid")
		} else if seen[l.LineID] {
			c.Add(field+".line_id", "duplicate", "each line may be listed once")
		}
		seen[l.LineID] = true
		if l.AcceptedQuantity == nil {
			c.Add(field+".accepted_quantity", "required", "is required")
		} else if *l.AcceptedQuantity < 0 {
			c.Add(field+".accepted_quantity", "out_of_range", "must be 0 or more")
		}
	}
	c.Text("note", req.Note, 0, 1000)
	return c.Result()
}
