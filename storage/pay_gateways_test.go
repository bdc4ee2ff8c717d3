package storage_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage"
)

// Sealed secrets open only with the same key and for the same purpose,
// and never hold the secret in the clear.
func TestSealerSealsAndOpens(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	sealer, err := storage.NewSealer(key)
	require.NoError(t, err)
	sealed, err := sealer.Seal("sk_live_secret4242", "payment_gateways/a/stripe/secret_key")
	require.NoError(t, err)
	require.NotContains(t, string(sealed), "sk_live_secret4242")
	again, err := sealer.Seal("sk_live_secret4242", "payment_gateways/a/stripe/secret_key")
	require.NoError(t, err)
	require.NotEqual(t, sealed, again, "a fresh nonce every time")

	plain, err := sealer.Open(sealed, "payment_gateways/a/stripe/secret_key")
	require.NoError(t, err)
	require.Equal(t, "sk_live_secret4242", plain)
	_, err = sealer.Open(sealed, "payment_gateways/b/stripe/secret_key")
	require.Error(t, err, "another store's purpose does not open it")
	other, err := storage.NewSealer(base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 32))))
	require.NoError(t, err)
	_, err = other.Open(sealed, "payment_gateways/a/stripe/secret_key")
	require.Error(t, err, "another key does not open it")

	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString([]byte("short"))} {
		_, err := storage.NewSealer(bad)
		require.Error(t, err, bad)
	}
	var none *storage.Sealer
	_, err = none.Seal("x", "y")
	require.ErrorIs(t, err, storage.ErrNoSecretsKey)
}
