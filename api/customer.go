package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

type customerResponse struct {
	ID         uuid.UUID       `json:"id"`
	Name       string          `json:"name"`
	Email      *string         `json:"email"`
	Phone      *string         `json:"phone"`
	Addresses  json.RawMessage `json:"addresses"`
	ChatOptOut bool            `json:"chat_opt_out"`
	// The account and consent (decisions §24).
	HasAccount   bool                       `json:"has_account"`
	LastSignInAt *time.Time                 `json:"last_sign_in_at"`
	Language     *string                    `json:"language"`
	Marketing    map[string]consentResponse `json:"marketing"`
	CreatedAt    time.Time                  `json:"created_at"`
	UpdatedAt    time.Time                  `json:"updated_at"`
}

func newCustomerResponse(c storage.Customer) customerResponse {
	return customerResponse{ID: c.ID, Name: c.Name, Email: c.Email, Phone: c.Phone, Addresses: c.Addresses,
		ChatOptOut: c.ChatOptOut, HasAccount: c.HasAccount, LastSignInAt: utcPtr(c.LastSignInAt), Language: c.Language,
		Marketing: consentResponses(c.Marketing), CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
}

// handleCreateCustomer serves POST /stores/{store_id}/customers.
func (s *Server) handleCreateCustomer() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateCustomer](r)
		if err != nil {
			return err
		}
		addresses, _ := json.Marshal(orEmpty(req.Addresses))
		cust := storage.Customer{StoreID: storeIDFrom(r.Context()), Name: strings.TrimSpace(req.Name), Email: req.Email,
			Phone: request.NormalizedPtr(req.Phone), Addresses: addresses}
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
		respond(w, http.StatusOK, newList(views(list, newCustomerResponse), page, limit, total))
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

// handleUpdateCustomer serves PATCH /stores/{store_id}/customers/{customer_id}.
func (s *Server) handleUpdateCustomer() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "customer_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateCustomer](r)
		if err != nil {
			return err
		}
		upd := storage.CustomerUpdate{Email: storage.Field[string](req.Email), Phone: storage.Field[string](req.Phone),
			Language: storage.Field[string](req.Language), Marketing: req.MarketingStates()}
		upd.Phone.Value = request.NormalizePhone(upd.Phone.Value)
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
