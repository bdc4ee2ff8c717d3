package zatca

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

// FirstPIH is the previous invoice hash of a chain's first invoice:
// base64 of the hex SHA-256 of "0", as ZATCA sets it.
const FirstPIH = "NWZlY2ViNjZmZmM4NmYzOGQ5NTI3ODZjNmQ2OTZjNzljMmRiYzIzOWRkNGU5MWI0NjcyOWQ3M2EyN2ZiNTdlOQ=="

// Invoice type codes (UN/EDIFACT 1001) and ZATCA's transaction subtypes.
const (
	TypeInvoice    = "388"
	TypeCreditNote = "381"
	TypeDebitNote  = "383"
	SubtypeStd     = "0100000"
	SubtypeSimple  = "0200000"
)

// Address is a party's postal address (the Saudi national address for a
// seller).
type Address struct {
	Street, BuildingNumber, AdditionalNumber, District, City, PostalCode, Country string
}

// Party is a seller or buyer.
type Party struct {
	Name      string
	VATNumber string
	CRNumber  string
	Address   *Address
}

// Line is an invoice line; amounts in minor units.
type Line struct {
	Name      string
	Quantity  int
	UnitPrice int64 // without tax
	Net       int64 // the line's amount without tax
	Tax       int64
	RateBP    int
	Category  string // S standard, Z zero-rated, E exempt
}

// Document is what an invoice's UBL says.
type Document struct {
	UUID       string
	Number     string
	ICV        int64
	PIH        string
	IssuedAt   time.Time
	TypeCode   string
	Simplified bool
	Currency   string
	Exponent   int
	Seller     Party
	Buyer      Party
	Lines      []Line
	Net, Tax   int64
	Total      int64
	// BillingReference is the number of the invoice a note corrects, and
	// Reason why.
	BillingReference string
	Reason           string
}

