package storage

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Payment gateway accounts (decisions §18): a store's own card gateway,
// its secrets sealed under the deployment's secrets key.

// Gateway providers.
const GatewayStripe = "stripe"

// ErrNoSecretsKey is returned when a secret must be sealed or opened and no
// SVC_SECRETS_KEY is configured.
var ErrNoSecretsKey = errors.New("no secrets key is configured (SVC_SECRETS_KEY)")

// Sealer seals secrets with AES-256-GCM; a sealed secret is the nonce
// followed by the ciphertext. During a key rotation it also opens what the
// previous key sealed (SVC_SECRETS_KEY_PREVIOUS), until `svc secrets
// reseal` has sealed everything again under the current key.
type Sealer struct {
	aead     cipher.AEAD
	previous cipher.AEAD
	// digestKey and previousDigest key the lookup digests (Digest), each
	// derived from its secrets key so no key serves two algorithms.
	digestKey, previousDigest []byte
}

// NewSealer takes a 32-byte key, base64 (standard or URL alphabet), and
// optionally the previous key it replaces.
func NewSealer(keyBase64 string, previousBase64 ...string) (*Sealer, error) {
	aead, digestKey, err := newAEAD(keyBase64)
	if err != nil {
		return nil, err
	}
	s := &Sealer{aead: aead, digestKey: digestKey}
	if len(previousBase64) > 0 && previousBase64[0] != "" {
		if s.previous, s.previousDigest, err = newAEAD(previousBase64[0]); err != nil {
			return nil, fmt.Errorf("previous key: %w", err)
		}
	}
	return s, nil
}

// newAEAD opens a secrets key: its AES-GCM and the key of its digests.
func newAEAD(keyBase64 string) (cipher.AEAD, []byte, error) {
	key, err := base64.StdEncoding.DecodeString(keyBase64)
	if err != nil {
		key, err = base64.URLEncoding.DecodeString(keyBase64)
	}
	if err != nil || len(key) != 32 {
		return nil, nil, errors.New("the secrets key must be 32 bytes, base64")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, nil, err
	}
	return aead, hmacSHA256(key, []byte("svc lookup digest v1")), nil
}

