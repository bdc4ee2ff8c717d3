package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// COD remittances (decisions §12): a carrier pays out the cash its couriers
// collected, less its fees, and the payout is checked shipment by shipment.

// Refusals of a remittance.
var (
	ErrDuplicateRemittance = errors.New("duplicate remittance")
	ErrAlreadyRemitted     = errors.New("already remitted")
)

// Discrepancy kinds: the carrier paid less or more than its couriers
// reported collecting, or paid for a shipment that was not delivered.
const (
	DiscrepancyShort        = "short"
	DiscrepancyOver         = "over"
	DiscrepancyNotDelivered = "not_delivered"
)

// RemittanceItem is one shipment's line of a payout.
type RemittanceItem struct {
	ShipmentID     *uuid.UUID
	TrackingNumber *string
	Collected      int64
	Fee            int64
}

// NewRemittance is a carrier's payout as the merchant records it.
type NewRemittance struct {
	CarrierAccountID *uuid.UUID
	Carrier          string
	Reference        string
	RemittedAt       time.Time
	Items            []RemittanceItem
}

// Discrepancy is a shipment whose payout is not what was collected.
type Discrepancy struct {
	ShipmentID uuid.UUID `json:"shipment_id"`
	Expected   int64     `json:"expected"`
	Collected  int64     `json:"collected"`
	Kind       string    `json:"kind"`
}

// RemittanceLine is a recorded item.
type RemittanceLine struct {
	ShipmentID uuid.UUID
	Collected  int64
	Fee        int64
}

// Remittance is a recorded payout.
type Remittance struct {
	ID               uuid.UUID
	StoreID          uuid.UUID
	CarrierAccountID *uuid.UUID
	Carrier          string
	Reference        string
	RemittedAt       time.Time
	TotalCollected   int64
	TotalFees        int64
	Net              int64
	Discrepancies    []Discrepancy
	Items            []RemittanceLine
	CreatedAt        time.Time
}

const remittanceColumns = `id, store_id, carrier_account_id, carrier, reference, remitted_at, total_collected, total_fees, net, discrepancies, created_at`

func scanRemittance(row pgx.Row) (Remittance, error) {
	var (
		r   Remittance
		raw []byte
	)
	if err := row.Scan(&r.ID, &r.StoreID, &r.CarrierAccountID, &r.Carrier, &r.Reference, &r.RemittedAt, &r.TotalCollected, &r.TotalFees,
		&r.Net, &raw, &r.CreatedAt); err != nil {
		return Remittance{}, err
	}
	return r, json.Unmarshal(raw, &r.Discrepancies)
}

// remitted is a shipment named by a payout, held.
type remitted struct {
	id, orderID  uuid.UUID
	status       ShipmentStatus
	codCollected *int64
	codRemitted  int64
	codState     string
	number       string
}

