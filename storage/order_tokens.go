package storage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"

	"github.com/google/uuid"
)

// IssueOrderToken mints the buyer's key to an order's proof upload (handed
// out once, at storefront checkout); only its hash is kept.
func (tx *Tx) IssueOrderToken(ctx context.Context, storeID, orderID uuid.UUID) (string, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", err
	}
	token := "svc_ot_" + base64.RawURLEncoding.EncodeToString(secret)
	sum := sha256.Sum256([]byte(token))
	if _, err := tx.tx.Exec(ctx, `INSERT INTO order_tokens (token_hash, store_id, order_id, created_at) VALUES ($1, $2, $3, $4)`,
		sum[:], storeID, orderID, tx.now()); err != nil {
		return "", fmt.Errorf("issue order token: %w", err)
	}
	return token, nil
}

// OrderTokenValid reports whether token opens the order's proof upload.
func (r reader) OrderTokenValid(ctx context.Context, storeID, orderID uuid.UUID, token string) (bool, error) {
	sum := sha256.Sum256([]byte(token))
	var ok bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM order_tokens WHERE token_hash = $1 AND store_id = $2 AND order_id = $3)`,
		sum[:], storeID, orderID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("check order token: %w", err)
	}
	return ok, nil
}
