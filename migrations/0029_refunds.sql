-- +goose Up
-- Refunds (decisions §13): what a refund covers, how it is paid out, and
-- how it was settled.
ALTER TABLE order_refunds
    ADD COLUMN return_id      uuid,
    ADD COLUMN lines          jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN shipping       bigint NOT NULL DEFAULT 0 CHECK (shipping >= 0),
    ADD COLUMN method         text NOT NULL DEFAULT 'original' CHECK (method IN ('original', 'cash', 'wallet', 'bank_transfer')),
    ADD COLUMN reason         text NOT NULL DEFAULT '',
    ADD COLUMN reference      text,
    ADD COLUMN failure_reason text,
    ADD COLUMN payout         jsonb,
    ADD COLUMN actor_user_id  uuid,
    ADD COLUMN settled_at     timestamptz,
    ADD CONSTRAINT order_refunds_store_id_key UNIQUE (store_id, id),
    ADD CONSTRAINT order_refunds_return_fkey FOREIGN KEY (store_id, return_id) REFERENCES returns (store_id, id) ON DELETE SET NULL (return_id);

-- +goose Down
ALTER TABLE order_refunds
    DROP CONSTRAINT order_refunds_return_fkey,
    DROP CONSTRAINT order_refunds_store_id_key,
    DROP COLUMN return_id, DROP COLUMN lines, DROP COLUMN shipping, DROP COLUMN method, DROP COLUMN reason, DROP COLUMN reference,
    DROP COLUMN failure_reason, DROP COLUMN payout, DROP COLUMN actor_user_id, DROP COLUMN settled_at;
