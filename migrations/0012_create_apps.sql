-- +goose Up
-- Partner apps (decisions §8): the manifest, OAuth codes, installations.
CREATE TABLE apps (
    id              uuid PRIMARY KEY,
    owner_user_id   uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name            text NOT NULL,
    slug            text NOT NULL UNIQUE,
    app_url         text NOT NULL,
    scopes          text[] NOT NULL,
    optional_scopes text[] NOT NULL DEFAULT '{}',
    redirect_urls   text[] NOT NULL,
    webhook_url     text,
    webhook_events  text[] NOT NULL DEFAULT '{}',
    client_id       text NOT NULL UNIQUE,
    -- The client secret keys the redirect, launch and webhook signatures, so
    -- it must be readable (like webhook signing secrets); never logged, shown
    -- only at registration and rotation.
    client_secret   text NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);

-- Authorization codes: single use, 10 minutes; only the hash is kept.
CREATE TABLE oauth_codes (
    code_hash    bytea PRIMARY KEY,
    app_id       uuid NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    store_id     uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    scopes       text[] NOT NULL,
    redirect_uri text NOT NULL,
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    created_at   timestamptz NOT NULL
);

CREATE TABLE app_installations (
    app_id          uuid NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    store_id        uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    scopes          text[] NOT NULL,
    installed_at    timestamptz NOT NULL,
    uninstalled_at  timestamptz,
    PRIMARY KEY (app_id, store_id)
);

ALTER TABLE api_tokens ADD COLUMN app_id uuid REFERENCES apps (id) ON DELETE CASCADE;
CREATE INDEX api_tokens_app_idx ON api_tokens (app_id, store_id) WHERE app_id IS NOT NULL;

-- An installed app's manifest subscription, one per store; signed with the
-- app's current client secret (the row's own secret is unused).
ALTER TABLE webhook_subscriptions ADD COLUMN app_id uuid REFERENCES apps (id) ON DELETE CASCADE;
CREATE UNIQUE INDEX webhook_subscriptions_app_idx ON webhook_subscriptions (store_id, app_id) WHERE app_id IS NOT NULL;

-- +goose Down
DROP INDEX webhook_subscriptions_app_idx;
ALTER TABLE webhook_subscriptions DROP COLUMN app_id;
DROP INDEX api_tokens_app_idx;
ALTER TABLE api_tokens DROP COLUMN app_id;
DROP TABLE app_installations;
DROP TABLE oauth_codes;
DROP TABLE apps;
