-- +goose Up
-- Buyers sign in by a code (decisions §24). A challenge is one code sent to
-- a phone or an email: the code is derived from the challenge's id under
-- the secrets key (so the worker that sends it needs nothing stored) and
-- kept only as an HMAC for the check. The challenge row is also the send's
-- outbox row (started once its workflow is). A session is a random token
-- kept hashed, bound to one store.
CREATE TABLE customer_auth_challenges (
    id            uuid PRIMARY KEY,
    store_id      uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    channel       text NOT NULL CHECK (channel IN ('whatsapp', 'email')),
    identifier    text NOT NULL,
    network       text NOT NULL,
    code_digest   bytea NOT NULL,
    misses        integer NOT NULL DEFAULT 0,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz,
    started       boolean NOT NULL DEFAULT false,
    provider_message_id text,
    created_at    timestamptz NOT NULL
);
CREATE INDEX customer_auth_challenges_identifier_idx ON customer_auth_challenges (store_id, identifier, created_at);
CREATE INDEX customer_auth_challenges_network_idx ON customer_auth_challenges (store_id, network, created_at);
CREATE INDEX customer_auth_challenges_due_idx ON customer_auth_challenges (created_at) WHERE NOT started;

CREATE TABLE customer_sessions (
    id          uuid PRIMARY KEY,
    store_id    uuid NOT NULL,
    customer_id uuid NOT NULL,
    token_hash  bytea NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    ended_at    timestamptz,
    FOREIGN KEY (store_id, customer_id) REFERENCES customers (store_id, id) ON DELETE CASCADE
);
CREATE INDEX customer_sessions_customer_idx ON customer_sessions (store_id, customer_id);

ALTER TABLE customers ADD COLUMN has_account boolean NOT NULL DEFAULT false,
    ADD COLUMN last_sign_in_at timestamptz,
    ADD COLUMN language text CHECK (language IN ('ar', 'en')),
    ADD COLUMN marketing jsonb NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE customers DROP COLUMN has_account, DROP COLUMN last_sign_in_at, DROP COLUMN language, DROP COLUMN marketing;
DROP TABLE customer_sessions;
DROP TABLE customer_auth_challenges;
