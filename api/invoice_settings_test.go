package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage/zatca"
)

// csid is a CSID certificate and its key, as ZATCA's onboarding hands a
// seller (here signed by a throwaway CA).
func csid(t *testing.T, commonName string) (certificate, key string) {
	t.Helper()
	ca, err := secp256k1.GeneratePrivateKey()
	require.NoError(t, err)
	k, err := secp256k1.GeneratePrivateKey()
	require.NoError(t, err)
	cert, err := zatca.NewCertificate(zatca.CertificateTemplate{CommonName: commonName, Organization: "Riyadh Abayas", Country: "SA",
		SerialNumber: 7, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(2, 0, 0)}, k, ca, "ZATCA test CA")
	require.NoError(t, err)
	return cert, zatca.MarshalPrivateKey(k)
}

func saudiTaxBody() map[string]any {
	return map[string]any{"regime": "zatca", "legal_name": map[string]any{"ar": "عبايات الرياض", "en": "Riyadh Abayas"},
		"vat_number": "300000000000003", "cr_number": "1010010000",
		"address": map[string]any{"building_number": "1234", "street": "King Fahd Rd", "district": "Al Olaya", "city": "Riyadh",
			"postal_code": "12345", "country": "SA"}}
}

// Tax settings: defaults until set; VAT and registration numbers checked
// per country (typed digits normalised); the zatca regime needs a CSID on
// secp256k1 whose key matches, sealed and never answered; a body without
// zatca keeps it; the regime turns e_invoicing on and off and back.
func TestTaxSettings(t *testing.T) {
	h := newHarness(t, api.Config{})
	s := newShop(t, h, "taxsettings", 10)
	path := storePath(s.m.storeID, "/settings/tax")
	put := func(body map[string]any) response {
		return h.do(request{method: "PUT", path: path, auth: bearer(s.token), body: body})
	}

	got := h.do(request{method: "GET", path: path, auth: bearer(s.token)})
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	require.Equal(t, "none", got.data()["regime"])
	require.EqualValues(t, 1400, got.data()["default_rate_bp"], "EGP: 14 %")
	require.Equal(t, "Store taxsettings", got.data()["legal_name"].(map[string]any)["en"])
	require.Nil(t, got.data()["zatca"])
	require.Nil(t, got.data()["updated_at"])

	// Egypt: a 9-digit registration number, typed in Arabic-Indic digits.
	eta := put(map[string]any{"regime": "eta", "legal_name": map[string]any{"ar": "عبايات القاهرة"}, "vat_number": "١٢٣-٤٥٦-٧٨٩",
		"address": map[string]any{"building_number": "12", "street": "Tahrir St", "district": "Downtown", "city": "Cairo",
			"postal_code": "11511", "country": "EG"}, "default_rate_bp": 1000, "invoice_prefix": "CAI"})
	require.Equal(t, http.StatusOK, eta.Status, string(eta.Raw))
	require.Equal(t, "123456789", eta.data()["vat_number"])
	require.Equal(t, "CAI", eta.data()["invoice_prefix"])
	require.Equal(t, true, h.do(request{method: "GET", path: storePath(s.m.storeID, "/settings"), auth: bearer(s.token)}).data()["e_invoicing"])

	for _, tc := range []struct {
		name   string
		change func(map[string]any)
		fields []string
	}{
		{"a Saudi VAT number not ending in 3", func(b map[string]any) { b["vat_number"] = "300000000000001" }, []string{"vat_number"}},
		{"a Saudi VAT number of 14 digits", func(b map[string]any) { b["vat_number"] = "30000000000003" }, []string{"vat_number"}},
		{"an Egyptian number in Saudi Arabia", func(b map[string]any) { b["vat_number"] = "123456789" }, []string{"vat_number"}},
		{"a national address without its building number", func(b map[string]any) {
			b["address"].(map[string]any)["building_number"] = "12"
			b["address"].(map[string]any)["postal_code"] = "1234"
		}, []string{"address.building_number", "address.postal_code"}},
		{"the zatca regime outside Saudi Arabia", func(b map[string]any) { b["address"].(map[string]any)["country"] = "EG" },
			[]string{"address.country", "vat_number"}},
		{"prices without tax", func(b map[string]any) { b["prices_include_tax"] = false }, []string{"prices_include_tax"}},
		{"a rate above 100 %", func(b map[string]any) { b["default_rate_bp"] = 10001 }, []string{"default_rate_bp"}},
		{"zatca without a CSID", func(map[string]any) {}, []string{"zatca"}},
		{"a CSID that is not a certificate", func(b map[string]any) {
			b["zatca"] = map[string]any{"certificate": "hello", "private_key": "world"}
		}, []string{"zatca.certificate", "zatca.private_key"}},
		{"a key of another certificate", func(b map[string]any) {
			cert, _ := csid(t, "EGS1-1")
			_, other := csid(t, "EGS1-2")
			b["zatca"] = map[string]any{"certificate": cert, "private_key": other}
		}, []string{"zatca.private_key"}},
	} {
		body := saudiTaxBody()
		tc.change(body)
		resp := put(body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, tc.name+": "+string(resp.Raw))
		require.ElementsMatch(t, tc.fields, resp.fieldNames(), tc.name)
	}
	require.Equal(t, "CAI", h.do(request{method: "GET", path: path, auth: bearer(s.token)}).data()["invoice_prefix"], "refusals change nothing")

	cert, key := csid(t, "EGS1-886431145")
	body := saudiTaxBody()
	body["zatca"] = map[string]any{"certificate": cert, "private_key": key}
	saved := put(body)
	require.Equal(t, http.StatusOK, saved.Status, string(saved.Raw))
	require.Equal(t, "zatca", saved.data()["regime"])
	require.Equal(t, "INV", saved.data()["invoice_prefix"], "a PUT replaces the settings whole")
	require.Contains(t, saved.data()["zatca"].(map[string]any)["certificate_subject"], "CN=EGS1-886431145")
	require.NotContains(t, string(saved.Raw), "PRIVATE KEY")
	keyBody := strings.Split(strings.TrimSpace(key), "\n")[1]
	var sealed []byte
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(),
		`SELECT zatca_private_key_sealed FROM store_tax_settings WHERE store_id = $1`, s.m.storeID).Scan(&sealed))
	require.NotEmpty(t, sealed)
	require.NotContains(t, string(sealed), keyBody)
	require.NotContains(t, string(sealed), "PRIVATE KEY")
	// The audit entry lists the change and no key.
	var changes string
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(),
		`SELECT COALESCE(changes::text, '') FROM audit_entries WHERE store_id = $1 AND action = 'tax_settings.updated' ORDER BY occurred_at DESC LIMIT 1`,
		s.m.storeID).Scan(&changes))
	require.Contains(t, changes, "regime")
	require.NotContains(t, changes, keyBody)

	// Without zatca the stored CSID stays.
	again := put(saudiTaxBody())
	require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
	require.NotNil(t, again.data()["zatca"])

	// The older switch off: regime none; on again: the currency's regime.
	require.Equal(t, false, h.settings(s, map[string]any{"e_invoicing": false}).data()["e_invoicing"])
	require.Equal(t, "none", h.do(request{method: "GET", path: path, auth: bearer(s.token)}).data()["regime"])
	require.Equal(t, true, h.settings(s, map[string]any{"e_invoicing": true}).data()["e_invoicing"])
	require.Equal(t, "eta", h.do(request{method: "GET", path: path, auth: bearer(s.token)}).data()["regime"])
}

