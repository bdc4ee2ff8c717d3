package storage

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Gift cards and store credit (decisions §19, migration 0060). A balance
// moves only by a ledger entry written in the move's transaction; the
// checkout's debit is one conditional UPDATE per card, so concurrent
// redemptions never overspend. The code is stored only as a digest (to
// find the card) and sealed (to send it again); a store_credit card has
// no code at all.

// Gift card kinds.
const (
	GiftCardKindGiftCard    = "gift_card"
	GiftCardKindStoreCredit = "store_credit"
)

// GiftCardKinds lists the kinds a card may be.
var GiftCardKinds = []string{GiftCardKindGiftCard, GiftCardKindStoreCredit}

// Gift card statuses: only disabled is stored; the others are computed.
const (
	GiftCardActive   = "active"
	GiftCardDisabled = "disabled"
	GiftCardExpired  = "expired"
	GiftCardDepleted = "depleted"
)

// GiftCardStatuses lists every status a card list filters on.
var GiftCardStatuses = []string{GiftCardActive, GiftCardDisabled, GiftCardExpired, GiftCardDepleted}

// Gift card sources: where a card came from.
const (
	GiftCardSourceManual   = "manual"
	GiftCardSourcePurchase = "purchase"
	GiftCardSourceRefund   = "refund"
	GiftCardSourceGoodwill = "goodwill"
)

// Ledger entry kinds.
const (
	GiftCardIssue   = "issue"   // the card's initial value
	GiftCardRedeem  = "redeem"  // an order paid with the card
	GiftCardReverse = "reverse" // a redemption given back (a cancelled order)
	GiftCardCredit  = "credit"  // money added: a merchant adjustment, a refund
	GiftCardDebit   = "debit"   // money taken by a merchant adjustment
)

// GiftCardAdjustmentReasons are why a merchant adjusts a balance.
var GiftCardAdjustmentReasons = []string{"goodwill", "correction", "fraud"}

// GiftCardSendChannels are how a card's code reaches its recipient.
var GiftCardSendChannels = []string{"email", "whatsapp"}

// MaxGiftCardSendsPerDay is how many sends a card takes in 24 hours.
const MaxGiftCardSendsPerDay = 3

// GiftCardTransactionsShown is how many ledger entries a card's read shows.
const GiftCardTransactionsShown = 50

// Refusals of gift card writes.
var (
	ErrDuplicateGiftCardCode       = errors.New("duplicate gift card code")
	ErrGiftCardDisabled            = errors.New("gift card disabled")
	ErrGiftCardBalanceChanged      = errors.New("gift card balance changed")
	ErrInsufficientGiftCardBalance = errors.New("insufficient gift card balance")
	// ErrGiftCardSendLimit: the card was sent MaxGiftCardSendsPerDay times
	// in the last 24 hours.
	ErrGiftCardSendLimit = errors.New("gift card send limit")
)

// GiftCardRecipient is whom a card is for.
type GiftCardRecipient struct {
	Name    string  `json:"name"`
	Phone   *string `json:"phone,omitempty"`
	Email   *string `json:"email,omitempty"`
	Message *string `json:"message,omitempty"`
}

// GiftCard is a stored card, its status computed at the database's clock
// in the store's time zone.
type GiftCard struct {
	ID             uuid.UUID
	StoreID        uuid.UUID
	Kind           string
	Last4          *string
	Currency       string
	InitialValue   int64
	Balance        int64
	Status         string
	ExpiresOn      *time.Time // a date: midnight UTC
	CustomerID     *uuid.UUID
	Recipient      *GiftCardRecipient
	Source         string
	OrderID        *uuid.UUID
	RefundID       *uuid.UUID
	Note           *string
	DisabledAt     *time.Time
	DisabledReason *string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// GiftCardTransaction is one ledger entry of a card.
type GiftCardTransaction struct {
	ID           uuid.UUID
	GiftCardID   uuid.UUID
	Kind         string
	Amount       int64 // signed: what the entry added to the balance
	BalanceAfter int64
	OrderID      *uuid.UUID
	RefundID     *uuid.UUID
	Reason       *string
	Actor        Actor
	CreatedAt    time.Time
}

// GiftCardCodeAlphabet is what a code is made of: no 0/O, no 1/I/L, so a
// code read aloud or copied by hand is not misread.
const GiftCardCodeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// GiftCardCodeLength is how many characters a code has.
const GiftCardCodeLength = 16

// GenerateGiftCardCode draws a code from crypto/rand, each character
// uniform over the alphabet.
func GenerateGiftCardCode() (string, error) {
	var b strings.Builder
	limit := big.NewInt(int64(len(GiftCardCodeAlphabet)))
	for range GiftCardCodeLength {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return "", fmt.Errorf("generate gift card code: %w", err)
		}
		b.WriteByte(GiftCardCodeAlphabet[n.Int64()])
	}
	return b.String(), nil
}

