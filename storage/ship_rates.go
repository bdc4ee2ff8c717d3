package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"golang.org/x/text/unicode/norm"
)

// Shipping zones and rates (decisions §15).

// NormalizeAreaName is how place names compare: trimmed, NFKC, case-folded,
// without tashkeel or tatweel, أ/إ/آ as ا, ة as ه, ى as ي, inner spaces
// collapsed — so الجيزه finds الجيزة.
func NormalizeAreaName(name string) string {
	s := foldCase.String(norm.NFKC.String(name))
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r >= 'ً' && r <= 'ٟ', r == 'ٰ', r == 'ـ':
			continue
		case r == 'أ', r == 'إ', r == 'آ':
			r = 'ا'
		case r == 'ة':
			r = 'ه'
		case r == 'ى':
			r = 'ي'
		}
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ZoneArea is a country, optionally narrowed to a region or to cities.
type ZoneArea struct {
	Country string   `json:"country"`
	Region  *string  `json:"region,omitempty"`
	Cities  []string `json:"cities,omitempty"`
}

// ShippingZone is a set of areas priced by its rates.
type ShippingZone struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Name      string
	Areas     []ZoneArea
	Rates     []ShippingRate
	CreatedAt time.Time
	UpdatedAt time.Time
}

// WeightBand prices carts up to a weight.
type WeightBand struct {
	UpToGrams int   `json:"up_to_grams"`
	Price     int64 `json:"price"`
}

