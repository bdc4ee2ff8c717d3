package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Messaging channels (decisions §25): a store's own WhatsApp Cloud API
// number. Its access token and app secret are sealed as §18's secrets are
// and never shown again; the verify token answers Meta's handshake.

// ChannelWhatsApp is the one channel a store connects today.
const ChannelWhatsApp = "whatsapp"

// MessagingChannel is a connected channel as the merchant sees it.
type MessagingChannel struct {
	ID            uuid.UUID
	StoreID       uuid.UUID
	Channel       string
	PhoneNumberID string
	WABAID        string
	VerifyToken   string
	DisplayPhone  string
	QualityRating *string
	MessagingTier *string
	ConnectedAt   time.Time
	UpdatedAt     time.Time
}

// WhatsAppConnection is what connecting a number keeps: the ids, the
// secrets (sealed here) and what the provider said of the number.
type WhatsAppConnection struct {
	StoreID       uuid.UUID
	PhoneNumberID string
	WABAID        string
	AccessToken   string
	AppSecret     string
	DisplayPhone  string
	QualityRating *string
	MessagingTier *string
}

// WhatsAppSender is a store's channel opened for sending: the access token
// in the clear, for the activity that calls the provider only.
type WhatsAppSender struct {
	ChannelID     uuid.UUID
	PhoneNumberID string
	WABAID        string
	AccessToken   string
	AppSecret     string
}

func channelPurpose(storeID uuid.UUID, channel, secret string) string {
	return "messaging_channel:" + storeID.String() + ":" + channel + ":" + secret
}

const messagingChannelColumns = `id, store_id, channel, phone_number_id, waba_id, verify_token, display_phone, quality_rating,
	messaging_tier, connected_at, updated_at`

func scanMessagingChannel(row pgx.Row) (MessagingChannel, error) {
	var c MessagingChannel
	err := row.Scan(&c.ID, &c.StoreID, &c.Channel, &c.PhoneNumberID, &c.WABAID, &c.VerifyToken, &c.DisplayPhone, &c.QualityRating,
		&c.MessagingTier, &c.ConnectedAt, &c.UpdatedAt)
	return c, err
}

// ConnectWhatsApp connects (or reconnects) the store's WhatsApp number,
// sealing its secrets. A reconnect keeps the channel's id and verify token,
// so the callback address registered at Meta stays valid.
func (tx *Tx) ConnectWhatsApp(ctx context.Context, sealer *Sealer, c WhatsAppConnection) (MessagingChannel, error) {
	if sealer == nil {
		return MessagingChannel{}, ErrNoSecretsKey
	}
	token, err := sealer.Seal(c.AccessToken, channelPurpose(c.StoreID, ChannelWhatsApp, "access_token"))
	if err != nil {
		return MessagingChannel{}, err
	}
	secret, err := sealer.Seal(c.AppSecret, channelPurpose(c.StoreID, ChannelWhatsApp, "app_secret"))
	if err != nil {
		return MessagingChannel{}, err
	}
	verify := make([]byte, 24)
	if _, err := rand.Read(verify); err != nil {
		return MessagingChannel{}, err
	}
	now := tx.now()
	ch, err := scanMessagingChannel(tx.tx.QueryRow(ctx, `INSERT INTO messaging_channels (id, store_id, channel, phone_number_id, waba_id,
			access_token_sealed, app_secret_sealed, verify_token, display_phone, quality_rating, messaging_tier, connected_at, updated_at)
		VALUES ($1, $2, 'whatsapp', $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
		ON CONFLICT (store_id, channel) DO UPDATE SET phone_number_id = EXCLUDED.phone_number_id, waba_id = EXCLUDED.waba_id,
			access_token_sealed = EXCLUDED.access_token_sealed, app_secret_sealed = EXCLUDED.app_secret_sealed,
			display_phone = EXCLUDED.display_phone, quality_rating = EXCLUDED.quality_rating, messaging_tier = EXCLUDED.messaging_tier,
			updated_at = EXCLUDED.updated_at
		RETURNING `+messagingChannelColumns, NewID(), c.StoreID, c.PhoneNumberID, c.WABAID, token, secret, hex.EncodeToString(verify),
		c.DisplayPhone, c.QualityRating, c.MessagingTier, now))
	if err != nil {
		return MessagingChannel{}, fmt.Errorf("connect whatsapp: %w", err)
	}
	return ch, nil
}