// NormalizeGiftCardCode is a typed code as it compares: trimmed, NFKC,
// Arabic-Indic and Persian digits as ASCII (as discount codes,
// NormalizeDiscountCode), spaces and dashes of any kind dropped, upper
// case. "abcd-efgh jkmn-pq٢٣" and "ABCDEFGHJKMNPQ23" are the same code.
func NormalizeGiftCardCode(typed string) string {
	s := NormalizeDiscountCode(typed)
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.Is(unicode.Pd, r) {
			return -1
		}
		return r
	}, s)
	return strings.ToUpper(s)
}

// ValidGiftCardCode reports whether a normalised code is one a card may
// have: GiftCardCodeLength characters of GiftCardCodeAlphabet.
func ValidGiftCardCode(code string) bool {
	if len(code) != GiftCardCodeLength {
		return false
	}
	for i := range len(code) {
		if strings.IndexByte(GiftCardCodeAlphabet, code[i]) < 0 {
			return false
		}
	}
	return true
}

// FormatGiftCardCode prints a code in groups of four: XXXX-XXXX-XXXX-XXXX.
func FormatGiftCardCode(code string) string {
	var b strings.Builder
	for i := 0; i < len(code); i += 4 {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(code[i:min(i+4, len(code))])
	}
	return b.String()
}

func giftCardCodePurpose(storeID uuid.UUID) string { return "gift_cards/" + storeID.String() + "/code" }

// storeTodaySQL is the store's date now, in its time zone (the one its
// reports use: the chosen one, else the currency's default), for the store
// whose id is the SQL expression storeID.
func storeTodaySQL(storeID string) string {
	var zones strings.Builder
	currencies := make([]string, 0, len(currencyTimezones))
	for c := range currencyTimezones {
		currencies = append(currencies, c)
	}
	slices.Sort(currencies)
	for _, c := range currencies {
		fmt.Fprintf(&zones, " WHEN '%s' THEN '%s'", c, currencyTimezones[c])
	}
	return `(SELECT (now() AT TIME ZONE COALESCE(st.timezone, CASE st.currency` + zones.String() + ` ELSE 'UTC' END))::date
		FROM stores st WHERE st.id = ` + storeID + `)`
}

// giftCardStatusSQL computes a card's status; g is the card, today the
// store's date.
const giftCardStatusSQL = `CASE WHEN g.disabled_at IS NOT NULL THEN 'disabled'
	WHEN g.expires_on IS NOT NULL AND g.expires_on < t.today THEN 'expired'
	WHEN g.balance = 0 THEN 'depleted' ELSE 'active' END`

var giftCardFrom = `FROM gift_cards g CROSS JOIN LATERAL (SELECT ` + storeTodaySQL("g.store_id") + ` AS today) t`

const giftCardColumns = `g.id, g.store_id, g.kind, g.last4, g.currency, g.initial_value, g.balance, ` + giftCardStatusSQL + `, g.expires_on,
	g.customer_id, g.recipient, g.source, g.order_id, g.refund_id, g.note, g.disabled_at, g.disabled_reason, g.created_at, g.updated_at`

func scanGiftCard(row pgx.Row) (GiftCard, error) {
	var (
		c         GiftCard
		recipient []byte
	)
	err := row.Scan(&c.ID, &c.StoreID, &c.Kind, &c.Last4, &c.Currency, &c.InitialValue, &c.Balance, &c.Status, &c.ExpiresOn,
		&c.CustomerID, &recipient, &c.Source, &c.OrderID, &c.RefundID, &c.Note, &c.DisabledAt, &c.DisabledReason, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return GiftCard{}, err
	}
	if recipient != nil {
		c.Recipient = &GiftCardRecipient{}
		if err := json.Unmarshal(recipient, c.Recipient); err != nil {
			return GiftCard{}, fmt.Errorf("read gift card recipient: %w", err)
		}
	}
	return c, nil
}

func recipientJSON(r *GiftCardRecipient) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	return json.Marshal(r)
}

// NewGiftCard is a card to issue.
type NewGiftCard struct {
	StoreID uuid.UUID
	Kind    string
	// Code is the normalised code the merchant chose; empty draws one. A
	// store_credit card takes none.
	Code         string
	InitialValue int64
	ExpiresOn    *time.Time
	CustomerID   *uuid.UUID
	Recipient    *GiftCardRecipient
	Source       string
	OrderID      *uuid.UUID
	RefundID     *uuid.UUID
	Note         *string
}

