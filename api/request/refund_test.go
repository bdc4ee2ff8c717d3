package request

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage"
)

// An IBAN passes when it is letters and digits, of a registry country, of
// that country's length, and its mod-97 check holds: the registry's own
// examples for the stores' markets pass, and each way of getting one wrong
// fails with its own reason.
func TestIBANRules(t *testing.T) {
	for _, c := range []struct {
		iban    string
		problem string // "" when valid; else a part of the reason
	}{
		{"EG380019000500000000263180002", ""},
		{"EG38 0019 0005 0000 0000 2631 8000 2", ""},
		{"eg38-0019-0005-0000-0000-2631-8000-2", ""},
		{"SA0380000000608010167519", ""},
		{"AE070331234567890123456", ""},
		{"KW81CBKU0000000000001234560101", ""},
		{"QA58DOHB00001234567890ABCDEFG", ""},
		{"BH67BMAG00001299123456", ""},
		{"OM810180000001299123456", ""},
		{"JO94CBJO0010000000000131000302", ""},
		{"GB82 WEST 1234 5698 7654 32", ""},
		{"LY83002048000020100120361", ""},
		{"IQ98NBIQ850123456789012", ""},
		{"TN5910006035183598478831", ""},
		{"PS92PALS000000000400123456702", ""},
		{"LB62099900000001001901229114", ""},

		{"EG380019000500000000263180003", "check digits"},         // last digit mistyped
		{"GB82 WEST 1234 5698 7654 33", "check digits"},           // the same in GB
		{"EG96001900050000000026318000", "must be 29 characters"}, // check digits agree, a digit dropped
		{"SA868000000060801016751900", "must be 24 characters"},   // check digits agree, two digits too many
		{"US5112345678901234567890", "not a country that uses IBANs"},
		{"XX0912345678901234567890", "not a country that uses IBANs"},
		{"EGAB0019000500000000263180002", "two check digits"},
		{"EG38_0019000500000000263180002", "only letters and digits"},
		{"EG3", "is not an IBAN"},
		{"", "is not an IBAN"},
	} {
		got := ibanProblem(NormalizeIBAN(c.iban))
		if c.problem == "" {
			require.Empty(t, got, c.iban)
		} else {
			require.Contains(t, got, c.problem, c.iban)
		}
	}
}

// Each method takes its own payout field and no other: wallet a phone,
// bank_transfer an IBAN, original and cash no payout at all, so a
// destination is never kept for a refund that does not pay out to it.
func TestRefundPayoutPerMethod(t *testing.T) {
	s := func(v string) *string { return &v }
	iban, phone := s("EG380019000500000000263180002"), s("+20 100 111 2223")
	for _, c := range []struct {
		method string
		payout *refundPayout
		want   map[string]string // field → code; empty: accepted
	}{
		{storage.RefundWallet, &refundPayout{Phone: phone, Name: s("منى")}, nil},
		{storage.RefundWallet, nil, map[string]string{"payout.phone": "required"}},
		{storage.RefundWallet, &refundPayout{Phone: s("  ")}, map[string]string{"payout.phone": "required"}},
		{storage.RefundWallet, &refundPayout{Phone: s("call me")}, map[string]string{"payout.phone": "invalid"}},
		{storage.RefundWallet, &refundPayout{Phone: phone, IBAN: iban}, map[string]string{"payout.iban": "not_allowed"}},
		{storage.RefundBankTransfer, &refundPayout{IBAN: iban, Name: s("Mona Adel")}, nil},
		{storage.RefundBankTransfer, &refundPayout{Name: s("Mona Adel")}, map[string]string{"payout.iban": "required"}},
		{storage.RefundBankTransfer, &refundPayout{IBAN: s("EG380019000500000000263180003")}, map[string]string{"payout.iban": "invalid"}},
		{storage.RefundBankTransfer, &refundPayout{IBAN: iban, Phone: phone}, map[string]string{"payout.phone": "not_allowed"}},
		{storage.RefundBankTransfer, &refundPayout{IBAN: iban, Name: s("")}, map[string]string{"payout.name": "required"}},
		{storage.RefundCash, nil, nil},
		{storage.RefundCash, &refundPayout{Phone: phone}, map[string]string{"payout": "not_allowed"}},
		{storage.RefundOriginal, nil, nil},
		{storage.RefundOriginal, &refundPayout{IBAN: iban}, map[string]string{"payout": "not_allowed"}},
		{storage.RefundOriginal, &refundPayout{}, map[string]string{"payout": "not_allowed"}},
	} {
		req := CreateRefund{Method: c.method, Reason: "x", Payout: c.payout}
		got := map[string]string{}
		for _, f := range req.Valid() {
			got[f.Field] = f.Code
			require.NotEmpty(t, f.MessageAr, f.Field)
		}
		if c.want == nil {
			c.want = map[string]string{}
		}
		require.Equal(t, c.want, got, "%s %+v", c.method, c.payout)
	}
}

// A payout is kept normalised and shown masked: the IBAN's country and last
// four, the phone's last four digits.
func TestRefundPayoutMasks(t *testing.T) {
	s := func(v string) *string { return &v }
	req := CreateRefund{Method: storage.RefundBankTransfer, Payout: &refundPayout{IBAN: s("eg38 0019 0005 0000 0000 2631 8000 2"), Name: s(" Mona ")}}
	kept := req.PayoutDestination()
	require.Equal(t, storage.RefundPayout{IBAN: "EG380019000500000000263180002", Name: "Mona"}, *kept)
	require.Equal(t, storage.MaskedPayout{IBAN: s("EG** **** … 0002"), Name: s("Mona")}, kept.Masked())
	wallet := CreateRefund{Method: storage.RefundWallet, Payout: &refundPayout{Phone: s("+20 100-111-2223")}}
	require.Equal(t, storage.MaskedPayout{Phone: s("+*** … 2223")}, wallet.PayoutDestination().Masked())
	require.Equal(t, "+201001112223", wallet.PayoutDestination().Phone)
	require.Nil(t, CreateRefund{Method: storage.RefundCash}.PayoutDestination())
}
