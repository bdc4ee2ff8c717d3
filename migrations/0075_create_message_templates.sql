-- +goose Up
-- Message templates (decisions §25): a WhatsApp template is submitted to
-- the provider and carries its approval, which the provider's callback
-- moves; an email template is approved at once.
CREATE TABLE message_templates (
    id                   uuid PRIMARY KEY,
    store_id             uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    channel              text NOT NULL CHECK (channel IN ('whatsapp', 'email')),
    name                 text NOT NULL CHECK (name ~ '^[a-z0-9_]+$' AND length(name) <= 512),
    category             text NOT NULL CHECK (category IN ('marketing', 'utility', 'authentication')),
    language             text NOT NULL CHECK (language IN ('ar', 'en')),
    header               text,
    body                 text NOT NULL,
    footer               text,
    buttons              jsonb NOT NULL DEFAULT '[]',
    examples             jsonb NOT NULL DEFAULT '{}',
    status               text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'paused', 'disabled')),
    rejection_reason     text,
    provider_template_id text,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    UNIQUE (store_id, channel, name, language),
    UNIQUE (store_id, id)
);
CREATE INDEX message_templates_provider_idx ON message_templates (store_id, provider_template_id) WHERE provider_template_id IS NOT NULL;

-- +goose Down
DROP TABLE message_templates;
