package zatca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/stretchr/testify/require"
)

// A certificate and key made here read back: subject, expiry, the key on
// secp256k1, the issuer's signature; a key of another certificate does not
// match; a P-256 certificate is refused.
func TestCertificatesAndKeysOnSecp256k1(t *testing.T) {
	ca, err := secp256k1.GeneratePrivateKey()
	require.NoError(t, err)
	key, err := secp256k1.GeneratePrivateKey()
	require.NoError(t, err)
	expires := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	certPEM, err := NewCertificate(CertificateTemplate{CommonName: "EGS1-886431145", Organization: "Maximum Speed Tech Supply LTD",
		Country: "SA", SerialNumber: 42, NotBefore: expires.AddDate(-5, 0, 0), NotAfter: expires}, key, ca, "ZATCA double CA")
	require.NoError(t, err)
	cert, err := ParseCertificate(certPEM)
	require.NoError(t, err)
	require.Equal(t, "CN=EGS1-886431145,O=Maximum Speed Tech Supply LTD,C=SA", cert.Subject)
	require.Equal(t, "CN=ZATCA double CA,O=Maximum Speed Tech Supply LTD,C=SA", cert.Issuer)
	require.Equal(t, expires, cert.NotAfter)
	require.True(t, cert.VerifiedBy(ca.PubKey()))
	require.False(t, cert.VerifiedBy(key.PubKey()))

	back, err := ParsePrivateKey(MarshalPrivateKey(key))
	require.NoError(t, err)
	require.True(t, cert.Matches(back))
	require.False(t, cert.Matches(ca))

	_, err = ParseCertificate("not a certificate")
	require.Error(t, err)
	_, err = ParsePrivateKey(certPEM)
	require.Error(t, err)
	// A P-256 certificate (prime256v1), as Go writes them.
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{SerialNumber: big.NewInt(1), NotAfter: expires}, &x509.Certificate{SerialNumber: big.NewInt(1)},
		&p256.PublicKey, p256)
	require.NoError(t, err)
	_, err = ParseCertificate(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	require.ErrorContains(t, err, "secp256k1")
}
