package api

import (
	"encoding/json"
	"net/http"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
)

// phonePattern accepts E.164-like numbers: an optional +, then 6-15 digits.
var phonePattern = regexp.MustCompile(`^\+?[0-9]{6,15}$`)

type customerResponse struct {
	ID         uuid.UUID       `json:"id"`
	Name       string          `json:"name"`
	Email      *string         `json:"email"`
	Phone      *string         `json:"phone"`
	Addresses  json.RawMessage `json:"addresses"`
	ChatOptOut bool            `json:"chat_opt_out"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

func newCustomerResponse(c storage.Customer) customerResponse {
	return customerResponse{ID: c.ID, Name: c.Name, Email: c.Email, Phone: c.Phone, Addresses: c.Addresses,
		ChatOptOut: c.ChatOptOut, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
}

// address is a shipping address (decisions §4).
type address struct {
	Name       string  `json:"name"`
	Phone      string  `json:"phone"`
	Line1      string  `json:"line1"`
	Line2      *string `json:"line2,omitempty"`
	City       string  `json:"city"`
	Region     *string `json:"region,omitempty"`
	Country    string  `json:"country"`
	PostalCode *string `json:"postal_code,omitempty"`
}

func (a address) check(c *checker, prefix string) {
	c.text(prefix+".name", a.Name, 1, 200)
	if !phonePattern.MatchString(normalizePhone(a.Phone)) {
		c.add(prefix+".phone", "invalid", "must be a phone number such as +201001234567")
	}
	c.text(prefix+".line1", a.Line1, 1, 300)
	c.text(prefix+".city", a.City, 1, 100)
	c.country(prefix+".country", a.Country)
}

// normalizePhone drops spaces and dashes people type into phone numbers.
func normalizePhone(s string) string {
	return strings.NewReplacer(" ", "", "-", "", "(", "", ")", "").Replace(strings.TrimSpace(s))
}

func checkEmail(c *checker, field, email string) {
	if _, err := mail.ParseAddress(email); err != nil || strings.ContainsAny(email, "<> ") {
		c.add(field, "invalid", "must be an email address")
	}
}

func checkPhone(c *checker, field, phone string) {
	if !phonePattern.MatchString(normalizePhone(phone)) {
		c.add(field, "invalid", "must be a phone number such as +201001234567")
	}
}

type createCustomerRequest struct {
	Name      string    `json:"name"`
	Email     *string   `json:"email"`
	Phone     *string   `json:"phone"`
	Addresses []address `json:"addresses"`
}

func (req createCustomerRequest) Valid() []fieldError {
	var c checker
	c.text("name", req.Name, 1, 200)
	if req.Email != nil {
		checkEmail(&c, "email", *req.Email)
	}
	if req.Phone != nil {
		checkPhone(&c, "phone", *req.Phone)
	}
	for i, a := range req.Addresses {
		a.check(&c, "addresses["+itoa(i)+"]")
	}
	return c.result()
}

// handleCreateCustomer serves POST /stores/{store_id}/customers.
func (s *Server) handleCreateCustomer() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := decode[createCustomerRequest](r)
		if err != nil {
			return err
		}
		addresses, _ := json.Marshal(orEmpty(req.Addresses))
		cust := storage.Customer{StoreID: storeIDFrom(r.Context()), Name: strings.TrimSpace(req.Name), Email: req.Email,
			Phone: normalizedPtr(req.Phone), Addresses: addresses}
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			if err := tx.CreateCustomer(r.Context(), &cust); err != nil {
				return nil, err
			}
			return ok(newCustomerResponse(cust)), nil
		})
	}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func normalizedPtr(phone *string) *string {
	if phone == nil {
		return nil
	}
	p := normalizePhone(*phone)
	return &p
}

// handleListCustomers serves GET /stores/{store_id}/customers.
func (s *Server) handleListCustomers() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindCustomers(r.Context(), storeIDFrom(r.Context()), q.str("search"), storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		items := make([]customerResponse, 0, len(list))
		for _, c := range list {
			items = append(items, newCustomerResponse(c))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleGetCustomer serves GET /stores/{store_id}/customers/{customer_id}.
func (s *Server) handleGetCustomer() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "customer_id")
		if err != nil {
			return err
		}
		c, err := s.db.FindCustomerByID(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newCustomerResponse(c))
		return nil
	}
}

type updateCustomerRequest struct {
	Name       optional[string]    `json:"name"`
	Email      optional[string]    `json:"email"`
	Phone      optional[string]    `json:"phone"`
	Addresses  optional[[]address] `json:"addresses"`
	ChatOptOut optional[bool]      `json:"chat_opt_out"`
}

func (req updateCustomerRequest) Valid() []fieldError {
	var c checker
	if notNull(&c, "name", req.Name) {
		c.text("name", req.Name.Value, 1, 200)
	}
	if req.Email.Set && !req.Email.Null {
		checkEmail(&c, "email", req.Email.Value)
	}
	if req.Phone.Set && !req.Phone.Null {
		checkPhone(&c, "phone", req.Phone.Value)
	}
	for i, a := range req.Addresses.Value {
		a.check(&c, "addresses["+itoa(i)+"]")
	}
	notNull(&c, "chat_opt_out", req.ChatOptOut)
	return c.result()
}

// handleUpdateCustomer serves PATCH /stores/{store_id}/customers/{customer_id}.
func (s *Server) handleUpdateCustomer() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "customer_id")
		if err != nil {
			return err
		}
		req, err := decode[updateCustomerRequest](r)
		if err != nil {
			return err
		}
		upd := storage.CustomerUpdate{Email: storage.Field[string](req.Email), Phone: storage.Field[string](req.Phone)}
		upd.Phone.Value = normalizePhone(upd.Phone.Value)
		if req.Name.Set {
			name := strings.TrimSpace(req.Name.Value)
			upd.Name = &name
		}
		if req.Addresses.Set {
			upd.Addresses, _ = json.Marshal(orEmpty(req.Addresses.Value))
		}
		if req.ChatOptOut.Set {
			upd.ChatOptOut = &req.ChatOptOut.Value
		}
		return writeView(s, w, r, http.StatusOK, newCustomerResponse, func(tx *storage.Tx) (storage.Customer, error) {
			return tx.UpdateCustomer(r.Context(), storeIDFrom(r.Context()), id, upd)
		})
	}
}

// handleDeleteCustomer serves DELETE /stores/{store_id}/customers/{customer_id}.
func (s *Server) handleDeleteCustomer() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "customer_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.DeleteCustomer(r.Context(), storeIDFrom(r.Context()), id)
		})
	}
}
