package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Gift cards and store credit (decisions §19), scopes orders:read and
// orders:write, and the storefront's balance check.

var (
	errDuplicateGiftCardCode = newError(http.StatusConflict, "DUPLICATE_GIFT_CARD_CODE",
		"Another gift card of this store already has this code; choose another or leave code out to draw one",
		"لبطاقة هدايا أخرى في هذا المتجر الرمز نفسه؛ اختر رمزًا آخر أو اترك الرمز ليُولَّد تلقائيًا")
	errGiftCardDisabled = newError(http.StatusConflict, "GIFT_CARD_DISABLED",
		"This gift card is disabled, for good; issue a new one instead",
		"بطاقة الهدايا هذه معطّلة نهائيًا؛ أصدر بطاقة جديدة بدلًا منها")
	errGiftCardBalanceChanged = newError(http.StatusConflict, "GIFT_CARD_BALANCE_CHANGED",
		"The gift card's balance is not what you expected; read the card again and retry",
		"رصيد بطاقة الهدايا ليس كما توقعت؛ اقرأ البطاقة من جديد وأعد المحاولة")
	errInsufficientGiftCardBalance = newError(http.StatusConflict, "INSUFFICIENT_GIFT_CARD_BALANCE",
		"The gift card's balance is smaller than the amount taken",
		"رصيد بطاقة الهدايا أقل من المبلغ المطلوب خصمه")
	errGiftCardSendLimit = newError(http.StatusTooManyRequests, "RATE_LIMITED",
		"This gift card was sent 3 times in the last 24 hours; try again later",
		"أُرسلت بطاقة الهدايا هذه 3 مرات خلال الساعات الأربع والعشرين الأخيرة؛ حاول لاحقًا")
	errGiftCardLookupLimited = newError(http.StatusTooManyRequests, "RATE_LIMITED",
		"Too many gift card codes that reach no usable card from this cart or network in the last hour; try again later",
		"رموز بطاقات هدايا غير صالحة كثيرة من هذه السلة أو الشبكة خلال الساعة الأخيرة؛ حاول لاحقًا")
	errGiftCardAlreadyUsed = newError(http.StatusConflict, "GIFT_CARD_ALREADY_USED",
		"A gift card this refund would take back has been spent; refund by amount without the line",
		"أُنفق جزء من بطاقة هدايا يستردها هذا الاسترداد؛ استرد مبلغًا دون السطر")
	errGiftCardNotUsable = validationError([]wire.FieldError{{Field: "code", Code: "not_usable",
		Message: "reaches no gift card that can be used", MessageAr: wire.ArabicFieldMessage("not_usable")}})
)

// giftCardErrors answers the refusals of gift card writes.
func giftCardErrors(err error) *apiError {
	switch {
	case errors.Is(err, storage.ErrDuplicateGiftCardCode):
		return errDuplicateGiftCardCode
	case errors.Is(err, storage.ErrGiftCardDisabled):
		return errGiftCardDisabled
	case errors.Is(err, storage.ErrGiftCardBalanceChanged):
		return errGiftCardBalanceChanged
	case errors.Is(err, storage.ErrInsufficientGiftCardBalance):
		return errInsufficientGiftCardBalance
	case errors.Is(err, storage.ErrNoSecretsKey): // codes are found and kept under the secrets key
		return errSecretsKeyMissing
	case errors.Is(err, storage.ErrGiftCardAlreadyUsed):
		return errGiftCardAlreadyUsed
	case errors.Is(err, storage.ErrGiftCardSendLimit):
		e := *errGiftCardSendLimit
		e.Header = http.Header{"Retry-After": {"3600"}}
		return &e
	}
	return nil
}

type giftCardRecipientResponse struct {
	Name    string  `json:"name"`
	Phone   *string `json:"phone"`
	Email   *string `json:"email"`
	Message *string `json:"message"`
}