// RecordRemittance records a payout (decisions §12): each named shipment's
// remitted cash and fee, and a discrepancy wherever the payout differs from
// what the courier collected; such a shipment keeps cod_state mismatch until
// a later payout makes up the difference. A reference already recorded for
// the carrier is ErrDuplicateRemittance; a shipment already remitted in full
// is ErrAlreadyRemitted.
func (tx *Tx) RecordRemittance(ctx context.Context, storeID uuid.UUID, in NewRemittance, actor *uuid.UUID) (Remittance, error) {
	carrier := in.Carrier
	if in.CarrierAccountID != nil {
		if err := tx.tx.QueryRow(ctx, `SELECT carrier FROM carrier_accounts WHERE store_id = $1 AND id = $2`, storeID, *in.CarrierAccountID).Scan(&carrier); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return Remittance{}, &InvalidError{Field: "carrier_account_id", Code: "not_found", Message: "is not a carrier account of this store"}
			}
			return Remittance{}, fmt.Errorf("find carrier account: %w", err)
		}
	}
	var exists bool
	if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cod_remittances WHERE store_id = $1 AND carrier = $2 AND reference = $3)`,
		storeID, carrier, in.Reference).Scan(&exists); err != nil {
		return Remittance{}, fmt.Errorf("find remittance: %w", err)
	}
	if exists {
		return Remittance{}, ErrDuplicateRemittance
	}
	r := Remittance{ID: NewID(), StoreID: storeID, CarrierAccountID: in.CarrierAccountID, Carrier: carrier, Reference: in.Reference,
		RemittedAt: in.RemittedAt, Discrepancies: []Discrepancy{}, CreatedAt: tx.now()}
	held := map[uuid.UUID]bool{}
	orders := map[uuid.UUID][]string{}
	for i, item := range in.Items {
		var (
			s     remitted
			err   error
			field = fmt.Sprintf("items[%d].shipment_id", i)
		)
		query := `SELECT id, order_id, status, cod_collected, cod_remitted, cod_state, number FROM shipments WHERE store_id = $1 AND `
		if item.ShipmentID != nil {
			err = tx.tx.QueryRow(ctx, query+`id = $2 FOR UPDATE`, storeID, *item.ShipmentID).
				Scan(&s.id, &s.orderID, &s.status, &s.codCollected, &s.codRemitted, &s.codState, &s.number)
		} else {
			field = fmt.Sprintf("items[%d].tracking_number", i)
			err = tx.tx.QueryRow(ctx, query+`tracking_number = $2 AND status <> 'cancelled' ORDER BY created_at DESC LIMIT 1 FOR UPDATE`, storeID, *item.TrackingNumber).
				Scan(&s.id, &s.orderID, &s.status, &s.codCollected, &s.codRemitted, &s.codState, &s.number)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return Remittance{}, &InvalidError{Field: field, Code: "not_found", Message: "is not a shipment of this store"}
		}
		if err != nil {
			return Remittance{}, fmt.Errorf("find remitted shipment: %w", err)
		}
		if held[s.id] {
			return Remittance{}, &InvalidError{Field: field, Code: "duplicate", Message: "names a shipment another item names"}
		}
		held[s.id] = true
		if s.codState == CODRemitted {
			return Remittance{}, fmt.Errorf("shipment %s: %w", s.number, ErrAlreadyRemitted)
		}
		expected := int64(0)
		if s.status == ShipmentDelivered && s.codCollected != nil {
			expected = *s.codCollected - s.codRemitted
		}
		state := CODRemitted
		switch {
		case s.status != ShipmentDelivered:
			state = CODMismatch
			r.Discrepancies = append(r.Discrepancies, Discrepancy{ShipmentID: s.id, Expected: expected, Collected: item.Collected, Kind: DiscrepancyNotDelivered})
		case item.Collected < expected:
			state = CODMismatch
			r.Discrepancies = append(r.Discrepancies, Discrepancy{ShipmentID: s.id, Expected: expected, Collected: item.Collected, Kind: DiscrepancyShort})
		case item.Collected > expected:
			state = CODMismatch
			r.Discrepancies = append(r.Discrepancies, Discrepancy{ShipmentID: s.id, Expected: expected, Collected: item.Collected, Kind: DiscrepancyOver})
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE shipments SET cod_remitted = cod_remitted + $3, cod_fee = COALESCE(cod_fee, 0) + $4, cod_state = $5, updated_at = $6
			WHERE store_id = $1 AND id = $2`, storeID, s.id, item.Collected, item.Fee, state, r.CreatedAt); err != nil {
			return Remittance{}, fmt.Errorf("remit shipment: %w", err)
		}
		r.Items = append(r.Items, RemittanceLine{ShipmentID: s.id, Collected: item.Collected, Fee: item.Fee})
		r.TotalCollected += item.Collected
		r.TotalFees += item.Fee
		orders[s.orderID] = append(orders[s.orderID], s.number)
	}
	r.Net = r.TotalCollected - r.TotalFees
	raw, err := json.Marshal(r.Discrepancies)
	if err != nil {
		return Remittance{}, err
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO cod_remittances (`+remittanceColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		r.ID, storeID, r.CarrierAccountID, r.Carrier, r.Reference, r.RemittedAt, r.TotalCollected, r.TotalFees, r.Net, raw, r.CreatedAt); err != nil {
		if isUniqueViolation(err, "cod_remittances_store_id_carrier_reference_key") {
			return Remittance{}, ErrDuplicateRemittance
		}
		return Remittance{}, fmt.Errorf("record remittance: %w", err)
	}
	shipmentIDs, collected, fees := make([]uuid.UUID, len(r.Items)), make([]int64, len(r.Items)), make([]int64, len(r.Items))
	for i, item := range r.Items {
		shipmentIDs[i], collected[i], fees[i] = item.ShipmentID, item.Collected, item.Fee
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO cod_remittance_items (store_id, remittance_id, shipment_id, collected, fee)
		SELECT $1, $2, u.shipment_id, u.collected, u.fee FROM unnest($3::uuid[], $4::bigint[], $5::bigint[]) AS u(shipment_id, collected, fee)`,
		storeID, r.ID, shipmentIDs, collected, fees); err != nil {
		return Remittance{}, fmt.Errorf("record remittance items: %w", err)
	}
	for orderID, numbers := range orders {
		o, err := scanOrder(tx.tx.QueryRow(ctx, orderByIDQuery, storeID, orderID))
		if err != nil {
			return Remittance{}, fmt.Errorf("find remitted order: %w", err)
		}
		if err := tx.addActivity(ctx, o, ActivityCODRemitted, "", map[string]any{"remittance_id": r.ID, "reference": r.Reference,
			"shipments": numbers}, actor); err != nil {
			return Remittance{}, err
		}
	}
	return r, nil
}

// FindRemittances lists a store's payouts, newest first.
func (r reader) FindRemittances(ctx context.Context, storeID uuid.UUID, page Page) ([]Remittance, int, error) {
	list, total, err := findPage(ctx, r, "remittances", listQuery{
		columns: remittanceColumns, from: "FROM cod_remittances WHERE store_id = $1", args: []any{storeID}, orderBy: "created_at DESC, id DESC",
	}, page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (Remittance, error) { return scanRemittance(row) })
	if err != nil {
		return nil, 0, err
	}
	for i := range list {
		if list[i].Items, err = r.remittanceItems(ctx, storeID, list[i].ID); err != nil {
			return nil, 0, err
		}
	}
	return list, total, nil
}

// FindRemittance reads one payout with its items.
func (r reader) FindRemittance(ctx context.Context, storeID, id uuid.UUID) (Remittance, error) {
	rem, err := scanRemittance(r.q.QueryRow(ctx, `SELECT `+remittanceColumns+` FROM cod_remittances WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Remittance{}, notFoundIfNoRows(err, "find remittance "+id.String())
	}
	rem.Items, err = r.remittanceItems(ctx, storeID, id)
	return rem, err
}

func (r reader) remittanceItems(ctx context.Context, storeID, id uuid.UUID) ([]RemittanceLine, error) {
	rows, err := r.q.Query(ctx, `SELECT shipment_id, collected, fee FROM cod_remittance_items WHERE store_id = $1 AND remittance_id = $2 ORDER BY shipment_id`,
		storeID, id)
	if err != nil {
		return nil, fmt.Errorf("read remittance items: %w", err)
	}
	items, err := pgx.CollectRows(rows, pgx.RowToStructByPos[RemittanceLine])
	if err != nil {
		return nil, fmt.Errorf("read remittance items: %w", err)
	}
	return items, nil
}
