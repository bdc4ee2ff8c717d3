package request

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

type refundPayout struct {
	Phone *string `json:"phone,omitempty"`
	IBAN  *string `json:"iban,omitempty"`
	Name  *string `json:"name,omitempty"`
}

// CreateRefund is the JSON body handleCreateRefund reads (api/refund.go).
type CreateRefund struct {
	Amount *int64 `json:"amount"`
	Lines  []struct {
		LineID   uuid.UUID `json:"line_id"`
		Quantity int       `json:"quantity"`
	} `json:"lines"`
	Shipping *int64        `json:"shipping"`
	Method   string        `json:"method"`
	Reason   string        `json:"reason"`
	ReturnID *uuid.UUID    `json:"return_id"`
	Payout   *refundPayout `json:"payout"`
	Settled  bool          `json:"settled"`
}

// ibanLengths is each country's IBAN length in the ISO 13616 IBAN
// registry (SWIFT): a bank transfer's IBAN must have its
// country's length, so a digit dropped or doubled is caught even where the
// check digits happen to agree.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
	"LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
	"NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// NormalizeIBAN drops the spaces and dashes people type into an IBAN and
// upper-cases it: the form it is checked and kept in.
func NormalizeIBAN(s string) string {
	return strings.ToUpper(strings.NewReplacer(" ", "", "-", "", "\u00a0", "").Replace(strings.TrimSpace(s)))
}

// ibanProblem says what is wrong with an IBAN (in NormalizeIBAN's form),
// or "" when it is one: letters and digits only, a country of the ISO
// 13616 registry, that country's length, two check digits, and the ISO
// 7064 mod-97 check.
func ibanProblem(iban string) string {
	if len(iban) < 4 {
		return "is not an IBAN: it starts with a country code and two check digits, such as EG38 0019 …"
	}
	for _, r := range iban {
		if (r < '0' || r > '9') && (r < 'A' || r > 'Z') {
			return "may hold only letters and digits"
		}
	}
	want, known := ibanLengths[iban[:2]]
	switch {
	case !known:
		return fmt.Sprintf("starts with %q, which is not a country that uses IBANs", iban[:2])
	case len(iban) != want:
		return fmt.Sprintf("must be %d characters for %s (this one has %d)", want, iban[:2], len(iban))
	case iban[2] < '0' || iban[2] > '9' || iban[3] < '0' || iban[3] > '9':
		return "must have two check digits after the country code"
	}
	// mod 97 of the digits, rearranged and with letters as 10-35, piecewise.
	rest := 0
	for _, r := range iban[4:] + iban[:4] {
		if r >= 'A' {
			rest = (rest*100 + int(r-'A'+10)) % 97
		} else {
			rest = (rest*10 + int(r-'0')) % 97
		}
	}
	if rest != 1 {
		return "is not a valid IBAN: its check digits do not match (a character is mistyped)"
	}
	return ""
}

// payoutMethods are the refund methods paid out to a destination, and the
// one field each takes: nothing else may carry a payout, so no destination
// is ever stored for a refund that does not use it.
var payoutMethods = map[string]string{storage.RefundWallet: "phone", storage.RefundBankTransfer: "iban"}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req CreateRefund) Valid() []wire.FieldError {
	var c Checker
	c.OneOf("method", req.Method, storage.RefundMethods)
	c.Text("reason", req.Reason, 1, 1000)
	if req.Amount != nil {
		c.Amount("amount", *req.Amount)
	}
	if req.Shipping != nil {
		c.Amount("shipping", *req.Shipping)
	}
	if len(req.Lines) > 100 {
		c.Add("lines", "out_of_range", "must list at most 100 lines")
	}
	for i, l := range req.Lines {
		if l.LineID == uuid.Nil {
			c.Add(fmt.Sprintf("lines[%d].line_id", i), "required", "is required")
		}
		if l.Quantity < 1 {
			c.Add(fmt.Sprintf("lines[%d].quantity", i), "exceeds_refundable_quantity", "must be at least 1")
		}
	}
	checkPayout(&c, req.Method, req.Payout)
	return c.Result()
}

// checkPayout checks a refund's payout against its method (decisions §13,
// issue 48 §6): wallet takes payout.phone, bank_transfer payout.iban, and
// original and cash take no payout at all.
func checkPayout(c *Checker, method string, p *refundPayout) {
	field, paysOut := payoutMethods[method]
	if !slices.Contains(storage.RefundMethods, method) {
		return // method's own one_of says it
	}
	if !paysOut {
		if p != nil {
			c.Add("payout", "not_allowed", "a "+method+" refund pays out to no destination; send payout only with wallet or bank_transfer")
		}
		return
	}
	if p == nil {
		p = &refundPayout{}
	}
	switch field {
	case "phone":
		if p.IBAN != nil {
			c.Add("payout.iban", "not_allowed", "a wallet refund pays out to payout.phone, not to an IBAN")
		}
		switch {
		case p.Phone == nil || strings.TrimSpace(*p.Phone) == "":
			c.Add("payout.phone", "required", "is required for a wallet refund")
		case !phonePattern.MatchString(NormalizePhone(*p.Phone)):
			c.Add("payout.phone", "invalid", "must be a phone number such as +201001234567")
		}
	case "iban":
		if p.Phone != nil {
			c.Add("payout.phone", "not_allowed", "a bank transfer pays out to payout.iban, not to a phone")
		}
		if p.IBAN == nil || strings.TrimSpace(*p.IBAN) == "" {
			c.Add("payout.iban", "required", "is required for a bank transfer")
		} else if problem := ibanProblem(NormalizeIBAN(*p.IBAN)); problem != "" {
			c.Add("payout.iban", "invalid", problem)
		}
	}
	if p.Name != nil {
		c.Text("payout.name", *p.Name, 1, 200)
	}
}

// PayoutDestination is the body's payout destination as it is kept, normalised; nil
// when none was sent.
func (req CreateRefund) PayoutDestination() *storage.RefundPayout {
	if req.Payout == nil {
		return nil
	}
	var p storage.RefundPayout
	if req.Payout.Phone != nil {
		p.Phone = NormalizePhone(*req.Payout.Phone)
	}
	if req.Payout.IBAN != nil {
		p.IBAN = NormalizeIBAN(*req.Payout.IBAN)
	}
	if req.Payout.Name != nil {
		p.Name = strings.TrimSpace(*req.Payout.Name)
	}
	return &p
}

// SettleRefund is the JSON body handleSettleRefund reads (api/refund.go).
type SettleRefund struct {
	Status        string  `json:"status"`
	Reference     *string `json:"reference"`
	FailureReason *string `json:"failure_reason"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req SettleRefund) Valid() []wire.FieldError {
	var c Checker
	c.OneOf("status", req.Status, []string{storage.RefundSucceeded, storage.RefundFailed})
	if req.Reference != nil {
		c.Text("reference", *req.Reference, 1, 200)
	}
	if req.Status == storage.RefundFailed && (req.FailureReason == nil || strings.TrimSpace(*req.FailureReason) == "") {
		c.Add("failure_reason", "required", "is required when the refund failed")
	}
	return c.Result()
}
