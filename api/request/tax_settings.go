package request

import (
	"regexp"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/numerals"
	"github.com/merchantsvc/svc/storage/zatca"
)

// TaxAddress is the seller's address a tax settings body sends.
type TaxAddress struct {
	BuildingNumber   string  `json:"building_number"`
	Street           string  `json:"street"`
	District         string  `json:"district"`
	City             string  `json:"city"`
	PostalCode       string  `json:"postal_code"`
	Country          string  `json:"country"`
	AdditionalNumber *string `json:"additional_number"`
}

// ZATCACredentials are the CSID a merchant uploads (PEM, secp256k1).
type ZATCACredentials struct {
	Certificate string `json:"certificate"`
	PrivateKey  string `json:"private_key"`
}

// PutTaxSettings is the JSON body handlePutTaxSettings reads (api/invoice_settings.go).
type PutTaxSettings struct {
	Regime           string            `json:"regime"`
	PricesIncludeTax *bool             `json:"prices_include_tax"`
	DefaultRateBP    *int              `json:"default_rate_bp"`
	LegalName        *TitleText        `json:"legal_name"`
	VATNumber        *string           `json:"vat_number"`
	CRNumber         *string           `json:"cr_number"`
	Address          *TaxAddress       `json:"address"`
	InvoicePrefix    *string           `json:"invoice_prefix"`
	ZATCA            *ZATCACredentials `json:"zatca"`
}

// TypedDigits is what people type for a number: trimmed, NFKC, Arabic-Indic
// and Persian digits as ASCII, spaces and dashes left out.
func TypedDigits(s string) string {
	s = strings.Map(numerals.ASCIIDigit, norm.NFKC.String(strings.TrimSpace(s)))
	return strings.NewReplacer(" ", "", "-", "").Replace(s)
}

var (
	saudiVAT      = regexp.MustCompile(`^3[0-9]{13}3$`)
	egyptianTaxID = regexp.MustCompile(`^[0-9]{9}$`)
	otherVAT      = regexp.MustCompile(`^[0-9A-Z]{5,20}$`)
	digits        = regexp.MustCompile(`^[0-9]+$`)
	invoicePrefix = regexp.MustCompile(`^[A-Z0-9]{1,10}$`)
)

