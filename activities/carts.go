package activities

import (
	"context"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/orderemail"
)

// SweepAbandonedCartsInput asks for nothing: a sweep covers every store.
type SweepAbandonedCartsInput struct{}

// SweepAbandonedCartsResult counts the carts marked.
type SweepAbandonedCartsResult struct {
	Marked int
}

// UnmarshalJSON also reads the bare count of histories recorded before.
func (r *SweepAbandonedCartsResult) UnmarshalJSON(b []byte) error {
	type current SweepAbandonedCartsResult
	return decodeLegacy(b, (*current)(r), &r.Marked)
}

// SweepAbandonedCarts marks every store's inactive carts abandoned with the
// store's own threshold.
func (a *Activities) SweepAbandonedCarts(ctx context.Context, _ SweepAbandonedCartsInput) (SweepAbandonedCartsResult, error) {
	n, err := a.DB.SweepAbandonedCarts(ctx)
	return SweepAbandonedCartsResult{Marked: n}, err
}

// RecoveryEmailInput names the cart and the link back to it.
type RecoveryEmailInput struct {
	StoreID uuid.UUID
	CartID  uuid.UUID
	Link    string
}

// RecoveryEmailResult is what was sent, and when.
type RecoveryEmailResult struct {
	To     string
	SentAt time.Time
}

// SendRecoveryEmail mails the cart's contact a link back to the cart, in the
// store's language, and records the time. A cart without an email fails for
// good.
func (a *Activities) SendRecoveryEmail(ctx context.Context, in RecoveryEmailInput) (RecoveryEmailResult, error) {
	c, err := a.DB.FindCart(ctx, in.StoreID, in.CartID)
	if err != nil {
		return RecoveryEmailResult{}, err
	}
	if c.Email == nil {
		return RecoveryEmailResult{}, temporal.NewNonRetryableApplicationError("the cart has no email", "NO_EMAIL", nil)
	}
	settings, err := a.DB.FindStoreSettings(ctx, in.StoreID)
	if err != nil {
		return RecoveryEmailResult{}, err
	}
	email, err := orderemail.RenderRecovery(settings.Name, settings.DefaultLanguage, settings.Numerals, c, in.Link)
	if err != nil {
		return RecoveryEmailResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "RENDER", err)
	}
	if err := a.Mailer.Send(ctx, email.To, email.Subject, email.HTML); err != nil {
		return RecoveryEmailResult{}, err
	}
	at, err := a.DB.RecordRecoveryEmail(ctx, in.StoreID, in.CartID)
	if err != nil {
		return RecoveryEmailResult{}, err
	}
	return RecoveryEmailResult{To: email.To, SentAt: at}, nil
}
