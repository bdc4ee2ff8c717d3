package api

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/workflows"
)

var utf8BOM = []byte("\ufeff")

var errNotCSV = newError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
	"The file is not a CSV: send UTF-8 text with the columns of GET /products/template",
	"الملف ليس CSV: أرسل نصًا بترميز UTF-8 بأعمدة القالب GET /products/template")

// csvFormat reads ?format: "products" (decisions §3, one row per product,
// the default) or "variants" (decisions §11, one row per variant).
func csvFormat(r *http.Request) (variants bool, err error) {
	switch f := r.URL.Query().Get("format"); f {
	case "", "products":
		return false, nil
	case "variants":
		return true, nil
	default:
		return false, validationError([]wire.FieldError{{Field: "format", Code: "one_of", Message: "must be products or variants",
			MessageAr: wire.ArabicFieldMessage("one_of")}})
	}
}

// handleCSVTemplate serves GET /stores/{store_id}/products/template.
func (s *Server) handleCSVTemplate() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		variants, err := csvFormat(r)
		if err != nil {
			return err
		}
		columns, name := storage.CSVColumns, "products-template.csv"
		if variants {
			columns, name = storage.VariantCSVColumns, "variants-template.csv"
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		_, _ = w.Write(utf8BOM)
		cw := csv.NewWriter(w)
		_ = cw.Write(columns)
		cw.Flush()
		return nil
	}
}

// handleExport serves GET /stores/{store_id}/products/export: it streams the catalog as CSV,
// a row per product or (format=variants) per variant, flushing as it goes,
// so memory stays flat for any catalog size.
func (s *Server) handleExport() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		variants, err := csvFormat(r)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		store, err := s.db.FindStoreByID(r.Context(), storeID)
		if err != nil {
			return err
		}
		exponent := storage.CurrencyExponent(store.Currency)
		columns, name := storage.CSVColumns, "products"
		if variants {
			columns, name = storage.VariantCSVColumns, "variants"
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s.csv"`, name, time.Now().UTC().Format("20060102")))
		_, _ = w.Write(utf8BOM)
		cw := csv.NewWriter(w)
		_ = cw.Write(columns)
		n := 0
		write := func(record []string) error {
			if err := cw.Write(record); err != nil {
				return err
			}
			if n++; n%500 == 0 {
				cw.Flush()
				return cw.Error()
			}
			return nil
		}
		if variants {
			err = s.db.ExportVariants(r.Context(), storeID, func(p storage.Product, v storage.Variant, first bool) error {
				return write(variantRecord(p, v, first, exponent))
			})
		} else {
			err = s.db.ExportProducts(r.Context(), storeID, func(p storage.Product) error {
				return write(productRecord(p, exponent))
			})
		}
		cw.Flush()
		if err != nil {
			// Headers are gone; cut the stream short so the client sees a failure.
			s.log.ErrorContext(r.Context(), "export products", "request_id", requestID(r.Context()), "error", err)
			panic(http.ErrAbortHandler)
		}
		return nil
	}
}

// productRecord is a product's row in the products format (decisions §3).
func productRecord(p storage.Product, exponent int) []string {
	return []string{neutralizedPtr(p.SKU), storage.NeutralizeCSVCell(p.Name), storage.NeutralizeCSVCell(p.Description), p.Status,
		storage.FormatPrice(p.Price, exponent), pricePtr(p.CostPrice, exponent), strconv.Itoa(p.Quantity), uuidPtr(p.CategoryID)}
}

// variantRecord is a variant's row in the variants format (decisions §11):
// the product's fields on its first row only, then the variant's cells.
// The CSV carries three options; a variant with more writes its first three.
func variantRecord(p storage.Product, v storage.Variant, first bool, exponent int) []string {
	record := make([]string, 0, len(storage.VariantCSVColumns))
	if first {
		record = append(record, neutralizedPtr(p.SKU), storage.NeutralizeCSVCell(p.Name), storage.NeutralizeCSVCell(p.Description),
			p.Status, storage.FormatPrice(p.Price, exponent), pricePtr(p.CostPrice, exponent), strconv.Itoa(v.Quantity), uuidPtr(p.CategoryID))
	} else {
		record = append(record, neutralizedPtr(p.SKU), "", "", "", "", "", strconv.Itoa(v.Quantity), "")
	}
	options := storage.OrderedOptions(v.Options)
	for i := range 3 {
		if i < len(options) {
			record = append(record, storage.NeutralizeCSVCell(options[i].Name), storage.NeutralizeCSVCell(options[i].Value))
		} else {
			record = append(record, "", "")
		}
	}
	weight := ""
	if v.WeightGrams != nil {
		weight = strconv.Itoa(*v.WeightGrams)
	}
	return append(record, neutralizedPtr(v.SKU), storage.FormatPrice(v.Price, exponent), pricePtr(v.CostPrice, exponent),
		neutralizedPtr(v.Barcode), weight)
}

