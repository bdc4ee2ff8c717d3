package zatcadouble

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/activities/einvoice"
	"github.com/merchantsvc/svc/storage/zatca"
)

// The double takes a signed simplified invoice once per ICV and refuses a
// tampered one, a PIH that is not the previous hash, an ICV used by another
// invoice and a standard invoice sent for reporting, with ZATCA's error
// shape, through the real client.
func TestDoubleChecksHashChainAndSignature(t *testing.T) {
	srv := httptest.NewServer(New())
	t.Cleanup(srv.Close)
	client := &einvoice.ZATCA{BaseURL: srv.URL}
	key, err := secp256k1.GeneratePrivateKey()
	require.NoError(t, err)
	certPEM, err := zatca.NewCertificate(zatca.CertificateTemplate{CommonName: "EGS1", Organization: "Shop", Country: "SA", SerialNumber: 1,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0)}, key, key, "EGS1")
	require.NoError(t, err)
	cert, err := zatca.ParseCertificate(certPEM)
	require.NoError(t, err)
	doc := func(icv int64, pih string, simplified bool) zatca.Document {
		return zatca.Document{UUID: "6f4d20e0-6bfe-4a80-9389-7dabe6620f12", Number: "INV-1", ICV: icv, PIH: pih, IssuedAt: time.Now(),
			TypeCode: zatca.TypeInvoice, Simplified: simplified, Currency: "SAR", Exponent: 2,
			Seller: zatca.Party{Name: "Shop", VATNumber: "300000000000003"}, Buyer: zatca.Party{Name: "Noura"},
			Lines: []zatca.Line{{Name: "Abaya", Quantity: 1, UnitPrice: 10000, Net: 10000, Tax: 1500, RateBP: 1500, Category: "S"}},
			Net:   10000, Tax: 1500, Total: 11500}
	}
	submit := func(d zatca.Document, tamper func([]byte) []byte) (einvoice.ZATCAAnswer, error) {
		signed, err := zatca.Sign(d.Unsigned(), d, cert, key)
		require.NoError(t, err)
		xml := signed.XML
		if tamper != nil {
			xml = tamper(xml)
		}
		return client.Submit(context.Background(), einvoice.ZATCASubmission{Certificate: cert.Raw, Hash: signed.Hash, UUID: d.UUID,
			XML: xml, Clearance: !d.Simplified})
	}
	refusal := func(err error) string {
		var r *einvoice.ZATCARefusal
		require.True(t, errors.As(err, &r), "%v", err)
		return r.Errors[0]
	}

	first := doc(1, zatca.FirstPIH, true)
	answer, err := submit(first, nil)
	require.NoError(t, err)
	require.Equal(t, "REPORTED", answer.Status)
	hash, err := zatca.Hash(first.Unsigned())
	require.NoError(t, err)

	_, err = submit(doc(2, zatca.FirstPIH, true), nil)
	require.Contains(t, refusal(err), "invalid-chain")
	_, err = submit(doc(2, hash, true), func(x []byte) []byte { return bytes.Replace(x, []byte(">115.00<"), []byte(">15.00<"), 1) })
	require.Contains(t, refusal(err), "invalid-invoice-hash")
	other := doc(1, zatca.FirstPIH, true)
	other.Total = 11600
	_, err = submit(other, nil)
	require.Contains(t, refusal(err), "ICV 1 was used")
	_, err = submit(doc(2, hash, false), func(x []byte) []byte { return x })
	require.NoError(t, err, "a standard invoice is cleared")
	std := doc(3, hash, false)
	signed, err := zatca.Sign(std.Unsigned(), std, cert, key)
	require.NoError(t, err)
	_, err = client.Submit(context.Background(), einvoice.ZATCASubmission{Certificate: cert.Raw, Hash: signed.Hash, UUID: std.UUID, XML: signed.XML})
	require.Contains(t, refusal(err), "invalid-invoice-type")
}
