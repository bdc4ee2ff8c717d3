package request

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Gift cards and store credit (decisions §19): the bodies of api/giftcard.go.

// GiftCardRecipient is whom a card is for.
type GiftCardRecipient struct {
	Name    string  `json:"name"`
	Phone   *string `json:"phone"`
	Email   *string `json:"email"`
	Message *string `json:"message"`
}

func (r GiftCardRecipient) check(c *Checker, prefix string) {
	c.Text(prefix+".name", r.Name, 1, 200)
	if r.Phone != nil {
		checkPhone(c, prefix+".phone", *r.Phone)
	}
	if r.Email != nil {
		checkEmail(c, prefix+".email", *r.Email)
	}
	if r.Message != nil && utf8.RuneCountInString(*r.Message) > 500 {
		c.Add(prefix+".message", "too_long", "must be at most 500 characters")
	}
}

// Stored is the recipient as storage keeps it: trimmed, the phone normalised.
func (r GiftCardRecipient) Stored() storage.GiftCardRecipient {
	out := storage.GiftCardRecipient{Name: strings.TrimSpace(r.Name), Phone: NormalizedPtr(r.Phone), Message: r.Message}
	if r.Email != nil {
		out.Email = new(strings.TrimSpace(*r.Email))
	}
	return out
}

// ParseDate reads a YYYY-MM-DD date as midnight UTC.
func ParseDate(s string) (time.Time, bool) {
	d, err := time.Parse(time.DateOnly, s)
	return d, err == nil
}

func checkDate(c *Checker, field, s string) {
	if _, ok := ParseDate(s); !ok {
		c.Add(field, "invalid", "must be a date YYYY-MM-DD")
	}
}

// CreateGiftCard is the JSON body of POST /gift-cards.
type CreateGiftCard struct {
	InitialValue *int64             `json:"initial_value"`
	Kind         *string            `json:"kind"`
	CustomerID   *string            `json:"customer_id"`
	Recipient    *GiftCardRecipient `json:"recipient"`
	ExpiresOn    *string            `json:"expires_on"`
	Code         *string            `json:"code"`
	Note         *string            `json:"note"`
	Send         *string            `json:"send"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateGiftCard) Valid() []wire.FieldError {
	var c Checker
	if req.InitialValue == nil {
		c.Required("initial_value", false)
	} else if *req.InitialValue < 1 || *req.InitialValue > storage.MaxAmount {
		c.Add("initial_value", "out_of_range", "must be between 1 and 1000000000000 minor units")
	}
	kind := storage.GiftCardKindGiftCard
	if req.Kind != nil {
		kind = *req.Kind
		c.OneOf("kind", kind, storage.GiftCardKinds)
	}
	if req.CustomerID != nil {
		c.UUID("customer_id", *req.CustomerID)
	} else if kind == storage.GiftCardKindStoreCredit {
		c.Add("customer_id", "required", "store credit belongs to a customer")
	}
	if req.Recipient != nil {
		req.Recipient.check(&c, "recipient")
	}
	if req.ExpiresOn != nil {
		checkDate(&c, "expires_on", *req.ExpiresOn)
	}
	if req.Code != nil {
		switch {
		case kind == storage.GiftCardKindStoreCredit:
			c.Add("code", "not_allowed", "store credit has no code")
		case !storage.ValidGiftCardCode(storage.NormalizeGiftCardCode(*req.Code)):
			c.Add("code", "invalid", "must be 16 characters of ABCDEFGHJKMNPQRSTUVWXYZ23456789 (spaces and dashes are ignored)")
		}
	}
	if req.Note != nil {
		c.Text("note", *req.Note, 0, 2000)
	}
	if req.Send != nil {
		c.OneOf("send", *req.Send, storage.GiftCardSendChannels)
		if kind == storage.GiftCardKindStoreCredit {
			c.Add("send", "not_sendable", "store credit has no code to send")
		}
	}
	return c.Result()
}

// NewGiftCard is the card the body issues for storeID.
func (req CreateGiftCard) NewGiftCard(storeID uuid.UUID) storage.NewGiftCard {
	in := storage.NewGiftCard{StoreID: storeID, InitialValue: *req.InitialValue, Note: trimmedPtr(req.Note),
		Source: storage.GiftCardSourceManual}
	if req.Kind != nil {
		in.Kind = *req.Kind
	}
	if req.CustomerID != nil {
		id := uuid.MustParse(*req.CustomerID)
		in.CustomerID = &id
	}
	if req.Recipient != nil {
		in.Recipient = new(req.Recipient.Stored())
	}
	if req.ExpiresOn != nil {
		d, _ := ParseDate(*req.ExpiresOn)
		in.ExpiresOn = &d
	}
	if req.Code != nil {
		in.Code = storage.NormalizeGiftCardCode(*req.Code)
	}
	return in
}

func trimmedPtr(s *string) *string {
	if s == nil {
		return nil
	}
	return new(strings.TrimSpace(*s))
}

// UpdateGiftCard is the JSON body of PATCH /gift-cards/{id}; null clears.
type UpdateGiftCard struct {
	ExpiresOn  wire.Optional[string]            `json:"expires_on"`
	CustomerID wire.Optional[string]            `json:"customer_id"`
	Recipient  wire.Optional[GiftCardRecipient] `json:"recipient"`
	Note       wire.Optional[string]            `json:"note"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateGiftCard) Valid() []wire.FieldError {
	var c Checker
	if req.ExpiresOn.Set && !req.ExpiresOn.Null {
		checkDate(&c, "expires_on", req.ExpiresOn.Value)
	}
	if req.CustomerID.Set && !req.CustomerID.Null {
		c.UUID("customer_id", req.CustomerID.Value)
	}
	if req.Recipient.Set && !req.Recipient.Null {
		req.Recipient.Value.check(&c, "recipient")
	}
	if req.Note.Set && !req.Note.Null {
		c.Text("note", req.Note.Value, 0, 2000)
	}
	return c.Result()
}

