package request

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

type adjustmentChangeRequest struct {
	VariantID      string  `json:"variant_id"`
	LocationID     *string `json:"location_id"`
	Delta          *int    `json:"delta"`
	SetOnHand      *int    `json:"set_on_hand"`
	ExpectedOnHand *int    `json:"expected_on_hand"`
}

// Adjustment is the JSON body handleAdjustInventory reads (api/stock.go).
type Adjustment struct {
	Reason    string                    `json:"reason"`
	Note      *string                   `json:"note"`
	Reference *string                   `json:"reference"`
	Changes   []adjustmentChangeRequest `json:"changes"`
}

const maxAdjustmentChanges = 100

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Adjustment) Valid() []wire.FieldError {
	var c Checker
	if req.Reason == "" {
		c.Required("reason", false)
	} else {
		c.OneOf("reason", req.Reason, storage.AdjustmentReasons)
	}
	if req.Note != nil {
		c.Text("note", *req.Note, 0, 1000)
	}
	if req.Reference != nil {
		c.Text("reference", *req.Reference, 0, 200)
	}
	switch {
	case len(req.Changes) == 0:
		c.Add("changes", "required", "list 1 to 100 changes")
	case len(req.Changes) > maxAdjustmentChanges:
		c.Add("changes", "too_many", "list at most 100 changes")
	}
	for i, ch := range req.Changes {
		field := fmt.Sprintf("changes[%d]", i)
		if _, err := uuid.Parse(ch.VariantID); err != nil {
			c.Add(field+".variant_id", "invalid_uuid", "must be a variant id")
		}
		if ch.LocationID != nil {
			if _, err := uuid.Parse(*ch.LocationID); err != nil {
				c.Add(field+".location_id", "invalid_uuid", "must be a location id")
			}
		}
		if (ch.Delta == nil) == (ch.SetOnHand == nil) {
			c.Add(field, "one_of", "give exactly one of delta and set_on_hand")
			continue
		}
		const limit = 1_000_000_000
		if ch.Delta != nil {
			switch {
			case *ch.Delta == 0:
				c.Add(field+".delta", "out_of_range", "must not be zero")
			case *ch.Delta < -limit || *ch.Delta > limit:
				c.Add(field+".delta", "out_of_range", "must be between -1000000000 and 1000000000")
			case req.Reason == storage.ReasonReceived && *ch.Delta < 0, req.Reason == storage.ReasonDamaged && *ch.Delta > 0:
				c.Add(field+".delta", "sign", "received stock raises on_hand; damaged stock lowers it")
			}
		}
		if ch.SetOnHand != nil && (*ch.SetOnHand < 0 || *ch.SetOnHand > limit) {
			c.Add(field+".set_on_hand", "out_of_range", "must be between 0 and 1000000000")
		}
		if ch.ExpectedOnHand != nil && *ch.ExpectedOnHand < 0 {
			c.Add(field+".expected_on_hand", "out_of_range", "must be at least 0")
		}
	}
	return c.Result()
}