func hmacSHA256(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

// Digest is the HMAC-SHA256 of a secret under the current key, for finding
// a row by a secret that is stored only sealed (a gift card's code): equal
// secrets of one purpose have equal digests, and nobody without the key can
// compute one. purpose separates the digests of different uses and stores.
func (s *Sealer) Digest(secret, purpose string) ([]byte, error) {
	if s == nil {
		return nil, ErrNoSecretsKey
	}
	return hmacSHA256(s.digestKey, []byte(purpose+"\x00"+secret)), nil
}

// Digests are the digests a lookup matches: the current key's, and during a
// key rotation the previous key's, until `svc reseal-secrets` has replaced
// every stored digest.
func (s *Sealer) Digests(secret, purpose string) ([][]byte, error) {
	d, err := s.Digest(secret, purpose)
	if err != nil {
		return nil, err
	}
	out := [][]byte{d}
	if s.previousDigest != nil {
		out = append(out, hmacSHA256(s.previousDigest, []byte(purpose+"\x00"+secret)))
	}
	return out, nil
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
	if err != nil && s.previous != nil {
		plain, err = s.previous.Open(nil, sealed[:n], sealed[n:], []byte(purpose))
	}
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

// GatewayConnection is a store's gateway as the merchant sees it: never
// its secrets.
type GatewayConnection struct {
	Provider    string
	AccountHint string
	UpdatedAt   time.Time
}

// FindGatewayConnections lists a store's connected gateways.
func (r reader) FindGatewayConnections(ctx context.Context, storeID uuid.UUID) ([]GatewayConnection, error) {
	rows, err := r.q.Query(ctx, `SELECT provider, account_hint, updated_at FROM payment_gateways WHERE store_id = $1 ORDER BY provider`, storeID)
	if err != nil {
		return nil, fmt.Errorf("find gateway connections: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (GatewayConnection, error) {
		var c GatewayConnection
		return c, row.Scan(&c.Provider, &c.AccountHint, &c.UpdatedAt)
	})
}

// FindGatewayConnection reads one connected gateway; NotFound when the
// store has none at the provider.
func (r reader) FindGatewayConnection(ctx context.Context, storeID uuid.UUID, provider string) (GatewayConnection, error) {
	c := GatewayConnection{Provider: provider}
	err := r.q.QueryRow(ctx, `SELECT account_hint, updated_at FROM payment_gateways WHERE store_id = $1 AND provider = $2`,
		storeID, provider).Scan(&c.AccountHint, &c.UpdatedAt)
	if err != nil {
		return GatewayConnection{}, notFoundIfNoRows(err, "find gateway "+provider)
	}
	return c, nil
}

// DisconnectGateway forgets a store's gateway account; NotFound when none.
// Card payments already open keep their workflows, which fail to reach the
// gateway and expire.
func (tx *Tx) DisconnectGateway(ctx context.Context, storeID uuid.UUID, provider string) error {
	tag, err := tx.tx.Exec(ctx, `DELETE FROM payment_gateways WHERE store_id = $1 AND provider = $2`, storeID, provider)
	if err != nil {
		return fmt.Errorf("disconnect gateway: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("disconnect gateway %s: %w", provider, ErrNotFound)
	}
	return nil
}

// ResealSecrets seals every stored secret again under the sealer's current
// key (opening it with the current or the previous key), for a key
// rotation; it answers how many secrets it sealed again.
func (db *DB) ResealSecrets(ctx context.Context, sealer *Sealer) (int, error) {
	n := 0
	err := db.InTx(ctx, func(tx *Tx) error {
		rows, err := tx.tx.Query(ctx, `SELECT store_id, provider, secret_key_sealed, webhook_secret_sealed FROM payment_gateways FOR UPDATE`)
		if err != nil {
			return fmt.Errorf("read gateway secrets: %w", err)
		}
		type sealedRow struct {
			storeID   uuid.UUID
			provider  string
			key, hook []byte
		}
		gateways, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (sealedRow, error) {
			var s sealedRow
			return s, row.Scan(&s.storeID, &s.provider, &s.key, &s.hook)
		})
		if err != nil {
			return err
		}
		for _, g := range gateways {
			key, err := reseal(sealer, g.key, gatewayPurpose(g.storeID, g.provider, "secret_key"))
			if err != nil {
				return err
			}
			hook, err := reseal(sealer, g.hook, gatewayPurpose(g.storeID, g.provider, "webhook_secret"))
			if err != nil {
				return err
			}
			if _, err := tx.tx.Exec(ctx, `UPDATE payment_gateways SET secret_key_sealed = $3, webhook_secret_sealed = $4
				WHERE store_id = $1 AND provider = $2`, g.storeID, g.provider, key, hook); err != nil {
				return fmt.Errorf("reseal gateway secrets: %w", err)
			}
			n += 2
		}
		rows, err = tx.tx.Query(ctx, `SELECT store_id, order_id, client_secret_sealed FROM card_payments
			WHERE client_secret_sealed IS NOT NULL FOR UPDATE`)
		if err != nil {
			return fmt.Errorf("read client secrets: %w", err)
		}
		type secretRow struct {
			storeID, orderID uuid.UUID
			sealed           []byte
		}
		secrets, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (secretRow, error) {
			var s secretRow
			return s, row.Scan(&s.storeID, &s.orderID, &s.sealed)
		})
		if err != nil {
			return err
		}
		for _, c := range secrets {
			sealed, err := reseal(sealer, c.sealed, clientSecretPurpose(c.storeID, c.orderID))
			if err != nil {
				return err
			}
			if _, err := tx.tx.Exec(ctx, `UPDATE card_payments SET client_secret_sealed = $3 WHERE store_id = $1 AND order_id = $2`,
				c.storeID, c.orderID, sealed); err != nil {
				return fmt.Errorf("reseal client secret: %w", err)
			}
			n++
		}
		keys, err := tx.resealTaxSecrets(ctx, sealer)
		if err != nil {
			return err
		}
		n += keys
		cards, err := tx.resealGiftCardCodes(ctx, sealer)
		if err != nil {
			return err
		}
		n += cards
		channels, err := tx.resealChannelSecrets(ctx, sealer)
		n += channels
		return err
	})
	return n, err
}

func reseal(sealer *Sealer, sealed []byte, purpose string) ([]byte, error) {
	plain, err := sealer.Open(sealed, purpose)
	if err != nil {
		return nil, err
	}
	return sealer.Seal(plain, purpose)
}