type giftCardResponse struct {
	ID             uuid.UUID                  `json:"id"`
	Kind           string                     `json:"kind"`
	Last4          *string                    `json:"last4"`
	Currency       string                     `json:"currency"`
	InitialValue   int64                      `json:"initial_value"`
	Balance        int64                      `json:"balance"`
	Status         string                     `json:"status"`
	ExpiresOn      *string                    `json:"expires_on"`
	CustomerID     *uuid.UUID                 `json:"customer_id"`
	Recipient      *giftCardRecipientResponse `json:"recipient"`
	Source         string                     `json:"source"`
	OrderID        *uuid.UUID                 `json:"order_id"`
	RefundID       *uuid.UUID                 `json:"refund_id"`
	Note           *string                    `json:"note"`
	DisabledAt     *time.Time                 `json:"disabled_at"`
	DisabledReason *string                    `json:"disabled_reason"`
	CreatedAt      time.Time                  `json:"created_at"`
	UpdatedAt      time.Time                  `json:"updated_at"`
}

func dateString(d *time.Time) *string {
	if d == nil {
		return nil
	}
	return new(d.Format(time.DateOnly))
}

func newGiftCardResponse(c storage.GiftCard) giftCardResponse {
	out := giftCardResponse{ID: c.ID, Kind: c.Kind, Last4: c.Last4, Currency: c.Currency, InitialValue: c.InitialValue, Balance: c.Balance,
		Status: c.Status, ExpiresOn: dateString(c.ExpiresOn), CustomerID: c.CustomerID, Source: c.Source, OrderID: c.OrderID,
		RefundID: c.RefundID, Note: c.Note, DisabledReason: c.DisabledReason, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
	if c.DisabledAt != nil {
		out.DisabledAt = new(c.DisabledAt.UTC())
	}
	if r := c.Recipient; r != nil {
		out.Recipient = &giftCardRecipientResponse{Name: r.Name, Phone: r.Phone, Email: r.Email, Message: r.Message}
	}
	return out
}

// giftCardWithCode is the create's answer, the only one that shows the
// code: null on an idempotent replay and for store credit.
type giftCardWithCode struct {
	giftCardResponse
	Code *string `json:"code"`
}

// giftCardActor is who wrote a ledger entry: a user, an app or the system.
type giftCardActor struct {
	Type string     `json:"type"`
	ID   *uuid.UUID `json:"id"`
}

type giftCardTransactionResponse struct {
	ID           uuid.UUID     `json:"id"`
	Kind         string        `json:"kind"`
	Amount       int64         `json:"amount"`
	BalanceAfter int64         `json:"balance_after"`
	OrderID      *uuid.UUID    `json:"order_id"`
	RefundID     *uuid.UUID    `json:"refund_id"`
	Reason       *string       `json:"reason"`
	Actor        giftCardActor `json:"actor"`
	CreatedAt    time.Time     `json:"created_at"`
}

func newGiftCardTransactionResponse(t storage.GiftCardTransaction) giftCardTransactionResponse {
	return giftCardTransactionResponse{ID: t.ID, Kind: t.Kind, Amount: t.Amount, BalanceAfter: t.BalanceAfter, OrderID: t.OrderID,
		RefundID: t.RefundID, Reason: t.Reason, Actor: giftCardActor{Type: t.Actor.Type, ID: t.Actor.ID}, CreatedAt: t.CreatedAt.UTC()}
}

// giftCardDetail is one card with its newest ledger entries.
type giftCardDetail struct {
	giftCardResponse
	Transactions []giftCardTransactionResponse `json:"transactions"`
}

// giftCardAdjustmentResponse is an adjustment's ledger entry with the card as it
// now is.
type giftCardAdjustmentResponse struct {
	giftCardTransactionResponse
	GiftCard giftCardResponse `json:"gift_card"`
}

// handleCreateGiftCard serves POST /stores/{store_id}/gift-cards: the only
// answer that carries the code. An idempotent replay answers the card
// without it, and the audit entry never holds it.
func (s *Server) handleCreateGiftCard() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateGiftCard](r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			card, code, err := tx.CreateGiftCard(r.Context(), s.cfg.Secrets, req.NewGiftCard(storeID))
			if err != nil {
				return nil, err
			}
			if req.Send != nil {
				_, err := tx.RecordGiftCardSend(r.Context(), storeID, card.ID, *req.Send)
				var invalid *storage.InvalidError
				if errors.As(err, &invalid) && invalid.Field == "channel" {
					return nil, &storage.InvalidError{Field: "send", Code: invalid.Code, Message: invalid.Message}
				}
				if err != nil {
					return nil, err
				}
			}
			resp := newGiftCardResponse(card)
			if code == "" { // store credit: no code in any answer
				return ok(giftCardWithCode{resp, nil}), nil
			}
			return secretAnswer{answer: ok(giftCardWithCode{resp, &code}), replay: ok(giftCardWithCode{resp, nil})}, nil
		})
	}
}

