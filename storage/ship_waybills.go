package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Waybills (decisions §12): each shipment's A6 label, rendered by the
// shipment-waybill workflow into the object store.

// WaybillKey is where a shipment's waybill PDF is kept.
func WaybillKey(storeID, shipmentID uuid.UUID) string {
	return fmt.Sprintf("stores/%s/waybills/%s.pdf", storeID, shipmentID)
}

// RequestWaybill asks for a shipment's waybill again (a new render).
func (tx *Tx) RequestWaybill(ctx context.Context, storeID, id uuid.UUID, actor *uuid.UUID) (Shipment, error) {
	s, o, err := tx.lockShipment(ctx, storeID, id)
	if err != nil {
		return Shipment{}, err
	}
	if s.Status.Final() {
		return Shipment{}, ErrShipmentClosed
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE shipments SET waybill_wanted = waybill_wanted + 1, waybill_status = 'pending', waybill_error = NULL, updated_at = $3
		WHERE store_id = $1 AND id = $2`, storeID, id, tx.now()); err != nil {
		return Shipment{}, fmt.Errorf("request waybill: %w", err)
	}
	if err := tx.notifyDispatcher(ctx); err != nil {
		return Shipment{}, err
	}
	if err := tx.addActivity(ctx, o, ActivityWaybillRequested, "", map[string]any{"shipment_id": id, "number": s.Number}, actor); err != nil {
		return Shipment{}, err
	}
	return tx.FindShipment(ctx, storeID, id)
}

// WaybillRequest is a render a shipment waits for.
type WaybillRequest struct {
	StoreID        uuid.UUID
	ShipmentID     uuid.UUID
	Generation     int
	Number         string
	StoreSubdomain string
}

// FindWaybillsDue lists shipments whose latest render was not started.
func (db *DB) FindWaybillsDue(ctx context.Context, limit int) ([]WaybillRequest, error) {
	rows, err := db.pool.Query(ctx, `SELECT s.store_id, s.id, s.waybill_wanted, s.number, COALESCE(st.subdomain, '')
		FROM shipments s LEFT JOIN stores st ON st.id = s.store_id
		WHERE s.waybill_wanted > s.waybill_started ORDER BY s.created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find waybills due: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (WaybillRequest, error) {
		var w WaybillRequest
		return w, row.Scan(&w.StoreID, &w.ShipmentID, &w.Generation, &w.Number, &w.StoreSubdomain)
	})
}

// MarkWaybillStarted records that a render of the generation was started.
func (db *DB) MarkWaybillStarted(ctx context.Context, w WaybillRequest) error {
	if _, err := db.pool.Exec(ctx, `UPDATE shipments SET waybill_started = GREATEST(waybill_started, $3) WHERE store_id = $1 AND id = $2`,
		w.StoreID, w.ShipmentID, w.Generation); err != nil {
		return fmt.Errorf("mark waybill started: %w", err)
	}
	return nil
}

// WaybillAddress is the consignee's address as the order keeps it.
type WaybillAddress struct {
	Name       string  `json:"name"`
	Phone      string  `json:"phone"`
	Line1      string  `json:"line1"`
	Line2      *string `json:"line2"`
	City       string  `json:"city"`
	Region     *string `json:"region"`
	Country    string  `json:"country"`
	PostalCode *string `json:"postal_code"`
}

// WaybillLine is one line of a waybill's contents.
type WaybillLine struct {
	Name     string
	SKU      *string
	Quantity int
}

// WaybillDocument is everything a waybill prints.
type WaybillDocument struct {
	StoreID        uuid.UUID
	ShipmentID     uuid.UUID
	Number         string
	OrderNumber    string
	StoreName      string
	Carrier        string
	Service        *string
	TrackingNumber *string
	CODAmount      int64
	Currency       string
	Consignee      WaybillAddress
	CustomerName   *string
	CustomerPhone  *string
	SenderName     *string
	SenderAddress  json.RawMessage
	SenderPhone    *string
	Pieces         int
	Lines          []WaybillLine
	CreatedAt      time.Time
	Generation     int
}

// Barcode is what the waybill's Code 128 barcode carries: the tracking
// number, else the shipment number.
func (d WaybillDocument) Barcode() string {
	if d.TrackingNumber != nil && *d.TrackingNumber != "" {
		return *d.TrackingNumber
	}
	return d.Number
}

