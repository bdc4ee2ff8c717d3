-- +goose Up
-- Store credit and selling gift cards (decisions §19, issue 56). A refund
-- may go to the customer's store-credit card (method store_credit). A
-- product is a gift card product (kind gift_card) whose variants carry
-- `value`, the balance a sold unit issues, never below the price the buyer
-- pays. A card issued for a sold unit names the order line it came from,
-- so refunding the line finds its cards.
ALTER TABLE order_refunds DROP CONSTRAINT order_refunds_method_check;
ALTER TABLE order_refunds ADD CONSTRAINT order_refunds_method_check
    CHECK (method IN ('original', 'cash', 'wallet', 'bank_transfer', 'store_credit'));

ALTER TABLE products ADD COLUMN kind text NOT NULL DEFAULT 'standard' CHECK (kind IN ('standard', 'gift_card'));
ALTER TABLE variants ADD COLUMN value bigint,
    ADD CONSTRAINT variants_value_check CHECK (value IS NULL OR (value >= 1 AND value >= price));

-- A gift card line snapshots the value each unit issues at placing, so a
-- value changed later issues what the buyer was sold; null on other lines.
ALTER TABLE order_lines ADD COLUMN gift_card_value bigint CHECK (gift_card_value IS NULL OR gift_card_value >= 1);

ALTER TABLE gift_cards ADD COLUMN order_line_id uuid;
CREATE INDEX gift_cards_order_line_idx ON gift_cards (store_id, order_id, order_line_id) WHERE order_line_id IS NOT NULL;

-- Analytics (§17, §19): cards sold count in gift_cards_sold, not in
-- gross_sales. An order keeps what its gift card lines sold for, set with
-- its lines; the rollups' gross_sales is the subtotal less it, and
-- gift_cards_sold is summed from the orders on read.
ALTER TABLE orders ADD COLUMN gift_cards_sold bigint NOT NULL DEFAULT 0 CHECK (gift_cards_sold >= 0);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION order_rollup_figures(o orders, sign int)
    RETURNS TABLE (store_id uuid, bucket timestamptz, orders bigint, cancelled_orders bigint, gross_sales bigint, discounts bigint,
                   shipping bigint, delivered_orders bigint, returned_orders bigint, cod_orders bigint, cod_delivered bigint,
                   cod_returned bigint, cod_collected bigint)
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT o.store_id, rollup_bucket(o.placed_at), sign::bigint,
           (sign * (o.status = 'CANCELLED')::int)::bigint,
           sign * live * (o.subtotal - o.gift_cards_sold),
           sign * live * (o.discount - shipping_discount),
           sign * live * (o.shipping_fee - shipping_discount),
           (sign * (o.status = 'DELIVERED')::int)::bigint,
           (sign * (o.status = 'RETURNED')::int)::bigint,
           sign * live * cod,
           sign * cod * (o.status = 'DELIVERED')::int,
           sign * cod * (o.status = 'RETURNED')::int,
           sign * live * cod * o.collected_total
    FROM (SELECT (o.status <> 'CANCELLED')::int::bigint AS live, (o.payment_method = 'cod')::int::bigint AS cod,
                 COALESCE((SELECT sum((d->>'shipping_amount')::bigint) FROM jsonb_array_elements(o.discounts) d), 0)::bigint AS shipping_discount) x
    WHERE o.placed_at IS NOT NULL AND o.status <> 'DRAFT'
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION order_rollup_figures(o orders, sign int)
    RETURNS TABLE (store_id uuid, bucket timestamptz, orders bigint, cancelled_orders bigint, gross_sales bigint, discounts bigint,
                   shipping bigint, delivered_orders bigint, returned_orders bigint, cod_orders bigint, cod_delivered bigint,
                   cod_returned bigint, cod_collected bigint)
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT o.store_id, rollup_bucket(o.placed_at), sign::bigint,
           (sign * (o.status = 'CANCELLED')::int)::bigint,
           sign * live * o.subtotal,
           sign * live * (o.discount - shipping_discount),
           sign * live * (o.shipping_fee - shipping_discount),
           (sign * (o.status = 'DELIVERED')::int)::bigint,
           (sign * (o.status = 'RETURNED')::int)::bigint,
           sign * live * cod,
           sign * cod * (o.status = 'DELIVERED')::int,
           sign * cod * (o.status = 'RETURNED')::int,
           sign * live * cod * o.collected_total
    FROM (SELECT (o.status <> 'CANCELLED')::int::bigint AS live, (o.payment_method = 'cod')::int::bigint AS cod,
                 COALESCE((SELECT sum((d->>'shipping_amount')::bigint) FROM jsonb_array_elements(o.discounts) d), 0)::bigint AS shipping_discount) x
    WHERE o.placed_at IS NOT NULL AND o.status <> 'DRAFT'
$$;
-- +goose StatementEnd
ALTER TABLE orders DROP COLUMN gift_cards_sold;
DROP INDEX gift_cards_order_line_idx;
ALTER TABLE gift_cards DROP COLUMN order_line_id;
ALTER TABLE order_lines DROP COLUMN gift_card_value;
ALTER TABLE variants DROP COLUMN value;
ALTER TABLE products DROP COLUMN kind;
ALTER TABLE order_refunds DROP CONSTRAINT order_refunds_method_check;
UPDATE order_refunds SET method = 'cash' WHERE method = 'store_credit';
ALTER TABLE order_refunds ADD CONSTRAINT order_refunds_method_check CHECK (method IN ('original', 'cash', 'wallet', 'bank_transfer'));