// handleListGiftCards serves GET /stores/{store_id}/gift-cards (?status,
// kind, customer_id, last4).
func (s *Server) handleListGiftCards() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := storage.GiftCardFilter{Page: storage.Page{Page: page, Limit: limit}, CustomerID: q.uuid("customer_id"), Last4: q.str("last4")}
		if v := q.enum("status", storage.GiftCardStatuses, ""); v != "" {
			f.Status = &v
		}
		if v := q.enum("kind", storage.GiftCardKinds, ""); v != "" {
			f.Kind = &v
		}
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindGiftCards(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		items := make([]giftCardResponse, 0, len(list))
		for _, c := range list {
			items = append(items, newGiftCardResponse(c))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleGetGiftCard serves GET /stores/{store_id}/gift-cards/{gift_card_id}
// with the card's last 50 ledger entries, newest first.
func (s *Server) handleGetGiftCard() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "gift_card_id")
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		card, err := s.db.FindGiftCard(r.Context(), storeID, id)
		if err != nil {
			return err
		}
		entries, err := s.db.FindGiftCardTransactions(r.Context(), storeID, id, storage.GiftCardTransactionsShown)
		if err != nil {
			return err
		}
		out := giftCardDetail{giftCardResponse: newGiftCardResponse(card), Transactions: make([]giftCardTransactionResponse, 0, len(entries))}
		for _, t := range entries {
			out.Transactions = append(out.Transactions, newGiftCardTransactionResponse(t))
		}
		respond(w, http.StatusOK, out)
		return nil
	}
}

// handleUpdateGiftCard serves PATCH /stores/{store_id}/gift-cards/{gift_card_id}.
func (s *Server) handleUpdateGiftCard() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "gift_card_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateGiftCard](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, newGiftCardResponse, func(tx *storage.Tx) (storage.GiftCard, error) {
			before, after, err := tx.UpdateGiftCard(r.Context(), storeIDFrom(r.Context()), id, req.Update())
			if err == nil {
				auditBefore(r.Context(), newGiftCardResponse(before))
			}
			return after, err
		})
	}
}

// handleAdjustGiftCard serves POST /stores/{store_id}/gift-cards/{gift_card_id}/adjustments.
func (s *Server) handleAdjustGiftCard() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "gift_card_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.AdjustGiftCard](r)
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			t, card, err := tx.AdjustGiftCard(r.Context(), storeIDFrom(r.Context()), id, *req.Amount, req.Reason, req.ExpectedBalance)
			if err != nil {
				return nil, err
			}
			return ok(giftCardAdjustmentResponse{newGiftCardTransactionResponse(t), newGiftCardResponse(card)}), nil
		})
	}
}

