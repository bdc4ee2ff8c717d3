package api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/numerals"
)

// Buyers' accounts on the JSON storefront (decisions §24): sign-in by a
// code, the session cookie, the profile and the buyer's orders.

// customerCookie carries a buyer's session token; it is HttpOnly and the
// session it names belongs to one store.
const customerCookie = "svc_customer"

var (
	errSignInLimited = newError(http.StatusTooManyRequests, "RATE_LIMITED",
		"Too many sign-in attempts; try again later", "محاولات دخول كثيرة؛ أعد المحاولة لاحقًا")
	errChallengeExpired = newError(http.StatusGone, "CHALLENGE_EXPIRED",
		"The code has expired; ask for a new one", "انتهت صلاحية الرمز؛ اطلب رمزًا جديدًا")
	errSignedOut = newError(http.StatusUnauthorized, "SIGN_IN_REQUIRED",
		"Sign in to see your account", "سجّل الدخول لترى حسابك")
)

type signInChallengeResponse struct {
	ChallengeID uuid.UUID `json:"challenge_id"`
	Channel     string    `json:"channel"`
	ExpiresIn   int       `json:"expires_in"`
	ResendAfter int       `json:"resend_after"`
}

// handleStartSignIn serves POST /storefront/{subdomain}/customer-auth/start: 202 and a code on its way,
// the same answer whether or not a customer has the phone or email.
func (s *Server) handleStartSignIn() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.StartSignIn](r)
		if err != nil {
			return err
		}
		channel, identifier := req.Identifier()
		var c storage.SignInChallenge
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			c, err = tx.StartSignIn(r.Context(), s.cfg.Secrets, store.ID, channel, strings.ToLower(identifier),
				clientNetwork(r, s.cfg.TrustedProxies))
			return err
		})
		var retry *storage.SignInRetryError
		if errors.As(err, &retry) {
			e := *errSignInLimited
			e.Header = http.Header{"Retry-After": {retryAfterSeconds(retry.Retry)}}
			return &e
		}
		if err != nil {
			return err
		}
		respond(w, http.StatusAccepted, signInChallengeResponse{ChallengeID: c.ID, Channel: c.Channel,
			ExpiresIn: int(storage.SignInCodeTTL / time.Second), ResendAfter: int(storage.SignInResendAfter / time.Second)})
		return nil
	}
}

type accountResponse struct {
	ID           uuid.UUID                  `json:"id"`
	Name         string                     `json:"name"`
	Email        *string                    `json:"email"`
	Phone        *string                    `json:"phone"`
	Language     *string                    `json:"language"`
	HasAccount   bool                       `json:"has_account"`
	LastSignInAt *time.Time                 `json:"last_sign_in_at"`
	Marketing    map[string]consentResponse `json:"marketing"`
	CreatedAt    time.Time                  `json:"created_at"`
}

// consentResponse is a channel's consent; a channel never set reads
// not_subscribed, opt-in level unknown, with no time or source.
type consentResponse struct {
	State      string     `json:"state"`
	OptInLevel string     `json:"opt_in_level"`
	UpdatedAt  *time.Time `json:"updated_at"`
	Source     *string    `json:"source"`
}

func newAccountResponse(a storage.Customer) accountResponse {
	return accountResponse{ID: a.ID, Name: a.Name, Email: a.Email, Phone: a.Phone, Language: a.Language, HasAccount: a.HasAccount,
		LastSignInAt: utcPtr(a.LastSignInAt), Marketing: consentResponses(a.Marketing), CreatedAt: a.CreatedAt.UTC()}
}

// consentResponses is the consent of both channels, a channel never set
// included.
func consentResponses(consent map[string]storage.MarketingConsent) map[string]consentResponse {
	out := map[string]consentResponse{}
	for _, channel := range []string{"whatsapp", "email"} {
		c, ok := consent[channel]
		if !ok {
			out[channel] = consentResponse{State: "not_subscribed", OptInLevel: "unknown"}
			continue
		}
		out[channel] = consentResponse{State: c.State, OptInLevel: c.OptInLevel, UpdatedAt: new(c.UpdatedAt.UTC()), Source: &c.Source}
	}
	return out
}

// handleVerifySignIn serves POST /storefront/{subdomain}/customer-auth/verify: the right code signs the
// buyer in (claiming the customer the phone or email names, or signing them up) and sets the session
// cookie; a wrong one is 422 with the attempts left, the fifth 429, an expired code 410.
func (s *Server) handleVerifySignIn() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.VerifySignIn](r)
		if err != nil {
			return err
		}
		id, _ := uuid.Parse(req.ChallengeID)
		var (
			session storage.CustomerSession
			refusal error
		)
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			session, err = tx.VerifySignIn(r.Context(), s.cfg.Secrets, store.ID, id, numerals.ToLatin(strings.TrimSpace(req.Code)))
			var miss *storage.CodeMissError
			if errors.As(err, &miss) || errors.Is(err, storage.ErrSignInLimited) {
				refusal = err // the miss counts: commit it, then refuse
				return nil
			}
			return err
		})
		if err == nil {
			err = refusal
		}
		var miss *storage.CodeMissError
		switch {
		case errors.As(err, &miss):
			e := validationError([]wire.FieldError{{Field: "code", Code: "wrong_code", Message: "is not the code sent",
				MessageAr: "ليس الرمز المرسل"}})
			e.Details = map[string]int{"attempts_left": miss.AttemptsLeft}
			return e
		case errors.Is(err, storage.ErrSignInLimited):
			return errSignInLimited
		case errors.Is(err, storage.ErrChallengeExpired):
			return errChallengeExpired
		case err != nil:
			return err
		}
		http.SetCookie(w, &http.Cookie{Name: customerCookie, Value: session.Token, Path: "/", HttpOnly: true, Secure: s.cfg.SecureCookies,
			SameSite: http.SameSiteLaxMode, Expires: session.ExpiresAt, MaxAge: int(storage.CustomerSessionLifetime / time.Second)})
		respond(w, http.StatusOK, map[string]any{"customer": newAccountResponse(session.Customer)})
		return nil
	}
}

