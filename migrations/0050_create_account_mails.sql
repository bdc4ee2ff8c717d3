-- +goose Up
-- An account's own mails (issue 48 §8): a password reset link, an email
-- verification link, the notice that sign-ins from new networks are held
-- back (it carries a reset link). Each row is one mail and one link: the
-- token is minted when the mail is sent and only its SHA-256 is kept; a
-- link works once (used_at) and until expires_at. The dispatcher starts
-- the account-mail workflow of each row not yet started.
CREATE TABLE account_mails (
    id           uuid PRIMARY KEY,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('password_reset', 'email_verification', 'sign_in_lock')),
    token_hash   bytea UNIQUE,
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    mail_started boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL
);
CREATE INDEX account_mails_due_idx ON account_mails (created_at) WHERE NOT mail_started;
CREATE INDEX account_mails_user_idx ON account_mails (user_id, kind, created_at);

-- +goose Down
DROP TABLE account_mails;