// handleDisableGiftCard serves POST /stores/{store_id}/gift-cards/{gift_card_id}/disable:
// final; disabling again answers the same card.
func (s *Server) handleDisableGiftCard() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "gift_card_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.DisableGiftCard](r)
		if err != nil {
			return err
		}
		reason := ""
		if req.Reason != nil {
			reason = *req.Reason
		}
		return writeView(s, w, r, http.StatusOK, newGiftCardResponse, func(tx *storage.Tx) (storage.GiftCard, error) {
			before, after, err := tx.DisableGiftCard(r.Context(), storeIDFrom(r.Context()), id, reason)
			if err == nil {
				auditBefore(r.Context(), newGiftCardResponse(before))
			}
			return after, err
		})
	}
}

type giftCardSendResponse struct {
	ID         uuid.UUID `json:"id"`
	GiftCardID uuid.UUID `json:"gift_card_id"`
	Channel    string    `json:"channel"`
	Status     string    `json:"status"`
	CreatedAt  time.Time `json:"created_at"`
}

// handleSendGiftCard serves POST /stores/{store_id}/gift-cards/{gift_card_id}/send:
// 202, the send written in the request's transaction; the email goes out
// after commit (gift-card-mail workflow), a WhatsApp message through the
// store's channel (gift-card-whatsapp workflow).
func (s *Server) handleSendGiftCard() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "gift_card_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.SendGiftCard](r)
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusAccepted, func(tx *storage.Tx) (any, error) {
			send, err := tx.RecordGiftCardSend(r.Context(), storeIDFrom(r.Context()), id, req.Channel)
			if err != nil {
				return nil, err
			}
			return ok(giftCardSendResponse{ID: send.ID, GiftCardID: send.GiftCardID, Channel: send.Channel, Status: "queued",
				CreatedAt: send.CreatedAt.UTC()}), nil
		})
	}
}

type giftCardBalanceResponse struct {
	Last4     string  `json:"last4"`
	Balance   int64   `json:"balance"`
	Currency  string  `json:"currency"`
	ExpiresOn *string `json:"expires_on"`
}

// giftCardMissesPerHour is how many codes that reach no usable card one
// cart, or one client network, may try in an hour before every lookup from
// it answers 429 (decisions §19).
const giftCardMissesPerHour = 10

// handleStorefrontGiftCardBalance serves POST
// /storefront/{subdomain}/gift-cards/balance: a buyer with a cart reads a
// card's balance by its code. Unknown, disabled, expired and depleted codes
// are one refusal (no probing); after 10 of them in an hour from the cart or
// the network every lookup from either answers 429 until the oldest miss is
// an hour old, hits included.
func (s *Server) handleStorefrontGiftCardBalance() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		token := r.Header.Get("X-Cart-Token")
		if token == "" {
			return errNotFound
		}
		cartID, err := s.db.CartOfToken(r.Context(), store.ID, token)
		if err != nil {
			return err
		}
		// Every lookup counts as a miss from its admission, so parallel
		// guesses cannot race past the limit; a hit gives its count back.
		giveBack, wait, admitted := reserveAll(limitSlot{s.giftCardMisses, "cart:" + cartID.String()},
			limitSlot{s.giftCardMisses, "network:" + clientNetwork(r, s.cfg.TrustedProxies)})
		if !admitted {
			e := *errGiftCardLookupLimited
			e.Header = http.Header{"Retry-After": {retryAfterSeconds(wait)}}
			return &e
		}
		req, err := wire.Decode[request.GiftCardBalance](r)
		if err != nil {
			giveBack() // a malformed body is not a guess
			return err
		}
		card, err := s.db.FindGiftCardByCode(r.Context(), s.cfg.Secrets, store.ID, req.Code)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			giveBack()
			return err
		}
		if err != nil || card.Status != storage.GiftCardActive {
			return errGiftCardNotUsable
		}
		giveBack()
		respond(w, http.StatusOK, giftCardBalanceResponse{Last4: *card.Last4, Balance: card.Balance, Currency: card.Currency,
			ExpiresOn: dateString(card.ExpiresOn)})
		return nil
	}
}