// FindMessagingChannels lists the store's connected channels.
func (r reader) FindMessagingChannels(ctx context.Context, storeID uuid.UUID) ([]MessagingChannel, error) {
	rows, err := r.q.Query(ctx, `SELECT `+messagingChannelColumns+` FROM messaging_channels WHERE store_id = $1 ORDER BY channel`, storeID)
	if err != nil {
		return nil, fmt.Errorf("find messaging channels: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (MessagingChannel, error) { return scanMessagingChannel(row) })
}

// FindMessagingChannel reads the store's channel; NotFound when it has
// none connected.
func (r reader) FindMessagingChannel(ctx context.Context, storeID uuid.UUID, channel string) (MessagingChannel, error) {
	c, err := scanMessagingChannel(r.q.QueryRow(ctx, `SELECT `+messagingChannelColumns+` FROM messaging_channels
		WHERE store_id = $1 AND channel = $2`, storeID, channel))
	if err != nil {
		return MessagingChannel{}, notFoundIfNoRows(err, "find messaging channel "+channel)
	}
	return c, nil
}

// FindWhatsAppSender opens the store's WhatsApp channel for sending; nil
// (and no error) when the store has none connected, so the caller falls
// back to the process-wide sender.
func (r reader) FindWhatsAppSender(ctx context.Context, sealer *Sealer, storeID uuid.UUID) (*WhatsAppSender, error) {
	var (
		s             WhatsAppSender
		token, secret []byte
	)
	err := r.q.QueryRow(ctx, `SELECT id, phone_number_id, waba_id, access_token_sealed, app_secret_sealed FROM messaging_channels
		WHERE store_id = $1 AND channel = 'whatsapp'`, storeID).Scan(&s.ChannelID, &s.PhoneNumberID, &s.WABAID, &token, &secret)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find whatsapp channel: %w", err)
	}
	if sealer == nil {
		return nil, ErrNoSecretsKey
	}
	if s.AccessToken, err = sealer.Open(token, channelPurpose(storeID, ChannelWhatsApp, "access_token")); err != nil {
		return nil, err
	}
	if s.AppSecret, err = sealer.Open(secret, channelPurpose(storeID, ChannelWhatsApp, "app_secret")); err != nil {
		return nil, err
	}
	return &s, nil
}

// DisconnectWhatsApp removes the store's WhatsApp channel; NotFound when
// none is connected. Messages go through the process-wide sender again.
func (tx *Tx) DisconnectWhatsApp(ctx context.Context, storeID uuid.UUID) error {
	tag, err := tx.tx.Exec(ctx, `DELETE FROM messaging_channels WHERE store_id = $1 AND channel = 'whatsapp'`, storeID)
	if err != nil {
		return fmt.Errorf("disconnect whatsapp: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("disconnect whatsapp: %w", ErrNotFound)
	}
	return nil
}

// resealChannelSecrets seals every channel's secrets again under the
// sealer's current key (ResealSecrets).
func (tx *Tx) resealChannelSecrets(ctx context.Context, sealer *Sealer) (int, error) {
	rows, err := tx.tx.Query(ctx, `SELECT store_id, channel, access_token_sealed, app_secret_sealed FROM messaging_channels FOR UPDATE`)
	if err != nil {
		return 0, fmt.Errorf("read channel secrets: %w", err)
	}
	type sealedRow struct {
		storeID       uuid.UUID
		channel       string
		token, secret []byte
	}
	channels, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (sealedRow, error) {
		var s sealedRow
		return s, row.Scan(&s.storeID, &s.channel, &s.token, &s.secret)
	})
	if err != nil {
		return 0, err
	}
	for _, c := range channels {
		token, err := reseal(sealer, c.token, channelPurpose(c.storeID, c.channel, "access_token"))
		if err != nil {
			return 0, err
		}
		secret, err := reseal(sealer, c.secret, channelPurpose(c.storeID, c.channel, "app_secret"))
		if err != nil {
			return 0, err
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE messaging_channels SET access_token_sealed = $3, app_secret_sealed = $4
			WHERE store_id = $1 AND channel = $2`, c.storeID, c.channel, token, secret); err != nil {
			return 0, fmt.Errorf("reseal channel secrets: %w", err)
		}
	}
	return 2 * len(channels), nil
}

// WhatsAppCallbackChannel is what a channel's callback needs: its store,
// the app secret that signs Meta's posts and the handshake's verify token.
type WhatsAppCallbackChannel struct {
	StoreID     uuid.UUID
	AppSecret   string
	VerifyToken string
}

// FindWhatsAppCallbackChannel opens the channel a callback names by id;
// NotFound for an unknown (or disconnected) channel.
func (r reader) FindWhatsAppCallbackChannel(ctx context.Context, sealer *Sealer, id uuid.UUID) (WhatsAppCallbackChannel, error) {
	var (
		c      WhatsAppCallbackChannel
		sealed []byte
	)
	if err := r.q.QueryRow(ctx, `SELECT store_id, app_secret_sealed, verify_token FROM messaging_channels WHERE id = $1 AND channel = 'whatsapp'`,
		id).Scan(&c.StoreID, &sealed, &c.VerifyToken); err != nil {
		return WhatsAppCallbackChannel{}, notFoundIfNoRows(err, "find whatsapp channel "+id.String())
	}
	if sealer == nil {
		return WhatsAppCallbackChannel{}, ErrNoSecretsKey
	}
	var err error
	if c.AppSecret, err = sealer.Open(sealed, channelPurpose(c.StoreID, ChannelWhatsApp, "app_secret")); err != nil {
		return WhatsAppCallbackChannel{}, err
	}
	return c, nil
}

// OptOutByChat records a customer's opt-out keyword from their phone: the
// store's customers with that phone stop getting chat messages, and their
// WhatsApp marketing consent becomes unsubscribed with source keyword
// (decisions §24, §25). It reports how many changed (0 when none had the
// phone or all had opted out).
func (db *DB) OptOutByChat(ctx context.Context, storeID uuid.UUID, phone string) (int64, error) {
	now := db.now()
	tag, err := db.pool.Exec(ctx, `UPDATE customers SET chat_opt_out = true, updated_at = $3,
			marketing = jsonb_set(marketing, '{whatsapp}', jsonb_build_object('state', 'unsubscribed',
				'opt_in_level', COALESCE(marketing->'whatsapp'->>'opt_in_level', 'unknown'), 'updated_at', $4::text, 'source', 'keyword'))
		WHERE store_id = $1 AND phone = $2 AND (NOT chat_opt_out OR marketing->'whatsapp'->>'state' IS DISTINCT FROM 'unsubscribed')`,
		storeID, phone, now, now.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return 0, fmt.Errorf("opt out by chat: %w", err)
	}
	return tag.RowsAffected(), nil
}