// CreateGiftCard issues a card with its `issue` ledger entry and answers it
// with its code (printed XXXX-XXXX-XXXX-XXXX; "" for store credit), which
// nothing answers again. 422 `code` invalid, `customer_id` not_found or
// required (store credit), `expires_on` past; ErrDuplicateGiftCardCode.
func (tx *Tx) CreateGiftCard(ctx context.Context, sealer *Sealer, in NewGiftCard) (GiftCard, string, error) {
	if in.Kind == "" {
		in.Kind = GiftCardKindGiftCard
	}
	if in.Source == "" {
		in.Source = GiftCardSourceManual
	}
	switch {
	case in.Kind == GiftCardKindStoreCredit && in.CustomerID == nil:
		return GiftCard{}, "", &InvalidError{Field: "customer_id", Code: "required", Message: "store credit belongs to a customer"}
	case in.Kind == GiftCardKindStoreCredit && in.Code != "":
		return GiftCard{}, "", &InvalidError{Field: "code", Code: "invalid", Message: "store credit has no code"}
	case in.Code != "" && !ValidGiftCardCode(in.Code):
		return GiftCard{}, "", &InvalidError{Field: "code", Code: "invalid",
			Message: fmt.Sprintf("must be %d characters of %s (spaces and dashes are ignored)", GiftCardCodeLength, GiftCardCodeAlphabet)}
	}
	if err := tx.checkGiftCardCustomer(ctx, in.StoreID, in.CustomerID); err != nil {
		return GiftCard{}, "", err
	}
	if in.ExpiresOn != nil {
		var past bool
		if err := tx.tx.QueryRow(ctx, `SELECT $2::date < `+storeTodaySQL("$1"), in.StoreID, *in.ExpiresOn).Scan(&past); err != nil {
			return GiftCard{}, "", fmt.Errorf("check gift card expiry: %w", err)
		}
		if past {
			return GiftCard{}, "", &InvalidError{Field: "expires_on", Code: "past", Message: "must be today or later in the store's time zone"}
		}
	}
	recipient, err := recipientJSON(in.Recipient)
	if err != nil {
		return GiftCard{}, "", err
	}
	for attempt := 0; ; attempt++ {
		code := in.Code
		if in.Kind == GiftCardKindGiftCard && code == "" {
			if code, err = GenerateGiftCardCode(); err != nil {
				return GiftCard{}, "", err
			}
		}
		var digest, sealed []byte
		var last4 *string
		if code != "" {
			if digest, err = sealer.Digest(code, giftCardCodePurpose(in.StoreID)); err != nil {
				return GiftCard{}, "", err
			}
			if sealed, err = sealer.Seal(code, giftCardCodePurpose(in.StoreID)); err != nil {
				return GiftCard{}, "", err
			}
			last4 = new(code[len(code)-4:])
		}
		id, now := NewID(), tx.now()
		var card GiftCard
		err := tx.savepoint(ctx, true, func(sub *Tx) error {
			_, err := sub.tx.Exec(ctx, `INSERT INTO gift_cards (id, store_id, kind, code_hmac, code_sealed, last4, currency, initial_value,
					balance, expires_on, customer_id, recipient, source, order_id, refund_id, note, created_at, updated_at)
				SELECT $1, $2, $3, $4, $5, $6, s.currency, $7, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15 FROM stores s WHERE s.id = $2`,
				id, in.StoreID, in.Kind, digest, sealed, last4, in.InitialValue, in.ExpiresOn, in.CustomerID, recipient, in.Source,
				in.OrderID, in.RefundID, in.Note, now)
			return err
		})
		if isUniqueViolation(err, "gift_cards_store_id_code_hmac_key") {
			if in.Code != "" || attempt >= 3 {
				return GiftCard{}, "", fmt.Errorf("create gift card: %w", ErrDuplicateGiftCardCode)
			}
			continue // a drawn code met another: 31^16 makes this all but impossible
		}
		if err != nil {
			return GiftCard{}, "", fmt.Errorf("create gift card: %w", err)
		}
		if in.InitialValue > 0 {
			if _, err := tx.writeGiftCardEntry(ctx, in.StoreID, id, GiftCardIssue, in.InitialValue, in.InitialValue,
				GiftCardMove{OrderID: in.OrderID, RefundID: in.RefundID}); err != nil {
				return GiftCard{}, "", err
			}
		}
		if card, err = tx.FindGiftCard(ctx, in.StoreID, id); err != nil {
			return GiftCard{}, "", err
		}
		if code == "" {
			return card, "", nil
		}
		return card, FormatGiftCardCode(code), nil
	}
}

