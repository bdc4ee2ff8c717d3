package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Gift cards in carts and orders (decisions §19): a cart or a merchant
// order names cards by their codes; each is found here (unknown, disabled,
// expired and spent are one refusal, 422 gift_card_codes[i] not_usable)
// and only its id goes on. A code that reaches no usable card counts as a
// miss of the storefront's balance lookup limit (per cart and network).

// errCheckoutGiftCardChanged is a checkout whose cards no longer pay what
// the cart showed: one was spent (by another checkout), disabled or
// expired meanwhile. The fresh cart goes with it (withFreshCart).
var errCheckoutGiftCardChanged = newError(http.StatusConflict, "GIFT_CARD_BALANCE_CHANGED",
	"A gift card of this cart changed since the cart was shown (spent, disabled or expired); check the cart's amount due and try again",
	"تغيّرت بطاقة هدايا في هذه السلة منذ عرضها (استُخدم رصيدها أو عُطّلت أو انتهت صلاحيتها)؛ راجع المبلغ المستحق في السلة وأعد المحاولة")

// cartGiftCardResponse is a card as it pays a cart.
type cartGiftCardResponse struct {
	Last4        string `json:"last4"`
	Applied      int64  `json:"applied"`
	BalanceAfter int64  `json:"balance_after"`
}

func newCartGiftCards(cards []storage.AppliedGiftCard) []cartGiftCardResponse {
	out := make([]cartGiftCardResponse, 0, len(cards))
	for _, c := range cards {
		out = append(out, cartGiftCardResponse{Last4: c.Last4, Applied: c.Applied, BalanceAfter: c.BalanceAfter})
	}
	return out
}

// giftCardIDs finds the cards codes name, in their order. limited counts
// each code that reaches no usable card against the storefront's miss
// limit (cartKey, when set, and the client's network).
func (s *Server) giftCardIDs(r *http.Request, storeID uuid.UUID, codes []string, limited bool, cartKey string) ([]uuid.UUID, error) {
	ids := make([]uuid.UUID, 0, len(codes))
	var fields []wire.FieldError
	for i, code := range codes {
		field := fmt.Sprintf("gift_card_codes[%d]", i)
		var slots []limitSlot
		if limited {
			// A cart's codes count only their misses, after the lookup: a
			// busy network's buyers applying real cards at once are not
			// refused (the balance check counts from admission instead).
			slots = []limitSlot{{s.giftCardMisses, "network:" + clientNetwork(r, s.cfg.TrustedProxies)}}
			if cartKey != "" {
				slots = append(slots, limitSlot{s.giftCardMisses, "cart:" + cartKey})
			}
			for _, slot := range slots {
				if v := slot.l.room(slot.key); !v.allowed {
					e := *errGiftCardLookupLimited
					e.Header = http.Header{"Retry-After": {retryAfterSeconds(slot.l.wait(v))}}
					return nil, &e
				}
			}
		}
		card, err := s.db.UsableGiftCard(r.Context(), s.cfg.Secrets, storeID, code)
		if errors.Is(err, storage.ErrGiftCardNotUsable) {
			for _, slot := range slots {
				slot.l.allow(slot.key)
			}
			fields = append(fields, wire.FieldError{Field: field, Code: "not_usable", Message: "reaches no gift card that can be used",
				MessageAr: wire.ArabicFieldMessage("not_usable")})
			continue
		}
		if err != nil {
			return nil, err
		}
		if slices.Contains(ids, card.ID) {
			fields = append(fields, wire.FieldError{Field: field, Code: "duplicate", Message: "names a gift card already in the list",
				MessageAr: wire.ArabicFieldMessage("duplicate")})
			continue
		}
		ids = append(ids, card.ID)
	}
	if len(fields) > 0 {
		return nil, validationError(fields)
	}
	return ids, nil
}

// cartGiftCardUpdate is the change a cart body's gift_card_codes make.
func (s *Server) cartGiftCardUpdate(r *http.Request, storeID uuid.UUID, cartID *uuid.UUID, codes wire.Optional[[]string]) (storage.Field[[]uuid.UUID], error) {
	f := storage.Field[[]uuid.UUID]{Set: codes.Set, Null: codes.Null}
	if !codes.Set || codes.Null {
		return f, nil
	}
	key := ""
	if cartID != nil {
		key = cartID.String()
	}
	ids, err := s.giftCardIDs(r, storeID, codes.Value, true, key)
	f.Value = ids
	return f, err
}
