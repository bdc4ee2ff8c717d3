package pages

import (
	"net/url"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// signingVectors are the test vectors docs/apps.md gives app developers;
// they come from the signing code itself and must appear in the document.
var signingVectors = []struct {
	name   string
	secret string
	params url.Values
	hmac   string
}{
	{"redirect", "svc_cs_example_secret_do_not_use",
		url.Values{"code": {"svc_code_Xq3kF9"}, "state": {"install-42_a"}, "store_id": {"0192f3a4-5b6c-7d8e-9f01-23456789abcd"}, "timestamp": {"1767225600"}},
		"5370d294da84beb15d8b93825a25bbe40edfc7c783a0aa3699762c968cfc2ce6"},
	{"launch", "svc_cs_example_secret_do_not_use",
		url.Values{"locale": {"ar"}, "store_id": {"0192f3a4-5b6c-7d8e-9f01-23456789abcd"}, "timestamp": {"1767225600"}},
		"502ce01b67cb8f97589cfae4e8eb106fc8319b0e65dd86bf0f445ca3566392df"},
}

func TestSigningVectorsMatchTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/apps.md")
	require.NoError(t, err)
	for _, v := range signingVectors {
		got := signParams(v.secret, v.params)
		require.Equal(t, v.hmac, got, v.name)
		require.Contains(t, string(doc), got, "docs/apps.md must show the %s vector", v.name)
	}
	// hmac itself is never signed, and the order of the query does not matter.
	withHMAC := url.Values{"hmac": {"whatever"}}
	for k, vs := range signingVectors[0].params {
		withHMAC[k] = vs
	}
	require.Equal(t, signingVectors[0].hmac, signParams(signingVectors[0].secret, withHMAC))
}
