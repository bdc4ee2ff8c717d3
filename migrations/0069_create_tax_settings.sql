-- +goose Up
-- A store's tax settings (decisions §27): the regime its invoices follow,
-- its legal identity as invoices print it, its default rate, and the ZATCA
-- CSID (the certificate in the clear, the key sealed as §18's secrets).
-- A regime other than none turns invoicing on: stores.e_invoicing follows
-- it, and the stores that had it on get the regime of their currency.
CREATE TABLE store_tax_settings (
    store_id                 uuid PRIMARY KEY REFERENCES stores (id) ON DELETE CASCADE,
    regime                   text NOT NULL CHECK (regime IN ('none', 'zatca', 'eta')),
    prices_include_tax       boolean NOT NULL DEFAULT true,
    default_rate_bp          int NOT NULL CHECK (default_rate_bp BETWEEN 0 AND 10000),
    legal_name               jsonb NOT NULL,
    vat_number               text,
    cr_number                text,
    address                  jsonb,
    invoice_prefix           text NOT NULL DEFAULT 'INV',
    zatca_certificate        text,
    zatca_private_key_sealed bytea,
    updated_at               timestamptz NOT NULL
);

INSERT INTO store_tax_settings (store_id, regime, default_rate_bp, legal_name, updated_at)
SELECT id, CASE WHEN currency = 'SAR' THEN 'zatca' ELSE 'eta' END,
    CASE currency WHEN 'SAR' THEN 1500 WHEN 'EGP' THEN 1400 WHEN 'AED' THEN 500 ELSE 0 END,
    jsonb_build_object('ar', name, 'en', name), now()
FROM stores WHERE e_invoicing;

-- ZATCA's chain per store (decisions §27): the issuing transaction locks
-- the row, numbers the invoice's ICV one past the last and takes the last
-- hash as its PIH, so both follow generation order whatever the authority
-- answers. The invoice keeps its UBL document: unsigned at issue (what the
-- hash is over), signed when the workflow sends it.
CREATE TABLE zatca_chains (
    store_id  uuid PRIMARY KEY REFERENCES stores (id) ON DELETE CASCADE,
    last_icv  bigint NOT NULL,
    last_hash text NOT NULL
);
ALTER TABLE invoices ADD COLUMN document bytea;
-- When the invoice's PDFs (A4 and receipt) were printed to the object store.
ALTER TABLE invoices ADD COLUMN pdf_ready_at timestamptz;

-- Products are taxed at the store's rate (standard), at 0 (zero-rated) or
-- not at all (exempt).
ALTER TABLE products ADD COLUMN tax_class text NOT NULL DEFAULT 'standard' CHECK (tax_class IN ('standard', 'zero', 'exempt'));

-- +goose Down
ALTER TABLE invoices DROP COLUMN document, DROP COLUMN pdf_ready_at;
DROP TABLE zatca_chains;
ALTER TABLE products DROP COLUMN tax_class;
DROP TABLE store_tax_settings;
