package request

import (
	"fmt"
	"math/big"
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

// validIBAN checks an IBAN's shape and its ISO 13616 mod-97 check digits.
func validIBAN(raw string) bool {
	iban := strings.ToUpper(strings.ReplaceAll(raw, " ", ""))
	if len(iban) < 15 || len(iban) > 34 {
		return false
	}
	var digits strings.Builder
	for _, r := range iban[4:] + iban[:4] {
		switch {
		case r >= '0' && r <= '9':
			digits.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			fmt.Fprintf(&digits, "%d", r-'A'+10)
		default:
			return false
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	return ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

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
	switch req.Method {
	case storage.RefundWallet:
		if req.Payout == nil || req.Payout.Phone == nil {
			c.Add("payout.phone", "required", "is required for a wallet refund")
		} else if !phonePattern.MatchString(NormalizePhone(*req.Payout.Phone)) {
			c.Add("payout.phone", "invalid", "must be a phone number such as +201001234567")
		}
	case storage.RefundBankTransfer:
		if req.Payout == nil || req.Payout.IBAN == nil {
			c.Add("payout.iban", "required", "is required for a bank transfer")
		} else if !validIBAN(*req.Payout.IBAN) {
			c.Add("payout.iban", "invalid", "is not a valid IBAN (its check digits do not match)")
		}
	}
	if req.Payout != nil && req.Payout.Name != nil {
		c.Text("payout.name", *req.Payout.Name, 1, 200)
	}
	return c.Result()
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
