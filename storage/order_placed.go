package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Autopilot exception reasons.
const (
	ReasonCODHighRisk      = "cod_high_risk"
	ReasonSideEffectFailed = "side_effect_failed"
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

const codRiskQuery = `SELECT store_id = $2, count(*) FILTER (WHERE status = 'RETURNED'), count(*)
	FROM orders
	WHERE customer_phone = $1 AND payment_method = 'cod' AND status IN ('DELIVERED', 'RETURNED')
	  AND (store_id = $2 OR carrier_confirmed_at IS NOT NULL)
	GROUP BY store_id`

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

// AutopilotException is an order flagged for a person.
type AutopilotException struct {
	ID        uuid.UUID
	OrderID   uuid.UUID
	Reason    string
	Message   string
	MessageAr string
	Data      json.RawMessage
	CreatedAt time.Time
	// OrderNumber is the order's number (ORD-1042), for people.
	OrderNumber string
}

// FlagOrder opens an exception unless one with the reason is open already.
func (tx *Tx) FlagOrder(ctx context.Context, storeID, orderID uuid.UUID, reason, message, messageAr string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = tx.tx.Exec(ctx, `INSERT INTO autopilot_exceptions (id, store_id, order_id, reason, message, message_ar, data, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (order_id, reason) WHERE status = 'open' DO NOTHING`,
		NewID(), storeID, orderID, reason, message, messageAr, raw, tx.now())
	if err != nil {
		return fmt.Errorf("flag order: %w", err)
	}
	return nil
}

// FlagOrder opens an exception outside any other change (a failed side effect).
func (db *DB) FlagOrder(ctx context.Context, storeID, orderID uuid.UUID, reason, message, messageAr string, data any) error {
	return db.InTx(ctx, func(tx *Tx) error { return tx.FlagOrder(ctx, storeID, orderID, reason, message, messageAr, data) })
}

// FindAutopilotExceptions lists a store's open exceptions, newest first.
func (r reader) FindAutopilotExceptions(ctx context.Context, storeID uuid.UUID, limit, offset int) ([]AutopilotException, int, error) {
	return findPage(ctx, r, "autopilot exceptions", listQuery{
		columns: "id, order_id, reason, message, message_ar, data, created_at, " +
			"COALESCE((SELECT o.order_number FROM orders o WHERE o.store_id = autopilot_exceptions.store_id AND o.id = autopilot_exceptions.order_id), '')",
		from: "FROM autopilot_exceptions WHERE store_id = $1 AND status = 'open'", args: []any{storeID},
		orderBy: "created_at DESC, id DESC",
	}, limit, offset, func(row pgx.CollectableRow) (AutopilotException, error) {
		var e AutopilotException
		err := row.Scan(&e.ID, &e.OrderID, &e.Reason, &e.Message, &e.MessageAr, &e.Data, &e.CreatedAt, &e.OrderNumber)
		return e, err
	})
}

// ResolveAutopilotExceptions dismisses an order's open flags without
// touching the order; it reports how many it dismissed.
func (tx *Tx) ResolveAutopilotExceptions(ctx context.Context, storeID, orderID uuid.UUID) (int, error) {
	tag, err := tx.tx.Exec(ctx, `UPDATE autopilot_exceptions SET status = 'resolved', resolved_at = $3
		WHERE store_id = $1 AND order_id = $2 AND status = 'open'`, storeID, orderID, tx.now())
	if err != nil {
		return 0, fmt.Errorf("resolve autopilot exceptions: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

const sideEffectStatusQuery = `SELECT status FROM order_side_effects WHERE store_id = $1 AND order_id = $2 AND kind = $3`

// scanSideEffectDone reads whether a placed order's side effect was already recorded.
func scanSideEffectDone(row pgx.Row) (bool, error) {
	var status string
	err := row.Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read side effect: %w", err)
	}
	return true, nil
}

// SideEffectStart is what a placed order's side effect reads before it
// runs: whether it was already recorded, the order with its lines, and
// the store's settings.
type SideEffectStart struct {
	Done     bool
	Order    Order
	Settings StoreSettings
}

// FindSideEffectStart reads a side effect's SideEffectStart in one round
// trip. Three side effects run for every order placed, and these reads
// were four round trips of each.
func (db *DB) FindSideEffectStart(ctx context.Context, storeID, orderID uuid.UUID, kind string) (SideEffectStart, error) {
	return db.findSideEffectStart(ctx, storeID, orderID, kind, true)
}

// FindSideEffectSettings is FindSideEffectStart without the order (Order
// is left empty), for a side effect that needs only the settings: the
// shipment writes from the order's rows in SQL.
func (db *DB) FindSideEffectSettings(ctx context.Context, storeID, orderID uuid.UUID, kind string) (SideEffectStart, error) {
	return db.findSideEffectStart(ctx, storeID, orderID, kind, false)
}

func (db *DB) findSideEffectStart(ctx context.Context, storeID, orderID uuid.UUID, kind string, withOrder bool) (SideEffectStart, error) {
	batch := &pgx.Batch{}
	batch.Queue(sideEffectStatusQuery, storeID, orderID, kind)
	if withOrder {
		batch.Queue(orderByIDQuery, storeID, orderID)
		batch.Queue(orderLinesQuery, storeID, orderID)
	}
	batch.Queue(storeSettingsQuery, storeID)
	results := db.pool.SendBatch(ctx, batch)
	defer results.Close()
	var (
		start SideEffectStart
		err   error
	)
	if start.Done, err = scanSideEffectDone(results.QueryRow()); err != nil {
		return SideEffectStart{}, err
	}
	if withOrder {
		if start.Order, err = orderWithLinesFrom(results, orderID); err != nil {
			return SideEffectStart{}, err
		}
	}
	if start.Settings, err = scanStoreSettings(results.QueryRow()); err != nil {
		return SideEffectStart{}, err
	}
	return start, results.Close()
}

// orderWithLinesFrom reads the results of orderByIDQuery and then
// orderLinesQuery from a batch.
func orderWithLinesFrom(results pgx.BatchResults, orderID uuid.UUID) (Order, error) {
	o, err := scanOrder(results.QueryRow())
	if err != nil {
		return Order{}, notFoundIfNoRows(err, "find order "+orderID.String())
	}
	rows, err := results.Query()
	if err != nil {
		return Order{}, fmt.Errorf("find order lines: %w", err)
	}
	o.Lines, err = collectOrderLines(rows)
	return o, err
}

// OrderSideEffectsStart is what a placed order's side effects read before
// they run together: the outcomes already recorded (by kind), the order
// with its lines, the store's settings, and whether the order's customer
// opted out of chat messages.
type OrderSideEffectsStart struct {
	Recorded   map[string]string
	Order      Order
	Settings   StoreSettings
	ChatOptOut bool
}

// FindOrderSideEffectsStart reads an OrderSideEffectsStart in one round
// trip: what the three side effects each read for themselves (five
// statements each for email and chat, two for the shipment) read once.
func (db *DB) FindOrderSideEffectsStart(ctx context.Context, storeID, orderID uuid.UUID) (OrderSideEffectsStart, error) {
	batch := &pgx.Batch{}
	batch.Queue(`SELECT kind, status FROM order_side_effects WHERE store_id = $1 AND order_id = $2`, storeID, orderID)
	batch.Queue(orderByIDQuery, storeID, orderID)
	batch.Queue(orderLinesQuery, storeID, orderID)
	batch.Queue(storeSettingsQuery, storeID)
	batch.Queue(`SELECT c.chat_opt_out FROM orders o JOIN customers c ON c.store_id = o.store_id AND c.id = o.customer_id
		WHERE o.store_id = $1 AND o.id = $2`, storeID, orderID)
	results := db.pool.SendBatch(ctx, batch)
	defer results.Close()
	start := OrderSideEffectsStart{Recorded: map[string]string{}}
	rows, err := results.Query()
	var kind, status string
	if err == nil {
		_, err = pgx.ForEachRow(rows, []any{&kind, &status}, func() error {
			start.Recorded[kind] = status
			return nil
		})
	}
	if err != nil {
		return OrderSideEffectsStart{}, fmt.Errorf("read side effects: %w", err)
	}
	if start.Order, err = orderWithLinesFrom(results, orderID); err != nil {
		return OrderSideEffectsStart{}, err
	}
	if start.Settings, err = scanStoreSettings(results.QueryRow()); err != nil {
		return OrderSideEffectsStart{}, err
	}
	if err := results.QueryRow().Scan(&start.ChatOptOut); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return OrderSideEffectsStart{}, fmt.Errorf("read the customer's chat opt-out: %w", err)
	}
	return start, results.Close()
}

// RecordSideEffect records the outcome of one side effect, once.
func (tx *Tx) RecordSideEffect(ctx context.Context, storeID, orderID uuid.UUID, kind, status string, detail any) error {
	return recordSideEffect(ctx, tx.tx, tx.now(), storeID, orderID, kind, status, detail)
}

// RecordSideEffect records an outcome on its own: one statement, so no
// transaction around it (a BEGIN and a COMMIT were two of its three
// round trips).
func (db *DB) RecordSideEffect(ctx context.Context, storeID, orderID uuid.UUID, kind, status string, detail any) error {
	return recordSideEffect(ctx, db.pool, db.now(), storeID, orderID, kind, status, detail)
}

// RecordSideEffectFailure records that a side effect kept failing, unless
// another outcome was recorded for it before (one that an attempt which
// timed out had reached); it reports whether the side effect stands as
// failed.
func (db *DB) RecordSideEffectFailure(ctx context.Context, storeID, orderID uuid.UUID, kind, reason string) (bool, error) {
	raw, err := json.Marshal(map[string]string{"error": reason})
	if err != nil {
		return false, err
	}
	// The second SELECT sees the row from before the statement, if any.
	var status string
	err = db.pool.QueryRow(ctx, `WITH inserted AS (`+insertSideEffect+` RETURNING status)
		SELECT status FROM inserted
		UNION ALL SELECT status FROM order_side_effects WHERE store_id = $1 AND order_id = $2 AND kind = $3
		LIMIT 1`, storeID, orderID, kind, "failed", raw, db.now()).Scan(&status)
	if err != nil {
		return false, fmt.Errorf("record side effect: %w", err)
	}
	return status == "failed", nil
}

func recordSideEffect(ctx context.Context, q querier, now time.Time, storeID, orderID uuid.UUID, kind, status string, detail any) error {
	raw, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, insertSideEffect, storeID, orderID, kind, status, raw, now)
	if err != nil {
		return fmt.Errorf("record side effect: %w", err)
	}
	return nil
}

// insertSideEffect records one side effect's outcome, once.
const insertSideEffect = `INSERT INTO order_side_effects (store_id, order_id, kind, status, detail, created_at)
	VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (order_id, kind) DO NOTHING`

// CreateShipmentForOrder opens a shipment for all of a placed order's
// lines (auto_create_shipment, decisions §12), once: at the location
// holding most of its reservation (else the default), carrier "other"
// until the store has carrier accounts, COD the balance due.
func (db *DB) CreateShipmentForOrder(ctx context.Context, storeID, orderID uuid.UUID) error {
	return db.InTx(ctx, func(tx *Tx) error {
		id, now := NewID(), tx.now()
		tag, err := tx.tx.Exec(ctx, `INSERT INTO shipments (id, store_id, order_id, number, status, location_id, carrier, cod_amount, created_at, updated_at)
			SELECT $3, o.store_id, o.id, o.order_number || '-' || (SELECT count(*) + 1 FROM shipments x WHERE x.store_id = o.store_id AND x.order_id = o.id),
			       'label_created',
			       COALESCE((SELECT a.location_id FROM order_allocations a WHERE a.store_id = o.store_id AND a.order_id = o.id
			                 GROUP BY a.location_id ORDER BY sum(a.reserved) DESC, a.location_id LIMIT 1),
			                (SELECT l.id FROM locations l WHERE l.store_id = o.store_id AND l.is_default)),
			       'other', CASE WHEN o.payment_method = 'cod' THEN GREATEST(o.total - o.paid_total, 0) ELSE 0 END, $4, $4
			FROM orders o
			WHERE o.store_id = $1 AND o.id = $2 AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.store_id = $1 AND s.order_id = $2)`,
			storeID, orderID, id, now)
		if err != nil {
			return fmt.Errorf("create shipment: %w", err)
		}
		if tag.RowsAffected() == 1 {
			if _, err := tx.tx.Exec(ctx, `INSERT INTO shipment_lines (store_id, shipment_id, line_id, quantity)
				SELECT store_id, $3, id, quantity FROM order_lines WHERE store_id = $1 AND order_id = $2 AND quantity > 0`,
				storeID, orderID, id); err != nil {
				return fmt.Errorf("create shipment lines: %w", err)
			}
			if _, err := tx.tx.Exec(ctx, `INSERT INTO shipment_events (store_id, shipment_id, status, occurred_at, source, applied, created_at)
				VALUES ($1, $2, 'label_created', $3, 'system', true, $3)`, storeID, id, now); err != nil {
				return fmt.Errorf("record shipment event: %w", err)
			}
		}
		return tx.RecordSideEffect(ctx, storeID, orderID, "shipment", "succeeded", map[string]any{})
	})
}

// StoreSettings are the switches of what follows a placed order.
type StoreSettings struct {
	AutoCreateShipment    bool
	ChatConfirmations     bool
	ConfirmInChat         bool
	ChatTemplatesApproved []string
	DefaultLanguage       string
	Name                  string
	EInvoicing            bool
	AbandonmentMinutes    int
	// MaxLineQuantity and MaxOrderQuantity bound a storefront cart: pieces
	// per line and pieces in all.
	MaxLineQuantity  int
	MaxOrderQuantity int
	// Timezone is the IANA zone reports are read in: the store's choice, or
	// its currency's default (§17). WeekStart is the first day of a week.
	Timezone  string
	WeekStart string
	Currency  string
	// CardPaymentMinutes is how long a card order waits for its payment
	// before it is cancelled (decisions §18).
	CardPaymentMinutes int
}

// currencyTimezones are the default report zones by currency (§17); any
// other currency reads in UTC.
var currencyTimezones = map[string]string{
	"EGP": "Africa/Cairo", "SAR": "Asia/Riyadh", "AED": "Asia/Dubai", "KWD": "Asia/Kuwait", "BHD": "Asia/Bahrain",
	"OMR": "Asia/Muscat", "JOD": "Asia/Amman", "QAR": "Asia/Qatar",
}

// DefaultTimezone is the zone a store's reports are read in until it
// chooses one.
func DefaultTimezone(currency string) string {
	if tz, ok := currencyTimezones[currency]; ok {
		return tz
	}
	return "UTC"
}

// WeekStarts are the days a store's weeks may start on; the first is the default.
var WeekStarts = []string{"saturday", "sunday", "monday"}

// Bounds of a store's card payment timeout (decisions §18).
const (
	MinCardPaymentMinutes = 10
	MaxCardPaymentMinutes = 1440
)

const storeSettingsQuery = `SELECT auto_create_shipment, chat_confirmations, confirm_in_chat, chat_templates_approved, default_language, name,
		e_invoicing, abandonment_threshold_minutes, max_line_quantity, max_order_quantity, currency, timezone, week_start,
		card_payment_timeout_minutes
	FROM stores WHERE id = $1`

// FindStoreSettings reads a store's automation switches.
func (r reader) FindStoreSettings(ctx context.Context, storeID uuid.UUID) (StoreSettings, error) {
	return scanStoreSettings(r.q.QueryRow(ctx, storeSettingsQuery, storeID))
}

func scanStoreSettings(row pgx.Row) (StoreSettings, error) {
	var (
		s        StoreSettings
		timezone *string
	)
	err := row.Scan(&s.AutoCreateShipment, &s.ChatConfirmations, &s.ConfirmInChat,
		&s.ChatTemplatesApproved, &s.DefaultLanguage, &s.Name, &s.EInvoicing, &s.AbandonmentMinutes, &s.MaxLineQuantity, &s.MaxOrderQuantity,
		&s.Currency, &timezone, &s.WeekStart, &s.CardPaymentMinutes)
	if err != nil {
		return StoreSettings{}, notFoundIfNoRows(err, "find store settings")
	}
	s.Timezone = DefaultTimezone(s.Currency)
	if timezone != nil {
		s.Timezone = *timezone
	}
	return s, nil
}

// ConvertDraft turns a draft into a PENDING order as if it had just been
// placed: stock is reserved now, the COD trust check runs, and
// order.created is written.
func (tx *Tx) ConvertDraft(ctx context.Context, storeID, orderID uuid.UUID, actor *uuid.UUID) (Order, error) {
	o, err := tx.lockOrder(ctx, storeID, orderID)
	if err != nil {
		return Order{}, err
	}
	if o.Status != OrderDraft {
		return Order{}, &TransitionError{From: o.Status, To: OrderPending, AllowedNext: AllowedNext(o.Status)}
	}
	requested := make([]NewOrderLine, 0, len(o.Lines))
	for _, l := range o.Lines {
		if l.VariantID == nil {
			return Order{}, &InvalidError{Field: "lines", Code: "not_found", Message: "a line's variant no longer exists"}
		}
		requested = append(requested, NewOrderLine{VariantID: *l.VariantID, Quantity: l.Quantity})
	}
	if _, err := tx.orderLines(ctx, storeID, requested, true); err != nil {
		return Order{}, err
	}
	limits, err := tx.recheckDiscounts(ctx, o)
	if err != nil {
		return Order{}, err
	}
	if err := tx.countDiscounts(ctx, o, limits); err != nil {
		return Order{}, err
	}
	if err := tx.reserveOrder(ctx, o, UserActor(actor)); err != nil {
		return Order{}, err
	}
	o.Status, o.UpdatedAt = OrderPending, tx.now()
	o.PlacedAt = &o.UpdatedAt
	// placed_started_at stays NULL: the dispatcher starts the order-placed
	// workflow after commit, as for any new order.
	// It counts in analytics from now (§17: a converted draft is placed at
	// its conversion).
	if _, err := tx.tx.Exec(ctx, `UPDATE orders SET status = 'PENDING', updated_at = $3, placed_at = $3 WHERE store_id = $1 AND id = $2`,
		storeID, orderID, o.UpdatedAt); err != nil {
		return Order{}, fmt.Errorf("convert draft: %w", err)
	}
	if err := tx.countStatus(ctx, storeID, OrderDraft, OrderPending); err != nil {
		return Order{}, err
	}
	if err := tx.addActivity(ctx, o, ActivityStatusChanged, "", map[string]any{"from": OrderDraft, "to": OrderPending, "converted": true}, actor); err != nil {
		return Order{}, err
	}
	if err := tx.trustCheck(ctx, o, o.Customer.Phone); err != nil {
		return Order{}, err
	}
	return o, tx.emitOrderCreated(ctx, o)
}

// OrderRef names an order with its store.
type OrderRef struct {
	StoreID uuid.UUID
	OrderID uuid.UUID
}

// Placement is an order whose order-placed workflow is not started yet, with
// the traceparent of the request that placed it (empty when untraced).
type Placement struct {
	OrderRef
	TraceParent    string
	OrderNumber    string
	StoreSubdomain string // for the workflow's summary
}

// FindOrdersAwaitingPlacement lists placed orders whose order-placed
// workflow has not been started yet, oldest first.
func (db *DB) FindOrdersAwaitingPlacement(ctx context.Context, limit int) ([]Placement, error) {
	rows, err := db.pool.Query(ctx, `SELECT o.store_id, o.id, COALESCE(o.trace_parent, ''), o.order_number, COALESCE(s.subdomain, '')
		FROM orders o LEFT JOIN stores s ON s.id = o.store_id
		WHERE o.placed_started_at IS NULL AND o.status <> 'DRAFT' ORDER BY o.created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find orders awaiting placement: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Placement, error) {
		var p Placement
		err := row.Scan(&p.StoreID, &p.OrderID, &p.TraceParent, &p.OrderNumber, &p.StoreSubdomain)
		return p, err
	})
}

// MarkPlacementsStarted records that the orders' order-placed workflows
// exist, in one statement for a dispatcher round's orders. It waits for no
// row: an order another transaction holds (another dispatcher marking it,
// a merchant's change) is left unmarked, and the next round finds its
// workflow started and marks it. Waiting would let two dispatchers that
// mark overlapping rounds in different orders deadlock.
func (db *DB) MarkPlacementsStarted(ctx context.Context, refs []OrderRef) error {
	if len(refs) == 0 {
		return nil
	}
	storeIDs, orderIDs := make([]uuid.UUID, len(refs)), make([]uuid.UUID, len(refs))
	for i, r := range refs {
		storeIDs[i], orderIDs[i] = r.StoreID, r.OrderID
	}
	_, err := db.pool.Exec(ctx, `WITH free AS (
			SELECT o.store_id, o.id FROM orders o JOIN unnest($1::uuid[], $2::uuid[]) AS u(store_id, id) ON o.store_id = u.store_id AND o.id = u.id
			WHERE o.placed_started_at IS NULL
			FOR NO KEY UPDATE OF o SKIP LOCKED)
		UPDATE orders o SET placed_started_at = $3 FROM free WHERE o.store_id = free.store_id AND o.id = free.id`, storeIDs, orderIDs, db.now())
	if err != nil {
		return fmt.Errorf("mark placements started: %w", err)
	}
	return nil
}

// StoreSettingsUpdate is a partial update of the store's switches.
type StoreSettingsUpdate struct {
	Name                  *string
	DefaultLanguage       *string
	AutoCreateShipment    *bool
	ChatConfirmations     *bool
	ConfirmInChat         *bool
	ChatTemplatesApproved []string // nil leaves them
	EInvoicing            *bool
	AbandonmentMinutes    *int
	MaxLineQuantity       *int
	MaxOrderQuantity      *int
	// Timezone set to nil goes back to the currency's default.
	Timezone           Field[string]
	WeekStart          *string
	CardPaymentMinutes *int
}

// UpdateStoreSettings applies a partial update and returns the settings.
func (tx *Tx) UpdateStoreSettings(ctx context.Context, storeID uuid.UUID, upd StoreSettingsUpdate) (StoreSettings, error) {
	_, err := tx.tx.Exec(ctx, `UPDATE stores SET name = COALESCE($2, name), default_language = COALESCE($3, default_language),
			auto_create_shipment = COALESCE($4, auto_create_shipment), chat_confirmations = COALESCE($5, chat_confirmations),
			confirm_in_chat = COALESCE($6, confirm_in_chat), chat_templates_approved = COALESCE($7, chat_templates_approved),
			e_invoicing = COALESCE($9, e_invoicing), abandonment_threshold_minutes = COALESCE($10, abandonment_threshold_minutes),
			max_line_quantity = COALESCE($11, max_line_quantity), max_order_quantity = COALESCE($12, max_order_quantity),
			timezone = CASE WHEN $13 THEN $14 ELSE timezone END, week_start = COALESCE($15, week_start),
			card_payment_timeout_minutes = COALESCE($16, card_payment_timeout_minutes), updated_at = $8
		WHERE id = $1`, storeID, upd.Name, upd.DefaultLanguage, upd.AutoCreateShipment, upd.ChatConfirmations, upd.ConfirmInChat,
		upd.ChatTemplatesApproved, tx.now(), upd.EInvoicing, upd.AbandonmentMinutes, upd.MaxLineQuantity, upd.MaxOrderQuantity,
		upd.Timezone.Set, upd.Timezone.ptr(), upd.WeekStart, upd.CardPaymentMinutes)
	if err != nil {
		return StoreSettings{}, fmt.Errorf("update store settings: %w", err)
	}
	return tx.FindStoreSettings(ctx, storeID)
}
