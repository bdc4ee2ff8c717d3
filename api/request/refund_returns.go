package request

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// ReceiveReturn is the JSON body handleReceiveReturn reads (api/refund_returns.go).
type ReceiveReturn struct {
	Lines []struct {
		LineID           uuid.UUID  `json:"line_id"`
		ReceivedQuantity *int       `json:"received_quantity"`
		Restock          *bool      `json:"restock"`
		LocationID       *uuid.UUID `json:"location_id"`
	} `json:"lines"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req ReceiveReturn) Valid() []wire.FieldError {
	var c Checker
	if len(req.Lines) == 0 || len(req.Lines) > 100 {
		c.Add("lines", "out_of_range", "must list 1 to 100 lines")
	}
	for i, l := range req.Lines {
		if l.LineID == uuid.Nil {
			c.Add(fmt.Sprintf("lines[%d].line_id", i), "required", "is required")
		}
		if l.ReceivedQuantity == nil {
			c.Add(fmt.Sprintf("lines[%d].received_quantity", i), "required", "is required")
		}
		if l.Restock == nil {
			c.Add(fmt.Sprintf("lines[%d].restock", i), "required", "say whether the pieces go back on the shelf")
		}
	}
	return c.Result()
}

// RequestReturn is the JSON body handleRequestReturn reads (api/refund_returns.go).
type RequestReturn struct {
	Lines []struct {
		LineID   uuid.UUID `json:"line_id"`
		Quantity int       `json:"quantity"`
		Reason   string    `json:"reason"`
		Note     *string   `json:"note"`
	} `json:"lines"`
	Approve bool `json:"approve"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req RequestReturn) Valid() []wire.FieldError {
	var c Checker
	if len(req.Lines) == 0 || len(req.Lines) > 100 {
		c.Add("lines", "out_of_range", "must list 1 to 100 lines")
	}
	for i, l := range req.Lines {
		if l.LineID == uuid.Nil {
			c.Add(fmt.Sprintf("lines[%d].line_id", i), "required", "is required")
		}
		if l.Quantity < 1 {
			c.Add(fmt.Sprintf("lines[%d].quantity", i), "exceeds_returnable", "must be at least 1")
		}
		// refused_delivery is the system's: a shipment returned to sender.
		c.OneOf(fmt.Sprintf("lines[%d].reason", i), l.Reason, without(storage.ReturnReasons, storage.ReasonRefusedDelivery))
		if l.Note != nil {
			c.Text(fmt.Sprintf("lines[%d].note", i), *l.Note, 0, 1000)
		}
		if l.Reason == "other" && (l.Note == nil || strings.TrimSpace(*l.Note) == "") {
			c.Add(fmt.Sprintf("lines[%d].note", i), "required", "is required when the reason is other")
		}
	}
	return c.Result()
}

func without(list []string, drop string) []string {
	out := make([]string, 0, len(list))
	for _, v := range list {
		if v != drop {
			out = append(out, v)
		}
	}
	return out
}

// MoveReturn is the JSON body handleMoveReturn reads (api/refund_returns.go).
type MoveReturn struct {
	TrackingNumber *string `json:"tracking_number"`
	Reason         *string `json:"reason"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req MoveReturn) Valid() []wire.FieldError {
	var c Checker
	if req.TrackingNumber != nil {
		c.Text("tracking_number", *req.TrackingNumber, 1, 100)
	}
	if req.Reason != nil {
		c.Text("reason", *req.Reason, 0, 1000)
	}
	return c.Result()
}
