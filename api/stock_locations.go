package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// Inventory locations (decisions §11).

var errLocationInUse = newError(http.StatusConflict, "LOCATION_IN_USE",
	"The location is in use (the default location, or one with stock, reservations or open shipments) and cannot be deleted",
	"الموقع مستخدم (الموقع الافتراضي أو به مخزون أو حجوزات أو شحنات مفتوحة) ولا يمكن حذفه")

type locationResponse struct {
	ID        uuid.UUID       `json:"id"`
	Name      string          `json:"name"`
	Address   json.RawMessage `json:"address"` // null until the default location is described
	Phone     *string         `json:"phone"`
	Priority  int             `json:"priority"`
	IsDefault bool            `json:"is_default"`
	IsActive  bool            `json:"is_active"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

func newLocationResponse(l storage.Location) locationResponse {
	address := l.Address
	if len(address) == 0 {
		address = json.RawMessage("null")
	}
	return locationResponse{ID: l.ID, Name: l.Name, Address: address, Phone: l.Phone, Priority: l.Priority,
		IsDefault: l.IsDefault, IsActive: l.IsActive, CreatedAt: l.CreatedAt.UTC(), UpdatedAt: l.UpdatedAt.UTC()}
}

func normalizedPhone(phone *string) *string {
	if phone == nil {
		return nil
	}
	p := request.NormalizePhone(*phone)
	return &p
}

// handleCreateLocation serves POST /stores/{store_id}/locations.
func (s *Server) handleCreateLocation() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.CreateLocation](r)
		if err != nil {
			return err
		}
		address, _ := json.Marshal(req.Address)
		l := storage.Location{StoreID: storeIDFrom(r.Context()), Name: strings.TrimSpace(req.Name), Address: address,
			Phone: normalizedPhone(req.Phone), Priority: 100, IsDefault: req.IsDefault}
		if req.Priority != nil {
			l.Priority = *req.Priority
		}
		return s.writeTx(w, r, http.StatusCreated, func(tx *storage.Tx) (any, error) {
			if err := tx.CreateLocation(r.Context(), &l); err != nil {
				return nil, err
			}
			return ok(newLocationResponse(l)), nil
		})
	}
}

// handleListLocations serves GET /stores/{store_id}/locations, in
// reservation order (priority, then name).
func (s *Server) handleListLocations() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		locations, total, err := s.db.FindLocations(r.Context(), storeIDFrom(r.Context()), storage.Page{Page: page, Limit: limit})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(locations, newLocationResponse), page, limit, total))
		return nil
	}
}

// handleGetLocation serves GET /stores/{store_id}/locations/{location_id}.
func (s *Server) handleGetLocation() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "location_id")
		if err != nil {
			return err
		}
		l, err := s.db.FindLocationByID(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newLocationResponse(l))
		return nil
	}
}

// handleUpdateLocation serves PATCH /stores/{store_id}/locations/{location_id}.
func (s *Server) handleUpdateLocation() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "location_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateLocation](r)
		if err != nil {
			return err
		}
		var upd storage.LocationUpdate
		if req.Name.Set {
			name := strings.TrimSpace(req.Name.Value)
			upd.Name = &name
		}
		if req.Address.Set {
			upd.Address, _ = json.Marshal(req.Address.Value)
		}
		if req.Phone.Set {
			upd.Phone.Set, upd.Phone.Null = true, req.Phone.Null
			upd.Phone.Value = request.NormalizePhone(req.Phone.Value)
		}
		if req.Priority.Set {
			upd.Priority = &req.Priority.Value
		}
		if req.IsDefault.Set {
			upd.IsDefault = &req.IsDefault.Value
		}
		if req.IsActive.Set {
			upd.IsActive = &req.IsActive.Value
		}
		return writeView(s, w, r, http.StatusOK, newLocationResponse, func(tx *storage.Tx) (storage.Location, error) {
			return tx.UpdateLocation(r.Context(), storeIDFrom(r.Context()), id, upd)
		})
	}
}

// handleDeleteLocation serves DELETE /stores/{store_id}/locations/{location_id}.
func (s *Server) handleDeleteLocation() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "location_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			err := tx.DeleteLocation(r.Context(), storeIDFrom(r.Context()), id)
			if errors.Is(err, storage.ErrLocationInUse) {
				return nil, errLocationInUse
			}
			return nil, err
		})
	}
}
