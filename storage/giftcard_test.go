package storage_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

// What people type reaches the code: case, spaces, dashes of any kind,
// full-width letters and Arabic-Indic or Persian digits do not count.
func TestGiftCardCodeNormalization(t *testing.T) {
	const code = "ABCDEFGHJKMNPQ23"
	for _, c := range []struct {
		name, typed string
	}{
		{"printed", "ABCD-EFGH-JKMN-PQ23"},
		{"lower case", "abcd-efgh-jkmn-pq23"},
		{"spaces", "  abcd efgh jkmn pq23 "},
		{"no separators", "abcdefghjkmnpq23"},
		{"Arabic-Indic digits", "ABCD-EFGH-JKMN-PQ٢٣"},
		{"Persian digits", "ABCD-EFGH-JKMN-PQ۲۳"},
		{"en dash and non-breaking space", "ABCD–EFGH\u00a0JKMN—PQ23"},
		{"full-width (NFKC)", "ＡＢＣＤ-ＥＦＧＨ-ＪＫＭＮ-ＰＱ２３"},
		{"tab and newline", "ABCD\tEFGH\nJKMN PQ23"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := storage.NormalizeGiftCardCode(c.typed)
			require.Equal(t, code, got)
			require.True(t, storage.ValidGiftCardCode(got))
		})
	}
	for _, c := range []struct {
		name, typed string
	}{
		{"too short", "ABCD-EFGH-JKMN-PQ2"},
		{"too long", "ABCD-EFGH-JKMN-PQ234"},
		{"zero", "ABCD-EFGH-JKMN-PQ20"},
		{"letter O", "ABCD-EFGH-JKMN-PQ2O"},
		{"one", "ABCD-EFGH-JKMN-PQ21"},
		{"letter I", "ABCD-EFGH-JKMN-PQ2I"},
		{"letter L", "ABCD-EFGH-JKMN-PQ2L"},
		{"Arabic zero", "ABCD-EFGH-JKMN-PQ2٠"},
		{"symbol", "ABCD-EFGH-JKMN-PQ2#"},
		{"empty", "   "},
	} {
		t.Run("refused "+c.name, func(t *testing.T) {
			require.False(t, storage.ValidGiftCardCode(storage.NormalizeGiftCardCode(c.typed)))
		})
	}
	require.Equal(t, "ABCD-EFGH-JKMN-PQ23", storage.FormatGiftCardCode(code))
}

// Drawn codes are 16 characters of the alphabet, and every character of
// the alphabet turns up (none is left out, none added).
func TestGiftCardCodeGeneration(t *testing.T) {
	seen := map[rune]bool{}
	codes := map[string]bool{}
	for range 500 {
		code, err := storage.GenerateGiftCardCode()
		require.NoError(t, err)
		require.Len(t, code, storage.GiftCardCodeLength)
		require.True(t, storage.ValidGiftCardCode(code), code)
		require.Equal(t, code, storage.NormalizeGiftCardCode(storage.FormatGiftCardCode(code)))
		for _, r := range code {
			require.True(t, strings.ContainsRune(storage.GiftCardCodeAlphabet, r), "%q in %s", r, code)
			seen[r] = true
		}
		codes[code] = true
	}
	require.Len(t, seen, len(storage.GiftCardCodeAlphabet))
	require.Len(t, codes, 500)
	require.Equal(t, 31, len(storage.GiftCardCodeAlphabet))
	require.NotContains(t, storage.GiftCardCodeAlphabet, "0")
	require.NotContains(t, storage.GiftCardCodeAlphabet, "O")
	require.NotContains(t, storage.GiftCardCodeAlphabet, "1")
	require.NotContains(t, storage.GiftCardCodeAlphabet, "I")
	require.NotContains(t, storage.GiftCardCodeAlphabet, "L")
}

