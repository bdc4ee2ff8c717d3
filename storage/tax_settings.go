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

// Tax settings (decisions §27): the regime a store's invoices follow, its
// legal identity as they print it, its default rate and the ZATCA CSID,
// whose private key is sealed like the gateways' secrets (§18).

// Tax regimes: none issues no invoices; zatca and eta are Saudi Arabia's
// and Egypt's e-invoicing.
const (
	TaxRegimeNone  = "none"
	TaxRegimeZATCA = "zatca"
	TaxRegimeETA   = "eta"
)

// TaxRegimes are the regimes in the order the API lists them.
var TaxRegimes = []string{TaxRegimeNone, TaxRegimeZATCA, TaxRegimeETA}

// TaxClasses are a product's tax classes.
var TaxClasses = []string{TaxClassStandard, TaxClassZero, TaxClassExempt}

// TaxAddress is the seller's address as invoices print it (for ZATCA the
// Saudi national address).
type TaxAddress struct {
	BuildingNumber   string  `json:"building_number"`
	Street           string  `json:"street"`
	District         string  `json:"district"`
	City             string  `json:"city"`
	PostalCode       string  `json:"postal_code"`
	Country          string  `json:"country"`
	AdditionalNumber *string `json:"additional_number,omitempty"`
}

// TaxSettings are a store's; a store that never set them reads the
// defaults (regime none, its currency's rate, its name).
type TaxSettings struct {
	StoreID          uuid.UUID
	Regime           string
	PricesIncludeTax bool
	DefaultRateBP    int
	LegalName        Bilingual
	VATNumber        *string
	CRNumber         *string
	Address          *TaxAddress
	InvoicePrefix    string
	// ZATCACertificate is the CSID certificate (PEM); its key is sealed.
	ZATCACertificate *string
	UpdatedAt        *time.Time
}

const taxSettingsColumns = `t.regime, t.prices_include_tax, t.default_rate_bp, t.legal_name, t.vat_number, t.cr_number, t.address,
	t.invoice_prefix, t.zatca_certificate, t.updated_at`

func (r reader) findTaxSettings(ctx context.Context, storeID uuid.UUID, lock string) (TaxSettings, error) {
	s := TaxSettings{StoreID: storeID}
	var (
		name, currency string
		regime         *string
		legal, address []byte
		rate           *int
		include        *bool
		prefix         *string
	)
	err := r.q.QueryRow(ctx, `SELECT s.name, s.currency, `+taxSettingsColumns+`
		FROM stores s LEFT JOIN store_tax_settings t ON t.store_id = s.id WHERE s.id = $1`+lock, storeID).Scan(&name, &currency,
		&regime, &include, &rate, &legal, &s.VATNumber, &s.CRNumber, &address, &prefix, &s.ZATCACertificate, &s.UpdatedAt)
	if err != nil {
		return TaxSettings{}, notFoundIfNoRows(err, "find tax settings")
	}
	if regime == nil { // never set
		return TaxSettings{StoreID: storeID, Regime: TaxRegimeNone, PricesIncludeTax: true, DefaultRateBP: DefaultTaxRateBP(currency),
			LegalName: Bilingual{AR: name, EN: name}, InvoicePrefix: "INV"}, nil
	}
	s.Regime, s.PricesIncludeTax, s.DefaultRateBP, s.InvoicePrefix = *regime, *include, *rate, *prefix
	if err := json.Unmarshal(legal, &s.LegalName); err != nil {
		return TaxSettings{}, fmt.Errorf("decode legal name: %w", err)
	}
	if len(address) > 0 {
		if err := json.Unmarshal(address, &s.Address); err != nil {
			return TaxSettings{}, fmt.Errorf("decode tax address: %w", err)
		}
	}
	return s, nil
}

// FindTaxSettings reads a store's tax settings.
func (r reader) FindTaxSettings(ctx context.Context, storeID uuid.UUID) (TaxSettings, error) {
	return r.findTaxSettings(ctx, storeID, "")
}

// LockTaxSettings reads a store's tax settings and holds the store's row
// until the transaction ends.
func (tx *Tx) LockTaxSettings(ctx context.Context, storeID uuid.UUID) (TaxSettings, error) {
	return tx.findTaxSettings(ctx, storeID, " FOR UPDATE OF s")
}

func zatcaKeyPurpose(storeID uuid.UUID) string { return "zatca:" + storeID.String() + ":private_key" }

