-- +goose Up
-- Staff (decisions §16): roles per store (the built-in owner and admin, and
-- custom ones made of the 18 scopes), memberships read on every request,
-- and invitations whose token is kept hashed (each invitation mail mints a
-- new one, so a resend kills the last link).
CREATE TABLE roles (
    id         uuid PRIMARY KEY,
    store_id   uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    name       text NOT NULL,
    built_in   text CHECK (built_in IN ('owner', 'admin')),
    scopes     text[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX roles_store_name_idx ON roles (store_id, lower(name));
CREATE UNIQUE INDEX roles_store_built_in_idx ON roles (store_id, built_in) WHERE built_in IS NOT NULL;

CREATE TABLE store_members (
    store_id     uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id      uuid NOT NULL REFERENCES roles (id),
    joined_at    timestamptz NOT NULL,
    last_seen_at timestamptz,
    PRIMARY KEY (store_id, user_id)
);
CREATE INDEX store_members_user_idx ON store_members (user_id);
CREATE INDEX store_members_role_idx ON store_members (role_id);

CREATE TABLE staff_invitations (
    id           uuid PRIMARY KEY,
    store_id     uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    email        text NOT NULL,
    role_id      uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    token_hash   bytea UNIQUE,
    status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked')),
    expires_at   timestamptz NOT NULL,
    invited_by   uuid REFERENCES users (id) ON DELETE SET NULL,
    mail_wanted  int NOT NULL DEFAULT 1,
    mail_started int NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    accepted_at  timestamptz
);
CREATE UNIQUE INDEX staff_invitations_pending_idx ON staff_invitations (store_id, lower(email)) WHERE status = 'pending';
CREATE INDEX staff_invitations_mail_idx ON staff_invitations (created_at) WHERE mail_started < mail_wanted;

INSERT INTO roles (id, store_id, name, built_in, created_at, updated_at)
SELECT gen_random_uuid(), id, 'Owner', 'owner', created_at, created_at FROM stores;
INSERT INTO roles (id, store_id, name, built_in, created_at, updated_at)
SELECT gen_random_uuid(), id, 'Admin', 'admin', created_at, created_at FROM stores;
INSERT INTO store_members (store_id, user_id, role_id, joined_at)
SELECT s.id, s.owner_user_id, r.id, s.created_at FROM stores s JOIN roles r ON r.store_id = s.id AND r.built_in = 'owner';

-- +goose Down
DROP TABLE staff_invitations;
DROP TABLE store_members;
DROP TABLE roles;