// 200 concurrent debits of one card, each in its own transaction through
// DebitGiftCard, never overspend, and the ledger explains the balance:
// balance = initial − Σ debits, and the amounts of all entries sum to it.
func TestGiftCardConcurrentDebits(t *testing.T) {
	ctx, db := context.Background(), testenv.DB(t)
	sealer := testenv.Sealer(t)
	var storeID uuid.UUID
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		user := storage.User{Email: uuid.NewString() + "@example.com", PasswordHash: "x", Name: "M"}
		store := storage.Store{Name: "Cards", Subdomain: "cards-" + uuid.NewString()[:8], Currency: "EGP", DefaultLanguage: "ar"}
		err := tx.CreateUserAndStore(ctx, &user, &store)
		storeID = store.ID
		return err
	}))
	const initial, each, workers = 10000, 70, 200 // 142 debits fit, 58 must be refused
	var card storage.GiftCard
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		var err error
		card, _, err = tx.CreateGiftCard(ctx, sealer, storage.NewGiftCard{StoreID: storeID, InitialValue: initial})
		return err
	}))

	var (
		wg               sync.WaitGroup
		mu               sync.Mutex
		debited, refused int
	)
	start := make(chan struct{})
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := db.InTx(ctx, func(tx *storage.Tx) error {
				_, err := tx.DebitGiftCard(ctx, storeID, card.ID, each, storage.GiftCardMove{})
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				debited++
			case errors.Is(err, storage.ErrGiftCardBalanceChanged):
				refused++
			default:
				t.Errorf("debit: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	require.Equal(t, initial/each, debited)
	require.Equal(t, workers-initial/each, refused)

	got, err := db.FindGiftCard(ctx, storeID, card.ID)
	require.NoError(t, err)
	require.Equal(t, int64(initial-debited*each), got.Balance)
	require.GreaterOrEqual(t, got.Balance, int64(0))
	entries, err := db.FindGiftCardTransactions(ctx, storeID, card.ID, 1000)
	require.NoError(t, err)
	require.Len(t, entries, debited+1)
	var sum, redeemed int64
	for _, e := range entries {
		sum += e.Amount
		if e.Kind == storage.GiftCardRedeem {
			redeemed -= e.Amount
		}
	}
	require.Equal(t, got.Balance, sum, "the ledger sums to the balance")
	require.Equal(t, int64(initial)-redeemed, got.Balance, "balance = initial − Σ ledger debits")

	// A credit (a cancelled order's reversal) goes back through the ledger.
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		_, err := tx.CreditGiftCard(ctx, storeID, card.ID, storage.GiftCardReverse, each, storage.GiftCardMove{})
		return err
	}))
	got, err = db.FindGiftCard(ctx, storeID, card.ID)
	require.NoError(t, err)
	require.Equal(t, int64(initial-(debited-1)*each), got.Balance)

	// Another store's id reaches nothing.
	err = db.InTx(ctx, func(tx *storage.Tx) error {
		_, err := tx.DebitGiftCard(ctx, uuid.New(), card.ID, 1, storage.GiftCardMove{})
		return err
	})
	require.ErrorIs(t, err, storage.ErrGiftCardBalanceChanged)
}

// A key rotation keeps codes findable and sendable: during it a lookup
// matches the previous key's digest, `svc reseal-secrets` re-keys digest and
// sealed code, and after it the old key finds nothing.
func TestGiftCardCodesSurviveKeyRotation(t *testing.T) {
	ctx, db := context.Background(), testenv.DB(t)
	oldKey := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("o", 32)))
	newKey := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("n", 32)))
	oldSealer, err := storage.NewSealer(oldKey)
	require.NoError(t, err)
	rotating, err := storage.NewSealer(newKey, oldKey)
	require.NoError(t, err)
	newSealer, err := storage.NewSealer(newKey)
	require.NoError(t, err)

	var (
		storeID uuid.UUID
		card    storage.GiftCard
		code    string
		send    storage.GiftCardSend
	)
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		user := storage.User{Email: uuid.NewString() + "@example.com", PasswordHash: "x", Name: "M"}
		store := storage.Store{Name: "Keys", Subdomain: "keys-" + uuid.NewString()[:8], Currency: "SAR", DefaultLanguage: "en"}
		if err := tx.CreateUserAndStore(ctx, &user, &store); err != nil {
			return err
		}
		storeID = store.ID
		email := "r@example.com"
		card, code, err = tx.CreateGiftCard(ctx, oldSealer, storage.NewGiftCard{StoreID: storeID, InitialValue: 500,
			Recipient: &storage.GiftCardRecipient{Name: "R", Email: &email}})
		if err != nil {
			return err
		}
		send, err = tx.RecordGiftCardSend(ctx, storeID, card.ID, "email")
		return err
	}))
	var stored []byte
	require.NoError(t, testenv.SQL(t, db).QueryRow(ctx, `SELECT code_sealed || code_hmac FROM gift_cards WHERE id = $1`, card.ID).Scan(&stored))
	require.NotContains(t, string(stored), strings.ReplaceAll(code, "-", ""), "the code is never stored in the clear")
	require.NotContains(t, string(stored), code)

	_, err = db.FindGiftCardByCode(ctx, newSealer, storeID, code)
	require.ErrorIs(t, err, storage.ErrNotFound, "before the reseal the new key alone finds nothing")
	found, err := db.FindGiftCardByCode(ctx, rotating, storeID, strings.ToLower(code))
	require.NoError(t, err, "during the rotation the previous key's digest matches")
	require.Equal(t, card.ID, found.ID)
	_, err = db.FindGiftCardByCode(ctx, oldSealer, uuid.New(), code)
	require.ErrorIs(t, err, storage.ErrNotFound, "another store's purpose finds nothing")

	n, err := db.ResealSecrets(ctx, rotating)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	found, err = db.FindGiftCardByCode(ctx, newSealer, storeID, code)
	require.NoError(t, err)
	require.Equal(t, card.ID, found.ID)
	_, err = db.FindGiftCardByCode(ctx, oldSealer, storeID, code)
	require.ErrorIs(t, err, storage.ErrNotFound)
	mail, err := db.FindGiftCardMail(ctx, newSealer, storeID, send.ID)
	require.NoError(t, err)
	require.Equal(t, code, mail.Code)
	require.Equal(t, "r@example.com", mail.To)
	require.Equal(t, "SAR", mail.Currency)
}