// Update is the change the body asks of storage.
func (req UpdateGiftCard) Update() storage.GiftCardUpdate {
	var u storage.GiftCardUpdate
	if req.ExpiresOn.Set {
		u.ExpiresOn.Set, u.ExpiresOn.Null = true, req.ExpiresOn.Null
		u.ExpiresOn.Value, _ = ParseDate(req.ExpiresOn.Value)
	}
	if req.CustomerID.Set {
		u.CustomerID.Set, u.CustomerID.Null = true, req.CustomerID.Null
		if !req.CustomerID.Null {
			u.CustomerID.Value = uuid.MustParse(req.CustomerID.Value)
		}
	}
	if req.Recipient.Set {
		u.Recipient.Set, u.Recipient.Null = true, req.Recipient.Null
		u.Recipient.Value = req.Recipient.Value.Stored()
	}
	if req.Note.Set {
		u.Note.Set, u.Note.Null = true, req.Note.Null
		u.Note.Value = strings.TrimSpace(req.Note.Value)
	}
	return u
}

// AdjustGiftCard is the JSON body of POST /gift-cards/{id}/adjustments.
type AdjustGiftCard struct {
	Amount          *int64 `json:"amount"`
	Reason          string `json:"reason"`
	ExpectedBalance *int64 `json:"expected_balance"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req AdjustGiftCard) Valid() []wire.FieldError {
	var c Checker
	switch {
	case req.Amount == nil:
		c.Required("amount", false)
	case *req.Amount == 0 || *req.Amount > storage.MaxAmount || *req.Amount < -storage.MaxAmount:
		c.Add("amount", "out_of_range", "must be a non-zero amount between -1000000000000 and 1000000000000 minor units")
	}
	c.OneOf("reason", req.Reason, storage.GiftCardAdjustmentReasons)
	if req.ExpectedBalance != nil {
		c.Amount("expected_balance", *req.ExpectedBalance)
	}
	return c.Result()
}

// DisableGiftCard is the JSON body of POST /gift-cards/{id}/disable.
type DisableGiftCard struct {
	Reason *string `json:"reason"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req DisableGiftCard) Valid() []wire.FieldError {
	var c Checker
	if req.Reason != nil {
		c.Text("reason", *req.Reason, 0, 500)
	}
	return c.Result()
}

// SendGiftCard is the JSON body of POST /gift-cards/{id}/send.
type SendGiftCard struct {
	Channel string `json:"channel"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req SendGiftCard) Valid() []wire.FieldError {
	var c Checker
	c.OneOf("channel", req.Channel, storage.GiftCardSendChannels)
	return c.Result()
}

// GiftCardBalance is the JSON body of the storefront's balance check.
type GiftCardBalance struct {
	Code string `json:"code"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req GiftCardBalance) Valid() []wire.FieldError {
	var c Checker
	c.Text("code", req.Code, 1, 100)
	return c.Result()
}
