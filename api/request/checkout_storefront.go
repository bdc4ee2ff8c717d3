package request

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Cart is the body of POST /carts (optional) and PUT /carts/{id}.
type Cart struct {
	Lines           []orderLineRequest          `json:"lines"`
	Email           wire.Optional[string]       `json:"email"`
	Phone           wire.Optional[string]       `json:"phone"`
	DiscountCode    wire.Optional[string]       `json:"discount_code"`
	ShippingAddress wire.Optional[quoteAddress] `json:"shipping_address"`
	ShippingRateID  wire.Optional[string]       `json:"shipping_rate_id"`
	PaymentMethod   wire.Optional[string]       `json:"payment_method"`
	// GiftCardCodes replace the cart's cards (null removes them); the
	// handler finds each (api/checkout_giftcards.go).
	GiftCardCodes wire.Optional[[]string] `json:"gift_card_codes"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Cart) Valid() []wire.FieldError {
	var c Checker
	checkLines(&c, req.Lines)
	if req.GiftCardCodes.Set && !req.GiftCardCodes.Null {
		checkGiftCardCodes(&c, req.GiftCardCodes.Value)
	}
	if req.DiscountCode.Set && !req.DiscountCode.Null {
		c.Text("discount_code", req.DiscountCode.Value, 1, 64)
	}
	if a := req.ShippingAddress; a.Set && !a.Null {
		a.Value.check(&c, "shipping_address")
	}
	if req.ShippingRateID.Set && !req.ShippingRateID.Null {
		c.UUID("shipping_rate_id", req.ShippingRateID.Value)
	}
	if req.PaymentMethod.Set && !req.PaymentMethod.Null {
		c.OneOf("payment_method", req.PaymentMethod.Value, checkoutMethods)
	}
	if req.Email.Set && !req.Email.Null {
		checkEmail(&c, "email", req.Email.Value)
	}
	if req.Phone.Set && !req.Phone.Null {
		checkPhone(&c, "phone", req.Phone.Value)
	}
	return c.Result()
}

// Empty reports whether the body sets nothing.
func (req Cart) Empty() bool {
	return req.Lines == nil && !req.Email.Set && !req.Phone.Set && !req.DiscountCode.Set && !req.ShippingAddress.Set &&
		!req.ShippingRateID.Set && !req.PaymentMethod.Set && !req.GiftCardCodes.Set
}

// checkGiftCardCodes checks a list of typed gift card codes: at most
// storage.MaxGiftCardsPerCart, each of text a code could be.
func checkGiftCardCodes(c *Checker, codes []string) {
	if len(codes) > storage.MaxGiftCardsPerCart {
		c.Add("gift_card_codes", "too_many", fmt.Sprintf("at most %d gift cards", storage.MaxGiftCardsPerCart))
		return
	}
	for i, code := range codes {
		c.Text(fmt.Sprintf("gift_card_codes[%d]", i), code, 1, 64)
	}
}

// Update is the change the request makes to the cart; replaceLines says its lines replace the cart's.
func (req Cart) Update(replaceLines bool) storage.CartUpdate {
	upd := storage.CartUpdate{Email: storage.Field[string](req.Email), PaymentMethod: storage.Field[string](req.PaymentMethod),
		ShipTo: storage.Field[storage.ShipTo]{Set: req.ShippingAddress.Set, Null: req.ShippingAddress.Null,
			Value: req.ShippingAddress.Value.shipTo()},
		ShippingRateID: storage.Field[uuid.UUID]{Set: req.ShippingRateID.Set, Null: req.ShippingRateID.Null}}
	if req.ShippingRateID.Set && !req.ShippingRateID.Null {
		upd.ShippingRateID.Value, _ = ParseUUID(req.ShippingRateID.Value)
	}
	if req.DiscountCode.Set {
		code := req.DiscountCode
		code.Value = strings.TrimSpace(code.Value)
		upd.DiscountCode = storage.Field[string](code)
	}
	if req.Phone.Set {
		phone := req.Phone
		phone.Value = NormalizePhone(phone.Value)
		upd.Phone = storage.Field[string](phone)
	}
	if replaceLines || req.Lines != nil {
		upd.Lines = []storage.NewOrderLine{}
		for _, l := range req.Lines {
			upd.Lines = append(upd.Lines, l.newOrderLine())
		}
	}
	return upd
}

// checkoutMethods are the payment methods a buyer can choose; card only
// in a store with a connected gateway.
var checkoutMethods = []string{"cod", "card", "instapay", "mobile_wallet", "bank_transfer"}

// Checkout is the JSON body handleCheckout reads (api/checkout_storefront.go).
type Checkout struct {
	// PaymentMethod may be left out when the cart's gift cards pay the
	// whole total.
	PaymentMethod   string         `json:"payment_method"`
	ShippingAddress *address       `json:"shipping_address"`
	Customer        inlineCustomer `json:"customer"`
	Notes           string         `json:"notes"`
	// ShippingRateID picks a rate of the zone covering the address (else
	// the cart's, else the cheapest); ExpectedTotal is the total the buyer
	// was shown.
	ShippingRateID *string `json:"shipping_rate_id"`
	ExpectedTotal  *int64  `json:"expected_total"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Checkout) Valid() []wire.FieldError {
	var c Checker
	if req.PaymentMethod != "" {
		c.OneOf("payment_method", req.PaymentMethod, checkoutMethods)
	}
	if req.ShippingAddress == nil {
		c.Add("shipping_address", "required", "is required")
	} else {
		req.ShippingAddress.check(&c, "shipping_address")
	}
	c.Text("customer.name", req.Customer.Name, 1, 200)
	if req.Customer.Email == nil && req.Customer.Phone == nil {
		c.Add("customer.phone", "required", "a phone or an email is required")
	}
	if req.Customer.Email != nil {
		checkEmail(&c, "customer.email", *req.Customer.Email)
	}
	if req.Customer.Phone != nil {
		checkPhone(&c, "customer.phone", *req.Customer.Phone)
	}
	c.Text("notes", req.Notes, 0, 2000)
	if req.ShippingRateID != nil {
		c.UUID("shipping_rate_id", *req.ShippingRateID)
	}
	if req.ExpectedTotal != nil {
		c.Amount("expected_total", *req.ExpectedTotal)
	}
	return c.Result()
}
