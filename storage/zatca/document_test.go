package zatca

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/stretchr/testify/require"
)

func testDocument() Document {
	return Document{UUID: "3cf5ee18-ee25-44ea-a444-2c37ba7f28be", Number: "INV-2026-000001", ICV: 1, PIH: FirstPIH,
		IssuedAt: time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC), TypeCode: TypeInvoice, Simplified: true, Currency: "SAR", Exponent: 2,
		Seller: Party{Name: "عبايات الرياض", VATNumber: "300000000000003", CRNumber: "1010010000",
			Address: &Address{Street: "King Fahd Rd", BuildingNumber: "1234", District: "Al Olaya", City: "Riyadh", PostalCode: "12345", Country: "SA"}},
		Buyer: Party{Name: "Noura & Co <VIP>"},
		Lines: []Line{{Name: "Abaya", Quantity: 2, UnitPrice: 10000, Net: 20000, Tax: 3000, RateBP: 1500, Category: "S"},
			{Name: "Book", Quantity: 1, UnitPrice: 5000, Net: 5000, RateBP: 0, Category: "E"}},
		Net: 25000, Tax: 3000, Total: 28000}
}

// The hash leaves out the signature, the cac:Signature and the QR: signing
// keeps it; the signed document verifies as ZATCA checks it (hash, the
// signature with the embedded certificate's key, the QR's tags); any change
// to what is hashed breaks it.
func TestSignedDocumentVerifies(t *testing.T) {
	key, err := secp256k1.GeneratePrivateKey()
	require.NoError(t, err)
	certPEM, err := NewCertificate(CertificateTemplate{CommonName: "EGS1", Organization: "Riyadh Abayas", Country: "SA", SerialNumber: 1,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0)}, key, key, "EGS1")
	require.NoError(t, err)
	cert, err := ParseCertificate(certPEM)
	require.NoError(t, err)

	d := testDocument()
	unsigned := d.Unsigned()
	hash, err := Hash(unsigned)
	require.NoError(t, err)
	signed, err := Sign(unsigned, d, cert, key)
	require.NoError(t, err)
	require.Equal(t, hash, signed.Hash)
	require.Equal(t, hash, HashUnsigned(unsigned), "the written document is canonical already")
	again, err := Hash(signed.XML)
	require.NoError(t, err)
	require.Equal(t, hash, again, "the signature, cac:Signature and QR are outside the hash")
	got, gotCert, err := Verify(signed.XML)
	require.NoError(t, err)
	require.Equal(t, hash, got)
	require.Equal(t, cert.Raw, gotCert.Raw)
	require.Contains(t, string(signed.XML), "<cbc:InvoiceTypeCode name=\"0200000\">388</cbc:InvoiceTypeCode>")
	require.Contains(t, string(signed.XML), "Noura &amp; Co &lt;VIP&gt;")

	tags, err := ReadQR(signed.QR)
	require.NoError(t, err)
	require.Equal(t, "عبايات الرياض", string(tags[1]))
	require.Equal(t, "300000000000003", string(tags[2]))
	require.Equal(t, "2026-11-28T10:30:00Z", string(tags[3]))
	require.Equal(t, "280.00", string(tags[4]))
	require.Equal(t, "30.00", string(tags[5]))
	require.Equal(t, hash, string(tags[6]))
	require.Equal(t, signed.Signature, string(tags[7]))
	require.Equal(t, cert.PublicKeyDER, tags[8])
	require.Equal(t, cert.Signature, tags[9])

	tampered := bytes.Replace(signed.XML, []byte(">280.00<"), []byte(">28.00<"), 1)
	_, _, err = Verify(tampered)
	require.ErrorContains(t, err, "invoice hash")
	otherKey, _ := secp256k1.GeneratePrivateKey()
	forged, err := Sign(unsigned, d, cert, otherKey)
	require.NoError(t, err)
	_, _, err = Verify(forged.XML)
	require.ErrorContains(t, err, "signature does not verify")

	// The canonical form: declaration and comments gone, attributes sorted,
	// empty elements as pairs; the hash is of that.
	c, err := Canonicalize([]byte(`<?xml version="1.0"?><a xmlns:z="u" b="2" a="1"><!--x--><e/></a>`))
	require.NoError(t, err)
	require.Equal(t, `<a xmlns:z="u" a="1" b="2"><e></e></a>`, string(c))
	require.Equal(t, 44, len(hash))
	_, err = base64.StdEncoding.DecodeString(hash)
	require.NoError(t, err)
	require.False(t, strings.Contains(string(unsigned), "ds:Signature"))
}
