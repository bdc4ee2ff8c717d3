package storage

import (
	"context"
	"fmt"
	"math"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// CODRisk is a phone's cash-on-delivery record as one store sees it: its
// own orders that reached the door (however their outcome was recorded),
// and the other stores' orders whose outcome a carrier confirmed, each
// other store counted for at most codStoreCap outcomes.
type CODRisk struct {
	OwnReturned  int
	OwnCompleted int // delivered or returned
	// Network is the capped, weighted record of the other stores; their
	// counts never leave this type.
	networkReturned  float64
	networkCompleted float64
	networkStores    int // other stores with a confirmed return
}

// codStoreCap bounds one other store's weight (in outcomes), and
// codOwnWeight is how much more a store's own outcome counts than one of
// another store.
const (
	codStoreCap  = 3
	codOwnWeight = 2
)

// Score is the share of weighted outcomes that were returns, 0-100.
func (r CODRisk) Score() int {
	returned := codOwnWeight*float64(r.OwnReturned) + r.networkReturned
	completed := codOwnWeight*float64(r.OwnCompleted) + r.networkCompleted
	if completed == 0 {
		return 0
	}
	return int(math.Round(100 * returned / completed))
}

// High reports a phone with a score of at least 50 on at least two
// independent returns: two of the store's own, or one of its own and one
// elsewhere, or returns in two other stores. One other store, however many
// returns it records, never flags a phone by itself.
func (r CODRisk) High() bool {
	return r.Score() >= 50 && r.OwnReturned+r.networkStores >= 2
}

// codRisk scores a phone for one store from the platform's history. It
// reads across stores on purpose; per-store counts stay in this function.
func (tx *Tx) codRisk(ctx context.Context, storeID uuid.UUID, phone string) (CODRisk, error) {
	rows, err := tx.tx.Query(ctx, codRiskQuery, phone, storeID)
	if err != nil {
		return CODRisk{}, fmt.Errorf("cod risk: %w", err)
	}
	return scanCODRisk(rows)
}

// codRiskQuery reads the phone's outcome counts, one row per store it has
// an outcome in (migration 0070 keeps them in each outcome's
// transaction): the store's own, all of them; another store's, those a
// carrier confirmed. Counting them from the orders read every outcome of
// the phone's history on every order, under the order's locks (issue 59).
const codRiskQuery = `SELECT store_id = $2,
		CASE WHEN store_id = $2 THEN returned ELSE confirmed_returned END,
		CASE WHEN store_id = $2 THEN completed ELSE confirmed_completed END
	FROM cod_phone_outcomes
	WHERE customer_phone = $1 AND (store_id = $2 OR confirmed_completed > 0)`

func scanCODRisk(rows pgx.Rows) (CODRisk, error) {
	defer rows.Close()
	var r CODRisk
	for rows.Next() {
		var (
			own                 bool
			returned, completed int
		)
		if err := rows.Scan(&own, &returned, &completed); err != nil {
			return CODRisk{}, fmt.Errorf("cod risk: %w", err)
		}
		if own {
			r.OwnReturned, r.OwnCompleted = returned, completed
			continue
		}
		scale := 1.0 // a store with more outcomes than the cap keeps its ratio
		if completed > codStoreCap {
			scale = float64(codStoreCap) / float64(completed)
		}
		r.networkReturned += scale * float64(returned)
		r.networkCompleted += scale * float64(completed)
		if returned > 0 {
			r.networkStores++
		}
	}
	return r, rows.Err()
}

// queueCODRisk adds the trust check's read to a batch: the risk it
// returns is filled when the batch has run, and is nil when the order is
// not checked (not COD, or no phone).
func queueCODRisk(batch *pgx.Batch, o Order, phone *string) *CODRisk {
	if o.PaymentMethod != "cod" || phone == nil {
		return nil
	}
	risk := &CODRisk{}
	batch.Queue(codRiskQuery, *phone, o.StoreID).Query(func(rows pgx.Rows) error {
		var err error
		*risk, err = scanCODRisk(rows)
		return err
	})
	return risk
}

// trustCheck flags a COD order from a high-risk phone; it never blocks it.
// The flag shows the score and the store's own record, never another
// store's counts.
func (tx *Tx) trustCheck(ctx context.Context, o Order, phone *string) error {
	if o.PaymentMethod != "cod" || phone == nil {
		return nil
	}
	risk, err := tx.codRisk(ctx, o.StoreID, *phone)
	if err != nil {
		return err
	}
	return tx.flagCODRisk(ctx, o, &risk)
}

// flagCODRisk flags an order whose phone's risk (nil: not checked) is high.
func (tx *Tx) flagCODRisk(ctx context.Context, o Order, risk *CODRisk) error {
	if risk == nil || !risk.High() {
		return nil
	}
	return tx.FlagOrder(ctx, o.StoreID, o.ID, ReasonCODHighRisk,
		fmt.Sprintf("Return risk %d/100: this phone returned cash-on-delivery orders that reached the door (in your store: %d of %d; other stores' carrier-confirmed outcomes count too)",
			risk.Score(), risk.OwnReturned, risk.OwnCompleted),
		fmt.Sprintf("خطر الإرجاع %d/100: أعاد هذا الرقم طلبات دفع عند الاستلام وصلت إليه (في متجرك: %d من %d؛ وتُحتسب أيضًا نتائج المتاجر الأخرى المؤكدة من شركات الشحن)",
			risk.Score(), risk.OwnReturned, risk.OwnCompleted),
		map[string]any{"score": risk.Score(), "own_returned": risk.OwnReturned, "own_completed": risk.OwnCompleted})
}

// Statement is one statement of a path with its arguments, for the
// benchmarks to EXPLAIN as the service runs it.
type Statement struct {
	Name string
	SQL  string
	Args []any
}

// OrderHistoryStatements are the statements placing an order runs that
// read the customer's history: the growth benchmark EXPLAINs them in
// stores of every size.
func OrderHistoryStatements(storeID, customerID uuid.UUID, phone string) []Statement {
	return []Statement{{Name: "The trust check's COD record of the phone", SQL: codRiskQuery, Args: []any{phone, storeID}}}
}