func (d Document) amount(minor int64) string {
	neg := minor < 0
	if neg {
		minor = -minor
	}
	s := strconv.FormatInt(minor, 10)
	if d.Exponent > 0 {
		for len(s) <= d.Exponent {
			s = "0" + s
		}
		s = s[:len(s)-d.Exponent] + "." + s[len(s)-d.Exponent:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Escapes of canonical XML, for text and for attribute values.
var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#xD;")
	attrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", `"`, "&quot;", "\t", "&#x9;", "\n", "&#xA;", "\r", "&#xD;")
)

// xmlText escapes text as canonical XML writes it.
func xmlText(s string) string { return textEscaper.Replace(s) }

type writer struct{ bytes.Buffer }

func (w *writer) el(name, text string, attrs ...string) {
	w.WriteString("<" + name)
	for i := 0; i+1 < len(attrs); i += 2 {
		w.WriteString(" " + attrs[i] + `="` + xmlText(attrs[i+1]) + `"`)
	}
	w.WriteString(">" + xmlText(text) + "</" + name + ">")
}

func (w *writer) open(name string) { w.WriteString("<" + name + ">") }

func (w *writer) close(name string) { w.WriteString("</" + name + ">") }

const rootOpen = `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" ` +
	`xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" ` +
	`xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2" ` +
	`xmlns:ext="urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2">`

// Markers where Sign puts the blocks the hash leaves out.
const (
	extensionsAt = rootOpen
	qrAt         = "<!--qr-->"
)

func (w *writer) party(role string, p Party, d Document) {
	w.open("cac:" + role)
	w.open("cac:Party")
	if p.CRNumber != "" {
		w.open("cac:PartyIdentification")
		w.el("cbc:ID", p.CRNumber, "schemeID", "CRN")
		w.close("cac:PartyIdentification")
	}
	if a := p.Address; a != nil {
		w.open("cac:PostalAddress")
		w.el("cbc:StreetName", a.Street)
		if a.AdditionalNumber != "" {
			w.el("cbc:AdditionalStreetName", a.AdditionalNumber)
		}
		w.el("cbc:BuildingNumber", a.BuildingNumber)
		w.el("cbc:CitySubdivisionName", a.District)
		w.el("cbc:CityName", a.City)
		w.el("cbc:PostalZone", a.PostalCode)
		w.open("cac:Country")
		w.el("cbc:IdentificationCode", a.Country)
		w.close("cac:Country")
		w.close("cac:PostalAddress")
	}
	if p.VATNumber != "" {
		w.open("cac:PartyTaxScheme")
		w.el("cbc:CompanyID", p.VATNumber)
		w.open("cac:TaxScheme")
		w.el("cbc:ID", "VAT")
		w.close("cac:TaxScheme")
		w.close("cac:PartyTaxScheme")
	}
	w.open("cac:PartyLegalEntity")
	w.el("cbc:RegistrationName", p.Name)
	w.close("cac:PartyLegalEntity")
	w.close("cac:Party")
	w.close("cac:" + role)
}

func (w *writer) taxCategory(d Document, category string, rateBP int) {
	w.open("cac:TaxCategory")
	w.el("cbc:ID", category)
	w.el("cbc:Percent", d.percent(rateBP))
	if category == "E" {
		w.el("cbc:TaxExemptionReasonCode", "VATEX-SA-29")
		w.el("cbc:TaxExemptionReason", "Financial services mentioned in Article 29 of the VAT Regulations")
	}
	if category == "Z" {
		w.el("cbc:TaxExemptionReasonCode", "VATEX-SA-32")
		w.el("cbc:TaxExemptionReason", "Export of goods")
	}
	w.open("cac:TaxScheme")
	w.el("cbc:ID", "VAT")
	w.close("cac:TaxScheme")
	w.close("cac:TaxCategory")
}

func (d Document) percent(rateBP int) string {
	return strconv.FormatFloat(float64(rateBP)/100, 'f', 2, 64)
}

// Unsigned is the document without its signature and QR, with markers
// where Sign puts them: what the invoice hash is taken over.
func (d Document) Unsigned() []byte {
	var w writer
	cur := func(text string, amount int64) { w.el(text, d.amount(amount), "currencyID", d.Currency) }
	w.WriteString(rootOpen)
	w.el("cbc:ProfileID", "reporting:1.0")
	w.el("cbc:ID", d.Number)
	w.el("cbc:UUID", d.UUID)
	issued := d.IssuedAt.UTC()
	w.el("cbc:IssueDate", issued.Format("2006-01-02"))
	w.el("cbc:IssueTime", issued.Format("15:04:05"))
	subtype := SubtypeStd
	if d.Simplified {
		subtype = SubtypeSimple
	}
	w.el("cbc:InvoiceTypeCode", d.TypeCode, "name", subtype)
	w.el("cbc:DocumentCurrencyCode", d.Currency)
	w.el("cbc:TaxCurrencyCode", d.Currency)
	if d.BillingReference != "" {
		w.open("cac:BillingReference")
		w.open("cac:InvoiceDocumentReference")
		w.el("cbc:ID", d.BillingReference)
		w.close("cac:InvoiceDocumentReference")
		w.close("cac:BillingReference")
	}
	w.open("cac:AdditionalDocumentReference")
	w.el("cbc:ID", "ICV")
	w.el("cbc:UUID", strconv.FormatInt(d.ICV, 10))
	w.close("cac:AdditionalDocumentReference")
	w.open("cac:AdditionalDocumentReference")
	w.el("cbc:ID", "PIH")
	w.open("cac:Attachment")
	w.el("cbc:EmbeddedDocumentBinaryObject", d.PIH, "mimeCode", "text/plain")
	w.close("cac:Attachment")
	w.close("cac:AdditionalDocumentReference")
	w.WriteString(qrAt)
	w.party("AccountingSupplierParty", d.Seller, d)
	w.party("AccountingCustomerParty", d.Buyer, d)
	w.open("cac:Delivery")
	w.el("cbc:ActualDeliveryDate", issued.Format("2006-01-02"))
	w.close("cac:Delivery")
	w.open("cac:PaymentMeans")
	w.el("cbc:PaymentMeansCode", "10")
	if d.Reason != "" {
		w.el("cbc:InstructionNote", d.Reason)
	}
	w.close("cac:PaymentMeans")
	w.open("cac:TaxTotal")
	cur("cbc:TaxAmount", d.Tax)
	w.close("cac:TaxTotal")
	w.open("cac:TaxTotal")
	cur("cbc:TaxAmount", d.Tax)
	type group struct {
		category   string
		rate       int
		net, tax   int64
		firstIndex int
	}
	var groups []*group
	for i, l := range d.Lines {
		k := slices.IndexFunc(groups, func(g *group) bool { return g.category == l.Category && g.rate == l.RateBP })
		if k < 0 {
			groups = append(groups, &group{category: l.Category, rate: l.RateBP, firstIndex: i})
			k = len(groups) - 1
		}
		groups[k].net += l.Net
		groups[k].tax += l.Tax
	}
	for _, g := range groups {
		w.open("cac:TaxSubtotal")
		cur("cbc:TaxableAmount", g.net)
		cur("cbc:TaxAmount", g.tax)
		w.taxCategory(d, g.category, g.rate)
		w.close("cac:TaxSubtotal")
	}
	w.close("cac:TaxTotal")
	w.open("cac:LegalMonetaryTotal")
	cur("cbc:LineExtensionAmount", d.Net)
	cur("cbc:TaxExclusiveAmount", d.Net)
	cur("cbc:TaxInclusiveAmount", d.Total)
	cur("cbc:PayableAmount", d.Total)
	w.close("cac:LegalMonetaryTotal")
	for i, l := range d.Lines {
		w.open("cac:InvoiceLine")
		w.el("cbc:ID", strconv.Itoa(i+1))
		w.el("cbc:InvoicedQuantity", strconv.Itoa(l.Quantity), "unitCode", "PCE")
		cur("cbc:LineExtensionAmount", l.Net)
		w.open("cac:TaxTotal")
		cur("cbc:TaxAmount", l.Tax)
		cur("cbc:RoundingAmount", l.Net+l.Tax)
		w.close("cac:TaxTotal")
		w.open("cac:Item")
		w.el("cbc:Name", l.Name)
		w.open("cac:ClassifiedTaxCategory")
		w.el("cbc:ID", l.Category)
		w.el("cbc:Percent", d.percent(l.RateBP))
		w.open("cac:TaxScheme")
		w.el("cbc:ID", "VAT")
		w.close("cac:TaxScheme")
		w.close("cac:ClassifiedTaxCategory")
		w.close("cac:Item")
		w.open("cac:Price")
		cur("cbc:PriceAmount", l.UnitPrice)
		w.close("cac:Price")
		w.close("cac:InvoiceLine")
	}
	w.WriteString("</Invoice>")
	return w.Bytes()
}

// Hash is the invoice hash (ZATCA's rule): SHA-256 of the canonical XML
// without UBLExtensions, cac:Signature and the QR reference, base64.
func Hash(document []byte) (string, error) {
	canonical, err := Canonicalize(document)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return base64.StdEncoding.EncodeToString(sum[:]), nil
}

// HashUnsigned is the invoice hash of a document Unsigned wrote: it is
// written canonical already, so the hash is over its bytes without the QR's
// marker (the same as Hash, which parses; a unit test holds them equal),
// at a fraction of the cost.
func HashUnsigned(unsigned []byte) string {
	h := sha256.New()
	before, after, _ := bytes.Cut(unsigned, []byte(qrAt))
	h.Write(before)
	h.Write(after)
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// Canonicalize writes document as canonical XML (the subset of C14N 1.1
// UBL invoices need: no declaration, comments or processing instructions;
// namespace declarations first, then attributes, each sorted; empty
// elements as start and end tags; C14N's escapes), leaving out the blocks
// the invoice hash excludes.
func Canonicalize(document []byte) ([]byte, error) {
	dec := xml.NewDecoder(bytes.NewReader(document))
	var out bytes.Buffer
	type pending struct {
		tokens []xml.Token
		depth  int
	}
	var held *pending // an AdditionalDocumentReference, until its ID tells whether it is the QR
	skip := 0         // depth inside a dropped block
	emit := func(tok xml.Token) {
		switch t := tok.(type) {
		case xml.StartElement:
			out.WriteString("<" + qname(t.Name))
			attrs := slices.Clone(t.Attr)
			slices.SortFunc(attrs, func(a, b xml.Attr) int {
				an, bn := isNS(a), isNS(b)
				if an != bn {
					if an {
						return -1
					}
					return 1
				}
				return strings.Compare(qname(a.Name), qname(b.Name))
			})
			for _, a := range attrs {
				out.WriteString(" " + qname(a.Name) + `="` + attrEscaper.Replace(a.Value) + `"`)
			}
			out.WriteString(">")
		case xml.EndElement:
			out.WriteString("</" + qname(t.Name) + ">")
		case xml.CharData:
			out.WriteString(xmlText(string(t)))
		}
	}
	for {
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the invoice XML: %w", err)
		}
		tok = xml.CopyToken(tok)
		if skip > 0 {
			switch tok.(type) {
			case xml.StartElement:
				skip++
			case xml.EndElement:
				skip--
			}
			continue
		}
		if held != nil {
			held.tokens = append(held.tokens, tok)
			switch tok.(type) {
			case xml.StartElement:
				held.depth++
			case xml.EndElement:
				held.depth--
			}
			if held.depth == 0 {
				if !isQRReference(held.tokens) {
					for _, t := range held.tokens {
						emit(t)
					}
				}
				held = nil
			}
			continue
		}
		if s, ok := tok.(xml.StartElement); ok {
			switch qname(s.Name) {
			case "ext:UBLExtensions", "cac:Signature":
				skip = 1
				continue
			case "cac:AdditionalDocumentReference":
				held = &pending{tokens: []xml.Token{tok}, depth: 1}
				continue
			}
		}
		emit(tok)
	}
	return out.Bytes(), nil
}

func isNS(a xml.Attr) bool {
	return a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns"
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// isQRReference tells whether an AdditionalDocumentReference's tokens
// have cbc:ID QR.
func isQRReference(tokens []xml.Token) bool {
	for i := 0; i+1 < len(tokens); i++ {
		if s, ok := tokens[i].(xml.StartElement); ok && qname(s.Name) == "cbc:ID" {
			text, _ := tokens[i+1].(xml.CharData)
			return strings.TrimSpace(string(text)) == "QR"
		}
	}
	return false
}

// Signed is a document signed with a store's CSID: its invoice hash, the
// signature and the QR, and the XML as sent.
type Signed struct {
	Hash      string
	Signature string // base64 DER
	QR        string // base64 TLV
	XML       []byte
}

// SignatureDigest is what the signature signs: SHA-256 over the invoice
// hash's bytes (SHA256withECDSA over the hash, as ZATCA's SDK does).
func SignatureDigest(hash string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(hash)
	if err != nil {
		return nil, fmt.Errorf("invoice hash: %w", err)
	}
	sum := sha256.Sum256(raw)
	return sum[:], nil
}

// Sign signs an unsigned document (Document.Unsigned, stored when the
// invoice was issued) with the CSID and adds the signature block, the
// cac:Signature and the QR reference; the hash does not change.
func Sign(unsigned []byte, d Document, cert Certificate, key *secp256k1.PrivateKey) (Signed, error) {
	hash := HashUnsigned(unsigned)
	digest, err := SignatureDigest(hash)
	if err != nil {
		return Signed{}, err
	}
	signature := base64.StdEncoding.EncodeToString(ecdsa.Sign(key, digest).Serialize())
	qr, err := QR(d, hash, signature, cert)
	if err != nil {
		return Signed{}, err
	}
	certificate := base64.StdEncoding.EncodeToString(cert.Raw)
	var ext writer
	ext.WriteString(`<ext:UBLExtensions><ext:UBLExtension>`)
	ext.el("ext:ExtensionURI", "urn:oasis:names:specification:ubl:dsig:enveloped:xades")
	ext.WriteString(`<ext:ExtensionContent><sig:UBLDocumentSignatures xmlns:sac="urn:oasis:names:specification:ubl:schema:xsd:SignatureAggregateComponents-2" ` +
		`xmlns:sbc="urn:oasis:names:specification:ubl:schema:xsd:SignatureBasicComponents-2" ` +
		`xmlns:sig="urn:oasis:names:specification:ubl:schema:xsd:CommonSignatureComponents-2"><sac:SignatureInformation>`)
	ext.el("cbc:ID", "urn:oasis:names:specification:ubl:signature:1")
	ext.el("sbc:ReferencedSignatureID", "urn:oasis:names:specification:ubl:signature:Invoice")
	ext.WriteString(`<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#" Id="signature"><ds:SignedInfo>`)
	ext.el("ds:CanonicalizationMethod", "", "Algorithm", "http://www.w3.org/2006/12/xml-c14n11")
	ext.el("ds:SignatureMethod", "", "Algorithm", "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256")
	ext.WriteString(`<ds:Reference Id="invoiceSignedData" URI="">`)
	ext.el("ds:DigestMethod", "", "Algorithm", "http://www.w3.org/2001/04/xmlenc#sha256")
	ext.el("ds:DigestValue", hash)
	ext.WriteString(`</ds:Reference></ds:SignedInfo>`)
	ext.el("ds:SignatureValue", signature)
	ext.WriteString(`<ds:KeyInfo><ds:X509Data>`)
	ext.el("ds:X509Certificate", certificate)
	ext.WriteString(`</ds:X509Data></ds:KeyInfo></ds:Signature></sac:SignatureInformation></sig:UBLDocumentSignatures></ext:ExtensionContent></ext:UBLExtension></ext:UBLExtensions>`)
	var qrBlock writer
	qrBlock.open("cac:AdditionalDocumentReference")
	qrBlock.el("cbc:ID", "QR")
	qrBlock.open("cac:Attachment")
	qrBlock.el("cbc:EmbeddedDocumentBinaryObject", qr, "mimeCode", "text/plain")
	qrBlock.close("cac:Attachment")
	qrBlock.close("cac:AdditionalDocumentReference")
	qrBlock.WriteString(`<cac:Signature><cbc:ID>urn:oasis:names:specification:ubl:signature:Invoice</cbc:ID>` +
		`<cbc:SignatureMethod>urn:oasis:names:specification:ubl:dsig:enveloped:xades</cbc:SignatureMethod></cac:Signature>`)
	if !bytes.HasPrefix(unsigned, []byte(extensionsAt)) || !bytes.Contains(unsigned, []byte(qrAt)) {
		return Signed{}, errors.New("the unsigned document has no place for its signature")
	}
	out := bytes.Replace(unsigned, []byte(extensionsAt), append([]byte(extensionsAt), ext.Bytes()...), 1)
	out = bytes.Replace(out, []byte(qrAt), qrBlock.Bytes(), 1)
	return Signed{Hash: hash, Signature: signature, QR: qr, XML: out}, nil
}

// QR is the TLV code of a document (tags 1-9; 9, the certificate's
// signature, on simplified invoices): base64.
func QR(d Document, hash, signature string, cert Certificate) (string, error) {
	fields := [][]byte{[]byte(d.Seller.Name), []byte(d.Seller.VATNumber), []byte(d.IssuedAt.UTC().Format("2006-01-02T15:04:05Z")),
		[]byte(d.amount(d.Total)), []byte(d.amount(d.Tax)), []byte(hash), []byte(signature), cert.PublicKeyDER}
	if d.Simplified {
		fields = append(fields, cert.Signature)
	}
	var tlv []byte
	for i, f := range fields {
		if len(f) > 255 {
			return "", fmt.Errorf("QR tag %d is %d bytes, more than a TLV length byte holds", i+1, len(f))
		}
		tlv = append(tlv, byte(i+1), byte(len(f)))
		tlv = append(tlv, f...)
	}
	return base64.StdEncoding.EncodeToString(tlv), nil
}

// ReadQR reads a QR's TLV fields by tag.
func ReadQR(qr string) (map[int][]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(qr)
	if err != nil {
		return nil, fmt.Errorf("the QR is not base64: %w", err)
	}
	out := map[int][]byte{}
	for len(raw) > 0 {
		if len(raw) < 2 || len(raw) < 2+int(raw[1]) {
			return nil, errors.New("the QR's TLV is cut short")
		}
		out[int(raw[0])] = raw[2 : 2+int(raw[1])]
		raw = raw[2+int(raw[1]):]
	}
	return out, nil
}

// Verify checks a signed document as ZATCA does: the hash recomputed over
// its canonical form, the signature over it with the key of the embedded
// certificate, and the QR's hash, signature and key. It answers the hash
// and the certificate.
func Verify(document []byte) (string, Certificate, error) {
	hash, err := Hash(document)
	if err != nil {
		return "", Certificate{}, err
	}
	field := func(open, close string) string {
		_, rest, ok := bytes.Cut(document, []byte(open))
		if !ok {
			return ""
		}
		v, _, _ := bytes.Cut(rest, []byte(close))
		return string(v)
	}
	if got := field("<ds:DigestValue>", "</ds:DigestValue>"); got != hash {
		return hash, Certificate{}, fmt.Errorf("the invoice hash is %s, the document says %q", hash, got)
	}
	cert, err := ParseCertificate(field("<ds:X509Certificate>", "</ds:X509Certificate>"))
	if err != nil {
		return hash, Certificate{}, fmt.Errorf("the signing certificate %w", err)
	}
	signature := field("<ds:SignatureValue>", "</ds:SignatureValue>")
	der, err := base64.StdEncoding.DecodeString(signature)
	if err != nil {
		return hash, cert, errors.New("the signature is not base64")
	}
	sig, err := ecdsa.ParseDERSignature(der)
	if err != nil {
		return hash, cert, fmt.Errorf("the signature does not parse: %w", err)
	}
	digest, _ := SignatureDigest(hash)
	if !sig.Verify(digest, cert.PublicKey) {
		return hash, cert, errors.New("the signature does not verify with the certificate's key")
	}
	qr := field(`<cbc:ID>QR</cbc:ID><cac:Attachment><cbc:EmbeddedDocumentBinaryObject mimeCode="text/plain">`, "</cbc:EmbeddedDocumentBinaryObject>")
	tags, err := ReadQR(qr)
	if err != nil {
		return hash, cert, err
	}
	if string(tags[6]) != hash || string(tags[7]) != signature || !bytes.Equal(tags[8], cert.PublicKeyDER) {
		return hash, cert, errors.New("the QR's hash, signature or public key is not the document's")
	}
	return hash, cert, nil
}
