package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// A key rotation: with the new key in SVC_SECRETS_KEY and the old one in
// SVC_SECRETS_KEY_PREVIOUS, secrets sealed under the old key still open;
// `svc reseal-secrets` seals them all under the new key, after which the
// old key can be dropped.
func TestResealSecretsRotatesTheKey(t *testing.T) {
	url := testenv.DatabaseURL(t, true)
	ctx := context.Background()
	db, err := storage.Open(ctx, url)
	require.NoError(t, err)
	defer db.Close()
	userID, storeID := storage.NewID(), storage.NewID()
	sql, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer sql.Close(ctx)
	_, err = sql.Exec(ctx, `INSERT INTO users (id, email, password_hash, name) VALUES ($1, 'rotate@example.com', 'x', 'Rotate')`, userID)
	require.NoError(t, err)
	_, err = sql.Exec(ctx, `INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language) VALUES ($1, $2, 'Rotate', 'rotate', 'EGP', 'ar')`,
		storeID, userID)
	require.NoError(t, err)

	oldKey := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("o", 32)))
	newKey := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("n", 32)))
	oldSealer, err := storage.NewSealer(oldKey)
	require.NoError(t, err)
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		if err := tx.ConnectGateway(ctx, oldSealer, storage.GatewayAccount{StoreID: storeID, Provider: storage.GatewayStripe,
			SecretKey: "sk_test_rotate4242", WebhookSecret: "whsec_rotate"}); err != nil {
			return err
		}
		_, err := tx.ConnectWhatsApp(ctx, oldSealer, storage.WhatsAppConnection{StoreID: storeID, PhoneNumberID: "1065", WABAID: "1022",
			AccessToken: "EAAG-rotate-token", AppSecret: "rotate-app-secret", DisplayPhone: "+20 100 0001065"})
		return err
	}))
	newOnly, err := storage.NewSealer(newKey)
	require.NoError(t, err)
	_, err = db.FindGatewayAccount(ctx, newOnly, storeID, storage.GatewayStripe)
	require.Error(t, err, "the new key alone cannot open the old seals")

	cfg := Config{DatabaseURL: url, SecretsKey: newKey, SecretsKeyPrevious: oldKey}
	var out bytes.Buffer
	require.NoError(t, run(ctx, cfg, []string{"reseal-secrets"}, &out, &out))
	require.Contains(t, out.String(), "sealed 4 secrets")
	account, err := db.FindGatewayAccount(ctx, newOnly, storeID, storage.GatewayStripe)
	require.NoError(t, err, "after the reseal the new key alone opens them")
	require.Equal(t, "sk_test_rotate4242", account.SecretKey)
	require.Equal(t, "whsec_rotate", account.WebhookSecret)
	channel, err := db.FindWhatsAppSender(ctx, newOnly, storeID)
	require.NoError(t, err, "the WhatsApp channel's secrets are sealed again too")
	require.Equal(t, "EAAG-rotate-token", channel.AccessToken)
	require.Equal(t, "rotate-app-secret", channel.AppSecret)
	_, err = db.FindGatewayAccount(ctx, oldSealer, storeID, storage.GatewayStripe)
	require.Error(t, err, "the old key opens nothing any more")

	require.Error(t, run(ctx, Config{DatabaseURL: url, SecretsKeyPrevious: oldKey}, []string{"reseal-secrets"}, &out, &out))
}