// ShippingRate is one way to ship to a zone.
type ShippingRate struct {
	ID                uuid.UUID
	ZoneID            uuid.UUID
	Name              string
	Price             int64
	WeightBands       []WeightBand
	AdditionalPerKg   *int64
	FreeAboveSubtotal *int64
	CODAvailable      bool
	CODFee            int64
	DeliveryDaysMin   *int
	DeliveryDaysMax   *int
	Position          int
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// AreaConflict is an area another zone already covers.
type AreaConflict struct {
	ZoneID  uuid.UUID `json:"zone_id"`
	Country string    `json:"country"`
	Region  *string   `json:"region,omitempty"`
	City    *string   `json:"city,omitempty"`
}

// AreaOverlapError names the areas other zones already cover.
type AreaOverlapError struct{ Conflicts []AreaConflict }

func (e *AreaOverlapError) Error() string {
	return fmt.Sprintf("%d areas overlap other zones", len(e.Conflicts))
}

// areaRow is one stored row of an area: a country, region or city key.
type areaRow struct {
	country, regionKey, cityKey string
	region, city                *string
}

func areaRows(areas []ZoneArea) []areaRow {
	var rows []areaRow
	for _, a := range areas {
		regionKey := ""
		if a.Region != nil {
			regionKey = NormalizeAreaName(*a.Region)
		}
		if len(a.Cities) == 0 {
			rows = append(rows, areaRow{country: a.Country, regionKey: regionKey, region: a.Region})
			continue
		}
		for _, c := range a.Cities {
			rows = append(rows, areaRow{country: a.Country, regionKey: regionKey, cityKey: NormalizeAreaName(c), region: a.Region, city: &c})
		}
	}
	return rows
}

// putAreas replaces a zone's areas, refusing (AreaOverlapError) any that
// another zone of the store covers; the same key twice in one zone is kept once.
func (tx *Tx) putAreas(ctx context.Context, storeID, zoneID uuid.UUID, areas []ZoneArea) error {
	if _, err := tx.tx.Exec(ctx, `DELETE FROM shipping_zone_areas WHERE store_id = $1 AND zone_id = $2`, storeID, zoneID); err != nil {
		return fmt.Errorf("replace zone areas: %w", err)
	}
	rows := areaRows(areas)
	var conflicts []AreaConflict
	for i, r := range rows {
		var other uuid.UUID
		err := tx.tx.QueryRow(ctx, `INSERT INTO shipping_zone_areas (store_id, zone_id, position, country, region, city, region_key, city_key)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (store_id, country, region_key, city_key) DO UPDATE SET position = shipping_zone_areas.position
			RETURNING zone_id`, storeID, zoneID, i, r.country, r.region, r.city, r.regionKey, r.cityKey).Scan(&other)
		if err != nil {
			return fmt.Errorf("add zone area: %w", err)
		}
		if other != zoneID {
			conflicts = append(conflicts, AreaConflict{ZoneID: other, Country: r.country, Region: r.region, City: r.city})
		}
	}
	if len(conflicts) > 0 {
		return &AreaOverlapError{Conflicts: conflicts}
	}
	return nil
}

// CreateZone stores a zone and its areas.
func (tx *Tx) CreateZone(ctx context.Context, storeID uuid.UUID, name string, areas []ZoneArea) (ShippingZone, error) {
	id, now := NewID(), tx.now()
	if _, err := tx.tx.Exec(ctx, `INSERT INTO shipping_zones (id, store_id, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)`,
		id, storeID, name, now); err != nil {
		return ShippingZone{}, fmt.Errorf("create zone: %w", err)
	}
	if err := tx.putAreas(ctx, storeID, id, areas); err != nil {
		return ShippingZone{}, err
	}
	return tx.FindZone(ctx, storeID, id)
}

// UpdateZone renames a zone and/or replaces its areas whole.
func (tx *Tx) UpdateZone(ctx context.Context, storeID, id uuid.UUID, name *string, areas []ZoneArea) (ShippingZone, error) {
	tag, err := tx.tx.Exec(ctx, `UPDATE shipping_zones SET name = COALESCE($3, name), updated_at = $4 WHERE store_id = $1 AND id = $2`,
		storeID, id, name, tx.now())
	if err != nil {
		return ShippingZone{}, fmt.Errorf("update zone: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ShippingZone{}, fmt.Errorf("update zone %s: %w", id, ErrNotFound)
	}
	if areas != nil {
		if err := tx.putAreas(ctx, storeID, id, areas); err != nil {
			return ShippingZone{}, err
		}
	}
	return tx.FindZone(ctx, storeID, id)
}

// DeleteZone removes a zone with its areas and rates; placed orders keep
// their snapshot.
func (tx *Tx) DeleteZone(ctx context.Context, storeID, id uuid.UUID) error {
	tag, err := tx.tx.Exec(ctx, `DELETE FROM shipping_zones WHERE store_id = $1 AND id = $2`, storeID, id)
	if err != nil {
		return fmt.Errorf("delete zone: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete zone %s: %w", id, ErrNotFound)
	}
	return nil
}

// FindZone reads a zone with its areas and rates.
func (r reader) FindZone(ctx context.Context, storeID, id uuid.UUID) (ShippingZone, error) {
	zones, err := r.findZones(ctx, storeID, &id)
	if err != nil {
		return ShippingZone{}, err
	}
	if len(zones) == 0 {
		return ShippingZone{}, fmt.Errorf("find zone %s: %w", id, ErrNotFound)
	}
	return zones[0], nil
}

// FindZones lists a store's zones, oldest first, with areas and rates.
func (r reader) FindZones(ctx context.Context, storeID uuid.UUID) ([]ShippingZone, error) {
	return r.findZones(ctx, storeID, nil)
}

func (r reader) findZones(ctx context.Context, storeID uuid.UUID, only *uuid.UUID) ([]ShippingZone, error) {
	rows, err := r.q.Query(ctx, `SELECT id, store_id, name, created_at, updated_at FROM shipping_zones
		WHERE store_id = $1 AND ($2::uuid IS NULL OR id = $2) ORDER BY created_at, id`, storeID, only)
	if err != nil {
		return nil, fmt.Errorf("find zones: %w", err)
	}
	zones, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ShippingZone, error) {
		var z ShippingZone
		return z, row.Scan(&z.ID, &z.StoreID, &z.Name, &z.CreatedAt, &z.UpdatedAt)
	})
	if err != nil || len(zones) == 0 {
		return zones, err
	}
	byID := map[uuid.UUID]*ShippingZone{}
	for i := range zones {
		zones[i].Areas, zones[i].Rates = []ZoneArea{}, []ShippingRate{}
		byID[zones[i].ID] = &zones[i]
	}
	areaRowsQ, err := r.q.Query(ctx, `SELECT zone_id, country, region, city FROM shipping_zone_areas
		WHERE store_id = $1 AND ($2::uuid IS NULL OR zone_id = $2) ORDER BY zone_id, position`, storeID, only)
	if err != nil {
		return nil, fmt.Errorf("find zone areas: %w", err)
	}
	var (
		zoneID       uuid.UUID
		country      string
		region, city *string
	)
	if _, err := pgx.ForEachRow(areaRowsQ, []any{&zoneID, &country, &region, &city}, func() error {
		z := byID[zoneID]
		// Rows of one area (its cities) fold back into one area.
		if n := len(z.Areas); city != nil && n > 0 && z.Areas[n-1].Country == country && equalPtr(z.Areas[n-1].Region, region) &&
			len(z.Areas[n-1].Cities) > 0 {
			z.Areas[n-1].Cities = append(z.Areas[n-1].Cities, *city)
			return nil
		}
		a := ZoneArea{Country: country, Region: region}
		if city != nil {
			a.Cities = []string{*city}
		}
		z.Areas = append(z.Areas, a)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("find zone areas: %w", err)
	}
	rates, err := r.findRates(ctx, storeID, only)
	if err != nil {
		return nil, err
	}
	for _, rate := range rates {
		z := byID[rate.ZoneID]
		z.Rates = append(z.Rates, rate)
	}
	return zones, nil
}

const rateColumns = `id, zone_id, name, price, weight_bands, additional_per_kg, free_above_subtotal, cod_available, cod_fee,
	delivery_days_min, delivery_days_max, position, created_at, updated_at`

func scanRate(row pgx.Row) (ShippingRate, error) {
	var r ShippingRate
	err := row.Scan(&r.ID, &r.ZoneID, &r.Name, &r.Price, &r.WeightBands, &r.AdditionalPerKg, &r.FreeAboveSubtotal, &r.CODAvailable,
		&r.CODFee, &r.DeliveryDaysMin, &r.DeliveryDaysMax, &r.Position, &r.CreatedAt, &r.UpdatedAt)
	if r.WeightBands == nil {
		r.WeightBands = []WeightBand{}
	}
	return r, err
}

func (r reader) findRates(ctx context.Context, storeID uuid.UUID, zone *uuid.UUID) ([]ShippingRate, error) {
	rows, err := r.q.Query(ctx, `SELECT `+rateColumns+` FROM shipping_rates
		WHERE store_id = $1 AND ($2::uuid IS NULL OR zone_id = $2) ORDER BY zone_id, position, created_at, id`, storeID, zone)
	if err != nil {
		return nil, fmt.Errorf("find rates: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ShippingRate, error) { return scanRate(row) })
}

// CreateRate adds a rate to a zone of the store.
func (tx *Tx) CreateRate(ctx context.Context, storeID uuid.UUID, rate ShippingRate) (ShippingRate, error) {
	rate.ID, rate.CreatedAt = NewID(), tx.now()
	if rate.WeightBands == nil {
		rate.WeightBands = []WeightBand{}
	}
	row := tx.tx.QueryRow(ctx, `INSERT INTO shipping_rates (id, store_id, zone_id, name, price, weight_bands, additional_per_kg, free_above_subtotal,
			cod_available, cod_fee, delivery_days_min, delivery_days_max, position, created_at, updated_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14
		WHERE EXISTS (SELECT 1 FROM shipping_zones WHERE store_id = $2 AND id = $3)
		RETURNING `+rateColumns, rate.ID, storeID, rate.ZoneID, rate.Name, rate.Price, rate.WeightBands, rate.AdditionalPerKg,
		rate.FreeAboveSubtotal, rate.CODAvailable, rate.CODFee, rate.DeliveryDaysMin, rate.DeliveryDaysMax, rate.Position, rate.CreatedAt)
	created, err := scanRate(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return ShippingRate{}, fmt.Errorf("create rate in zone %s: %w", rate.ZoneID, ErrNotFound)
	}
	if err != nil {
		return ShippingRate{}, fmt.Errorf("create rate: %w", err)
	}
	return created, nil
}

// ReplaceRate stores a rate's new state whole.
func (tx *Tx) ReplaceRate(ctx context.Context, storeID uuid.UUID, rate ShippingRate) (ShippingRate, error) {
	if rate.WeightBands == nil {
		rate.WeightBands = []WeightBand{}
	}
	updated, err := scanRate(tx.tx.QueryRow(ctx, `UPDATE shipping_rates SET name = $4, price = $5, weight_bands = $6, additional_per_kg = $7,
			free_above_subtotal = $8, cod_available = $9, cod_fee = $10, delivery_days_min = $11, delivery_days_max = $12, position = $13,
			updated_at = $14
		WHERE store_id = $1 AND zone_id = $2 AND id = $3 RETURNING `+rateColumns, storeID, rate.ZoneID, rate.ID, rate.Name, rate.Price,
		rate.WeightBands, rate.AdditionalPerKg, rate.FreeAboveSubtotal, rate.CODAvailable, rate.CODFee, rate.DeliveryDaysMin,
		rate.DeliveryDaysMax, rate.Position, tx.now()))
	if err != nil {
		return ShippingRate{}, notFoundIfNoRows(err, "update rate "+rate.ID.String())
	}
	return updated, nil
}

// FindRate reads a rate of a zone of the store.
func (r reader) FindRate(ctx context.Context, storeID, zoneID, id uuid.UUID) (ShippingRate, error) {
	rate, err := scanRate(r.q.QueryRow(ctx, `SELECT `+rateColumns+` FROM shipping_rates WHERE store_id = $1 AND zone_id = $2 AND id = $3`,
		storeID, zoneID, id))
	if err != nil {
		return ShippingRate{}, notFoundIfNoRows(err, "find rate "+id.String())
	}
	return rate, nil
}

// DeleteRate removes a rate.
func (tx *Tx) DeleteRate(ctx context.Context, storeID, zoneID, id uuid.UUID) error {
	tag, err := tx.tx.Exec(ctx, `DELETE FROM shipping_rates WHERE store_id = $1 AND zone_id = $2 AND id = $3`, storeID, zoneID, id)
	if err != nil {
		return fmt.Errorf("delete rate: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete rate %s: %w", id, ErrNotFound)
	}
	return nil
}

// RateOption is a rate offered for a cart: its fee (0 when free), the COD
// fee (only for cod), whether free_above_subtotal waived it.
type RateOption struct {
	RateID          uuid.UUID
	Name            string
	Fee             int64
	CODFee          int64
	Free            bool
	DeliveryDaysMin *int
	DeliveryDaysMax *int
	Position        int
}

// RateOptions are the rates a cart of weightGrams and discountedSubtotal
// can ship with, paying by paymentMethod, cheapest first (then by
// position): with weight bands, the first band holding the weight; past
// the last, each started kilogram adds additional_per_kg, or the rate is
// not offered (nor when that fee passes MaxAmount); cod_available false rates are not offered to cod, and
// cod_fee counts only for cod.
func RateOptions(rates []ShippingRate, weightGrams int, discountedSubtotal int64, paymentMethod string) []RateOption {
	options := []RateOption{}
	for _, r := range rates {
		quote, refused := rateCharge(r, weightGrams, paymentMethod)
		if refused != "" {
			continue
		}
		o := RateOption{RateID: r.ID, Name: r.Name, Fee: quote.Fee, CODFee: quote.CODFee, DeliveryDaysMin: r.DeliveryDaysMin,
			DeliveryDaysMax: r.DeliveryDaysMax, Position: r.Position}
		if r.FreeAboveSubtotal != nil && discountedSubtotal >= *r.FreeAboveSubtotal {
			o.Fee, o.Free = 0, true
		}
		options = append(options, o)
	}
	slices.SortStableFunc(options, func(a, b RateOption) int {
		if d := (a.Fee + a.CODFee) - (b.Fee + b.CODFee); d != 0 {
			return int(max(min(d, 1), -1))
		}
		return a.Position - b.Position
	})
	return options
}

// rateCharge is what a rate charges a cart of weightGrams paid by
// paymentMethod, before free_above_subtotal (left in the quote for the
// pricing to compare with the discounted subtotal), or the field that
// refuses it: payment_method (no COD on this rate) or shipping_rate_id
// (past the last band, no per-kilogram price, or a fee past MaxAmount).
func rateCharge(r ShippingRate, weightGrams int, paymentMethod string) (ShippingQuote, string) {
	cod := paymentMethod == "cod"
	if cod && !r.CODAvailable {
		return ShippingQuote{}, "payment_method"
	}
	fee, ok := bandFee(r, weightGrams)
	if !ok {
		return ShippingQuote{}, "shipping_rate_id"
	}
	quote := ShippingQuote{Fee: fee, FreeAboveSubtotal: r.FreeAboveSubtotal}
	if cod {
		quote.CODFee = r.CODFee
	}
	return quote, ""
}

func bandFee(r ShippingRate, weightGrams int) (int64, bool) {
	if len(r.WeightBands) == 0 {
		return r.Price, true
	}
	for _, b := range r.WeightBands {
		if weightGrams <= b.UpToGrams {
			return b.Price, true
		}
	}
	if r.AdditionalPerKg == nil {
		return 0, false
	}
	last := r.WeightBands[len(r.WeightBands)-1]
	kilos := (weightGrams - last.UpToGrams + 999) / 1000
	// A fee past MaxAmount, or past int64, is no fee: the rate is not offered
	// (decisions part two: no arithmetic overflows, beyond answers 422).
	extra, ok := mulAmount(*r.AdditionalPerKg, kilos)
	if !ok {
		return 0, false
	}
	fee, ok := addAmounts(last.Price, extra)
	return fee, ok && fee <= MaxAmount
}

// ShipTo is where a cart or a storefront order goes, as zones match it.
type ShipTo struct {
	Country string  `json:"country"`
	Region  *string `json:"region,omitempty"`
	City    string  `json:"city"`
}

// Shipping statuses of a cart (§15).
const (
	ShippingNotRequired    = "not_required"
	ShippingNeedsAddress   = "needs_address"
	ShippingQuoted         = "quoted"
	ShippingNotDeliverable = "not_deliverable"
)

// ShippingChoice is how a cart ships: its status, the options of the zone
// that covers it, and the rate chosen with the weight it was charged for.
type ShippingChoice struct {
	Status  string
	ZoneID  *uuid.UUID
	Options []RateOption
	Rate    *ShippingRate
	Quote   *ShippingQuote // the chosen rate's charge, free_above_subtotal left to the pricing
	Grams   int
	// Refused, when the rate asked for is not offered (or no rate of the
	// zone is), is the field to blame: shipping_rate_id or payment_method.
	Refused string
}

// chooseShipping quotes a cart of grams going to shipTo: not_required in a store
// without zones; needs_address without an address; not_deliverable when no
// zone covers it, or none of its rates is offered; else quoted, with the
// rate asked for when it is offered, else the cheapest.
func (r reader) chooseShipping(ctx context.Context, storeID uuid.UUID, shipTo *ShipTo, grams int, discountedSubtotal int64,
	paymentMethod string, wanted *uuid.UUID) (ShippingChoice, error) {
	choice := ShippingChoice{Status: ShippingNotRequired, Options: []RateOption{}, Grams: grams}
	var (
		zoneID uuid.UUID
		err    error
	)
	if shipTo != nil {
		zoneID, err = r.MatchZone(ctx, storeID, shipTo.Country, shipTo.Region, shipTo.City)
	}
	if shipTo == nil || errors.Is(err, ErrNotDeliverable) {
		has, err := r.HasZones(ctx, storeID)
		switch {
		case err != nil:
			return ShippingChoice{}, fmt.Errorf("find zones: %w", err)
		case has && shipTo == nil:
			choice.Status = ShippingNeedsAddress
		case has:
			choice.Status = ShippingNotDeliverable
		}
		return choice, nil
	}
	if err != nil {
		return ShippingChoice{}, err
	}
	rates, err := r.findRates(ctx, storeID, &zoneID)
	if err != nil {
		return ShippingChoice{}, err
	}
	choice.Status, choice.ZoneID = ShippingQuoted, &zoneID
	choice.Options = RateOptions(rates, choice.Grams, discountedSubtotal, paymentMethod)
	if len(choice.Options) == 0 {
		choice.Status, choice.Refused = ShippingNotDeliverable, "shipping_rate_id"
		if paymentMethod == "cod" && len(RateOptions(rates, choice.Grams, discountedSubtotal, "")) > 0 {
			choice.Refused = "payment_method"
		}
		return choice, nil
	}
	chosen := choice.Options[0].RateID
	if wanted != nil {
		if i := slices.IndexFunc(choice.Options, func(o RateOption) bool { return o.RateID == *wanted }); i >= 0 {
			chosen = *wanted
		} else {
			choice.Refused = "shipping_rate_id"
			if i := slices.IndexFunc(rates, func(r ShippingRate) bool { return r.ID == *wanted }); i >= 0 {
				_, choice.Refused = rateCharge(rates[i], choice.Grams, paymentMethod)
			}
		}
	}
	i := slices.IndexFunc(rates, func(r ShippingRate) bool { return r.ID == chosen })
	quote, _ := rateCharge(rates[i], choice.Grams, paymentMethod)
	choice.Rate, choice.Quote = &rates[i], &quote
	return choice, nil
}

// ErrNotDeliverable is an address no zone of the store covers.
var ErrNotDeliverable = errors.New("not deliverable")

// MatchZone finds the zone an address belongs to: the most specific of a
// city, region or country area, by normalised names.
func (r reader) MatchZone(ctx context.Context, storeID uuid.UUID, country string, region *string, city string) (uuid.UUID, error) {
	regionKey := ""
	if region != nil {
		regionKey = NormalizeAreaName(*region)
	}
	var zoneID uuid.UUID
	err := r.q.QueryRow(ctx, `SELECT zone_id FROM shipping_zone_areas
		WHERE store_id = $1 AND country = $2 AND (
			(city_key = $4 AND (region_key = '' OR region_key = $3))
			OR (city_key = '' AND region_key <> '' AND region_key = $3)
			OR (city_key = '' AND region_key = ''))
		ORDER BY (city_key <> '') DESC, (region_key <> '') DESC LIMIT 1`, storeID, strings.ToUpper(country), regionKey, NormalizeAreaName(city)).Scan(&zoneID)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrNotDeliverable
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("match zone: %w", err)
	}
	return zoneID, nil
}

// HasZones reports whether a store has any shipping zone (without one,
// everything ships for 0, as before).
func (r reader) HasZones(ctx context.Context, storeID uuid.UUID) (bool, error) {
	var has bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM shipping_zones WHERE store_id = $1)`, storeID).Scan(&has)
	return has, err
}

// CartItem is a variant and a quantity to price or weigh.
type CartItem struct {
	VariantID uuid.UUID
	Quantity  int
}

// WeighItems is the items' weight (a variant's weight_grams, else its
// product's, else 0) and subtotal; an unknown variant is a 422 on its line.
func (r reader) WeighItems(ctx context.Context, storeID uuid.UUID, items []CartItem) (grams int, subtotal int64, err error) {
	ids := make([]uuid.UUID, len(items))
	for i, it := range items {
		ids[i] = it.VariantID
	}
	rows, err := r.q.Query(ctx, `SELECT v.id, COALESCE(v.weight_grams, p.weight_grams, 0), v.price FROM variants v
		JOIN products p ON p.store_id = v.store_id AND p.id = v.product_id
		WHERE v.store_id = $1 AND v.id = ANY($2)`, storeID, ids)
	if err != nil {
		return 0, 0, fmt.Errorf("weigh items: %w", err)
	}
	type found struct {
		grams int
		price int64
	}
	byID := map[uuid.UUID]found{}
	var (
		id    uuid.UUID
		f     found
		price int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &f.grams, &price}, func() error {
		f.price = price
		byID[id] = f
		return nil
	}); err != nil {
		return 0, 0, fmt.Errorf("weigh items: %w", err)
	}
	for i, it := range items {
		v, ok := byID[it.VariantID]
		if !ok {
			return 0, 0, &InvalidError{Field: fmt.Sprintf("lines[%d].variant_id", i), Code: "not_found", Message: "is not a variant of the store"}
		}
		grams += v.grams * it.Quantity
		subtotal += v.price * int64(it.Quantity)
	}
	return grams, subtotal, nil
}

// ShippingAreas lists every country a store ships to with the regions and
// cities its zones name, for a storefront's picker.
type ShippingAreas struct {
	Country string
	Regions []string
	Cities  []string
}

// FindShippingAreas reads the picker's areas, countries in order.
func (r reader) FindShippingAreas(ctx context.Context, storeID uuid.UUID) ([]ShippingAreas, error) {
	rows, err := r.q.Query(ctx, `SELECT country,
			COALESCE(array_agg(DISTINCT region ORDER BY region) FILTER (WHERE region IS NOT NULL), '{}'),
			COALESCE(array_agg(DISTINCT city ORDER BY city) FILTER (WHERE city IS NOT NULL), '{}')
		FROM shipping_zone_areas WHERE store_id = $1 GROUP BY country ORDER BY country`, storeID)
	if err != nil {
		return nil, fmt.Errorf("find shipping areas: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ShippingAreas, error) {
		var a ShippingAreas
		return a, row.Scan(&a.Country, &a.Regions, &a.Cities)
	})
}
