package storage

import (
	"encoding/json"
	"fmt"
	"strings"
)

// RefundPayout is where a manual refund is paid out (decisions §13): a
// mobile wallet's phone (method wallet) or a bank account's IBAN (method
// bank_transfer), and the holder's name. It is kept whole in order_refunds
// and shown only Masked: nothing in the service pays out, so the whole
// destination is never needed again after the request that gave it
// (docs/decisions.md, "Refund payout destinations").
type RefundPayout struct {
	Phone string `json:"phone,omitempty"`
	IBAN  string `json:"iban,omitempty"`
	Name  string `json:"name,omitempty"`
}

// MaskedPayout is a payout as every read shows it; each field is null when
// the payout has none.
type MaskedPayout struct {
	Phone *string `json:"phone"`
	IBAN  *string `json:"iban"`
	Name  *string `json:"name"`
}

// Masked is the payout as every read shows it (the refund, its timeline
// entry, its audit entry): the IBAN's country and last four characters,
// the phone's last four digits, the name as given.
func (p RefundPayout) Masked() MaskedPayout {
	var out MaskedPayout
	if p.IBAN != "" {
		out.IBAN = new(MaskIBAN(p.IBAN))
	}
	if p.Phone != "" {
		out.Phone = new(MaskPhone(p.Phone))
	}
	if p.Name != "" {
		out.Name = new(p.Name)
	}
	return out
}

// maskedTail is how many trailing characters a masked destination keeps.
const maskedTail = 4

// MaskIBAN shows an IBAN as its country, masked check digits and the last
// four characters: "EG** **** … 1234". The form is the same for every
// length, so the mask tells nothing the country does not.
func MaskIBAN(iban string) string {
	iban = strings.ToUpper(strings.ReplaceAll(iban, " ", ""))
	if len(iban) < 2+maskedTail {
		return "**** …"
	}
	return iban[:2] + "** **** … " + iban[len(iban)-maskedTail:]
}

// MaskPhone shows a phone number as its last four digits: "+*** … 4567".
func MaskPhone(phone string) string {
	var digits []byte
	for i := 0; i < len(phone); i++ {
		if phone[i] >= '0' && phone[i] <= '9' {
			digits = append(digits, phone[i])
		}
	}
	if len(digits) < maskedTail {
		return "+*** …"
	}
	return "+*** … " + string(digits[len(digits)-maskedTail:])
}

// payoutJSON is a payout for its jsonb column: NULL for none.
func payoutJSON(p *RefundPayout) (any, error) {
	if p == nil {
		return nil, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode refund payout: %w", err)
	}
	return b, nil
}

// scanPayout reads a payout's jsonb column; nil for NULL.
func scanPayout(raw []byte) (*RefundPayout, error) {
	if raw == nil {
		return nil, nil
	}
	var p RefundPayout
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("read refund payout: %w", err)
	}
	if p == (RefundPayout{}) {
		return nil, nil
	}
	return &p, nil
}
