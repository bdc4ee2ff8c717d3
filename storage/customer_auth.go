package storage

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Buyers' sign-in by a code (decisions §24). A challenge sends a six-digit
// code to a phone (WhatsApp) or an email; verifying it signs the buyer in
// to one store, claiming the customer the identifier names (or creating
// one: sign-up), and opens a session kept as a hashed token.

// Limits of the sign-in (§24).
const (
	SignInCodeTTL            = 5 * time.Minute
	SignInResendAfter        = 60 * time.Second
	SignInMaxMisses          = 5
	SignInChallengesPerHour  = 5  // per identifier
	SignInNetworkPerHour     = 20 // per client network
	CustomerSessionLifetime  = 30 * 24 * time.Hour
	customerAuthCodePurpose  = "customer_auth_code"
	customerAuthCheckPurpose = "customer_auth_check"
)

// Refusals of the sign-in.
var (
	// ErrSignInResendTooSoon is a second start for one identifier within
	// SignInResendAfter; Retry is how long to wait.
	ErrSignInResendTooSoon = errors.New("a code was sent a moment ago")
	// ErrSignInLimited is a start past the hourly limits, or a verify of a
	// challenge that ran out of attempts.
	ErrSignInLimited = errors.New("too many sign-in attempts")
	// ErrChallengeExpired is a verify after the code's five minutes (or of
	// a code already used).
	ErrChallengeExpired = errors.New("the sign-in code has expired")
)

// SignInRetryError says when a refused start may be tried again.
type SignInRetryError struct {
	Err   error
	Retry time.Duration
}

func (e *SignInRetryError) Error() string { return e.Err.Error() }
func (e *SignInRetryError) Unwrap() error { return e.Err }

// CodeMissError is a wrong code, with the attempts the challenge has left.
type CodeMissError struct{ AttemptsLeft int }

func (e *CodeMissError) Error() string {
	return fmt.Sprintf("wrong code, %d attempts left", e.AttemptsLeft)
}

// SignInChallenge is a code on its way to a buyer.
type SignInChallenge struct {
	ID        uuid.UUID
	Channel   string
	ExpiresAt time.Time
}

// SignInCode is the code of a challenge: derived from its id under the
// secrets key, so the worker that sends it and the check agree without
// the code being stored.
func SignInCode(sealer *Sealer, challengeID uuid.UUID) (string, error) {
	d, err := sealer.Digest(challengeID.String(), customerAuthCodePurpose)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%06d", binary.BigEndian.Uint32(d[:4])%1_000_000), nil
}

// StartSignIn writes a challenge for identifier (a normalised phone for
// whatsapp, an email for email) from network, unless the limits refuse:
// a second start for the identifier within a minute, more than 5 an hour
// for it or 20 an hour from the network. Its send is started by the
// dispatcher (customer-auth-code:<id>). The answer is the same whether
// the identifier has a customer or not.
func (tx *Tx) StartSignIn(ctx context.Context, sealer *Sealer, storeID uuid.UUID, channel, identifier, network string) (SignInChallenge, error) {
	if sealer == nil {
		return SignInChallenge{}, ErrNoSecretsKey
	}
	if _, err := tx.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('customer_auth:' || $1::text || ':' || $2, 0))`,
		storeID, identifier); err != nil {
		return SignInChallenge{}, fmt.Errorf("lock sign-in: %w", err)
	}
	now := tx.now()
	var (
		forIdentifier, fromNetwork int
		last                       *time.Time
	)
	if err := tx.tx.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM customer_auth_challenges WHERE store_id = $1 AND identifier = $2 AND created_at > $4),
			(SELECT count(*) FROM customer_auth_challenges WHERE store_id = $1 AND network = $3 AND created_at > $4),
			(SELECT max(created_at) FROM customer_auth_challenges WHERE store_id = $1 AND identifier = $2)`,
		storeID, identifier, network, now.Add(-time.Hour)).Scan(&forIdentifier, &fromNetwork, &last); err != nil {
		return SignInChallenge{}, fmt.Errorf("count sign-ins: %w", err)
	}
	switch {
	case last != nil && now.Sub(*last) < SignInResendAfter:
		return SignInChallenge{}, &SignInRetryError{Err: ErrSignInResendTooSoon, Retry: SignInResendAfter - now.Sub(*last)}
	case forIdentifier >= SignInChallengesPerHour || fromNetwork >= SignInNetworkPerHour:
		return SignInChallenge{}, &SignInRetryError{Err: ErrSignInLimited, Retry: time.Hour}
	}
	c := SignInChallenge{ID: NewID(), Channel: channel, ExpiresAt: now.Add(SignInCodeTTL)}
	code, err := SignInCode(sealer, c.ID)
	if err != nil {
		return SignInChallenge{}, err
	}
	digest, err := sealer.Digest(code, customerAuthCheckPurpose+":"+c.ID.String())
	if err != nil {
		return SignInChallenge{}, err
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO customer_auth_challenges (id, store_id, channel, identifier, network, code_digest, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, c.ID, storeID, channel, identifier, network, digest, c.ExpiresAt, now); err != nil {
		return SignInChallenge{}, fmt.Errorf("start sign-in: %w", err)
	}
	return c, tx.notifyDispatcher(ctx)
}