// signedIn is the request's store and the buyer its session cookie signs
// in to that store (401 SIGN_IN_REQUIRED without one).
func (s *Server) signedIn(r *http.Request) (storage.Store, storage.Customer, error) {
	store, err := s.storefrontStore(r)
	if err != nil {
		return storage.Store{}, storage.Customer{}, err
	}
	cookie, err := r.Cookie(customerCookie)
	if err != nil || cookie.Value == "" {
		return storage.Store{}, storage.Customer{}, errSignedOut
	}
	c, err := s.db.FindCustomerBySession(r.Context(), store.ID, cookie.Value)
	if errors.Is(err, storage.ErrNotFound) {
		return storage.Store{}, storage.Customer{}, errSignedOut
	}
	return store, c, err
}

// handleSignOut serves POST /storefront/{subdomain}/customer-auth/logout: the session ends on the server
// and the cookie is cleared.
func (s *Server) handleSignOut() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		if cookie, err := r.Cookie(customerCookie); err == nil && cookie.Value != "" {
			if err := s.db.EndCustomerSession(r.Context(), store.ID, cookie.Value); err != nil {
				return err
			}
		}
		http.SetCookie(w, &http.Cookie{Name: customerCookie, Value: "", Path: "/", HttpOnly: true, Secure: s.cfg.SecureCookies,
			SameSite: http.SameSiteLaxMode, MaxAge: -1})
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// handleGetAccount serves GET /storefront/{subdomain}/account.
func (s *Server) handleGetAccount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, c, err := s.signedIn(r)
		if err != nil {
			return err
		}
		a, err := s.db.FindCustomerByID(r.Context(), store.ID, c.ID)
		if err != nil {
			return err
		}
		w.Header().Set("Cache-Control", "private, no-store")
		respond(w, http.StatusOK, newAccountResponse(a))
		return nil
	}
}

// handleUpdateAccount serves PATCH /storefront/{subdomain}/account: name, language and marketing consent.
func (s *Server) handleUpdateAccount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, c, err := s.signedIn(r)
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateAccount](r)
		if err != nil {
			return err
		}
		u := storage.AccountUpdate{Name: req.Name, Language: req.Language, Marketing: map[string]string{}}
		if u.Name != nil {
			u.Name = new(strings.TrimSpace(*u.Name))
		}
		for channel, consent := range req.Marketing {
			u.Marketing[channel] = consent.State
		}
		var a storage.Customer
		if err := s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			a, err = tx.UpdateAccount(r.Context(), store.ID, c.ID, u)
			return err
		}); err != nil {
			return err
		}
		w.Header().Set("Cache-Control", "private, no-store")
		respond(w, http.StatusOK, newAccountResponse(a))
		return nil
	}
}

// accountOrderResponse is one of the buyer's orders as they see it: what
// was bought, what it cost, and what the courier will collect.
type accountOrderResponse struct {
	OrderNumber       string              `json:"order_number"`
	Status            string              `json:"status"`
	PaymentStatus     string              `json:"payment_status"`
	FulfillmentStatus string              `json:"fulfillment_status"`
	PaymentMethod     string              `json:"payment_method"`
	Currency          string              `json:"currency"`
	Total             int64               `json:"total"`
	PaidTotal         int64               `json:"paid_total"`
	CODAmountDue      int64               `json:"cod_amount_due"`
	TrackingNumber    *string             `json:"tracking_number"`
	Lines             []orderLineResponse `json:"lines"`
	CreatedAt         time.Time           `json:"created_at"`
}

func newAccountOrderResponse(o storage.Order) accountOrderResponse {
	due := int64(0)
	if o.PaymentMethod == "cod" {
		due = o.BalanceDue()
	}
	lines := newOrderLineResponses(o.Lines)
	if lines == nil {
		lines = []orderLineResponse{}
	}
	return accountOrderResponse{OrderNumber: o.OrderNumber, Status: string(o.Status), PaymentStatus: string(o.PaymentStatus),
		FulfillmentStatus: string(o.FulfillmentStatus), PaymentMethod: o.PaymentMethod, Currency: o.Currency, Total: o.Total,
		PaidTotal: o.PaidTotal, CODAmountDue: due, TrackingNumber: o.TrackingNumber, Lines: lines, CreatedAt: o.CreatedAt.UTC()}
}

// handleAccountOrders serves GET /storefront/{subdomain}/account/orders: the signed-in buyer's orders,
// their guest orders from before they signed up included.
func (s *Server) handleAccountOrders() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, c, err := s.signedIn(r)
		if err != nil {
			return err
		}
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindAccountOrders(r.Context(), store.ID, c.ID, storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		w.Header().Set("Cache-Control", "private, no-store")
		respond(w, http.StatusOK, newList(views(list, newAccountOrderResponse), page, limit, total))
		return nil
	}
}

// handleAccountOrder serves GET /storefront/{subdomain}/account/orders/{order_number}; another buyer's
// order is 404.
func (s *Server) handleAccountOrder() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, c, err := s.signedIn(r)
		if err != nil {
			return err
		}
		o, err := s.db.FindAccountOrder(r.Context(), store.ID, c.ID, chi.URLParam(r, "order_number"))
		if err != nil {
			return err
		}
		w.Header().Set("Cache-Control", "private, no-store")
		respond(w, http.StatusOK, newAccountOrderResponse(o))
		return nil
	}
}
