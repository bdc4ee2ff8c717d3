-- +goose Up
-- Each store sends WhatsApp messages from its own number (decisions §25):
-- the Cloud API phone number and business account it connected, the
-- access token and app secret sealed as §18's secrets are, and the verify
-- token Meta's handshake on the channel's callback answers with.
CREATE TABLE messaging_channels (
    id                  uuid PRIMARY KEY,
    store_id            uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    channel             text NOT NULL CHECK (channel IN ('whatsapp')),
    phone_number_id     text NOT NULL,
    waba_id             text NOT NULL,
    access_token_sealed bytea NOT NULL,
    app_secret_sealed   bytea NOT NULL,
    verify_token        text NOT NULL,
    display_phone       text NOT NULL,
    quality_rating      text,
    messaging_tier      text,
    connected_at        timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    UNIQUE (store_id, channel),
    UNIQUE (store_id, id)
);

-- A gift card's WhatsApp send is delivered through the store's channel
-- (or the process-wide sender until one is connected) like an email.
DROP INDEX gift_card_sends_due_idx;
CREATE INDEX gift_card_sends_due_idx ON gift_card_sends (created_at) WHERE NOT started;
ALTER TABLE gift_card_sends ADD COLUMN provider_message_id text, ADD COLUMN provider_error_code integer;

-- +goose Down
ALTER TABLE gift_card_sends DROP COLUMN provider_message_id, DROP COLUMN provider_error_code;
DROP INDEX gift_card_sends_due_idx;
CREATE INDEX gift_card_sends_due_idx ON gift_card_sends (created_at) WHERE NOT started AND channel = 'email';
DROP TABLE messaging_channels;