// CustomerSession is a signed-in buyer: the token goes in the cookie, and
// only its hash is stored.
type CustomerSession struct {
	Token     string
	Customer  Customer
	ExpiresAt time.Time
}

func hashSessionToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// VerifySignIn checks a challenge's code. A wrong code counts a miss
// (CodeMissError with the attempts left; the fifth is ErrSignInLimited and
// every later attempt too); an expired or used challenge is
// ErrChallengeExpired. The right code signs the buyer in: the store's
// customer with the identifier is claimed (has_account), else one is made
// (sign-up), and a 30-day session opens.
func (tx *Tx) VerifySignIn(ctx context.Context, sealer *Sealer, storeID, challengeID uuid.UUID, code string) (CustomerSession, error) {
	if sealer == nil {
		return CustomerSession{}, ErrNoSecretsKey
	}
	var (
		channel, identifier string
		digest              []byte
		misses              int
		expiresAt           time.Time
		usedAt              *time.Time
	)
	err := tx.tx.QueryRow(ctx, `SELECT channel, identifier, code_digest, misses, expires_at, used_at FROM customer_auth_challenges
		WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, challengeID).Scan(&channel, &identifier, &digest, &misses, &expiresAt, &usedAt)
	if err != nil {
		return CustomerSession{}, notFoundIfNoRows(err, "find sign-in challenge")
	}
	now := tx.now()
	switch {
	case misses >= SignInMaxMisses:
		return CustomerSession{}, ErrSignInLimited
	case usedAt != nil || !now.Before(expiresAt):
		return CustomerSession{}, ErrChallengeExpired
	}
	candidates, err := sealer.Digests(code, customerAuthCheckPurpose+":"+challengeID.String())
	if err != nil {
		return CustomerSession{}, err
	}
	matched := false
	for _, c := range candidates {
		matched = matched || hmac.Equal(c, digest)
	}
	if !matched {
		misses++
		if _, err := tx.tx.Exec(ctx, `UPDATE customer_auth_challenges SET misses = $3 WHERE store_id = $1 AND id = $2`,
			storeID, challengeID, misses); err != nil {
			return CustomerSession{}, fmt.Errorf("count sign-in miss: %w", err)
		}
		if misses >= SignInMaxMisses {
			return CustomerSession{}, ErrSignInLimited
		}
		return CustomerSession{}, &CodeMissError{AttemptsLeft: SignInMaxMisses - misses}
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE customer_auth_challenges SET used_at = $3 WHERE store_id = $1 AND id = $2`,
		storeID, challengeID, now); err != nil {
		return CustomerSession{}, fmt.Errorf("use sign-in code: %w", err)
	}
	var phone, email *string
	if channel == ChannelWhatsApp {
		phone = &identifier
	} else {
		email = &identifier
	}
	// The verified identifier claims the customer it names (phone, then
	// email, as orders find them), or signs a new buyer up.
	customer, err := tx.findOrCreateCustomer(ctx, storeID, "", email, phone, nil)
	if err != nil {
		return CustomerSession{}, err
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE customers SET has_account = true, last_sign_in_at = $3, updated_at = $3 WHERE store_id = $1 AND id = $2`,
		storeID, customer.ID, now); err != nil {
		return CustomerSession{}, fmt.Errorf("claim customer: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return CustomerSession{}, err
	}
	s := CustomerSession{Token: base64.RawURLEncoding.EncodeToString(raw), ExpiresAt: now.Add(CustomerSessionLifetime)}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO customer_sessions (id, store_id, customer_id, token_hash, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, NewID(), storeID, customer.ID, hashSessionToken(s.Token), now, s.ExpiresAt); err != nil {
		return CustomerSession{}, fmt.Errorf("open customer session: %w", err)
	}
	s.Customer, err = tx.FindCustomerByID(ctx, storeID, customer.ID)
	return s, err
}

// FindCustomerBySession is the buyer a session token signs in to the
// store; NotFound for an unknown, ended or expired token, or another
// store's.
func (r reader) FindCustomerBySession(ctx context.Context, storeID uuid.UUID, token string) (Customer, error) {
	var id uuid.UUID
	if err := r.q.QueryRow(ctx, `SELECT customer_id FROM customer_sessions WHERE token_hash = $1 AND store_id = $2
		AND ended_at IS NULL AND expires_at > now()`, hashSessionToken(token), storeID).Scan(&id); err != nil {
		return Customer{}, notFoundIfNoRows(err, "find customer session")
	}
	return r.FindCustomerByID(ctx, storeID, id)
}

// EndCustomerSession signs the buyer out on the server: the token opens
// nothing after.
func (db *DB) EndCustomerSession(ctx context.Context, storeID uuid.UUID, token string) error {
	if _, err := db.pool.Exec(ctx, `UPDATE customer_sessions SET ended_at = now() WHERE token_hash = $1 AND store_id = $2 AND ended_at IS NULL`,
		hashSessionToken(token), storeID); err != nil {
		return fmt.Errorf("end customer session: %w", err)
	}
	return nil
}

// SignInSendDue is a challenge whose code is to be sent.
type SignInSendDue struct {
	ID             uuid.UUID
	StoreID        uuid.UUID
	StoreSubdomain string
}

// FindSignInSendsDue lists the challenges whose send has no workflow yet.
func (r reader) FindSignInSendsDue(ctx context.Context, limit int) ([]SignInSendDue, error) {
	rows, err := r.q.Query(ctx, `SELECT c.id, c.store_id, s.subdomain FROM customer_auth_challenges c JOIN stores s ON s.id = c.store_id
		WHERE NOT c.started ORDER BY c.created_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find sign-in sends: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[SignInSendDue])
}

