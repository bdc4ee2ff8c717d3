package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/zatca"
)

// Tax settings (decisions §27).

type zatcaCertificateResponse struct {
	CertificateSubject   string    `json:"certificate_subject"`
	CertificateExpiresAt time.Time `json:"certificate_expires_at"`
}

type taxSettingsResponse struct {
	Regime           string                    `json:"regime"`
	PricesIncludeTax bool                      `json:"prices_include_tax"`
	DefaultRateBP    int                       `json:"default_rate_bp"`
	LegalName        bilingualResponse         `json:"legal_name"`
	VATNumber        *string                   `json:"vat_number"`
	CRNumber         *string                   `json:"cr_number"`
	Address          *storage.TaxAddress       `json:"address"`
	InvoicePrefix    string                    `json:"invoice_prefix"`
	ZATCA            *zatcaCertificateResponse `json:"zatca"`
	UpdatedAt        *time.Time                `json:"updated_at"`
}

// newTaxSettingsResponse shows the settings without their secret: of the
// CSID, the certificate's subject and expiry alone.
func newTaxSettingsResponse(lang string) func(storage.TaxSettings) taxSettingsResponse {
	return func(t storage.TaxSettings) taxSettingsResponse {
		out := taxSettingsResponse{Regime: t.Regime, PricesIncludeTax: t.PricesIncludeTax, DefaultRateBP: t.DefaultRateBP,
			LegalName: newBilingual(t.LegalName, lang), VATNumber: t.VATNumber, CRNumber: t.CRNumber, Address: t.Address,
			InvoicePrefix: t.InvoicePrefix, UpdatedAt: utcPtr(t.UpdatedAt)}
		if t.ZATCACertificate != nil {
			if cert, err := zatca.ParseCertificate(*t.ZATCACertificate); err == nil {
				out.ZATCA = &zatcaCertificateResponse{CertificateSubject: cert.Subject, CertificateExpiresAt: cert.NotAfter}
			}
		}
		return out
	}
}

// handleGetTaxSettings serves GET /stores/{store_id}/settings/tax (settings:read).
func (s *Server) handleGetTaxSettings() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		storeID := storeIDFrom(r.Context())
		t, err := s.db.FindTaxSettings(r.Context(), storeID)
		if err != nil {
			return err
		}
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newTaxSettingsResponse(lang)(t))
		return nil
	}
}

// handlePutTaxSettings serves PUT /stores/{store_id}/settings/tax
// (settings:write): the settings whole; a body without zatca keeps the
// stored CSID, whose key is sealed and never answered.
func (s *Server) handlePutTaxSettings() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.PutTaxSettings](r)
		if err != nil {
			return err
		}
		if req.ZATCA != nil && s.cfg.Secrets == nil {
			return errSecretsKeyMissing
		}
		storeID := storeIDFrom(r.Context())
		lang, err := s.readerLanguage(r, storeID)
		if err != nil {
			return err
		}
		view := newTaxSettingsResponse(lang)
		return writeView(s, w, r, http.StatusOK, view, func(tx *storage.Tx) (storage.TaxSettings, error) {
			current, err := tx.LockTaxSettings(r.Context(), storeID)
			if err != nil {
				return storage.TaxSettings{}, err
			}
			auditBefore(r.Context(), view(current))
			if req.Regime == storage.TaxRegimeZATCA && req.ZATCA == nil && current.ZATCACertificate == nil {
				return storage.TaxSettings{}, validationError([]wire.FieldError{{Field: "zatca", Code: "required",
					Message: "the zatca regime needs the store's CSID certificate and private key", MessageAr: wire.ArabicFieldMessage("required")}})
			}
			var key *string
			if req.ZATCA != nil {
				k := strings.TrimSpace(req.ZATCA.PrivateKey)
				key = &k
			}
			return tx.PutTaxSettings(r.Context(), s.cfg.Secrets, req.Settings(current), key)
		})
	}
}