// PutTaxSettings replaces a store's tax settings. privateKey, when given,
// replaces the sealed ZATCA key (with s.ZATCACertificate); nil keeps the
// stored one. The regime turns invoicing (stores.e_invoicing) on or off.
func (tx *Tx) PutTaxSettings(ctx context.Context, sealer *Sealer, s TaxSettings, privateKey *string) (TaxSettings, error) {
	var sealed []byte
	if privateKey != nil {
		if sealer == nil {
			return TaxSettings{}, errors.New("seal the ZATCA key: no secrets key")
		}
		var err error
		if sealed, err = sealer.Seal(*privateKey, zatcaKeyPurpose(s.StoreID)); err != nil {
			return TaxSettings{}, err
		}
	}
	legal, err := json.Marshal(s.LegalName)
	if err != nil {
		return TaxSettings{}, err
	}
	var address []byte
	if s.Address != nil {
		if address, err = json.Marshal(s.Address); err != nil {
			return TaxSettings{}, err
		}
	}
	now := tx.now()
	if _, err := tx.tx.Exec(ctx, `INSERT INTO store_tax_settings (store_id, regime, prices_include_tax, default_rate_bp, legal_name,
			vat_number, cr_number, address, invoice_prefix, zatca_certificate, zatca_private_key_sealed, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (store_id) DO UPDATE SET regime = $2, prices_include_tax = $3, default_rate_bp = $4, legal_name = $5,
			vat_number = $6, cr_number = $7, address = $8, invoice_prefix = $9,
			zatca_certificate = CASE WHEN $11::bytea IS NULL THEN store_tax_settings.zatca_certificate ELSE $10 END,
			zatca_private_key_sealed = COALESCE($11, store_tax_settings.zatca_private_key_sealed), updated_at = $12`,
		s.StoreID, s.Regime, s.PricesIncludeTax, s.DefaultRateBP, legal, s.VATNumber, s.CRNumber, address, s.InvoicePrefix,
		s.ZATCACertificate, sealed, now); err != nil {
		return TaxSettings{}, fmt.Errorf("save tax settings: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE stores SET e_invoicing = $2, updated_at = $3 WHERE id = $1`,
		s.StoreID, s.Regime != TaxRegimeNone, now); err != nil {
		return TaxSettings{}, fmt.Errorf("switch invoicing: %w", err)
	}
	return tx.FindTaxSettings(ctx, s.StoreID)
}

// switchInvoicing follows PATCH /settings' older e_invoicing switch: on,
// a store without a regime gets its currency's (SAR zatca, else eta); off,
// the regime is none.
func (tx *Tx) switchInvoicing(ctx context.Context, storeID uuid.UUID, on bool) error {
	s, err := tx.LockTaxSettings(ctx, storeID)
	if err != nil {
		return err
	}
	switch {
	case !on:
		s.Regime = TaxRegimeNone
	case s.Regime != TaxRegimeNone:
		return nil
	default:
		var currency string
		if err := tx.tx.QueryRow(ctx, `SELECT currency FROM stores WHERE id = $1`, storeID).Scan(&currency); err != nil {
			return fmt.Errorf("find store currency: %w", err)
		}
		s.Regime = TaxRegimeETA
		if currency == "SAR" {
			s.Regime = TaxRegimeZATCA
		}
	}
	_, err = tx.PutTaxSettings(ctx, nil, s, nil)
	return err
}

// ZATCACredentials are a store's CSID certificate and private key (PEM).
type ZATCACredentials struct {
	Certificate string
	PrivateKey  string
}

// FindZATCACredentials opens a store's CSID; ErrNotFound when it has none.
func (r reader) FindZATCACredentials(ctx context.Context, sealer *Sealer, storeID uuid.UUID) (ZATCACredentials, error) {
	var (
		cert   *string
		sealed []byte
	)
	err := r.q.QueryRow(ctx, `SELECT zatca_certificate, zatca_private_key_sealed FROM store_tax_settings WHERE store_id = $1`,
		storeID).Scan(&cert, &sealed)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && (cert == nil || sealed == nil) {
		return ZATCACredentials{}, fmt.Errorf("find ZATCA credentials: %w", ErrNotFound)
	}
	if err != nil {
		return ZATCACredentials{}, fmt.Errorf("find ZATCA credentials: %w", err)
	}
	if sealer == nil {
		return ZATCACredentials{}, errors.New("open the ZATCA key: no secrets key")
	}
	key, err := sealer.Open(sealed, zatcaKeyPurpose(storeID))
	if err != nil {
		return ZATCACredentials{}, fmt.Errorf("open the ZATCA key: %w", err)
	}
	return ZATCACredentials{Certificate: *cert, PrivateKey: key}, nil
}

// resealTaxSecrets seals every ZATCA key again under the sealer's current
// key (ResealSecrets); it answers how many.
func (tx *Tx) resealTaxSecrets(ctx context.Context, sealer *Sealer) (int, error) {
	rows, err := tx.tx.Query(ctx, `SELECT store_id, zatca_private_key_sealed FROM store_tax_settings
		WHERE zatca_private_key_sealed IS NOT NULL FOR UPDATE`)
	if err != nil {
		return 0, fmt.Errorf("read ZATCA keys: %w", err)
	}
	type sealedKey struct {
		storeID uuid.UUID
		sealed  []byte
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (sealedKey, error) {
		var k sealedKey
		return k, row.Scan(&k.storeID, &k.sealed)
	})
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		again, err := reseal(sealer, k.sealed, zatcaKeyPurpose(k.storeID))
		if err != nil {
			return 0, err
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE store_tax_settings SET zatca_private_key_sealed = $2 WHERE store_id = $1`, k.storeID, again); err != nil {
			return 0, fmt.Errorf("reseal ZATCA key: %w", err)
		}
	}
	return len(keys), nil
}