// The checkout's debit refuses a disabled card and one expired in the
// store's time zone (its expiry day itself still pays), and writes nothing;
// a credit reaches a card whatever its status.
func TestGiftCardDebitRefusesUnusableCards(t *testing.T) {
	ctx, db := context.Background(), testenv.DB(t)
	sealer := testenv.Sealer(t)
	var storeID uuid.UUID
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		user := storage.User{Email: uuid.NewString() + "@example.com", PasswordHash: "x", Name: "M"}
		store := storage.Store{Name: "Cards", Subdomain: "debits-" + uuid.NewString()[:8], Currency: "EGP", DefaultLanguage: "ar"}
		err := tx.CreateUserAndStore(ctx, &user, &store)
		storeID = store.ID
		return err
	}))
	issue := func() storage.GiftCard {
		var c storage.GiftCard
		require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
			var err error
			c, _, err = tx.CreateGiftCard(ctx, sealer, storage.NewGiftCard{StoreID: storeID, InitialValue: 1000})
			return err
		}))
		return c
	}
	debit := func(c storage.GiftCard, amount int64) error {
		return db.InTx(ctx, func(tx *storage.Tx) error {
			_, err := tx.DebitGiftCard(ctx, storeID, c.ID, amount, storage.GiftCardMove{})
			return err
		})
	}
	cairo, err := time.LoadLocation("Africa/Cairo")
	require.NoError(t, err)
	today := time.Now().In(cairo).Format(time.DateOnly)

	disabled, expired, lastDay, plain := issue(), issue(), issue(), issue()
	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		_, _, err := tx.DisableGiftCard(ctx, storeID, disabled.ID, "lost")
		return err
	}))
	_, err = testenv.SQL(t, db).Exec(ctx, `UPDATE gift_cards SET expires_on = $2::date - 1 WHERE id = $1`, expired.ID, today)
	require.NoError(t, err)
	_, err = testenv.SQL(t, db).Exec(ctx, `UPDATE gift_cards SET expires_on = $2::date WHERE id = $1`, lastDay.ID, today)
	require.NoError(t, err)

	require.ErrorIs(t, debit(disabled, 1), storage.ErrGiftCardBalanceChanged)
	require.ErrorIs(t, debit(expired, 1), storage.ErrGiftCardBalanceChanged)
	require.ErrorIs(t, debit(plain, 1001), storage.ErrGiftCardBalanceChanged)
	require.NoError(t, debit(lastDay, 1000), "a card pays through its expiry day")
	for _, c := range []storage.GiftCard{disabled, expired, plain} {
		entries, err := db.FindGiftCardTransactions(ctx, storeID, c.ID, 10)
		require.NoError(t, err)
		require.Len(t, entries, 1, "a refused debit writes no entry")
	}
	got, err := db.FindGiftCard(ctx, storeID, lastDay.ID)
	require.NoError(t, err)
	require.Equal(t, storage.GiftCardDepleted, got.Status)

	require.NoError(t, db.InTx(ctx, func(tx *storage.Tx) error {
		_, err := tx.CreditGiftCard(ctx, storeID, disabled.ID, storage.GiftCardReverse, 300, storage.GiftCardMove{})
		return err
	}))
	got, err = db.FindGiftCard(ctx, storeID, disabled.ID)
	require.NoError(t, err)
	require.Equal(t, int64(1300), got.Balance)
	require.Equal(t, storage.GiftCardDisabled, got.Status)
}