// MarkSignInSendStarted records that a challenge's send has its workflow.
func (db *DB) MarkSignInSendStarted(ctx context.Context, storeID, id uuid.UUID) error {
	if _, err := db.pool.Exec(ctx, `UPDATE customer_auth_challenges SET started = true WHERE store_id = $1 AND id = $2`, storeID, id); err != nil {
		return fmt.Errorf("mark sign-in send started: %w", err)
	}
	return nil
}

// SignInSend is what a challenge's send needs: where to, in which
// language, from which store, and whether it went already.
type SignInSend struct {
	Channel, To       string
	StoreName         string
	Language          string
	ExpiresAt         time.Time
	ProviderMessageID *string
}

// FindSignInSend reads a challenge's send; NotFound when it is gone.
func (r reader) FindSignInSend(ctx context.Context, storeID, id uuid.UUID) (SignInSend, error) {
	var s SignInSend
	err := r.q.QueryRow(ctx, `SELECT c.channel, c.identifier, st.name, COALESCE(cu.language, st.default_language), c.expires_at, c.provider_message_id
		FROM customer_auth_challenges c JOIN stores st ON st.id = c.store_id
			LEFT JOIN customers cu ON cu.store_id = c.store_id AND (cu.phone = c.identifier OR cu.email = c.identifier)
		WHERE c.store_id = $1 AND c.id = $2 LIMIT 1`, storeID, id).Scan(&s.Channel, &s.To, &s.StoreName, &s.Language, &s.ExpiresAt, &s.ProviderMessageID)
	if err != nil {
		return SignInSend{}, notFoundIfNoRows(err, "find sign-in send")
	}
	return s, nil
}