func (tx *Tx) checkGiftCardCustomer(ctx context.Context, storeID uuid.UUID, customerID *uuid.UUID) error {
	if customerID == nil {
		return nil
	}
	var found bool
	if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM customers WHERE store_id = $1 AND id = $2)`, storeID, *customerID).
		Scan(&found); err != nil {
		return fmt.Errorf("check gift card customer: %w", err)
	}
	if !found {
		return &InvalidError{Field: "customer_id", Code: "not_found", Message: "no customer of this store has this id"}
	}
	return nil
}

// GiftCardFilter narrows a card list.
type GiftCardFilter struct {
	Page
	Status     *string
	Kind       *string
	CustomerID *uuid.UUID
	Last4      *string
}

// FindGiftCards lists a store's cards, newest first.
func (r reader) FindGiftCards(ctx context.Context, storeID uuid.UUID, f GiftCardFilter) ([]GiftCard, int, error) {
	from, args := giftCardFrom+" WHERE g.store_id = $1", []any{storeID}
	add := func(cond string, v any) {
		args = append(args, v)
		from += fmt.Sprintf(" AND "+cond, len(args))
	}
	if f.Status != nil {
		add("("+giftCardStatusSQL+") = $%d", *f.Status)
	}
	if f.Kind != nil {
		add("g.kind = $%d", *f.Kind)
	}
	if f.CustomerID != nil {
		add("g.customer_id = $%d", *f.CustomerID)
	}
	if f.Last4 != nil {
		add("g.last4 = $%d", NormalizeGiftCardCode(*f.Last4))
	}
	return findPage(ctx, r, "gift cards", listQuery{columns: giftCardColumns, from: from, args: args, orderBy: "g.created_at DESC, g.id DESC"},
		f.Limit, int(f.Offset()), func(row pgx.CollectableRow) (GiftCard, error) { return scanGiftCard(row) })
}

// FindGiftCard reads one card.
func (r reader) FindGiftCard(ctx context.Context, storeID, id uuid.UUID) (GiftCard, error) {
	c, err := scanGiftCard(r.q.QueryRow(ctx, `SELECT `+giftCardColumns+` `+giftCardFrom+` WHERE g.store_id = $1 AND g.id = $2`, storeID, id))
	if err != nil {
		return GiftCard{}, notFoundIfNoRows(err, "find gift card "+id.String())
	}
	return c, nil
}

// FindGiftCardByCode finds the card a typed code reaches (normalised here),
// whatever its status; ErrNotFound when none does.
func (r reader) FindGiftCardByCode(ctx context.Context, sealer *Sealer, storeID uuid.UUID, typed string) (GiftCard, error) {
	code := NormalizeGiftCardCode(typed)
	if !ValidGiftCardCode(code) {
		return GiftCard{}, fmt.Errorf("find gift card by code: %w", ErrNotFound)
	}
	digests, err := sealer.Digests(code, giftCardCodePurpose(storeID))
	if err != nil {
		return GiftCard{}, err
	}
	c, err := scanGiftCard(r.q.QueryRow(ctx, `SELECT `+giftCardColumns+` `+giftCardFrom+`
		WHERE g.store_id = $1 AND g.code_hmac = ANY($2) AND g.kind = 'gift_card'`, storeID, digests))
	if err != nil {
		return GiftCard{}, notFoundIfNoRows(err, "find gift card by code")
	}
	return c, nil
}

const giftCardTransactionColumns = `id, gift_card_id, kind, amount, balance_after, order_id, refund_id, reason, actor, created_at`

func scanGiftCardTransaction(row pgx.Row) (GiftCardTransaction, error) {
	var (
		t     GiftCardTransaction
		actor []byte
	)
	if err := row.Scan(&t.ID, &t.GiftCardID, &t.Kind, &t.Amount, &t.BalanceAfter, &t.OrderID, &t.RefundID, &t.Reason, &actor,
		&t.CreatedAt); err != nil {
		return GiftCardTransaction{}, err
	}
	if err := json.Unmarshal(actor, &t.Actor); err != nil {
		return GiftCardTransaction{}, fmt.Errorf("read gift card entry actor: %w", err)
	}
	return t, nil
}

// FindGiftCardTransactions lists a card's newest ledger entries, at most
// limit, newest first.
func (r reader) FindGiftCardTransactions(ctx context.Context, storeID, cardID uuid.UUID, limit int) ([]GiftCardTransaction, error) {
	rows, err := r.q.Query(ctx, `SELECT `+giftCardTransactionColumns+` FROM gift_card_transactions
		WHERE store_id = $1 AND gift_card_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`, storeID, cardID, limit)
	if err != nil {
		return nil, fmt.Errorf("find gift card transactions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (GiftCardTransaction, error) { return scanGiftCardTransaction(row) })
	if err != nil {
		return nil, fmt.Errorf("find gift card transactions: %w", err)
	}
	return out, nil
}

// GiftCardMove is what a ledger entry names beside its amount.
type GiftCardMove struct {
	OrderID  *uuid.UUID
	RefundID *uuid.UUID
	Reason   *string
}

func (tx *Tx) writeGiftCardEntry(ctx context.Context, storeID, cardID uuid.UUID, kind string, amount, balanceAfter int64,
	m GiftCardMove) (GiftCardTransaction, error) {
	actor, err := json.Marshal(tx.movementActor())
	if err != nil {
		return GiftCardTransaction{}, err
	}
	t, err := scanGiftCardTransaction(tx.tx.QueryRow(ctx, `INSERT INTO gift_card_transactions (id, store_id, gift_card_id, kind, amount,
			balance_after, order_id, refund_id, reason, actor, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING `+giftCardTransactionColumns,
		NewID(), storeID, cardID, kind, amount, balanceAfter, m.OrderID, m.RefundID, m.Reason, actor, tx.now()))
	if err != nil {
		return GiftCardTransaction{}, fmt.Errorf("write gift card entry: %w", err)
	}
	return t, nil
}

// debitGiftCardSQL is §19's one conditional UPDATE of a debit ($1 store,
// $2 card, $3 amount, $4 now): no row when the card is disabled, expired in
// the store's time zone or holds less than the amount.
var debitGiftCardSQL = `UPDATE gift_cards SET balance = balance - $3, updated_at = $4
		WHERE store_id = $1 AND id = $2 AND disabled_at IS NULL AND balance >= $3
			AND (expires_on IS NULL OR expires_on >= ` + storeTodaySQL("$1") + `)`

// DebitGiftCard takes amount (> 0) from one card in the caller's
// transaction, the checkout's way (decisions §19): one conditional UPDATE
// that succeeds only while the card is not disabled, not expired in the
// store's time zone and holds the amount, then the `redeem` ledger entry.
// When the UPDATE finds no such card it answers ErrGiftCardBalanceChanged
// and writes nothing; the caller rolls back. Callers that debit several
// cards do so in card id order.
func (tx *Tx) DebitGiftCard(ctx context.Context, storeID, cardID uuid.UUID, amount int64, m GiftCardMove) (GiftCardTransaction, error) {
	if amount <= 0 {
		return GiftCardTransaction{}, fmt.Errorf("debit gift card: amount %d: %w", amount, ErrInvalid)
	}
	var balance int64
	err := tx.tx.QueryRow(ctx, debitGiftCardSQL+` RETURNING balance`, storeID, cardID, amount, tx.now()).Scan(&balance)
	if errors.Is(err, pgx.ErrNoRows) {
		return GiftCardTransaction{}, fmt.Errorf("debit gift card %s: %w", cardID, ErrGiftCardBalanceChanged)
	}
	if err != nil {
		return GiftCardTransaction{}, fmt.Errorf("debit gift card: %w", err)
	}
	return tx.writeGiftCardEntry(ctx, storeID, cardID, GiftCardRedeem, -amount, balance, m)
}

// CreditGiftCard adds amount (> 0) to one card in the caller's transaction
// and writes its ledger entry of kind GiftCardReverse (a redemption given
// back) or GiftCardCredit (a refund to the card). It credits whatever the
// card's status: money that belongs to the card goes back to it, and the
// caller decides whether a disabled card may receive it.
func (tx *Tx) CreditGiftCard(ctx context.Context, storeID, cardID uuid.UUID, kind string, amount int64, m GiftCardMove) (GiftCardTransaction, error) {
	if amount <= 0 || (kind != GiftCardReverse && kind != GiftCardCredit) {
		return GiftCardTransaction{}, fmt.Errorf("credit gift card: %s %d: %w", kind, amount, ErrInvalid)
	}
	var balance int64
	err := tx.tx.QueryRow(ctx, `UPDATE gift_cards SET balance = balance + $3, updated_at = $4 WHERE store_id = $1 AND id = $2
		RETURNING balance`, storeID, cardID, amount, tx.now()).Scan(&balance)
	if err != nil {
		return GiftCardTransaction{}, notFoundIfNoRows(err, "credit gift card "+cardID.String())
	}
	return tx.writeGiftCardEntry(ctx, storeID, cardID, kind, amount, balance, m)
}

// lockGiftCard holds a card until the transaction ends and reads it.
func (tx *Tx) lockGiftCard(ctx context.Context, storeID, id uuid.UUID) (GiftCard, error) {
	if _, err := tx.tx.Exec(ctx, `SELECT 1 FROM gift_cards WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id); err != nil {
		return GiftCard{}, fmt.Errorf("lock gift card: %w", err)
	}
	return tx.FindGiftCard(ctx, storeID, id)
}

