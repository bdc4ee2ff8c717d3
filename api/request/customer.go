package request

import (
	"net/mail"
	"regexp"
	"strconv"
	"strings"

	"github.com/merchantsvc/svc/api/wire"
)

// phonePattern accepts E.164-like numbers: an optional +, then 6-15 digits.
var phonePattern = regexp.MustCompile(`^\+?[0-9]{6,15}$`)

// address is a shipping address (decisions §4).
type address struct {
	Name       string  `json:"name"`
	Phone      string  `json:"phone"`
	Line1      string  `json:"line1"`
	Line2      *string `json:"line2,omitempty"`
	City       string  `json:"city"`
	Region     *string `json:"region,omitempty"`
	Country    string  `json:"country"`
	PostalCode *string `json:"postal_code,omitempty"`
}

func (a address) check(c *Checker, prefix string) {
	c.Text(prefix+".name", a.Name, 1, 200)
	if !phonePattern.MatchString(NormalizePhone(a.Phone)) {
		c.Add(prefix+".phone", "invalid", "must be a phone number such as +201001234567")
	}
	c.Text(prefix+".line1", a.Line1, 1, 300)
	c.Text(prefix+".city", a.City, 1, 100)
	c.Country(prefix+".country", a.Country)
}

// NormalizePhone drops spaces and dashes people type into phone numbers.
func NormalizePhone(s string) string {
	return strings.NewReplacer(" ", "", "-", "", "(", "", ")", "").Replace(strings.TrimSpace(s))
}

func checkEmail(c *Checker, field, email string) {
	if _, err := mail.ParseAddress(email); err != nil || strings.ContainsAny(email, "<> ") {
		c.Add(field, "invalid", "must be an email address")
	}
}

func checkPhone(c *Checker, field, phone string) {
	if !phonePattern.MatchString(NormalizePhone(phone)) {
		c.Add(field, "invalid", "must be a phone number such as +201001234567")
	}
}

// CreateCustomer is the JSON body handleCreateCustomer reads (api/customer.go).
type CreateCustomer struct {
	Name      string    `json:"name"`
	Email     *string   `json:"email"`
	Phone     *string   `json:"phone"`
	Addresses []address `json:"addresses"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateCustomer) Valid() []wire.FieldError {
	var c Checker
	c.Text("name", req.Name, 1, 200)
	if req.Email != nil {
		checkEmail(&c, "email", *req.Email)
	}
	if req.Phone != nil {
		checkPhone(&c, "phone", *req.Phone)
	}
	for i, a := range req.Addresses {
		a.check(&c, "addresses["+strconv.Itoa(i)+"]")
	}
	return c.Result()
}

// NormalizedPtr is NormalizePhone of a phone that may be absent.
func NormalizedPtr(phone *string) *string {
	if phone == nil {
		return nil
	}
	p := NormalizePhone(*phone)
	return &p
}

// UpdateCustomer is the JSON body handleUpdateCustomer reads (api/customer.go).
type UpdateCustomer struct {
	Name       wire.Optional[string]    `json:"name"`
	Email      wire.Optional[string]    `json:"email"`
	Phone      wire.Optional[string]    `json:"phone"`
	Addresses  wire.Optional[[]address] `json:"addresses"`
	ChatOptOut wire.Optional[bool]      `json:"chat_opt_out"`
	Language   wire.Optional[string]    `json:"language"`
	// Marketing sets consent per channel, recorded with source merchant.
	Marketing map[string]struct {
		State string `json:"state"`
	} `json:"marketing"`
}

// MarketingStates are the consent states the body sets, by channel.
func (req UpdateCustomer) MarketingStates() map[string]string {
	out := map[string]string{}
	for channel, consent := range req.Marketing {
		out[channel] = consent.State
	}
	return out
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateCustomer) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "name", req.Name) {
		c.Text("name", req.Name.Value, 1, 200)
	}
	if req.Email.Set && !req.Email.Null {
		checkEmail(&c, "email", req.Email.Value)
	}
	if req.Phone.Set && !req.Phone.Null {
		checkPhone(&c, "phone", req.Phone.Value)
	}
	for i, a := range req.Addresses.Value {
		a.check(&c, "addresses["+strconv.Itoa(i)+"]")
	}
	notNull(&c, "chat_opt_out", req.ChatOptOut)
	if req.Language.Set && !req.Language.Null {
		c.OneOf("language", req.Language.Value, []string{"ar", "en"})
	}
	for channel, consent := range req.Marketing {
		if channel != "whatsapp" && channel != "email" {
			c.Add("marketing."+channel, "one_of", "must be whatsapp or email")
			continue
		}
		c.OneOf("marketing."+channel+".state", consent.State, []string{"subscribed", "not_subscribed", "unsubscribed"})
	}
	return c.Result()
}