// Country is the country the numbers are checked for: the address's, else
// the regime's.
func (req PutTaxSettings) Country() string {
	if req.Address != nil && req.Address.Country != "" {
		return strings.ToUpper(strings.TrimSpace(req.Address.Country))
	}
	switch req.Regime {
	case storage.TaxRegimeZATCA:
		return "SA"
	case storage.TaxRegimeETA:
		return "EG"
	}
	return ""
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req PutTaxSettings) Valid() []wire.FieldError {
	var c Checker
	c.OneOf("regime", req.Regime, storage.TaxRegimes)
	invoicing := req.Regime == storage.TaxRegimeZATCA || req.Regime == storage.TaxRegimeETA
	country := req.Country()
	if req.PricesIncludeTax != nil && !*req.PricesIncludeTax {
		c.Add("prices_include_tax", "unsupported", "must be true: prices include tax, invoices work the tax out of them")
	}
	if req.DefaultRateBP != nil {
		c.IntRange("default_rate_bp", int64(*req.DefaultRateBP), 0, 10000)
	}
	if req.LegalName != nil {
		c.Bilingual("legal_name", *req.LegalName, 255)
	} else if invoicing {
		c.Add("legal_name", "required", "is required to issue invoices")
	}
	switch {
	case req.VATNumber == nil:
		if invoicing {
			c.Add("vat_number", "required", "is required to issue invoices")
		}
	case country == "SA" && !saudiVAT.MatchString(TypedDigits(*req.VATNumber)):
		c.Add("vat_number", "invalid", "must be a Saudi VAT number: 15 digits, the first and the last 3")
	case country == "EG" && !egyptianTaxID.MatchString(TypedDigits(*req.VATNumber)):
		c.Add("vat_number", "invalid", "must be an Egyptian tax registration number: 9 digits")
	case country != "SA" && country != "EG" && !otherVAT.MatchString(strings.ToUpper(TypedDigits(*req.VATNumber))):
		c.Add("vat_number", "invalid", "must be 5 to 20 letters and digits")
	}
	if req.CRNumber != nil {
		cr := TypedDigits(*req.CRNumber)
		if country == "SA" && (len(cr) != 10 || !digits.MatchString(cr)) {
			c.Add("cr_number", "invalid", "must be a Saudi commercial registration number: 10 digits")
		} else {
			c.Text("cr_number", cr, 1, 30)
		}
	}
	switch {
	case req.Address == nil:
		if invoicing {
			c.Add("address", "required", "is required to issue invoices")
		}
	default:
		a := req.Address
		for _, f := range []struct{ name, value string }{{"street", a.Street}, {"district", a.District}, {"city", a.City}} {
			c.Text("address."+f.name, strings.TrimSpace(f.value), 1, 127)
		}
		c.Country("address.country", strings.ToUpper(strings.TrimSpace(a.Country)))
		if country == "SA" {
			if b := TypedDigits(a.BuildingNumber); len(b) != 4 || !digits.MatchString(b) {
				c.Add("address.building_number", "invalid", "must be the national address's 4-digit building number")
			}
			if p := TypedDigits(a.PostalCode); len(p) != 5 || !digits.MatchString(p) {
				c.Add("address.postal_code", "invalid", "must be 5 digits")
			}
			if a.AdditionalNumber != nil {
				if n := TypedDigits(*a.AdditionalNumber); len(n) != 4 || !digits.MatchString(n) {
					c.Add("address.additional_number", "invalid", "must be 4 digits")
				}
			}
		} else {
			c.Text("address.building_number", strings.TrimSpace(a.BuildingNumber), 1, 30)
			c.Text("address.postal_code", strings.TrimSpace(a.PostalCode), 1, 16)
		}
		if req.Regime == storage.TaxRegimeZATCA && country != "SA" {
			c.Add("address.country", "invalid", "must be SA for the zatca regime")
		}
		if req.Regime == storage.TaxRegimeETA && country != "EG" {
			c.Add("address.country", "invalid", "must be EG for the eta regime")
		}
	}
	if req.InvoicePrefix != nil && !invoicePrefix.MatchString(*req.InvoicePrefix) {
		c.Add("invoice_prefix", "invalid", "must be 1 to 10 capital letters and digits")
	}
	if req.ZATCA != nil {
		cert, certErr := zatca.ParseCertificate(req.ZATCA.Certificate)
		key, keyErr := zatca.ParsePrivateKey(req.ZATCA.PrivateKey)
		switch {
		case certErr != nil:
			c.Add("zatca.certificate", "invalid", "the certificate "+certErr.Error())
		case !cert.NotAfter.After(time.Now()):
			c.Add("zatca.certificate", "expired", "the certificate expired at "+cert.NotAfter.Format(time.RFC3339))
		}
		switch {
		case keyErr != nil:
			c.Add("zatca.private_key", "invalid", "the key "+keyErr.Error())
		case certErr == nil && !cert.Matches(key):
			c.Add("zatca.private_key", "mismatch", "is not the key of the certificate")
		}
	}
	return c.Result()
}

// Settings is the body as storage keeps it, over what the store has now.
func (req PutTaxSettings) Settings(current storage.TaxSettings) storage.TaxSettings {
	s := storage.TaxSettings{StoreID: current.StoreID, Regime: req.Regime, PricesIncludeTax: true, DefaultRateBP: current.DefaultRateBP,
		LegalName: current.LegalName, InvoicePrefix: "INV", ZATCACertificate: current.ZATCACertificate}
	if req.DefaultRateBP != nil {
		s.DefaultRateBP = *req.DefaultRateBP
	}
	if req.LegalName != nil {
		s.LegalName = req.LegalName.Stored()
	}
	if req.VATNumber != nil {
		vat := strings.ToUpper(TypedDigits(*req.VATNumber))
		s.VATNumber = &vat
	}
	if req.CRNumber != nil {
		cr := TypedDigits(*req.CRNumber)
		s.CRNumber = &cr
	}
	if a := req.Address; a != nil {
		s.Address = &storage.TaxAddress{BuildingNumber: TypedDigits(a.BuildingNumber), Street: strings.TrimSpace(a.Street),
			District: strings.TrimSpace(a.District), City: strings.TrimSpace(a.City), PostalCode: TypedDigits(a.PostalCode),
			Country: strings.ToUpper(strings.TrimSpace(a.Country))}
		if a.AdditionalNumber != nil {
			n := TypedDigits(*a.AdditionalNumber)
			s.Address.AdditionalNumber = &n
		}
	}
	if req.InvoicePrefix != nil {
		s.InvoicePrefix = *req.InvoicePrefix
	}
	if req.ZATCA != nil {
		cert := strings.TrimSpace(req.ZATCA.Certificate)
		s.ZATCACertificate = &cert
	}
	return s
}