// AdjustGiftCard moves a card's balance by a merchant's signed amount (a
// `credit` or `debit` entry) for reason. It refuses a disabled card
// (ErrGiftCardDisabled), a balance other than expected when expected is set
// (ErrGiftCardBalanceChanged) and a debit beyond the balance
// (ErrInsufficientGiftCardBalance). An expired card may be adjusted: the
// merchant's correction is not a redemption.
func (tx *Tx) AdjustGiftCard(ctx context.Context, storeID, id uuid.UUID, amount int64, reason string, expected *int64) (GiftCardTransaction, GiftCard, error) {
	card, err := tx.lockGiftCard(ctx, storeID, id)
	if err != nil {
		return GiftCardTransaction{}, GiftCard{}, err
	}
	switch {
	case card.DisabledAt != nil:
		return GiftCardTransaction{}, GiftCard{}, fmt.Errorf("adjust gift card %s: %w", id, ErrGiftCardDisabled)
	case expected != nil && *expected != card.Balance:
		return GiftCardTransaction{}, GiftCard{}, fmt.Errorf("adjust gift card %s: %w", id, ErrGiftCardBalanceChanged)
	case card.Balance+amount < 0:
		return GiftCardTransaction{}, GiftCard{}, fmt.Errorf("adjust gift card %s: %w", id, ErrInsufficientGiftCardBalance)
	}
	kind := GiftCardCredit
	if amount < 0 {
		kind = GiftCardDebit
	}
	var balance int64
	if err := tx.tx.QueryRow(ctx, `UPDATE gift_cards SET balance = balance + $3, updated_at = $4 WHERE store_id = $1 AND id = $2
		RETURNING balance`, storeID, id, amount, tx.now()).Scan(&balance); err != nil {
		return GiftCardTransaction{}, GiftCard{}, fmt.Errorf("adjust gift card: %w", err)
	}
	t, err := tx.writeGiftCardEntry(ctx, storeID, id, kind, amount, balance, GiftCardMove{Reason: &reason})
	if err != nil {
		return GiftCardTransaction{}, GiftCard{}, err
	}
	card, err = tx.FindGiftCard(ctx, storeID, id)
	return t, card, err
}

