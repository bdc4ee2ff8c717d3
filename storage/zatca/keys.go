// Package zatca is what Saudi Arabia's e-invoicing (FATOORA) asks of a
// seller's invoices (decisions §27): the CSID certificate and key on
// secp256k1, the UBL 2.1 document with ZATCA's extensions, its hash, the
// ECDSA signature and the TLV QR code, and the client of the reporting and
// clearance API. Go's crypto/x509 knows no secp256k1, so certificates and
// keys are read here with encoding/asn1 and signed with decred's secp256k1.
package zatca

import (
	"crypto/sha256"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
)

var (
	oidSecp256k1        = asn1.ObjectIdentifier{1, 3, 132, 0, 10}
	oidECPublicKey      = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidECDSAWithSHA256  = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	oidCommonName       = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidOrganizationName = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidCountry          = asn1.ObjectIdentifier{2, 5, 4, 6}
)

// Certificate is a CSID certificate as ZATCA's documents use it.
type Certificate struct {
	// Raw is the DER certificate; PEM's body, base64, is what the
	// document's KeyInfo carries.
	Raw          []byte
	Subject      string
	Issuer       string
	SerialNumber *big.Int
	NotAfter     time.Time
	// PublicKey is the secp256k1 key; PublicKeyDER its SubjectPublicKeyInfo
	// (QR tag 8).
	PublicKey    *secp256k1.PublicKey
	PublicKeyDER []byte
	// Signature is the issuer's signature of the certificate (QR tag 9).
	Signature []byte
	// TBS is the signed part, checked against the issuer's key.
	TBS []byte
}

type certificateASN1 struct {
	TBS       asn1.RawValue
	Algorithm pkix.AlgorithmIdentifier
	Signature asn1.BitString
}

type tbsASN1 struct {
	Raw             asn1.RawContent
	Version         int `asn1:"optional,explicit,default:0,tag:0"`
	SerialNumber    *big.Int
	Algorithm       pkix.AlgorithmIdentifier
	Issuer          asn1.RawValue
	Validity        validityASN1
	Subject         asn1.RawValue
	PublicKey       spkiASN1
	IssuerUniqueID  asn1.BitString  `asn1:"optional,tag:1"`
	SubjectUniqueID asn1.BitString  `asn1:"optional,tag:2"`
	Extensions      []asn1.RawValue `asn1:"omitempty,optional,explicit,tag:3"`
}

type validityASN1 struct {
	NotBefore, NotAfter time.Time
}

type spkiASN1 struct {
	Raw       asn1.RawContent
	Algorithm struct {
		Algorithm asn1.ObjectIdentifier
		Curve     asn1.ObjectIdentifier
	}
	PublicKey asn1.BitString
}

// ParseCertificate reads a PEM (or bare base64 DER, as ZATCA hands out
// CSIDs) certificate whose key is on secp256k1.
func ParseCertificate(text string) (Certificate, error) {
	der, err := pemOrBase64(text, "CERTIFICATE")
	if err != nil {
		return Certificate{}, err
	}
	var c certificateASN1
	if rest, err := asn1.Unmarshal(der, &c); err != nil || len(rest) > 0 {
		return Certificate{}, errors.New("is not an X.509 certificate")
	}
	var tbs tbsASN1
	if _, err := asn1.Unmarshal(c.TBS.FullBytes, &tbs); err != nil {
		return Certificate{}, fmt.Errorf("is not an X.509 certificate: %w", err)
	}
	if !tbs.PublicKey.Algorithm.Algorithm.Equal(oidECPublicKey) || !tbs.PublicKey.Algorithm.Curve.Equal(oidSecp256k1) {
		return Certificate{}, errors.New("its key is not on secp256k1, the curve ZATCA's CSIDs use")
	}
	pub, err := secp256k1.ParsePubKey(tbs.PublicKey.PublicKey.RightAlign())
	if err != nil {
		return Certificate{}, fmt.Errorf("its public key does not parse: %w", err)
	}
	return Certificate{Raw: der, Subject: nameString(tbs.Subject.FullBytes), Issuer: nameString(tbs.Issuer.FullBytes),
		SerialNumber: tbs.SerialNumber, NotAfter: tbs.Validity.NotAfter.UTC(), PublicKey: pub, PublicKeyDER: tbs.PublicKey.Raw,
		Signature: c.Signature.RightAlign(), TBS: c.TBS.FullBytes}, nil
}

func nameString(der []byte) string {
	var seq pkix.RDNSequence
	if _, err := asn1.Unmarshal(der, &seq); err != nil {
		return ""
	}
	var n pkix.Name
	n.FillFromRDNSequence(&seq)
	return n.String()
}

// ecPrivateKeyASN1 is SEC 1's ECPrivateKey.
type ecPrivateKeyASN1 struct {
	Version    int
	PrivateKey []byte
	Curve      asn1.ObjectIdentifier `asn1:"optional,explicit,tag:0"`
	PublicKey  asn1.BitString        `asn1:"optional,explicit,tag:1"`
}

type pkcs8ASN1 struct {
	Version   int
	Algorithm struct {
		Algorithm asn1.ObjectIdentifier
		Curve     asn1.ObjectIdentifier `asn1:"optional"`
	}
	PrivateKey []byte
}

