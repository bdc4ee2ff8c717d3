package request

import (
	"strings"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage/numerals"
)

// StartSignIn is the JSON body handleStartSignIn reads (api/customer_auth.go):
// a phone (the code goes by WhatsApp) or an email.
type StartSignIn struct {
	Phone   *string `json:"phone"`
	Email   *string `json:"email"`
	Channel *string `json:"channel"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req StartSignIn) Valid() []wire.FieldError {
	var c Checker
	switch {
	case (req.Phone == nil) == (req.Email == nil):
		c.Add("phone", "one_of", "send a phone or an email, not both")
	case req.Phone != nil:
		checkPhone(&c, "phone", *req.Phone)
	default:
		checkEmail(&c, "email", *req.Email)
	}
	if req.Channel != nil {
		want := "whatsapp"
		if req.Email != nil {
			want = "email"
		}
		if *req.Channel != want {
			c.Add("channel", "one_of", "a phone's code goes by whatsapp, an email's by email")
		}
	}
	return c.Result()
}

// Identifier is the channel and the normalised phone or email.
func (req StartSignIn) Identifier() (channel, identifier string) {
	if req.Phone != nil {
		return "whatsapp", NormalizePhone(*req.Phone)
	}
	return "email", strings.TrimSpace(*req.Email)
}

// VerifySignIn is the JSON body handleVerifySignIn reads.
type VerifySignIn struct {
	ChallengeID string `json:"challenge_id"`
	Code        string `json:"code"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req VerifySignIn) Valid() []wire.FieldError {
	var c Checker
	c.UUID("challenge_id", req.ChallengeID)
	if code := numerals.ToLatin(strings.TrimSpace(req.Code)); len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		c.Add("code", "invalid", "must be the 6 digits sent")
	}
	return c.Result()
}

// UpdateAccount is the JSON body handleUpdateAccount reads.
type UpdateAccount struct {
	Name      *string `json:"name"`
	Language  *string `json:"language"`
	Marketing map[string]struct {
		State string `json:"state"`
	} `json:"marketing"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateAccount) Valid() []wire.FieldError {
	var c Checker
	if req.Name != nil {
		c.Text("name", strings.TrimSpace(*req.Name), 1, 200)
	}
	if req.Language != nil {
		c.OneOf("language", *req.Language, []string{"ar", "en"})
	}
	for channel, consent := range req.Marketing {
		if channel != "whatsapp" && channel != "email" {
			c.Add("marketing."+channel, "one_of", "must be whatsapp or email")
			continue
		}
		c.OneOf("marketing."+channel+".state", consent.State, []string{"subscribed", "unsubscribed"})
	}
	return c.Result()
}

// MergeCustomers is the JSON body handleMergeCustomers reads.
type MergeCustomers struct {
	FromCustomerID string `json:"from_customer_id"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req MergeCustomers) Valid() []wire.FieldError {
	var c Checker
	c.UUID("from_customer_id", req.FromCustomerID)
	return c.Result()
}