// GiftCardUpdate is a PATCH of a card; unset fields stay.
type GiftCardUpdate struct {
	ExpiresOn  Field[time.Time]
	CustomerID Field[uuid.UUID]
	Recipient  Field[GiftCardRecipient]
	Note       Field[string]
}

// UpdateGiftCard changes a card's expiry (a past date expires it at
// once), customer, recipient or note, and answers it as it was and as it
// is. A disabled card is final (ErrGiftCardDisabled); store credit keeps a
// customer (422 `customer_id` required).
func (tx *Tx) UpdateGiftCard(ctx context.Context, storeID, id uuid.UUID, upd GiftCardUpdate) (before, after GiftCard, err error) {
	before, err = tx.lockGiftCard(ctx, storeID, id)
	if err != nil {
		return GiftCard{}, GiftCard{}, err
	}
	if before.DisabledAt != nil {
		return GiftCard{}, GiftCard{}, fmt.Errorf("update gift card %s: %w", id, ErrGiftCardDisabled)
	}
	if upd.CustomerID.Set {
		if upd.CustomerID.Null && before.Kind == GiftCardKindStoreCredit {
			return GiftCard{}, GiftCard{}, &InvalidError{Field: "customer_id", Code: "required", Message: "store credit belongs to a customer"}
		}
		if err := tx.checkGiftCardCustomer(ctx, storeID, upd.CustomerID.ptr()); err != nil {
			return GiftCard{}, GiftCard{}, err
		}
	}
	var recipient []byte
	if upd.Recipient.Set {
		if recipient, err = recipientJSON(upd.Recipient.ptr()); err != nil {
			return GiftCard{}, GiftCard{}, err
		}
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE gift_cards SET
			expires_on = CASE WHEN $3 THEN $4 ELSE expires_on END,
			customer_id = CASE WHEN $5 THEN $6 ELSE customer_id END,
			recipient = CASE WHEN $7 THEN $8::jsonb ELSE recipient END,
			note = CASE WHEN $9 THEN $10 ELSE note END,
			updated_at = $11
		WHERE store_id = $1 AND id = $2`, storeID, id, upd.ExpiresOn.Set, upd.ExpiresOn.ptr(), upd.CustomerID.Set, upd.CustomerID.ptr(),
		upd.Recipient.Set, recipient, upd.Note.Set, upd.Note.ptr(), tx.now()); err != nil {
		return GiftCard{}, GiftCard{}, fmt.Errorf("update gift card: %w", err)
	}
	after, err = tx.FindGiftCard(ctx, storeID, id)
	return before, after, err
}

// DisableGiftCard disables a card for good; a card already disabled is
// answered as it is (its first reason and time kept).
func (tx *Tx) DisableGiftCard(ctx context.Context, storeID, id uuid.UUID, reason string) (before, after GiftCard, err error) {
	before, err = tx.lockGiftCard(ctx, storeID, id)
	if err != nil {
		return GiftCard{}, GiftCard{}, err
	}
	if before.DisabledAt != nil {
		return before, before, nil
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE gift_cards SET disabled_at = $3, disabled_reason = $4, updated_at = $3
		WHERE store_id = $1 AND id = $2`, storeID, id, tx.now(), reason); err != nil {
		return GiftCard{}, GiftCard{}, fmt.Errorf("disable gift card: %w", err)
	}
	after, err = tx.FindGiftCard(ctx, storeID, id)
	return before, after, err
}

