package request

import (
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// ShipmentLineJSON is one line of a shipment, as a request names it.
type ShipmentLineJSON struct {
	LineID   uuid.UUID `json:"line_id"`
	Quantity int       `json:"quantity"`
}

// carrierFields are what create and PATCH both say of the carrier.
type carrierFields struct {
	Carrier        *string `json:"carrier"`
	Service        *string `json:"service"`
	TrackingNumber *string `json:"tracking_number"`
	TrackingURL    *string `json:"tracking_url"`
	CODAmount      *int64  `json:"cod_amount"`
}

func (f carrierFields) check(c *Checker) {
	if f.Carrier != nil {
		c.OneOf("carrier", *f.Carrier, storage.Carriers)
	}
	if f.Service != nil {
		c.Text("service", *f.Service, 1, 100)
	}
	if f.TrackingNumber != nil {
		c.Text("tracking_number", *f.TrackingNumber, 1, 100)
	}
	if f.TrackingURL != nil {
		if u, err := url.Parse(*f.TrackingURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(*f.TrackingURL) > 2000 {
			c.Add("tracking_url", "invalid_url", "must be an http(s) URL")
		}
	}
	if f.CODAmount != nil {
		c.Amount("cod_amount", *f.CODAmount)
	}
}

// CreateShipment is the JSON body handleCreateShipment reads (api/ship_shipments.go).
type CreateShipment struct {
	Lines            *[]ShipmentLineJSON `json:"lines"`
	LocationID       *uuid.UUID          `json:"location_id"`
	CarrierAccountID *uuid.UUID          `json:"carrier_account_id"`
	carrierFields
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateShipment) Valid() []wire.FieldError {
	var c Checker
	if req.Lines != nil {
		if len(*req.Lines) == 0 || len(*req.Lines) > 250 {
			c.Add("lines", "out_of_range", "must list 1 to 250 lines, or be left out for every unshipped piece")
		}
		for i, l := range *req.Lines {
			if l.LineID == uuid.Nil {
				c.Add(fmt.Sprintf("lines[%d].line_id", i), "required", "is required")
			}
			if l.Quantity < 1 {
				c.Add(fmt.Sprintf("lines[%d].quantity", i), "out_of_range", "must be at least 1")
			}
		}
	}
	if req.CarrierAccountID == nil && req.Carrier == nil {
		c.Add("carrier", "required", "is required when no carrier_account_id is given")
	}
	req.check(&c)
	return c.Result()
}

// UpdateShipment is the JSON body handleUpdateShipment reads (api/ship_shipments.go).
type UpdateShipment struct {
	carrierFields
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateShipment) Valid() []wire.FieldError {
	var c Checker
	req.check(&c)
	return c.Result()
}

// ShipmentEvent is the JSON body handleShipmentEvent reads (api/ship_shipments.go).
type ShipmentEvent struct {
	Status       string     `json:"status"`
	OccurredAt   *time.Time `json:"occurred_at"`
	CODCollected *int64     `json:"cod_collected"`
	Note         *string    `json:"note"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req ShipmentEvent) Valid() []wire.FieldError {
	var c Checker
	c.OneOf("status", req.Status, AsStrings(storage.ShipmentStatuses))
	if req.OccurredAt != nil && req.OccurredAt.After(time.Now().Add(5*time.Minute)) {
		c.Add("occurred_at", "out_of_range", "must not be in the future")
	}
	if req.CODCollected != nil {
		if req.Status != string(storage.ShipmentDelivered) {
			c.Add("cod_collected", "only_when_delivered", "may only be given with status delivered")
		} else {
			c.Amount("cod_collected", *req.CODCollected)
		}
	}
	if req.Note != nil {
		c.Text("note", *req.Note, 0, 1000)
	}
	return c.Result()
}

// CancelShipment is the JSON body handleCancelShipment reads (api/ship_shipments.go).
type CancelShipment struct {
	Reason string `json:"reason"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CancelShipment) Valid() []wire.FieldError {
	var c Checker
	c.Text("reason", req.Reason, 0, 1000)
	return c.Result()
}
