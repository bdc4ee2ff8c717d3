package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/storage"
)

const (
	giftCardCartsRound  = 1000
	giftCardRedemptions = 200
	giftCardRaceRounds  = 10
	giftCardRaceInitial = 10_000
	giftCardRaceEach    = 70 // 142 redemptions fit a card, 58 are refused
	giftCardFirstValue  = 20_000
	giftCardSecondValue = 30_000
)

// runGiftCardBench checks out 5-line COD carts paid in part by two gift
// cards against the same carts without cards (decisions §19's "measured"),
// in alternating rounds; then races 200 redemptions of one card through
// DebitGiftCard (each in its own transaction, with its ledger entry)
// against the bare conditional UPDATE alone in a pgx loop.
func runGiftCardBench(ctx context.Context, dbURL string) (string, error) {
	db, err := openDatabase(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	sealer, err := benchSealer()
	if err != nil {
		return "", err
	}
	plain, err := seedPricingStore(ctx, db, "gcplain-bench", false)
	if err != nil {
		return "", err
	}
	carded, err := seedPricingStore(ctx, db, "gccards-bench", false)
	if err != nil {
		return "", err
	}
	codes, err := issueBenchGiftCards(ctx, db, sealer, carded.id, 2*giftCardCartsRound)
	if err != nil {
		return "", err
	}
	url, stop, err := serve(api.NewServer(api.Config{StorefrontRateLimitPerMinute: 100_000_000, StorefrontOrdersPerPhone: 100_000_000,
		StorefrontOrdersPerNetwork: 100_000_000, Secrets: sealer}, db.DB, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return "", err
	}
	defer stop()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: pricingClients * 2}}
	var phones atomic.Int64

	var plainRun, cardRun result
	for round := range 2 {
		plainCarts, err := prepareCarts(client, url, plain, giftCardCartsRound, 5, nil, &phones)
		if err != nil {
			return "", err
		}
		mine := codes[round*giftCardCartsRound : (round+1)*giftCardCartsRound]
		cardCarts, err := prepareGiftCardCarts(client, url, carded, mine, &phones)
		if err != nil {
			return "", err
		}
		if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
			return "", err
		}
		first, second := plainCarts, cardCarts
		if round == 1 {
			first, second = cardCarts, plainCarts
		}
		a := checkoutAll(client, url, first, pricingClients)
		b := checkoutAll(client, url, second, pricingClients)
		if round == 1 {
			a, b = b, a
		}
		for _, r := range []checkoutRun{a, b} {
			if r.statuses[http.StatusCreated] != r.requests {
				return "", fmt.Errorf("checkouts failed: %v %v", r.statuses, r.codes)
			}
		}
		plainRun, cardRun = plainRun.merge(a.result), cardRun.merge(b.result)
	}
	var cardPayments, cardOrders int
	var ledgerOK bool
	if err := db.Pool.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM order_payments WHERE store_id = $1 AND source = 'gift_card' AND status = 'succeeded'),
			(SELECT count(*) FROM orders WHERE store_id = $1 AND paid_total = $2 AND payment_status = 'partially_paid'),
			NOT EXISTS (SELECT 1 FROM gift_cards g WHERE g.store_id = $1
				AND g.balance <> (SELECT sum(amount) FROM gift_card_transactions t WHERE t.gift_card_id = g.id))`,
		carded.id, giftCardFirstValue+giftCardSecondValue).Scan(&cardPayments, &cardOrders, &ledgerOK); err != nil {
		return "", err
	}

	race, err := raceGiftCardDebits(ctx, db, sealer, carded.id)
	if err != nil {
		return "", err
	}

	ratio := cardRun.rps() / plainRun.rps()
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s), load average %s before the run. Storefront checkouts over HTTP, %d concurrent\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), loadAverage(), pricingClients)
	fmt.Fprintf(&b, "clients, each buyer a new customer; COD carts of 5 lines (1 500.00) prepared beforehand, %d per store and round,\n", giftCardCartsRound)
	fmt.Fprintf(&b, "checked out in two rounds that alternate which store goes first. In the cards store each cart carries two\n")
	fmt.Fprintf(&b, "cards of its own (200.00 and 300.00): the checkout debits both by the conditional UPDATE, writes their ledger\n")
	fmt.Fprintf(&b, "entries and two `gift_card` payments, and settles the order as partially paid; COD pays the rest.\n\n")
	fmt.Fprintf(&b, "| checkout, 5-line COD cart | checkouts/s | p50 | p99 |\n|---|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| without cards | %.0f | %s | %s |\n", plainRun.rps(), ms(plainRun.percentile(0.5)), ms(plainRun.percentile(0.99)))
	fmt.Fprintf(&b, "| two gift cards, part-paid | %.0f | %s | %s |\n\n", cardRun.rps(), ms(cardRun.percentile(0.5)), ms(cardRun.percentile(0.99)))
	fmt.Fprintf(&b, "**With cards / without: %.0f%%** (goal ≥ 80%%: %s). %d `gift_card` payments on %d part-paid orders; every card's\n",
		100*ratio, verdict(ratio >= 0.8), cardPayments, cardOrders)
	fmt.Fprintf(&b, "ledger sums to its balance: %s.\n\n", verdict(ledgerOK && cardPayments == 2*cardOrders && cardOrders == 2*giftCardCartsRound))
	fmt.Fprintf(&b, "Redemptions: %d rounds of %d goroutines redeeming %s at once from one card of %s (%d fit).\n\n",
		giftCardRaceRounds, giftCardRedemptions, money(giftCardRaceEach), money(giftCardRaceInitial), giftCardRaceInitial/giftCardRaceEach)
	fmt.Fprintf(&b, "| %d concurrent redemptions of one card | redemptions/s | redeemed | refused | overspent |\n|---|---:|---:|---:|---:|\n", giftCardRedemptions)
	fmt.Fprintf(&b, "| `DebitGiftCard`: its own transaction, UPDATE + `redeem` entry | %.0f | %d | %d | %d |\n",
		race.debit.rps(), race.debitOK, race.debitRefused, race.debitOver)
	fmt.Fprintf(&b, "| bare conditional UPDATE in a pgx loop (autocommit, no ledger) | %.0f | %d | %d | %d |\n\n",
		race.bare.rps(), race.bareOK, race.bareRefused, race.bareOver)
	fmt.Fprintf(&b, "No overspend and `balance = initial − Σ ledger` on every DebitGiftCard card: %s.\n\n", verdict(race.ledgerOK && race.debitOver == 0 && race.bareOver == 0 &&
		race.debitOK == giftCardRaceRounds*(giftCardRaceInitial/giftCardRaceEach)))
	fmt.Fprintf(&b, "Left out: the test cluster runs with fsync off, on one machine whose CPUs the clients, the server and Postgres\n")
	fmt.Fprintf(&b, "share (and other work: see the load average). With fsync on every commit waits for a WAL flush, in both stores\n")
	fmt.Fprintf(&b, "and both redemption paths alike. One store's checkouts take their order numbers one at a time, so the card\n")
	fmt.Fprintf(&b, "store's debits never contend with each other here; the redemption race is where the UPDATE meets contention.\n")
	return b.String(), nil
}

// benchSealer is a sealer under a random key (the bench's own).
func benchSealer() (*storage.Sealer, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return storage.NewSealer(base64.StdEncoding.EncodeToString(key))
}

func money(minor int64) string { return fmt.Sprintf("%d.%02d", minor/100, minor%100) }

// issueBenchGiftCards issues n pairs of cards (200.00, 300.00) and answers
// each pair's codes.
func issueBenchGiftCards(ctx context.Context, db *database, sealer *storage.Sealer, storeID uuid.UUID, n int) ([][2]string, error) {
	out := make([][2]string, n)
	for start := 0; start < n; start += 200 {
		err := db.InTx(ctx, func(tx *storage.Tx) error {
			for i := start; i < min(start+200, n); i++ {
				for j, value := range []int64{giftCardFirstValue, giftCardSecondValue} {
					_, code, err := tx.CreateGiftCard(ctx, sealer, storage.NewGiftCard{StoreID: storeID, InitialValue: value})
					if err != nil {
						return err
					}
					out[i][j] = code
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// prepareGiftCardCarts opens one 5-line COD cart per pair of codes.
func prepareGiftCardCarts(client *http.Client, url string, s pricingStore, codes [][2]string, phones *atomic.Int64) ([]cartCheckout, error) {
	var lines []map[string]any
	for i := range 5 {
		lines = append(lines, map[string]any{"variant_id": s.variants[i].String(), "quantity": 1})
	}
	carts := make([]cartCheckout, len(codes))
	var (
		next     atomic.Int64
		firstErr error
		mu       sync.Mutex
		wg       sync.WaitGroup
	)
	for range pricingClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(codes); i = int(next.Add(1)) - 1 {
				payload, _ := json.Marshal(map[string]any{"lines": lines, "payment_method": "cod", "gift_card_codes": codes[i][:]})
				c, err := openBenchCart(client, url, s, payload, phones.Add(1))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				carts[i] = c
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return carts, firstErr
}

type giftCardRace struct {
	debit, bare                      result
	debitOK, debitRefused, debitOver int
	bareOK, bareRefused, bareOver    int
	ledgerOK                         bool
}

// raceGiftCardDebits races giftCardRedemptions redemptions of one card per
// round through DebitGiftCard and through the bare UPDATE, alternating.
func raceGiftCardDebits(ctx context.Context, db *database, sealer *storage.Sealer, storeID uuid.UUID) (giftCardRace, error) {
	var race giftCardRace
	race.ledgerOK = true
	newCard := func() (uuid.UUID, error) {
		var id uuid.UUID
		err := db.InTx(ctx, func(tx *storage.Tx) error {
			c, _, err := tx.CreateGiftCard(ctx, sealer, storage.NewGiftCard{StoreID: storeID, InitialValue: giftCardRaceInitial})
			id = c.ID
			return err
		})
		return id, err
	}
	burst := func(do func() error) (result, int, int, error) {
		var (
			wg          sync.WaitGroup
			mu          sync.Mutex
			ok, refused int
			firstErr    error
			startSignal = make(chan struct{})
			latencies   []time.Duration
		)
		for range giftCardRedemptions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-startSignal
				began := time.Now()
				err := do()
				mu.Lock()
				defer mu.Unlock()
				latencies = append(latencies, time.Since(began))
				switch {
				case err == nil:
					ok++
				case errors.Is(err, storage.ErrGiftCardBalanceChanged):
					refused++
				case firstErr == nil:
					firstErr = err
				}
			}()
		}
		start := time.Now()
		close(startSignal)
		wg.Wait()
		return result{requests: giftCardRedemptions, elapsed: time.Since(start), latencies: latencies, statuses: map[int]int{}}, ok, refused, firstErr
	}
	for round := range giftCardRaceRounds {
		for _, debit := range []bool{round%2 == 0, round%2 != 0} {
			id, err := newCard()
			if err != nil {
				return race, err
			}
			var do func() error
			if debit {
				do = func() error {
					return db.InTx(ctx, func(tx *storage.Tx) error {
						_, err := tx.DebitGiftCard(ctx, storeID, id, giftCardRaceEach, storage.GiftCardMove{})
						return err
					})
				}
			} else {
				do = func() error {
					tag, err := db.Pool.Exec(ctx, `UPDATE gift_cards SET balance = balance - $3
						WHERE store_id = $1 AND id = $2 AND disabled_at IS NULL AND balance >= $3`, storeID, id, giftCardRaceEach)
					if err == nil && tag.RowsAffected() == 0 {
						return storage.ErrGiftCardBalanceChanged
					}
					return err
				}
			}
			r, ok, refused, err := burst(do)
			if err != nil {
				return race, err
			}
			var balance, ledger int64
			if err := db.Pool.QueryRow(ctx, `SELECT balance, (SELECT COALESCE(sum(amount), 0)::bigint FROM gift_card_transactions
				WHERE gift_card_id = $1) FROM gift_cards WHERE id = $1`, id).Scan(&balance, &ledger); err != nil {
				return race, err
			}
			over := 0
			if balance < 0 || int64(ok*giftCardRaceEach) > giftCardRaceInitial {
				over = 1
			}
			if debit {
				race.debit, race.debitOK, race.debitRefused, race.debitOver = race.debit.merge(r), race.debitOK+ok, race.debitRefused+refused, race.debitOver+over
				race.ledgerOK = race.ledgerOK && balance == ledger && balance == giftCardRaceInitial-int64(ok*giftCardRaceEach)
			} else {
				race.bare, race.bareOK, race.bareRefused, race.bareOver = race.bare.merge(r), race.bareOK+ok, race.bareRefused+refused, race.bareOver+over
			}
		}
	}
	return race, nil
}