// GiftCardSend is one send of a card's code to its recipient.
type GiftCardSend struct {
	ID         uuid.UUID
	StoreID    uuid.UUID
	GiftCardID uuid.UUID
	Channel    string
	Address    string
	CreatedAt  time.Time
}

// RecordGiftCardSend writes the intent to send a card's code to its
// recipient over channel, in the caller's transaction: an email is started
// by the dispatcher after commit, a whatsapp row waits for the WhatsApp
// channel (issue 54). It refuses store credit (no code: 422 `channel`
// not_sendable), a disabled card, a recipient without that contact (422
// `channel` no_contact) and a fourth send within 24 hours
// (ErrGiftCardSendLimit, with the time the oldest of them leaves the window).
func (tx *Tx) RecordGiftCardSend(ctx context.Context, storeID, id uuid.UUID, channel string) (GiftCardSend, error) {
	card, err := tx.lockGiftCard(ctx, storeID, id)
	if err != nil {
		return GiftCardSend{}, err
	}
	var address *string
	if card.Recipient != nil {
		address = card.Recipient.Email
		if channel == "whatsapp" {
			address = card.Recipient.Phone
		}
	}
	switch {
	case card.Kind == GiftCardKindStoreCredit:
		return GiftCardSend{}, &InvalidError{Field: "channel", Code: "not_sendable", Message: "store credit has no code to send"}
	case card.DisabledAt != nil:
		return GiftCardSend{}, fmt.Errorf("send gift card %s: %w", id, ErrGiftCardDisabled)
	case address == nil || *address == "":
		return GiftCardSend{}, &InvalidError{Field: "channel", Code: "no_contact",
			Message: "the card's recipient has no " + map[string]string{"email": "email", "whatsapp": "phone"}[channel]}
	}
	now := tx.now()
	var sent int
	if err := tx.tx.QueryRow(ctx, `SELECT count(*) FROM gift_card_sends WHERE store_id = $1 AND gift_card_id = $2 AND created_at > $3`,
		storeID, id, now.Add(-24*time.Hour)).Scan(&sent); err != nil {
		return GiftCardSend{}, fmt.Errorf("count gift card sends: %w", err)
	}
	if sent >= MaxGiftCardSendsPerDay {
		return GiftCardSend{}, fmt.Errorf("send gift card %s: %w", id, ErrGiftCardSendLimit)
	}
	s := GiftCardSend{ID: NewID(), StoreID: storeID, GiftCardID: id, Channel: channel, Address: *address, CreatedAt: now}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO gift_card_sends (id, store_id, gift_card_id, channel, address, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, s.ID, storeID, id, channel, s.Address, now); err != nil {
		return GiftCardSend{}, fmt.Errorf("record gift card send: %w", err)
	}
	return s, tx.notifyDispatcher(ctx)
}

// GiftCardSendDue is an email send without its workflow yet.
type GiftCardSendDue struct {
	ID             uuid.UUID
	StoreID        uuid.UUID
	StoreSubdomain string
	Channel        string // email or whatsapp
}

