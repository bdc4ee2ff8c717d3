-- +goose Up
-- The networks each account has signed in from (issue 48 §8): an IPv4
-- address or an IPv6 /64, as the sign-in limits count them, with the last
-- time a session started from it (a password sign-in, signup, an accepted
-- invitation or a reset link). While an account is locked after too many
-- failed sign-ins, the right password still signs in from a network it
-- signed in from within 30 days; rows older than that are dropped when the
-- account next signs in. Kept apart from sessions, which sign-outs and
-- resets delete.
CREATE TABLE sign_in_networks (
    user_id           uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    network           text NOT NULL,
    last_signed_in_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, network)
);

-- +goose Down
DROP TABLE sign_in_networks;
