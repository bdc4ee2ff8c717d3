-- +goose Up

-- Gift cards and store credit (decisions §19). A card's code is never
-- stored in the clear: code_hmac (an HMAC under SVC_SECRETS_KEY) finds it,
-- code_sealed (AES-GCM, as §18 seals gateway secrets) lets it be sent
-- again. A store_credit card has neither. Only `disabled` is stored;
-- expired and depleted are computed from expires_on and balance.
CREATE TABLE gift_cards (
    id            uuid PRIMARY KEY,
    store_id      uuid NOT NULL REFERENCES stores (id) ON DELETE CASCADE,
    kind          text NOT NULL CHECK (kind IN ('gift_card', 'store_credit')),
    code_hmac     bytea,
    code_sealed   bytea,
    last4         text,
    currency      text NOT NULL,
    initial_value bigint NOT NULL CHECK (initial_value >= 0),
    balance       bigint NOT NULL CHECK (balance >= 0),
    disabled_at   timestamptz,
    disabled_reason text,
    expires_on    date,
    customer_id   uuid,
    recipient     jsonb,
    source        text NOT NULL CHECK (source IN ('manual', 'purchase', 'refund', 'goodwill')),
    order_id      uuid,
    refund_id     uuid,
    note          text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (store_id, id),
    UNIQUE (store_id, code_hmac),
    CHECK ((kind = 'gift_card') = (code_hmac IS NOT NULL AND code_sealed IS NOT NULL AND last4 IS NOT NULL)),
    FOREIGN KEY (store_id, customer_id) REFERENCES customers (store_id, id) ON DELETE SET NULL (customer_id),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, id) ON DELETE SET NULL (order_id)
);
CREATE INDEX gift_cards_list_idx ON gift_cards (store_id, created_at DESC, id DESC);
CREATE INDEX gift_cards_customer_idx ON gift_cards (store_id, customer_id) WHERE customer_id IS NOT NULL;
CREATE INDEX gift_cards_last4_idx ON gift_cards (store_id, last4);
CREATE INDEX gift_cards_kind_idx ON gift_cards (store_id, kind, created_at DESC);

-- The ledger: every move of a balance, written in the move's transaction.
-- The issue entry is +initial_value, so the amounts sum to the balance.
CREATE TABLE gift_card_transactions (
    id            uuid PRIMARY KEY,
    store_id      uuid NOT NULL,
    gift_card_id  uuid NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('issue', 'redeem', 'reverse', 'credit', 'debit')),
    amount        bigint NOT NULL CHECK (amount <> 0),
    balance_after bigint NOT NULL CHECK (balance_after >= 0),
    order_id      uuid,
    refund_id     uuid,
    reason        text,
    actor         jsonb NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (store_id, gift_card_id) REFERENCES gift_cards (store_id, id) ON DELETE CASCADE
);
CREATE INDEX gift_card_transactions_card_idx ON gift_card_transactions (store_id, gift_card_id, created_at DESC, id DESC);
CREATE INDEX gift_card_transactions_order_idx ON gift_card_transactions (store_id, order_id) WHERE order_id IS NOT NULL;

-- Sends of a card's code to its recipient (POST …/send and create's send):
-- an email is started by the dispatcher (gift-card-send:<id>) and marked
-- started; a whatsapp row is the intent issue 54's channel delivers. The
-- rows also count the sends of a day (at most 3 per card).
CREATE TABLE gift_card_sends (
    id            uuid PRIMARY KEY,
    store_id      uuid NOT NULL,
    gift_card_id  uuid NOT NULL,
    channel       text NOT NULL CHECK (channel IN ('email', 'whatsapp')),
    address       text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started       boolean NOT NULL DEFAULT false,
    FOREIGN KEY (store_id, gift_card_id) REFERENCES gift_cards (store_id, id) ON DELETE CASCADE
);
CREATE INDEX gift_card_sends_card_idx ON gift_card_sends (store_id, gift_card_id, created_at);
CREATE INDEX gift_card_sends_due_idx ON gift_card_sends (created_at) WHERE NOT started AND channel = 'email';

-- +goose Down
DROP TABLE gift_card_sends;
DROP TABLE gift_card_transactions;
DROP TABLE gift_cards;
