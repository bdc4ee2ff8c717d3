-- +goose Up
CREATE EXTENSION IF NOT EXISTS citext;

CREATE TABLE users (
    id            uuid PRIMARY KEY,
    email         citext NOT NULL UNIQUE,
    password_hash text NOT NULL,
    name          text NOT NULL,
    locale        text NOT NULL DEFAULT 'ar' CHECK (locale IN ('ar', 'en')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE stores (
    id                            uuid PRIMARY KEY,
    owner_user_id                 uuid NOT NULL REFERENCES users (id),
    name                          text NOT NULL,
    subdomain                     citext NOT NULL UNIQUE,
    currency                      text NOT NULL,
    default_language              text NOT NULL CHECK (default_language IN ('ar', 'en')),
    lifecycle_state               text NOT NULL DEFAULT 'trial'
                                  CHECK (lifecycle_state IN ('trial', 'active', 'suspended', 'closed')),
    created_at                    timestamptz NOT NULL DEFAULT now(),
    updated_at                    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX stores_owner_idx ON stores (owner_user_id);

-- Browser sessions of merchants. Only the SHA-256 of the cookie value is stored.
CREATE TABLE sessions (
    id_hash    bytea PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

-- Bearer tokens: personal access tokens now, app tokens with the partner-apps work.
-- Only the SHA-256 of the secret is stored.
CREATE TABLE api_tokens (
    id           uuid PRIMARY KEY,
    kind         text NOT NULL CHECK (kind IN ('pat', 'app')),
    store_id     uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    user_id      uuid REFERENCES users (id) ON DELETE SET NULL,
    name         text NOT NULL,
    token_hash   bytea NOT NULL UNIQUE,
    token_hint   text NOT NULL,
    scopes       text[] NOT NULL,
    expires_at   timestamptz,
    revoked_at   timestamptz,
    last_used_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_tokens_store_idx ON api_tokens (store_id, created_at DESC);

-- Idempotency keys (decisions §1). One row per (store, credential, method, route, key).
CREATE TABLE idempotency_keys (
    store_id      uuid NOT NULL,
    credential_id uuid NOT NULL,
    method        text NOT NULL,
    route         text NOT NULL,
    key           text NOT NULL,
    fingerprint   bytea NOT NULL,
    state         text NOT NULL CHECK (state IN ('in_flight', 'completed')),
    status_code   int,
    content_type  text,
    body          bytea,
    locked_at     timestamptz NOT NULL DEFAULT now(),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    PRIMARY KEY (store_id, credential_id, method, route, key)
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);

CREATE TABLE categories (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name       text NOT NULL,
    parent_id  uuid,
    position   int NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id),
    FOREIGN KEY (store_id, parent_id) REFERENCES categories (store_id, id) ON DELETE SET NULL (parent_id)
);
CREATE INDEX categories_store_idx ON categories (store_id, position, name);

CREATE TABLE products (
    id          uuid PRIMARY KEY,
    store_id    uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name        text NOT NULL,
    description text NOT NULL DEFAULT '',
    sku         text,
    price       bigint NOT NULL CHECK (price >= 0),
    cost_price  bigint CHECK (cost_price >= 0),
    status      text NOT NULL DEFAULT 'active' CHECK (status IN ('draft', 'active', 'archived')),
    quantity    int NOT NULL DEFAULT 0,
    category_id uuid,
    attributes  jsonb NOT NULL DEFAULT '{}',
    images      jsonb NOT NULL DEFAULT '[]',
    media_urls  jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id),
    FOREIGN KEY (store_id, category_id) REFERENCES categories (store_id, id) ON DELETE SET NULL (category_id)
);
CREATE INDEX products_store_created_idx ON products (store_id, created_at, id);
CREATE INDEX products_store_name_idx ON products (store_id, name, id);
CREATE INDEX products_store_price_idx ON products (store_id, price, id);
CREATE INDEX products_store_updated_idx ON products (store_id, updated_at, id);
CREATE INDEX products_store_category_idx ON products (store_id, category_id);

CREATE TABLE variants (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL,
    product_id uuid NOT NULL,
    sku        text,
    barcode    text,
    price      bigint NOT NULL CHECK (price >= 0),
    cost_price bigint CHECK (cost_price >= 0),
    quantity   int NOT NULL DEFAULT 0,
    options    jsonb NOT NULL DEFAULT '{}',
    position   int NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id),
    FOREIGN KEY (store_id, product_id) REFERENCES products (store_id, id) ON DELETE CASCADE
);
CREATE INDEX variants_product_idx ON variants (store_id, product_id, position);

-- One SKU namespace per store shared by products and variants; the primary key is
-- the backstop behind the explicit check made before writing.
CREATE TABLE skus (
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    sku        text NOT NULL,
    owner_kind text NOT NULL CHECK (owner_kind IN ('product', 'variant')),
    owner_id   uuid NOT NULL,
    PRIMARY KEY (store_id, sku)
);
CREATE INDEX skus_owner_idx ON skus (owner_id);

-- Events written in the same transaction as the change they describe.
-- body holds the exact bytes every delivery will send.
CREATE TABLE outbox (
    id            uuid PRIMARY KEY,
    store_id      uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    event         text NOT NULL,
    body          bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    dispatched_at timestamptz
);
CREATE INDEX outbox_pending_idx ON outbox (created_at) WHERE dispatched_at IS NULL;
CREATE INDEX outbox_store_idx ON outbox (store_id, created_at);

-- +goose Down
DROP TABLE outbox;
DROP TABLE skus;
DROP TABLE variants;
DROP TABLE products;
DROP TABLE categories;
DROP TABLE idempotency_keys;
DROP TABLE api_tokens;
DROP TABLE sessions;
DROP TABLE stores;
DROP TABLE users;