func neutralizedPtr(s *string) string {
	if s == nil {
		return ""
	}
	return storage.NeutralizeCSVCell(*s)
}

func pricePtr(amount *int64, exponent int) string {
	if amount == nil {
		return ""
	}
	return storage.FormatPrice(*amount, exponent)
}

func uuidPtr(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}

type importResponse struct {
	ImportID      uuid.UUID          `json:"import_id"`
	Status        string             `json:"status"`
	DryRun        bool               `json:"dry_run"`
	TotalRows     int                `json:"total_rows"`
	ProcessedRows int                `json:"processed_rows"`
	Created       int                `json:"created"`
	Updated       int                `json:"updated"`
	Unchanged     int                `json:"unchanged"`
	Failed        int                `json:"failed"`
	Errors        []rowErrorResponse `json:"errors"`
	Error         *string            `json:"error"` // why a failed import stopped; null otherwise
}

// rowErrorResponse is one row's problem, in English and Arabic.
type rowErrorResponse struct {
	Row       int    `json:"row"`
	Column    string `json:"column"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	MessageAr string `json:"message_ar"`
}

// rowErrorsAr says each row error code in Arabic (the English message
// carries details such as a length or a row number; the code says enough).
var rowErrorsAr = map[string]string{
	"required":            "الحقل مطلوب",
	"too_long":            "النص أطول من المسموح",
	"invalid_encoding":    "النص ليس بترميز UTF-8 صالح",
	"one_of":              "القيمة ليست من القيم المسموح بها: draft أو active أو archived",
	"invalid_number":      "ليس رقمًا صالحًا",
	"out_of_range":        "الرقم خارج النطاق المسموح",
	"invalid_uuid":        "ليس معرّف تصنيف صالحًا",
	"duplicate_in_file":   "القيمة مكررة في صف سابق من هذا الملف",
	"duplicate":           "القيمة مكررة في هذا الصف",
	"option_mismatch":     "اسم الخيار لا يطابق الصف الأول للمنتج",
	"product_row_invalid": "الصف الأول لهذا المنتج به أخطاء، فلم يُستورد هذا المتغير",
	"managed_by_variants": "للمنتج متغيرات: اكتب كل متغير في صف خاص به بخياراته أو برمز variant_sku",
	"multiple_locations":  "المخزون موزع على أكثر من موقع: استخدم تعديلات المخزون",
	"not_found":           "غير موجود في المتجر",
	"sku_in_use":          "رمز SKU مستخدم لمنتج آخر",
}

func newRowErrors(errs []storage.RowError) []rowErrorResponse {
	out := make([]rowErrorResponse, 0, len(errs))
	for _, e := range errs {
		ar, ok := rowErrorsAr[e.Code]
		if !ok {
			ar = "قيمة غير صالحة"
		}
		out = append(out, rowErrorResponse{Row: e.Row, Column: e.Column, Code: e.Code, Message: e.Message, MessageAr: ar})
	}
	return out
}

func newImportResponse(imp storage.ProductImport) importResponse {
	return importResponse{ImportID: imp.ID, Status: string(imp.Status), DryRun: imp.DryRun, TotalRows: imp.TotalRows,
		ProcessedRows: imp.ProcessedRows, Created: imp.Created, Updated: imp.Updated, Unchanged: imp.Unchanged,
		Failed: imp.Failed, Errors: newRowErrors(imp.Errors), Error: imp.Error}
}

// checkCSV refuses what is not CSV text (415) and a wrong header (422)
// before anything is stored; it returns the number of data rows.
func checkCSV(data []byte) (int, error) {
	body := bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(body) || bytes.IndexByte(body, 0) >= 0 || !strings.HasPrefix(http.DetectContentType(body), "text/") {
		return 0, errNotCSV
	}
	records, err := storage.ReadCSV(data)
	if err != nil {
		var parseErr *csv.ParseError
		message := err.Error()
		if errors.As(err, &parseErr) {
			message = fmt.Sprintf("line %d: %v", parseErr.Line, parseErr.Err)
		}
		return 0, validationError([]wire.FieldError{{Field: "file", Code: "malformed_csv", Message: message, MessageAr: "ملف CSV غير سليم"}})
	}
	if _, err := storage.ParseCSVHeader(records[0]); err != nil {
		return 0, validationError([]wire.FieldError{{Field: "file", Code: "csv_header", Message: err.Error() +
			" (expected " + strings.Join(storage.CSVColumns, ",") + ")", MessageAr: "صف العناوين لا يطابق أعمدة القالب"}})
	}
	return len(records) - 1, nil
}

// handleImport serves POST /stores/{store_id}/products/import.
func (s *Server) handleImport() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		up, err := wire.ReadUpload(r)
		if err != nil {
			return err
		}
		dryRun := r.URL.Query().Get("dry_run")
		if v, ok := up.Fields["dry_run"]; ok {
			dryRun = v
		}
		isDryRun, err := strconv.ParseBool(dryRun)
		if dryRun != "" && err != nil {
			return validationError([]wire.FieldError{{Field: "dry_run", Code: "invalid_type", Message: "must be true or false",
				MessageAr: wire.ArabicFieldMessage("invalid_type")}})
		}
		total, err := checkCSV(up.File)
		if err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		// The file is stored first; the row and the Idempotency-Key's answer
		// commit together once the workflow has what it needs.
		imp := storage.ProductImport{ID: storage.NewID(), StoreID: storeID, DryRun: isDryRun, TotalRows: total}
		object := storage.ImportKey(storeID, imp.ID)
		if err := s.blob.Put(r.Context(), object, up.File, "text/csv"); err != nil {
			loggerFrom(r.Context()).WarnContext(r.Context(), "store import file", slog.Any("error", err))
			return errObjectStoreDown
		}
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			if err := tx.CreateImport(r.Context(), &imp); err != nil {
				return err
			}
			return completeKeyIn(r, tx, http.StatusAccepted, newImportResponse(imp))
		})
		if err != nil {
			s.removeObject(r.Context(), object)
			return err
		}
		work := workflows.Work{Kind: workflows.KindProductImport, StoreID: storeID, ResourceID: imp.ID,
			Summary: workflows.ImportSummary(s.storeLabel(r.Context(), storeID), len(up.File), imp.DryRun)}
		run, err := s.startWork(r.Context(), workflows.ProductImportWorkflowID(imp.ID), work, workflows.ProductImport,
			workflows.ProductImportInput{StoreID: storeID, ImportID: imp.ID},
			func(ctx context.Context) error { return s.db.MarkImportStarted(ctx, storeID, imp.ID) })
		// Prefer: respond-async (RFC 7240) answers 202 at once, for a client
		// that follows the import's events instead.
		if err == nil && !preferAsync(r) { // else the dispatcher starts it, and the import answers 202 as running
			ctx, cancel := context.WithTimeout(r.Context(), s.cfg.ImportWait)
			defer cancel()
			_ = run.Get(ctx, nil) // the outcome is read from the import row below
		}
		current, err := s.db.FindImport(context.WithoutCancel(r.Context()), storeID, imp.ID)
		if err != nil {
			return err
		}
		if current.Status == storage.ImportRunning {
			w.Header().Set("Location", fmt.Sprintf("/api/v1/stores/%s/products/imports/%s", storeID, imp.ID))
			respond(w, http.StatusAccepted, newImportResponse(current))
			return nil
		}
		respond(w, http.StatusOK, newImportResponse(current))
		return nil
	}
}

// importInStore is the import the path names, of the request's store.
func (s *Server) importInStore(r *http.Request) (storage.ProductImport, error) {
	id, err := pathUUID(r, "import_id")
	if err != nil {
		return storage.ProductImport{}, err
	}
	return s.db.FindImport(r.Context(), storeIDFrom(r.Context()), id)
}

// preferAsync reports whether the request asks not to wait (Prefer:
// respond-async, RFC 7240).
func preferAsync(r *http.Request) bool {
	for _, v := range r.Header.Values("Prefer") {
		for pref := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(pref), "respond-async") {
				return true
			}
		}
	}
	return false
}

// handleImportErrors serves GET /stores/{store_id}/products/imports/{import_id}/errors:
// the row errors as a CSV report (row, column, code, message, message_ar).
func (s *Server) handleImportErrors() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		imp, err := s.importInStore(r)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="import-%s-errors.csv"`, imp.ID))
		w.Header().Set("Cache-Control", "no-store")
		out := csv.NewWriter(w)
		_, _ = w.Write(utf8BOM) // spreadsheets read the Arabic as UTF-8
		_ = out.Write([]string{"row", "column", "code", "message", "message_ar"})
		for _, e := range newRowErrors(imp.Errors) {
			_ = out.Write([]string{strconv.Itoa(e.Row), storage.NeutralizeCSVCell(e.Column), e.Code,
				storage.NeutralizeCSVCell(e.Message), storage.NeutralizeCSVCell(e.MessageAr)})
		}
		out.Flush()
		return out.Error()
	}
}

// handleGetImport serves GET /stores/{store_id}/products/imports/{import_id}.
func (s *Server) handleGetImport() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		imp, err := s.importInStore(r)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newImportResponse(imp))
		return nil
	}
}