// FindGiftCardSendsDue lists the gift card sends to start, by email and
// by WhatsApp.
func (r reader) FindGiftCardSendsDue(ctx context.Context, limit int) ([]GiftCardSendDue, error) {
	rows, err := r.q.Query(ctx, `SELECT m.id, m.store_id, s.subdomain, m.channel FROM gift_card_sends m JOIN stores s ON s.id = m.store_id
		WHERE NOT m.started ORDER BY m.created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find gift card sends: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[GiftCardSendDue])
}

// MarkGiftCardSendStarted records that a send has its workflow.
func (db *DB) MarkGiftCardSendStarted(ctx context.Context, storeID, id uuid.UUID) error {
	if _, err := db.pool.Exec(ctx, `UPDATE gift_card_sends SET started = true WHERE store_id = $1 AND id = $2`, storeID, id); err != nil {
		return fmt.Errorf("mark gift card send started: %w", err)
	}
	return nil
}

// GiftCardMail is what a gift card's email says, the code open: only the
// activity that sends it reads this.
type GiftCardMail struct {
	To            string
	RecipientName string
	Message       *string
	Code          string // XXXX-XXXX-XXXX-XXXX
	Balance       int64
	Currency      string
	ExpiresOn     *time.Time
	StoreName     string
	StoreLanguage string
	StoreNumerals string
	Subdomain     string
}

// FindGiftCardMail reads a send with its card's code unsealed.
func (r reader) FindGiftCardMail(ctx context.Context, sealer *Sealer, storeID, sendID uuid.UUID) (GiftCardMail, error) {
	var (
		m         GiftCardMail
		sealed    []byte
		recipient []byte
	)
	err := r.q.QueryRow(ctx, `SELECT m.address, g.recipient, g.code_sealed, g.balance, g.currency, g.expires_on, s.name, s.default_language,
			s.numerals, s.subdomain
		FROM gift_card_sends m JOIN gift_cards g ON g.store_id = m.store_id AND g.id = m.gift_card_id JOIN stores s ON s.id = m.store_id
		WHERE m.store_id = $1 AND m.id = $2 AND g.code_sealed IS NOT NULL`, storeID, sendID).Scan(&m.To, &recipient, &sealed, &m.Balance,
		&m.Currency, &m.ExpiresOn, &m.StoreName, &m.StoreLanguage, &m.StoreNumerals, &m.Subdomain)
	if err != nil {
		return GiftCardMail{}, notFoundIfNoRows(err, "find gift card mail "+sendID.String())
	}
	if recipient != nil {
		var rc GiftCardRecipient
		if err := json.Unmarshal(recipient, &rc); err == nil {
			m.RecipientName, m.Message = rc.Name, rc.Message
		}
	}
	code, err := sealer.Open(sealed, giftCardCodePurpose(storeID))
	if err != nil {
		return GiftCardMail{}, err
	}
	m.Code = FormatGiftCardCode(code)
	return m, nil
}

// resealGiftCardCodes seals every card's code again under the sealer's
// current key and replaces its digest, for a key rotation.
func (tx *Tx) resealGiftCardCodes(ctx context.Context, sealer *Sealer) (int, error) {
	rows, err := tx.tx.Query(ctx, `SELECT store_id, id, code_sealed FROM gift_cards WHERE code_sealed IS NOT NULL FOR UPDATE`)
	if err != nil {
		return 0, fmt.Errorf("read gift card codes: %w", err)
	}
	type sealedCode struct {
		storeID, id uuid.UUID
		sealed      []byte
	}
	codes, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (sealedCode, error) {
		var c sealedCode
		return c, row.Scan(&c.storeID, &c.id, &c.sealed)
	})
	if err != nil {
		return 0, err
	}
	for _, c := range codes {
		purpose := giftCardCodePurpose(c.storeID)
		code, err := sealer.Open(c.sealed, purpose)
		if err != nil {
			return 0, err
		}
		sealed, err := sealer.Seal(code, purpose)
		if err != nil {
			return 0, err
		}
		digest, err := sealer.Digest(code, purpose)
		if err != nil {
			return 0, err
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE gift_cards SET code_sealed = $3, code_hmac = $4 WHERE store_id = $1 AND id = $2`,
			c.storeID, c.id, sealed, digest); err != nil {
			return 0, fmt.Errorf("reseal gift card code: %w", err)
		}
	}
	return len(codes), nil
}

// CartOfToken answers the cart an X-Cart-Token opens in a store, or
// ErrNotFound (the storefront's balance check names no cart in its path).
func (r reader) CartOfToken(ctx context.Context, storeID uuid.UUID, token string) (uuid.UUID, error) {
	var id uuid.UUID
	err := r.q.QueryRow(ctx, `SELECT cart_id FROM cart_tokens WHERE token_hash = $1 AND store_id = $2`, hashToken(token), storeID).Scan(&id)
	if err != nil {
		return uuid.Nil, notFoundIfNoRows(err, "find cart of token")
	}
	return id, nil
}
