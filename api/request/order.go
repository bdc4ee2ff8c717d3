package request

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

type inlineCustomer struct {
	Name  string  `json:"name"`
	Email *string `json:"email"`
	Phone *string `json:"phone"`
}

type orderLineRequest struct {
	VariantID string `json:"variant_id"`
	Quantity  int    `json:"quantity"`
	// Recipient is whom a gift card line's cards are for (§19).
	Recipient *GiftCardRecipient `json:"recipient"`
}

// newOrderLine is the line as storage takes it.
func (l orderLineRequest) newOrderLine() storage.NewOrderLine {
	id, _ := ParseUUID(l.VariantID)
	line := storage.NewOrderLine{VariantID: id, Quantity: l.Quantity}
	if l.Recipient != nil {
		line.Recipient = new(l.Recipient.Stored())
	}
	return line
}

// CreateOrder is the JSON body handleCreateOrder reads (api/order.go).
type CreateOrder struct {
	CustomerID      *string            `json:"customer_id"`
	Customer        *inlineCustomer    `json:"customer"`
	Lines           []orderLineRequest `json:"lines"`
	ShippingAddress *address           `json:"shipping_address"`
	PaymentMethod   string             `json:"payment_method"`
	ShippingFee     int64              `json:"shipping_fee"`
	Discount        int64              `json:"discount"`
	Notes           string             `json:"notes"`
	// DiscountCode and ApplyAutomaticDiscounts price with the store's
	// discounts (§14); without them an order prices as before.
	DiscountCode            *string `json:"discount_code"`
	ApplyAutomaticDiscounts bool    `json:"apply_automatic_discounts"`
	// ShippingRateID prices the shipping with a rate of the store (§15).
	ShippingRateID *string `json:"shipping_rate_id"`
	// GiftCardCodes pay the order (§19); the handler finds each. With them
	// payment_method may be left out when they pay the whole total.
	GiftCardCodes []string `json:"gift_card_codes"`
}

const maxOrderLines = 100

// checkLines checks variant lines (of an order or a cart): at most 100,
// each variant once, quantities 1-10000.
func checkLines(c *Checker, lines []orderLineRequest) {
	if len(lines) > maxOrderLines {
		c.Add("lines", "out_of_range", fmt.Sprintf("must have at most %d lines", maxOrderLines))
	}
	seen := map[string]bool{}
	for i, l := range lines {
		field := fmt.Sprintf("lines[%d]", i)
		if _, err := ParseUUID(l.VariantID); err != nil {
			c.Add(field+".variant_id", "invalid_uuid", "must be a uuid")
		} else if seen[l.VariantID] {
			c.Add(field+".variant_id", "duplicate", "each variant may appear on one line only")
		}
		seen[l.VariantID] = true
		if l.Quantity < 1 || l.Quantity > 10000 {
			c.Add(field+".quantity", "out_of_range", "must be between 1 and 10000")
		}
		if l.Recipient != nil {
			l.Recipient.check(c, field+".recipient")
		}
	}
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateOrder) Valid() []wire.FieldError {
	var c Checker
	switch {
	case req.CustomerID == nil && req.Customer == nil:
		c.Add("customer", "required", "send customer_id or an inline customer")
	case req.CustomerID != nil && req.Customer != nil:
		c.Add("customer", "invalid", "send customer_id or an inline customer, not both")
	case req.CustomerID != nil:
		c.UUID("customer_id", *req.CustomerID)
	default:
		c.Text("customer.name", req.Customer.Name, 1, 200)
		if req.Customer.Email == nil && req.Customer.Phone == nil {
			c.Add("customer.phone", "required", "an inline customer needs a phone or an email")
		}
		if req.Customer.Email != nil {
			checkEmail(&c, "customer.email", *req.Customer.Email)
		}
		if req.Customer.Phone != nil {
			checkPhone(&c, "customer.phone", *req.Customer.Phone)
		}
	}
	if len(req.Lines) == 0 {
		c.Add("lines", "out_of_range", fmt.Sprintf("must have 1 to %d lines", maxOrderLines))
	}
	checkLines(&c, req.Lines)
	if req.ShippingAddress == nil {
		c.Add("shipping_address", "required", "is required")
	} else {
		req.ShippingAddress.check(&c, "shipping_address")
	}
	if req.PaymentMethod != "" || len(req.GiftCardCodes) == 0 {
		c.OneOf("payment_method", req.PaymentMethod, storage.PaymentMethods)
	}
	checkGiftCardCodes(&c, req.GiftCardCodes)
	c.Amount("shipping_fee", req.ShippingFee)
	c.Amount("discount", req.Discount)
	c.Text("notes", req.Notes, 0, 2000)
	if req.DiscountCode != nil {
		c.Text("discount_code", *req.DiscountCode, 1, 64)
	}
	if req.ShippingRateID != nil {
		c.UUID("shipping_rate_id", *req.ShippingRateID)
		if req.ShippingFee != 0 {
			c.Add("shipping_fee", "not_allowed", "send shipping_rate_id or a manual shipping_fee, not both")
		}
	}
	return c.Result()
}