// ParsePrivateKey reads a secp256k1 private key: PEM "EC PRIVATE KEY"
// (SEC 1, what OpenSSL and ZATCA's SDK write), "PRIVATE KEY" (PKCS #8), or
// the bare base64 of either.
func ParsePrivateKey(text string) (*secp256k1.PrivateKey, error) {
	der, err := pemOrBase64(text, "")
	if err != nil {
		return nil, err
	}
	var p8 pkcs8ASN1
	if _, err := asn1.Unmarshal(der, &p8); err == nil && p8.Algorithm.Algorithm.Equal(oidECPublicKey) {
		if len(p8.Algorithm.Curve) > 0 && !p8.Algorithm.Curve.Equal(oidSecp256k1) {
			return nil, errors.New("the key is not on secp256k1")
		}
		der = p8.PrivateKey
	}
	var k ecPrivateKeyASN1
	if _, err := asn1.Unmarshal(der, &k); err != nil || k.Version != 1 || len(k.PrivateKey) == 0 || len(k.PrivateKey) > 32 {
		return nil, errors.New("is not an EC private key")
	}
	if len(k.Curve) > 0 && !k.Curve.Equal(oidSecp256k1) {
		return nil, errors.New("the key is not on secp256k1")
	}
	return secp256k1.PrivKeyFromBytes(k.PrivateKey), nil
}

// MarshalPrivateKey writes a key as PEM "EC PRIVATE KEY" (SEC 1).
func MarshalPrivateKey(key *secp256k1.PrivateKey) string {
	der, _ := asn1.Marshal(ecPrivateKeyASN1{Version: 1, PrivateKey: key.Serialize(), Curve: oidSecp256k1,
		PublicKey: asn1.BitString{Bytes: key.PubKey().SerializeUncompressed(), BitLength: 65 * 8}})
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}

// Matches tells whether key is the private half of the certificate's key.
func (c Certificate) Matches(key *secp256k1.PrivateKey) bool {
	return key.PubKey().IsEqual(c.PublicKey)
}

// VerifiedBy tells whether issuer's key signed the certificate.
func (c Certificate) VerifiedBy(issuer *secp256k1.PublicKey) bool {
	sig, err := ecdsa.ParseDERSignature(c.Signature)
	if err != nil {
		return false
	}
	sum := sha256.Sum256(c.TBS)
	return sig.Verify(sum[:], issuer)
}

func pemOrBase64(text, wantType string) ([]byte, error) {
	if block, _ := pem.Decode([]byte(text)); block != nil {
		if wantType != "" && block.Type != wantType {
			return nil, fmt.Errorf("is a PEM %q block, not %q", block.Type, wantType)
		}
		return block.Bytes, nil
	}
	der, err := decodeBase64(text)
	if err != nil || len(der) == 0 {
		return nil, errors.New("is neither PEM nor base64 DER")
	}
	return der, nil
}

// CertificateTemplate is what NewCertificate writes in a certificate.
type CertificateTemplate struct {
	CommonName   string
	Organization string
	Country      string
	SerialNumber int64
	NotBefore    time.Time
	NotAfter     time.Time
}

// NewCertificate makes a certificate of key's public key signed by
// issuerKey (the key itself for a self-signed one) as PEM: for the local
// ZATCA double's onboarding and the tests (the real CSIDs come from ZATCA).
func NewCertificate(t CertificateTemplate, key, issuerKey *secp256k1.PrivateKey, issuer string) (string, error) {
	name := func(cn string) (asn1.RawValue, error) {
		seq := pkix.RDNSequence{
			{{Type: oidCountry, Value: t.Country}},
			{{Type: oidOrganizationName, Value: t.Organization}},
			{{Type: oidCommonName, Value: cn}},
		}
		der, err := asn1.Marshal(seq)
		return asn1.RawValue{FullBytes: der}, err
	}
	subject, err := name(t.CommonName)
	if err != nil {
		return "", err
	}
	issuerName, err := name(issuer)
	if err != nil {
		return "", err
	}
	var spki spkiASN1
	spki.Algorithm.Algorithm, spki.Algorithm.Curve = oidECPublicKey, oidSecp256k1
	spki.PublicKey = asn1.BitString{Bytes: key.PubKey().SerializeUncompressed(), BitLength: 65 * 8}
	tbs, err := asn1.Marshal(tbsASN1{Version: 2, SerialNumber: big.NewInt(t.SerialNumber),
		Algorithm: pkix.AlgorithmIdentifier{Algorithm: oidECDSAWithSHA256}, Issuer: issuerName,
		Validity: validityASN1{NotBefore: t.NotBefore.UTC(), NotAfter: t.NotAfter.UTC()}, Subject: subject, PublicKey: spki})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(tbs)
	sig := ecdsa.Sign(issuerKey, sum[:]).Serialize()
	der, err := asn1.Marshal(certificateASN1{TBS: asn1.RawValue{FullBytes: tbs}, Algorithm: pkix.AlgorithmIdentifier{Algorithm: oidECDSAWithSHA256},
		Signature: asn1.BitString{Bytes: sig, BitLength: len(sig) * 8}})
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}