// Invoices print the seller of the tax settings and tax each line at its
// product's class: the store's default rate, or nothing for an exempt one.
func TestInvoicesFollowTaxSettingsAndClasses(t *testing.T) {
	h := newHarness(t, api.Config{})
	authority := &fakeAuthority{}
	h.authority = &einvoice.HTTP{BaseURL: authority.serve(t).URL, Token: "authority-token"}
	h.startWorker(nil)
	s := newShop(t, h, "taxclasses", 10)
	resp := h.do(request{method: "PUT", path: storePath(s.m.storeID, "/settings/tax"), auth: bearer(s.token), body: map[string]any{
		"regime": "eta", "legal_name": map[string]any{"ar": "عبايات القاهرة", "en": "Cairo Abayas"}, "vat_number": "123456789",
		"address": map[string]any{"building_number": "12", "street": "Tahrir St", "district": "Downtown", "city": "Cairo",
			"postal_code": "11511", "country": "EG"}, "default_rate_bp": 1000, "invoice_prefix": "CAI"}})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	book := h.createProduct(s.token, s.m.storeID, map[string]any{"name": "Book", "price": 11000, "tax_class": "exempt"})
	require.Equal(t, "exempt", book["tax_class"])
	bookVariant := h.do(request{method: "POST", path: storePath(s.m.storeID, "/products/"+book["id"].(string)+"/variants"), auth: bearer(s.token),
		body: map[string]any{"sku": "BOOK-1", "quantity": 5, "options": map[string]any{"size": "A5"}}})
	require.Equal(t, http.StatusCreated, bookVariant.Status, string(bookVariant.Raw))

	body := orderBody(s.variantID, 1, "+201000000077")
	body["lines"] = []map[string]any{{"variant_id": s.variantID, "quantity": 1}, {"variant_id": bookVariant.Body["id"], "quantity": 1}}
	body["payment_method"], body["discount"], body["shipping_fee"] = "bank_transfer", 0, 0
	order := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusCreated, order.Status, string(order.Raw))
	id := order.data()["id"].(string)
	require.Equal(t, http.StatusOK, h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/mark-paid"), auth: bearer(s.token)}).Status)
	inv := h.invoicesSettled(s, id, 1)[0]
	require.Regexp(t, `^CAI-\d{4}-000001$`, inv["number"])
	seller := inv["seller"].(map[string]any)
	require.Equal(t, "Cairo Abayas", seller["name"].(map[string]any)["en"])
	require.Equal(t, "123456789", seller["vat_number"])
	require.Equal(t, "Cairo", seller["address"].(map[string]any)["city"])
	require.Equal(t, "eta", inv["authority"].(map[string]any)["regime"])
	lines := inv["lines"].([]any)
	require.Len(t, lines, 2)
	abaya, exempt := lines[0].(map[string]any), lines[1].(map[string]any)
	require.EqualValues(t, 1000, abaya["tax_rate_bp"])
	require.EqualValues(t, 45000-40909, abaya["tax"], "45000 × 10000 ÷ 11000 = 40909.09 → 40909")
	require.Equal(t, "exempt", exempt["tax_class"])
	require.EqualValues(t, 0, exempt["tax"])
	require.EqualValues(t, 11000, exempt["total_incl"])
	require.EqualValues(t, 45000-40909, sumLines(t, inv)["tax"])

	// A product's class can change; a bad one is refused.
	bad := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/products/"+book["id"].(string)), auth: bearer(s.token),
		body: map[string]any{"tax_class": "reduced"}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
	require.Equal(t, []string{"tax_class"}, bad.fieldNames())
	ok := h.do(request{method: "PATCH", path: storePath(s.m.storeID, "/products/"+book["id"].(string)), auth: bearer(s.token),
		body: map[string]any{"tax_class": "zero"}})
	require.Equal(t, http.StatusOK, ok.Status, string(ok.Raw))
	require.Equal(t, "zero", ok.data()["tax_class"])
}
