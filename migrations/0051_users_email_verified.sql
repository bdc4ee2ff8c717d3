-- +goose Up
-- Email verification at signup (issue 48 §8): a signup's address is
-- unverified until its mailed link is used; every account that exists
-- already counts as verified, as does one created by accepting an
-- invitation (the invitation's mail proved the address).
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;
UPDATE users SET email_verified_at = created_at;

-- +goose Down
ALTER TABLE users DROP COLUMN email_verified_at;