// FindWaybillDocument reads what a shipment's waybill prints.
func (r reader) FindWaybillDocument(ctx context.Context, storeID, shipmentID uuid.UUID) (WaybillDocument, error) {
	var (
		d       WaybillDocument
		address []byte
	)
	err := r.q.QueryRow(ctx, `SELECT s.store_id, s.id, s.number, o.order_number, st.name, s.carrier, s.service, s.tracking_number, s.cod_amount,
			o.currency, o.shipping_address, o.customer->>'name', o.customer->>'phone', l.name, l.address, l.phone, s.created_at, s.waybill_wanted
		FROM shipments s JOIN orders o ON o.store_id = s.store_id AND o.id = s.order_id JOIN stores st ON st.id = s.store_id
		LEFT JOIN locations l ON l.store_id = s.store_id AND l.id = s.location_id
		WHERE s.store_id = $1 AND s.id = $2`, storeID, shipmentID).Scan(&d.StoreID, &d.ShipmentID, &d.Number, &d.OrderNumber, &d.StoreName,
		&d.Carrier, &d.Service, &d.TrackingNumber, &d.CODAmount, &d.Currency, &address, &d.CustomerName, &d.CustomerPhone,
		&d.SenderName, &d.SenderAddress, &d.SenderPhone, &d.CreatedAt, &d.Generation)
	if err != nil {
		return WaybillDocument{}, notFoundIfNoRows(err, "find waybill "+shipmentID.String())
	}
	if len(address) > 0 {
		_ = json.Unmarshal(address, &d.Consignee)
	}
	rows, err := r.q.Query(ctx, `SELECT ol.name, ol.sku, l.quantity FROM shipment_lines l JOIN order_lines ol ON ol.id = l.line_id
		WHERE l.store_id = $1 AND l.shipment_id = $2 ORDER BY ol.position`, storeID, shipmentID)
	if err != nil {
		return WaybillDocument{}, fmt.Errorf("read waybill lines: %w", err)
	}
	if d.Lines, err = pgx.CollectRows(rows, pgx.RowToStructByPos[WaybillLine]); err != nil {
		return WaybillDocument{}, fmt.Errorf("read waybill lines: %w", err)
	}
	for _, l := range d.Lines {
		d.Pieces += l.Quantity
	}
	return d, nil
}

// FindWaybillDocuments reads the waybills of a store's shipments created
// in [from, to), oldest first (a day's print run), at most limit.
func (r reader) FindWaybillDocuments(ctx context.Context, storeID uuid.UUID, from, to time.Time, limit int) ([]WaybillDocument, error) {
	rows, err := r.q.Query(ctx, `SELECT id FROM shipments WHERE store_id = $1 AND created_at >= $2 AND created_at < $3 AND status <> 'cancelled'
		ORDER BY created_at, id LIMIT $4`, storeID, from, to, limit)
	if err != nil {
		return nil, fmt.Errorf("find day's shipments: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("find day's shipments: %w", err)
	}
	docs := make([]WaybillDocument, 0, len(ids))
	for _, id := range ids {
		d, err := r.FindWaybillDocument(ctx, storeID, id)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// MarkWaybillReady records a rendered waybill, unless a newer render was
// asked for meanwhile.
func (db *DB) MarkWaybillReady(ctx context.Context, storeID, shipmentID uuid.UUID, generation int) error {
	return db.finishWaybill(ctx, storeID, shipmentID, generation, "ready", "")
}

// MarkWaybillFailed records a render that failed for good: the order gets
// autopilot exception waybill_failed.
func (db *DB) MarkWaybillFailed(ctx context.Context, storeID, shipmentID uuid.UUID, generation int, reason string) error {
	return db.finishWaybill(ctx, storeID, shipmentID, generation, "failed", reason)
}

func (db *DB) finishWaybill(ctx context.Context, storeID, shipmentID uuid.UUID, generation int, status, reason string) error {
	return db.InTx(ctx, func(tx *Tx) error {
		var (
			orderID uuid.UUID
			number  string
		)
		err := tx.tx.QueryRow(ctx, `UPDATE shipments SET waybill_status = $4, waybill_error = NULLIF($5, '')
			WHERE store_id = $1 AND id = $2 AND waybill_wanted = $3 RETURNING order_id, number`, storeID, shipmentID, generation, status, reason).
			Scan(&orderID, &number)
		if err == pgx.ErrNoRows {
			return nil // a newer render was asked for; it reports instead
		}
		if err != nil {
			return fmt.Errorf("finish waybill: %w", err)
		}
		o, err := scanOrder(tx.tx.QueryRow(ctx, orderByIDQuery, storeID, orderID))
		if err != nil {
			return fmt.Errorf("find waybill order: %w", err)
		}
		kind := ActivityWaybillReady
		if status == "failed" {
			kind = ActivityWaybillFailed
			if err := tx.FlagOrder(ctx, storeID, orderID, ReasonWaybillFailed,
				fmt.Sprintf("The waybill of shipment %s could not be rendered", number),
				fmt.Sprintf("تعذّر إنشاء بوليصة الشحنة %s", number), map[string]any{"shipment_id": shipmentID, "number": number}); err != nil {
				return err
			}
		}
		return tx.addActivity(ctx, o, kind, "", map[string]any{"shipment_id": shipmentID, "number": number}, nil)
	})
}