// NewOrder is the order the request places in the store.
func (req CreateOrder) NewOrder(storeID uuid.UUID, draft bool, actor *uuid.UUID) storage.NewOrder {
	shipping := *req.ShippingAddress
	shipping.Phone = NormalizePhone(shipping.Phone)
	addr, _ := json.Marshal(shipping)
	in := storage.NewOrder{StoreID: storeID, Draft: draft, ShippingAddress: addr, PaymentMethod: req.PaymentMethod,
		ShippingFee: req.ShippingFee, Discount: req.Discount, Notes: req.Notes, ActorUserID: actor,
		DiscountCode: req.DiscountCode, ApplyAutomatic: req.ApplyAutomaticDiscounts}
	if req.ShippingRateID != nil {
		id, _ := ParseUUID(*req.ShippingRateID)
		in.ShippingRateID = &id
	}
	if req.CustomerID != nil {
		id, _ := ParseUUID(*req.CustomerID)
		in.CustomerID = &id
	} else {
		in.Customer = &storage.OrderCustomer{Name: strings.TrimSpace(req.Customer.Name), Email: req.Customer.Email,
			Phone: NormalizedPtr(req.Customer.Phone)}
	}
	for _, l := range req.Lines {
		in.Lines = append(in.Lines, l.newOrderLine())
	}
	return in
}

// UpdateStatus is the JSON body handleUpdateOrderStatus reads (api/order.go).
type UpdateStatus struct {
	Status         string  `json:"status"`
	TrackingNumber *string `json:"tracking_number"`
	Note           string  `json:"note"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateStatus) Valid() []wire.FieldError {
	var c Checker
	c.OneOf("status", req.Status, AsStrings(storage.OrderStatuses))
	if req.TrackingNumber != nil {
		c.Text("tracking_number", *req.TrackingNumber, 1, 100)
	}
	c.Text("note", req.Note, 0, 1000)
	return c.Result()
}

// Comment is the JSON body handleAddComment reads (api/order.go).
type Comment struct {
	Body string `json:"body"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Comment) Valid() []wire.FieldError {
	var c Checker
	c.Text("body", req.Body, 1, 5000)
	return c.Result()
}

// UpdateOrder is the JSON body handleUpdateOrder reads (api/order.go).
type UpdateOrder struct {
	Notes           wire.Optional[string]  `json:"notes"`
	ShippingAddress wire.Optional[address] `json:"shipping_address"`
	TrackingNumber  wire.Optional[string]  `json:"tracking_number"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateOrder) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "notes", req.Notes) {
		c.Text("notes", req.Notes.Value, 0, 2000)
	}
	if notNull(&c, "shipping_address", req.ShippingAddress) {
		req.ShippingAddress.Value.check(&c, "shipping_address")
	}
	if req.TrackingNumber.Set && !req.TrackingNumber.Null {
		c.Text("tracking_number", req.TrackingNumber.Value, 1, 100)
	}
	return c.Result()
}

// BulkStatus is the JSON body handleBulkStatus reads (api/order.go).
type BulkStatus struct {
	OrderIDs       []string `json:"order_ids"`
	Status         string   `json:"status"`
	TrackingNumber *string  `json:"tracking_number"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req BulkStatus) Valid() []wire.FieldError {
	var c Checker
	if len(req.OrderIDs) == 0 || len(req.OrderIDs) > 100 {
		c.Add("order_ids", "out_of_range", "must list 1 to 100 orders")
	}
	for i, id := range req.OrderIDs {
		c.UUID(fmt.Sprintf("order_ids[%d]", i), id)
	}
	c.OneOf("status", req.Status, AsStrings(storage.OrderStatuses))
	return c.Result()
}
