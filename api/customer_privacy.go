package api

import (
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Merge, export and erase of customers (decisions §24).

var (
	errCustomersBothHaveAccounts = newError(http.StatusConflict, "CUSTOMERS_BOTH_HAVE_ACCOUNTS",
		"Both customers have accounts; each signs in with their own phone or email", "لكلا العميلين حساب؛ يدخل كلٌّ منهما برقمه أو بريده")
	errCustomerHasOpenOrders = newError(http.StatusConflict, "CUSTOMER_HAS_OPEN_ORDERS",
		"The customer has orders still on their way; erase them once those are delivered, returned or cancelled",
		"لدى العميل طلبات لم تكتمل بعد؛ احذف بياناته بعد تسليمها أو إرجاعها أو إلغائها")
)

// handleMergeCustomers serves POST /stores/{store_id}/customers/{customer_id}/merge (customers:write):
// everything of from_customer_id moves to the customer, which answers; the merged one is 404 after.
func (s *Server) handleMergeCustomers() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "customer_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.MergeCustomers](r)
		if err != nil {
			return err
		}
		from, _ := uuid.Parse(req.FromCustomerID)
		return writeView(s, w, r, http.StatusOK, newCustomerResponse, func(tx *storage.Tx) (storage.Customer, error) {
			c, err := tx.MergeCustomers(r.Context(), storeIDFrom(r.Context()), id, from)
			if errors.Is(err, storage.ErrCustomersBothHaveAccounts) {
				return c, errCustomersBothHaveAccounts
			}
			return c, err
		})
	}
}

type customerExportResponse struct {
	Customer  accountResponse    `json:"customer"`
	Addresses any                `json:"addresses"`
	Orders    []orderResponse    `json:"orders"`
	GiftCards []giftCardResponse `json:"gift_cards"`
}

// handleExportCustomer serves GET /stores/{store_id}/customers/{customer_id}/export (customers:read):
// everything the store keeps about the customer, for their access request.
func (s *Server) handleExportCustomer() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "customer_id")
		if err != nil {
			return err
		}
		e, err := s.db.ExportCustomer(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		out := customerExportResponse{Customer: newAccountResponse(e.Customer), Addresses: e.Customer.Addresses,
			Orders: views(e.Orders, newOrderResponse), GiftCards: views(e.GiftCards, newGiftCardResponse)}
		w.Header().Set("Content-Disposition", `attachment; filename="customer-`+id.String()+`.json"`)
		w.Header().Set("Cache-Control", "private, no-store")
		respond(w, http.StatusOK, out)
		return nil
	}
}

// handleEraseCustomer serves POST /stores/{store_id}/customers/{customer_id}/erase (customers:write):
// the customer's name, contacts and addresses are redacted, and their orders' copies; amounts stay.
func (s *Server) handleEraseCustomer() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "customer_id")
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusOK, newCustomerResponse, func(tx *storage.Tx) (storage.Customer, error) {
			c, err := tx.EraseCustomer(r.Context(), storeIDFrom(r.Context()), id)
			if errors.Is(err, storage.ErrCustomerHasOpenOrders) {
				return c, errCustomerHasOpenOrders
			}
			return c, err
		})
	}
}