// RecordSignInSent keeps the provider's id of a sent code.
func (db *DB) RecordSignInSent(ctx context.Context, storeID, id uuid.UUID, messageID string) error {
	if _, err := db.pool.Exec(ctx, `UPDATE customer_auth_challenges SET provider_message_id = $3 WHERE store_id = $1 AND id = $2`,
		storeID, id, messageID); err != nil {
		return fmt.Errorf("record sign-in send: %w", err)
	}
	return nil
}

// MarketingConsent is a customer's consent on one channel (§24).
type MarketingConsent struct {
	State      string    `json:"state"` // subscribed, not_subscribed, unsubscribed
	OptInLevel string    `json:"opt_in_level"`
	UpdatedAt  time.Time `json:"updated_at"`
	Source     string    `json:"source"`
}

// AccountUpdate is what a buyer may change of their profile; nil leaves a
// field. Marketing maps a channel to subscribed or unsubscribed.
type AccountUpdate struct {
	Name      *string
	Language  *string
	Marketing map[string]string
}

// setConsent records consent changes per channel (a state unchanged keeps
// its time and source), single opt-in, from source.
func setConsent(consent map[string]MarketingConsent, states map[string]string, source string, now time.Time) {
	for channel, state := range states {
		if consent[channel].State != state {
			consent[channel] = MarketingConsent{State: state, OptInLevel: "single", UpdatedAt: now.UTC(), Source: source}
		}
	}
}

// UpdateAccount changes the signed-in buyer's profile; consent changes are
// recorded with source account.
func (tx *Tx) UpdateAccount(ctx context.Context, storeID, customerID uuid.UUID, u AccountUpdate) (Customer, error) {
	upd := CustomerUpdate{Name: u.Name, Marketing: u.Marketing}
	if u.Language != nil {
		upd.Language = Field[string]{Set: true, Value: *u.Language}
	}
	return tx.updateCustomer(ctx, storeID, customerID, upd, "account")
}

// FindAccountOrders lists the signed-in buyer's orders, newest first.
func (r reader) FindAccountOrders(ctx context.Context, storeID, customerID uuid.UUID, page Page) ([]Order, int, error) {
	return findPage(ctx, r, "orders", listQuery{columns: orderColumns,
		from: `FROM orders WHERE store_id = $1 AND customer_id = $2 AND status <> 'DRAFT'`,
		args: []any{storeID, customerID}, orderBy: "created_at DESC, id DESC"}, page.Limit, int(page.Offset()),
		func(row pgx.CollectableRow) (Order, error) { return scanOrder(row) })
}

// FindAccountOrder reads one of the signed-in buyer's orders by its
// number, with its lines; NotFound for anyone else's.
func (r reader) FindAccountOrder(ctx context.Context, storeID, customerID uuid.UUID, number string) (Order, error) {
	o, err := scanOrder(r.q.QueryRow(ctx, `SELECT `+orderColumns+` FROM orders WHERE store_id = $1 AND customer_id = $2 AND order_number = $3
		AND status <> 'DRAFT'`, storeID, customerID, number))
	if err != nil {
		return Order{}, notFoundIfNoRows(err, "find account order "+number)
	}
	if o.Lines, err = r.orderLinesOf(ctx, storeID, o.ID); err != nil {
		return Order{}, err
	}
	return o, nil
}
