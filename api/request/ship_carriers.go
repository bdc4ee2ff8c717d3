package request

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// CreateCarrierAccount is the JSON body handleCreateCarrierAccount reads (api/ship_carriers.go).
type CreateCarrierAccount struct {
	Carrier string `json:"carrier"`
	Name    string `json:"name"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateCarrierAccount) Valid() []wire.FieldError {
	var c Checker
	if !slices.Contains(storage.Carriers, req.Carrier) {
		c.Add("carrier", "invalid", "must be one of "+strings.Join(storage.Carriers, ", "))
	}
	c.Text("name", req.Name, 1, 120)
	return c.Result()
}

type remittanceItemJSON struct {
	ShipmentID     *uuid.UUID `json:"shipment_id"`
	TrackingNumber *string    `json:"tracking_number"`
	Collected      int64      `json:"collected"`
	Fee            int64      `json:"fee"`
}

// CreateRemittance is the JSON body handleCreateRemittance reads (api/ship_carriers.go).
type CreateRemittance struct {
	CarrierAccountID *uuid.UUID           `json:"carrier_account_id"`
	Carrier          *string              `json:"carrier"`
	Reference        string               `json:"reference"`
	RemittedAt       *time.Time           `json:"remitted_at"`
	Items            []remittanceItemJSON `json:"items"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateRemittance) Valid() []wire.FieldError {
	var c Checker
	switch {
	case req.CarrierAccountID == nil && req.Carrier == nil:
		c.Add("carrier", "required", "is required when no carrier_account_id is given")
	case req.CarrierAccountID == nil:
		c.OneOf("carrier", *req.Carrier, storage.Carriers)
	}
	c.Text("reference", req.Reference, 1, 200)
	if req.RemittedAt == nil {
		c.Add("remitted_at", "required", "is required")
	}
	if len(req.Items) < 1 || len(req.Items) > 1000 {
		c.Add("items", "out_of_range", "must list 1 to 1000 shipments")
	}
	for i, item := range req.Items {
		if (item.ShipmentID == nil) == (item.TrackingNumber == nil) {
			c.Add(fmt.Sprintf("items[%d].shipment_id", i), "required", "give shipment_id or tracking_number, not both")
		}
		c.Amount(fmt.Sprintf("items[%d].collected", i), item.Collected)
		c.Amount(fmt.Sprintf("items[%d].fee", i), item.Fee)
	}
	return c.Result()
}
