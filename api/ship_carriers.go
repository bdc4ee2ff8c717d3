package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/webhook"
	"github.com/merchantsvc/svc/storage"
)

// Carrier accounts, their signed status callbacks, and COD remittances
// (decisions §12).

var (
	errDuplicateRemittance = newError(http.StatusConflict, "DUPLICATE_REMITTANCE",
		"A remittance with this reference is already recorded for this carrier", "تم تسجيل تحويل بهذا المرجع لهذه الشركة مسبقًا")
	errAlreadyRemitted = newError(http.StatusConflict, "ALREADY_REMITTED",
		"A shipment in this remittance was already remitted in full", "إحدى شحنات هذا التحويل حُوِّل مبلغها كاملًا من قبل")
	errInvalidCallbackBatch = newError(http.StatusBadRequest, "INVALID_CALLBACK",
		"The body must be {\"events\": [...]} with 1 to 500 events", "يجب أن يكون الجسم {\"events\": [...]} بعدد أحداث من 1 إلى 500")
)

// carrierCallbackTolerance is how far a callback's signed time may be from ours.
const carrierCallbackTolerance = 300 * time.Second

// maxCarrierEvents is the most reports one callback carries.
const maxCarrierEvents = 500

type carrierAccountResponse struct {
	ID          uuid.UUID `json:"id"`
	Carrier     string    `json:"carrier"`
	Name        string    `json:"name"`
	CallbackURL string    `json:"callback_url"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func (s *Server) carrierAccountView(a storage.CarrierAccount) carrierAccountResponse {
	return carrierAccountResponse{ID: a.ID, Carrier: a.Carrier, Name: a.Name,
		CallbackURL: fmt.Sprintf("%s/api/v1/carrier-callbacks/%s", s.cfg.BaseURL, a.ID), CreatedAt: a.CreatedAt.UTC(), UpdatedAt: a.UpdatedAt.UTC()}
}

// carrierAccountWithSecret is how a create or a rotation answers: the
// callback secret once, and null on an idempotent replay.
type carrierAccountWithSecret struct {
	carrierAccountResponse
	CallbackSecret *string `json:"callback_secret"`
}

// writeCarrierSecret commits change and shows the account's new secret once
// (a secretAnswer: its replay is stored without it).
func (s *Server) writeCarrierSecret(w http.ResponseWriter, r *http.Request, status int, change func(tx *storage.Tx) (storage.CarrierAccount, error)) error {
	return s.writeTx(w, r, status, func(tx *storage.Tx) (any, error) {
		a, err := change(tx)
		if err != nil {
			return nil, err
		}
		resp := s.carrierAccountView(a)
		return secretAnswer{answer: ok(carrierAccountWithSecret{resp, &a.Secret}), replay: ok(carrierAccountWithSecret{resp, nil})}, nil
	})
}

// handleCreateCarrierAccount serves POST /stores/{store_id}/carrier-accounts;
// the callback secret is in this answer only (and a rotation's).
func (s *Server) handleCreateCarrierAccount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateCarrierAccount](r)
		if err != nil {
			return err
		}
		return s.writeCarrierSecret(w, r, http.StatusCreated, func(tx *storage.Tx) (storage.CarrierAccount, error) {
			return tx.CreateCarrierAccount(r.Context(), storeIDFrom(r.Context()), req.Carrier, strings.TrimSpace(req.Name))
		})
	}
}

// handleListCarrierAccounts serves GET /stores/{store_id}/carrier-accounts.
func (s *Server) handleListCarrierAccounts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		accounts, total, err := s.db.FindCarrierAccounts(r.Context(), storeIDFrom(r.Context()), storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		items := make([]carrierAccountResponse, 0, len(accounts))
		for _, a := range accounts {
			items = append(items, s.carrierAccountView(a))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleGetCarrierAccount serves GET /stores/{store_id}/carrier-accounts/{carrier_account_id}.
func (s *Server) handleGetCarrierAccount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "carrier_account_id")
		if err != nil {
			return err
		}
		a, err := s.db.FindCarrierAccount(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, s.carrierAccountView(a))
		return nil
	}
}

// handleDeleteCarrierAccount serves DELETE /stores/{store_id}/carrier-accounts/{carrier_account_id}.
func (s *Server) handleDeleteCarrierAccount() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "carrier_account_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			return nil, tx.DeleteCarrierAccount(r.Context(), storeIDFrom(r.Context()), id)
		})
	}
}

// handleRotateCarrierSecret serves POST /stores/{store_id}/carrier-accounts/{carrier_account_id}/rotate-secret.
func (s *Server) handleRotateCarrierSecret() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "carrier_account_id")
		if err != nil {
			return err
		}
		return s.writeCarrierSecret(w, r, http.StatusOK, func(tx *storage.Tx) (storage.CarrierAccount, error) {
			return tx.RotateCarrierSecret(r.Context(), storeIDFrom(r.Context()), id)
		})
	}
}

type carrierEventJSON struct {
	EventID        string    `json:"event_id"`
	TrackingNumber string    `json:"tracking_number"`
	Status         string    `json:"status"`
	OccurredAt     time.Time `json:"occurred_at"`
	CODCollected   *int64    `json:"cod_collected"`
}

type ignoredEventJSON struct {
	EventID string `json:"event_id"`
	Reason  string `json:"reason"`
}

type carrierCallbackResponse struct {
	Applied int                `json:"applied"`
	Ignored []ignoredEventJSON `json:"ignored"`
}

// handleCarrierCallback serves POST /api/v1/carrier-callbacks/{carrier_account_id}:
// a carrier's signed batch of status reports. The signature is the webhook
// V1 layout over the raw body, within ±300 s; an unknown account answers as
// a bad signature. Each report is answered on its own and none is refused
// with a 4xx: a report that cannot apply is kept and listed in ignored.
func (s *Server) handleCarrierCallback() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, wire.MaxJSONBody))
		if err != nil {
			return wire.ErrPayloadTooLarge
		}
		accountID, err := uuid.Parse(chi.URLParam(r, "carrier_account_id"))
		if err != nil {
			return errBadSignature
		}
		storeID, secrets, err := s.db.CallbackSecrets(r.Context(), accountID)
		if errors.Is(err, storage.ErrNotFound) {
			return errBadSignature
		}
		if err != nil {
			return err
		}
		header, verified := r.Header.Get("X-SVC-Carrier-Signature"), false
		for _, secret := range secrets {
			if webhook.Verify(secret, body, header, carrierCallbackTolerance, time.Now()) == nil {
				verified = true
				break
			}
		}
		if !verified {
			return errBadSignature
		}
		var batch struct {
			Events []json.RawMessage `json:"events"`
		}
		if err := json.Unmarshal(body, &batch); err != nil {
			return wire.ErrMalformedJSON
		}
		if len(batch.Events) == 0 || len(batch.Events) > maxCarrierEvents {
			return errInvalidCallbackBatch
		}
		events := make([]storage.CarrierEvent, 0, len(batch.Events))
		var malformed []ignoredEventJSON
		for _, raw := range batch.Events {
			var e carrierEventJSON
			if err := json.Unmarshal(raw, &e); err != nil || e.EventID == "" || e.TrackingNumber == "" || e.OccurredAt.IsZero() ||
				len(e.EventID) > 200 || (e.CODCollected != nil && (*e.CODCollected < 0 || *e.CODCollected > storage.MaxAmount)) {
				var id struct {
					EventID json.RawMessage `json:"event_id"`
				}
				_ = json.Unmarshal(raw, &id)
				var eventID string
				if json.Unmarshal(id.EventID, &eventID) != nil {
					eventID = string(id.EventID) // a number or other JSON, as sent
				}
				malformed = append(malformed, ignoredEventJSON{EventID: eventID, Reason: storage.IgnoredInvalid})
				continue
			}
			events = append(events, storage.CarrierEvent{EventID: e.EventID, TrackingNumber: e.TrackingNumber, Status: storage.ShipmentStatus(e.Status),
				OccurredAt: e.OccurredAt.UTC(), CODCollected: e.CODCollected})
		}
		resp := carrierCallbackResponse{Ignored: malformed}
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			applied, ignored, err := tx.ApplyCarrierEvents(r.Context(), storeID, accountID, events)
			if err != nil {
				return err
			}
			resp.Applied = applied
			for _, i := range ignored {
				resp.Ignored = append(resp.Ignored, ignoredEventJSON{EventID: i.EventID, Reason: i.Reason})
			}
			return nil
		})
		if err != nil {
			return err
		}
		if resp.Ignored == nil {
			resp.Ignored = []ignoredEventJSON{}
		}
		respond(w, http.StatusOK, resp)
		return nil
	}
}

type discrepancyJSON struct {
	ShipmentID uuid.UUID `json:"shipment_id"`
	Expected   int64     `json:"expected"`
	Collected  int64     `json:"collected"`
	Kind       string    `json:"kind"`
}

type remittanceItemResponse struct {
	ShipmentID uuid.UUID `json:"shipment_id"`
	Collected  int64     `json:"collected"`
	Fee        int64     `json:"fee"`
}

type remittanceResponse struct {
	ID               uuid.UUID                `json:"id"`
	CarrierAccountID *uuid.UUID               `json:"carrier_account_id"`
	Carrier          string                   `json:"carrier"`
	Reference        string                   `json:"reference"`
	RemittedAt       time.Time                `json:"remitted_at"`
	TotalCollected   int64                    `json:"total_collected"`
	TotalFees        int64                    `json:"total_fees"`
	Net              int64                    `json:"net"`
	Discrepancies    []discrepancyJSON        `json:"discrepancies"`
	Items            []remittanceItemResponse `json:"items"`
	CreatedAt        time.Time                `json:"created_at"`
}

func newRemittanceResponse(r storage.Remittance) remittanceResponse {
	resp := remittanceResponse{ID: r.ID, CarrierAccountID: r.CarrierAccountID, Carrier: r.Carrier, Reference: r.Reference,
		RemittedAt: r.RemittedAt.UTC(), TotalCollected: r.TotalCollected, TotalFees: r.TotalFees, Net: r.Net,
		Discrepancies: make([]discrepancyJSON, 0, len(r.Discrepancies)), Items: make([]remittanceItemResponse, 0, len(r.Items)), CreatedAt: r.CreatedAt.UTC()}
	for _, d := range r.Discrepancies {
		resp.Discrepancies = append(resp.Discrepancies, discrepancyJSON(d))
	}
	for _, i := range r.Items {
		resp.Items = append(resp.Items, remittanceItemResponse(i))
	}
	return resp
}

// handleCreateRemittance serves POST /stores/{store_id}/cod-remittances.
func (s *Server) handleCreateRemittance() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateRemittance](r)
		if err != nil {
			return err
		}
		in := storage.NewRemittance{CarrierAccountID: req.CarrierAccountID, Reference: strings.TrimSpace(req.Reference), RemittedAt: req.RemittedAt.UTC()}
		if req.Carrier != nil {
			in.Carrier = *req.Carrier
		}
		for _, item := range req.Items {
			in.Items = append(in.Items, storage.RemittanceItem(item))
		}
		return writeView(s, w, r, http.StatusCreated, newRemittanceResponse, func(tx *storage.Tx) (storage.Remittance, error) {
			return tx.RecordRemittance(r.Context(), storeIDFrom(r.Context()), in, actor(principalFrom(r.Context())))
		})
	}
}

// handleListRemittances serves GET /stores/{store_id}/cod-remittances.
func (s *Server) handleListRemittances() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindRemittances(r.Context(), storeIDFrom(r.Context()), storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(list, newRemittanceResponse), page, limit, total))
		return nil
	}
}

// handleGetRemittance serves GET /stores/{store_id}/cod-remittances/{remittance_id}.
func (s *Server) handleGetRemittance() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "remittance_id")
		if err != nil {
			return err
		}
		rem, err := s.db.FindRemittance(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newRemittanceResponse(rem))
		return nil
	}
}
