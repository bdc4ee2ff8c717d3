-- +goose Up
-- The store owner's notice of a change to a payment gateway's keys (issue
-- 48 §6): one row per connect, replace or disconnect, written in the
-- change's transaction with who made it and from where (the audit entry's
-- request source), and the masked account hint the API shows, never a
-- secret. The dispatcher starts the gateway-change-mail workflow of each
-- row not yet started; the workflow mails the owner as they are when it
-- runs.
CREATE TABLE gateway_change_mails (
    id             uuid PRIMARY KEY,
    store_id       uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    provider       text NOT NULL,
    change         text NOT NULL CHECK (change IN ('connected', 'replaced', 'disconnected')),
    account_hint   text NOT NULL DEFAULT '',
    previous_hint  text NOT NULL DEFAULT '',
    actor_user_id  uuid REFERENCES users (id) ON DELETE SET NULL,
    actor_name     text NOT NULL,
    actor_email    text NOT NULL,
    request_id     text NOT NULL,
    ip             text NOT NULL,
    user_agent     text NOT NULL,
    occurred_at    timestamptz NOT NULL,
    mail_started   boolean NOT NULL DEFAULT false
);
CREATE INDEX gateway_change_mails_due_idx ON gateway_change_mails (occurred_at) WHERE NOT mail_started;
CREATE INDEX gateway_change_mails_store_idx ON gateway_change_mails (store_id, occurred_at);

-- +goose Down
DROP TABLE gateway_change_mails;
