package storage

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// Payment gateway accounts (decisions §18): a store's own card gateway,
// its secrets sealed under the deployment's secrets key.

// Gateway providers.
const GatewayStripe = "stripe"

// ErrNoSecretsKey is returned when a secret must be sealed or opened and no
// SVC_SECRETS_KEY is configured.
var ErrNoSecretsKey = errors.New("no secrets key is configured (SVC_SECRETS_KEY)")

// Sealer seals secrets with AES-256-GCM; a sealed secret is the nonce
// followed by the ciphertext.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer takes a 32-byte key, base64 (standard or URL alphabet).
func NewSealer(keyBase64 string) (*Sealer, error) {
	key, err := base64.StdEncoding.DecodeString(keyBase64)
	if err != nil {
		key, err = base64.URLEncoding.DecodeString(keyBase64)
	}
	if err != nil || len(key) != 32 {
		return nil, errors.New("the secrets key must be 32 bytes, base64")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts a secret; what is sealed names its purpose (additional
// data), so a sealed secret cannot be moved to another column or store.
func (s *Sealer) Seal(secret, purpose string) ([]byte, error) {
	if s == nil {
		return nil, ErrNoSecretsKey
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, []byte(secret), []byte(purpose)), nil
}

// Open decrypts what Seal sealed for the same purpose.
func (s *Sealer) Open(sealed []byte, purpose string) (string, error) {
	if s == nil {
		return "", ErrNoSecretsKey
	}
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("sealed secret too short")
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(purpose))
	if err != nil {
		return "", fmt.Errorf("open sealed secret: %w", err)
	}
	return string(plain), nil
}

// GatewayAccount is a store's account at a card gateway, its secrets open.
type GatewayAccount struct {
	StoreID             uuid.UUID
	Provider            string
	SecretKey           string
	WebhookSecret       string
	StatementDescriptor *string
}

func gatewayPurpose(storeID uuid.UUID, provider, field string) string {
	return "payment_gateways/" + storeID.String() + "/" + provider + "/" + field
}

// accountHint is the last four characters of a key, for the merchant to
// recognise it ("…4242").
func accountHint(key string) string {
	if len(key) <= 4 {
		return "…"
	}
	return "…" + key[len(key)-4:]
}

// ConnectGateway stores (or replaces) a store's gateway account, its
// secrets sealed.
func (tx *Tx) ConnectGateway(ctx context.Context, sealer *Sealer, a GatewayAccount) error {
	key, err := sealer.Seal(a.SecretKey, gatewayPurpose(a.StoreID, a.Provider, "secret_key"))
	if err != nil {
		return err
	}
	hook, err := sealer.Seal(a.WebhookSecret, gatewayPurpose(a.StoreID, a.Provider, "webhook_secret"))
	if err != nil {
		return err
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO payment_gateways (store_id, provider, secret_key_sealed, webhook_secret_sealed, account_hint,
			statement_descriptor, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
		ON CONFLICT (store_id, provider) DO UPDATE SET secret_key_sealed = EXCLUDED.secret_key_sealed,
			webhook_secret_sealed = EXCLUDED.webhook_secret_sealed, account_hint = EXCLUDED.account_hint,
			statement_descriptor = EXCLUDED.statement_descriptor, updated_at = EXCLUDED.updated_at`,
		a.StoreID, a.Provider, key, hook, accountHint(a.SecretKey), a.StatementDescriptor, tx.now()); err != nil {
		return fmt.Errorf("connect gateway: %w", err)
	}
	return nil
}

// FindGatewayAccount opens a store's gateway account; NotFound when the
// store has none at the provider.
func (r reader) FindGatewayAccount(ctx context.Context, sealer *Sealer, storeID uuid.UUID, provider string) (GatewayAccount, error) {
	var key, hook []byte
	a := GatewayAccount{StoreID: storeID, Provider: provider}
	if err := r.q.QueryRow(ctx, `SELECT secret_key_sealed, webhook_secret_sealed, statement_descriptor FROM payment_gateways
		WHERE store_id = $1 AND provider = $2`, storeID, provider).Scan(&key, &hook, &a.StatementDescriptor); err != nil {
		return GatewayAccount{}, notFoundIfNoRows(err, "find gateway account "+provider)
	}
	var err error
	if a.SecretKey, err = sealer.Open(key, gatewayPurpose(storeID, provider, "secret_key")); err != nil {
		return GatewayAccount{}, err
	}
	if a.WebhookSecret, err = sealer.Open(hook, gatewayPurpose(storeID, provider, "webhook_secret")); err != nil {
		return GatewayAccount{}, err
	}
	return a, nil
}
