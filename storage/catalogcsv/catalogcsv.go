// Package catalogcsv reads and writes the catalog's CSV format (decisions
// §3): the header, the rows and their errors, prices in minor units, the
// batches an import applies. It needs nothing of the store, so its fuzz
// tests link nothing but the parser; storage re-exports what its callers use.
package catalogcsv

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage/numerals"
)

// CSVColumns are the products format's columns, in export order
// (decisions §3): one row per product, sold as its default variant.
var CSVColumns = []string{"sku", "name", "description", "status", "price", "cost_price", "quantity", "category_id"}

// variantOnlyColumns turn a file into the variants format.
var variantOnlyColumns = []string{"option1_name", "option1_value", "option2_name", "option2_value", "option3_name", "option3_value",
	"variant_sku", "variant_price", "variant_cost_price", "barcode", "weight_grams"}

// VariantCSVColumns are the variants format's columns, in export order
// (decisions §11, Shopify's layout): one row per variant, rows of one
// product consecutive under its sku, the product's own fields on its first
// row. They are the products format's columns followed by the variant ones,
// so a row of a product without options reads the same in both.
var VariantCSVColumns = append(append([]string{}, CSVColumns...), variantOnlyColumns...)

// productOnlyColumns are read from a product's first row only.
var productOnlyColumns = []string{"name", "description", "status", "price", "cost_price", "category_id"}

// maxCSVOptions is how many option name/value pairs a row carries.
const maxCSVOptions = 3

// requiredCSVColumns must be in every import header.
var requiredCSVColumns = []string{"sku", "name", "price"}

// MaxPrice is the largest price a file may hold: storage.MaxAmount, which
// this package cannot import (storage imports it); a constant in
// storage/catalog_csv.go does not compile unless the two are equal.
const MaxPrice int64 = 1_000_000_000_000

// CurrencyExponent is the number of minor-unit digits of a currency (ISO 4217).
func CurrencyExponent(currency string) int {
	switch currency {
	case "KWD", "BHD", "OMR", "JOD":
		return 3
	default:
		return 2
	}
}

// RowError is one problem with one cell of an import (spreadsheet numbering:
// the header is row 1).
type RowError struct {
	Row     int    `json:"row"`
	Column  string `json:"column"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// CSVHeader maps column names to their index in a row.
type CSVHeader struct {
	index map[string]int
	// Variants is set when the header has any variant column: one row per
	// variant. Otherwise the file is in the products format.
	Variants bool
}

// HeaderError says what is wrong with an import's header row.
type HeaderError struct {
	Missing []string
	Unknown []string
	Repeats []string
}

func (e *HeaderError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing columns: "+strings.Join(e.Missing, ", "))
	}
	if len(e.Unknown) > 0 {
		parts = append(parts, "unknown columns: "+strings.Join(e.Unknown, ", "))
	}
	if len(e.Repeats) > 0 {
		parts = append(parts, "repeated columns: "+strings.Join(e.Repeats, ", "))
	}
	return strings.Join(parts, "; ")
}

// ParseCSVHeader reads the header row: names are matched without case or
// surrounding spaces; sku, name and price are required.
func ParseCSVHeader(record []string) (CSVHeader, error) {
	h := CSVHeader{index: map[string]int{}}
	var e HeaderError
	for i, raw := range record {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(raw, "\ufeff")))
		switch {
		case !containsString(VariantCSVColumns, name):
			e.Unknown = append(e.Unknown, raw)
		case h.has(name):
			e.Repeats = append(e.Repeats, name)
		default:
			h.index[name] = i
			h.Variants = h.Variants || containsString(variantOnlyColumns, name)
		}
	}
	for _, name := range requiredCSVColumns {
		if !h.has(name) {
			e.Missing = append(e.Missing, name)
		}
	}
	if len(e.Missing)+len(e.Unknown)+len(e.Repeats) > 0 {
		return CSVHeader{}, &e
	}
	return h, nil
}

func (h CSVHeader) has(name string) bool { _, ok := h.index[name]; return ok }

// ProductSKU is the row's sku cell as a row would be matched by: trimmed,
// a neutralising quote removed.
func (h CSVHeader) ProductSKU(record []string) string {
	i := h.index["sku"]
	if i >= len(record) {
		return ""
	}
	return strings.TrimSpace(RestoreCSVCell(record[i]))
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ImportRow is one valid data row. Has says which columns the header
// carries (on a product's later rows, only the variant's): an update
// leaves the others untouched.
type ImportRow struct {
	Row         int
	SKU         string
	Name        string
	Description string
	Status      string
	Price       int64
	CostPrice   *int64
	Quantity    int
	CategoryID  *uuid.UUID
	Has         map[string]bool

	// The variants format's own cells.
	Options          [maxCSVOptions]CSVOption
	VariantSKU       *string
	VariantPrice     *int64 // nil: the product's price
	VariantCostPrice *int64
	Barcode          *string
	WeightGrams      *int
}

// CSVOption is one option name/value pair of a row; a later row of a
// product may leave the name blank to reuse the first row's.
type CSVOption struct {
	Name, Value string
}

const (
	maxCSVQuantity    = 1_000_000_000
	maxCSVWeightGrams = 1_000_000
	maxCSVOptionText  = 255
	maxCSVBarcode     = 64
)

// ParseCSVRow validates one data row. row is its spreadsheet number;
// exponent the store currency's minor-unit digits; first says the row
// starts its product (every row of the products format does): a later row
// of a product in the variants format carries only its variant's cells,
// and its product columns are not read. Every problem is reported.
func ParseCSVRow(h CSVHeader, record []string, row, exponent int, first bool) (ImportRow, []RowError) {
	out := ImportRow{Row: row, Has: map[string]bool{}}
	var errs []RowError
	bad := func(column, code, message string) {
		errs = append(errs, RowError{Row: row, Column: column, Code: code, Message: message})
	}
	cell := func(name string) (string, bool) {
		i, ok := h.index[name]
		if !ok {
			return "", false
		}
		out.Has[name] = true
		if i >= len(record) {
			return "", true
		}
		return record[i], true
	}
	text := func(name string, maxLen int) string {
		v, _ := cell(name)
		v = RestoreCSVCell(v)
		if !utf8.ValidString(v) {
			bad(name, "invalid_encoding", "is not valid UTF-8")
			return ""
		}
		if utf8.RuneCountInString(v) > maxLen {
			bad(name, "too_long", fmt.Sprintf("is longer than %d characters", maxLen))
		}
		return v
	}
	price := func(name string) *int64 {
		v, ok := cell(name)
		if !ok || strings.TrimSpace(v) == "" {
			return nil
		}
		p, err := ParsePrice(v, exponent)
		if err != nil {
			bad(name, "invalid_number", err.Error())
			return nil
		}
		return &p
	}
	whole := func(name string, maxValue int) *int {
		v, ok := cell(name)
		if !ok || strings.TrimSpace(v) == "" {
			return nil
		}
		n, err := strconv.Atoi(numerals.ToLatin(strings.TrimSpace(v)))
		switch {
		case err != nil:
			bad(name, "invalid_number", "must be a whole number")
		case n < 0 || n > maxValue:
			bad(name, "out_of_range", fmt.Sprintf("must be between 0 and %d", maxValue))
		default:
			return &n
		}
		return nil
	}
	optionalText := func(name string, maxLen int) *string {
		if !h.has(name) {
			return nil
		}
		if v := strings.TrimSpace(text(name, maxLen)); v != "" {
			return &v
		}
		return nil
	}
	out.SKU = strings.TrimSpace(text("sku", 100))
	if out.SKU == "" {
		bad("sku", "required", "is required: rows are matched to products by SKU")
	}
	if first {
		out.Name = strings.TrimSpace(text("name", 255))
		if out.Name == "" {
			bad("name", "required", "is required")
		}
		out.Description = text("description", 20000)
		if v, ok := cell("status"); ok {
			switch s := strings.ToLower(strings.TrimSpace(v)); s {
			case "":
				out.Status = "active"
			case "draft", "active", "archived":
				out.Status = s
			default:
				bad("status", "one_of", "must be draft, active or archived")
			}
		}
		if v, _ := cell("price"); strings.TrimSpace(v) == "" {
			bad("price", "required", "is required")
		} else if p := price("price"); p != nil {
			out.Price = *p
		}
		out.CostPrice = price("cost_price")
		if v, ok := cell("category_id"); ok && strings.TrimSpace(v) != "" {
			id, err := uuid.Parse(strings.TrimSpace(v))
			if err != nil || len(strings.TrimSpace(v)) != 36 {
				bad("category_id", "invalid_uuid", "must be a category id (uuid)")
			} else {
				out.CategoryID = &id
			}
		}
	}
	if n := whole("quantity", maxCSVQuantity); n != nil {
		out.Quantity = *n
	}
	if !h.Variants {
		return out, errs
	}
	names := map[string]bool{}
	for i := range maxCSVOptions {
		nameCol, valueCol := fmt.Sprintf("option%d_name", i+1), fmt.Sprintf("option%d_value", i+1)
		o := CSVOption{Name: strings.TrimSpace(text(nameCol, maxCSVOptionText)), Value: strings.TrimSpace(text(valueCol, maxCSVOptionText))}
		switch {
		case o.Name != "" && o.Value == "":
			bad(valueCol, "required", "is required: the option "+o.Name+" needs a value")
		case o.Name == "" && o.Value != "" && first:
			bad(nameCol, "required", "is required: name the option this value is for")
		case o.Name != "" && names[strings.ToLower(o.Name)]:
			bad(nameCol, "duplicate", "names an option this row already has")
		}
		names[strings.ToLower(o.Name)] = o.Name != ""
		out.Options[i] = o
	}
	if sku := optionalText("variant_sku", 100); sku != nil {
		out.VariantSKU = sku
		if *sku == out.SKU {
			bad("variant_sku", "duplicate", "must differ from the product's sku (products and variants share SKUs)")
		}
	}
	out.VariantPrice = price("variant_price")
	out.VariantCostPrice = price("variant_cost_price")
	out.Barcode = optionalText("barcode", maxCSVBarcode)
	out.WeightGrams = whole("weight_grams", maxCSVWeightGrams)
	return out, errs
}

// HasOptions reports whether the row names any option value.
func (r ImportRow) HasOptions() bool {
	for _, o := range r.Options {
		if o.Value != "" {
			return true
		}
	}
	return false
}

// OptionsJSON is the row's options as a variant's options object.
func (r ImportRow) OptionsJSON() json.RawMessage {
	m := map[string]string{}
	for _, o := range r.Options {
		if o.Value != "" {
			m[o.Name] = o.Value
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// ParsePrice reads a decimal amount in major units ("149.99") into minor
// units, refusing more fraction digits than the currency has.
func ParsePrice(s string, exponent int) (int64, error) {
	s = numerals.ToLatin(strings.TrimSpace(s))
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || strings.HasPrefix(whole, "-") || strings.HasPrefix(whole, "+") || (hasDot && frac == "") {
		return 0, fmt.Errorf("must be an amount like 149.99")
	}
	if len(frac) > exponent {
		return 0, fmt.Errorf("has more than %d decimal places", exponent)
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("must be an amount like 149.99")
		}
	}
	if len(whole) > 13 {
		return 0, fmt.Errorf("is too large")
	}
	frac += strings.Repeat("0", exponent-len(frac))
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("must be an amount like 149.99")
	}
	if n > MaxPrice {
		return 0, fmt.Errorf("is too large (at most 10^12 minor units)")
	}
	return n, nil
}

// FormatPrice writes minor units as a decimal amount with the currency's digits.
func FormatPrice(minor int64, exponent int) string {
	if minor < 0 {
		return "-" + FormatPrice(-minor, exponent)
	}
	if exponent == 0 {
		return strconv.FormatInt(minor, 10)
	}
	s := strconv.FormatInt(minor, 10)
	if len(s) <= exponent {
		s = strings.Repeat("0", exponent-len(s)+1) + s
	}
	return s[:len(s)-exponent] + "." + s[len(s)-exponent:]
}

// formulaStarts are the first characters a spreadsheet may run as a formula
// (OWASP's CSV injection list: TAB and CR too, which some spreadsheets skip
// before reading the = behind them).
const formulaStarts = "=+-@'\t\r"

// NeutralizeCSVCell prefixes a text cell that a spreadsheet would treat as
// a formula with ' (CSV injection); RestoreCSVCell undoes exactly that.
func NeutralizeCSVCell(s string) string {
	if s != "" && strings.ContainsRune(formulaStarts, rune(s[0])) {
		return "'" + s
	}
	return s
}

// RestoreCSVCell removes one leading ' placed before a formula character.
func RestoreCSVCell(s string) string {
	if len(s) >= 2 && s[0] == '\'' && strings.ContainsRune(formulaStarts, rune(s[1])) {
		return s[1:]
	}
	return s
}

// ReadCSV parses a whole product CSV: UTF-8 with or without a BOM, `,` or
// `;` (whichever the header line uses more), quoted fields with embedded
// separators, quotes and newlines.
func ReadCSV(data []byte) ([][]string, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = detectSeparator(data)
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	// Drop blank lines a spreadsheet leaves at the end.
	for len(records) > 0 && isBlankRecord(records[len(records)-1]) {
		records = records[:len(records)-1]
	}
	if len(records) == 0 {
		return nil, errors.New("the file is empty")
	}
	return records, nil
}

func isBlankRecord(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

func detectSeparator(data []byte) rune {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	commas, semicolons, quoted := 0, 0, false
	for _, c := range line {
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == ',':
			commas++
		case c == ';':
			semicolons++
		}
	}
	if semicolons > commas {
		return ';'
	}
	return ','
}

// ImportProduct is one product of a file: the product's fields, read from
// its first row, and in the variants format every row of it (the first
// included), one per variant. A products-format row has no Variants: its
// quantity is the default variant's.
type ImportProduct struct {
	ImportRow
	Variants []ImportRow
}

// Rows lists the file rows the product stands for.
func (p ImportProduct) Rows() []ImportRow {
	if p.Variants == nil {
		return []ImportRow{p.ImportRow}
	}
	return p.Variants
}

// ImportBatch is one batch of an import: the products whose rows parsed,
// and the errors of rows that did not (already numbered). A product's rows
// are never split between batches.
type ImportBatch struct {
	Start    int // index of the first data row of the batch
	Count    int // data rows the batch covers
	Products []ImportProduct
	Errors   []RowError
}

// SplitImport parses a file's data rows (the records after the header)
// into batches of about size rows, never splitting a product's rows, so a
// batch applies whole products. It runs over the whole file in order, so a
// repeated SKU is reported on its later row however the batches are later
// applied (or resumed). exponent is the store currency's minor-unit digits.
func SplitImport(h CSVHeader, records [][]string, exponent, size int) []ImportBatch {
	var (
		batches  []ImportBatch
		batch    ImportBatch
		seen     = map[string]int{} // every SKU of the file (products' and variants') → its row
		prevSKU  string
		firstRow int  // the current product's first row
		broken   bool // the current product's first row failed
	)
	claim := func(column, sku string, row int) []RowError {
		if earlier, dup := seen[sku]; dup {
			message := fmt.Sprintf("the SKU is already on row %d of this file", earlier)
			if h.Variants && column == "sku" {
				message += "; the rows of one product must follow each other"
			}
			return []RowError{{Row: row, Column: column, Code: "duplicate_in_file", Message: message}}
		}
		seen[sku] = row
		return nil
	}
	for i, record := range records {
		row := i + 2
		sku := h.ProductSKU(record)
		first := !h.Variants || sku == "" || sku != prevSKU
		if first && i-batch.Start >= size {
			batch.Count = i - batch.Start
			batches = append(batches, batch)
			batch = ImportBatch{Start: i}
		}
		parsed, errs := ParseCSVRow(h, record, row, exponent, first)
		if first {
			prevSKU, firstRow = sku, row
			if len(errs) == 0 {
				errs = claim("sku", parsed.SKU, row)
			}
			if len(errs) == 0 && parsed.VariantSKU != nil {
				errs = claim("variant_sku", *parsed.VariantSKU, row)
			}
			if broken = len(errs) > 0; broken {
				batch.Errors = append(batch.Errors, errs...)
				continue
			}
			p := ImportProduct{ImportRow: parsed}
			if h.Variants {
				p.Variants = []ImportRow{parsed}
			}
			batch.Products = append(batch.Products, p)
			continue
		}
		if broken {
			batch.Errors = append(batch.Errors, append(errs, RowError{Row: row, Column: "sku", Code: "product_row_invalid",
				Message: fmt.Sprintf("the product's first row (row %d) has errors, so its variants are not imported", firstRow)})...)
			continue
		}
		product := &batch.Products[len(batch.Products)-1]
		if len(errs) == 0 {
			errs = product.matchOptions(&parsed)
		}
		if len(errs) == 0 && parsed.VariantSKU != nil {
			errs = claim("variant_sku", *parsed.VariantSKU, row)
		}
		if len(errs) > 0 {
			batch.Errors = append(batch.Errors, errs...)
			continue
		}
		product.Variants = append(product.Variants, parsed)
	}
	if batch.Count = len(records) - batch.Start; batch.Count > 0 {
		batches = append(batches, batch)
	}
	return batches
}

// matchOptions checks a later row of a product against its first row: the
// same option names (a blank name takes the first row's), a value for each,
// and a combination no earlier row of the product has.
func (p *ImportProduct) matchOptions(r *ImportRow) []RowError {
	first := p.Variants[0]
	if !first.HasOptions() {
		return []RowError{{Row: r.Row, Column: "sku", Code: "duplicate_in_file", Message: fmt.Sprintf(
			"the product's first row (row %d) has no options, so the product has one row; give each of its rows options to list variants", first.Row)}}
	}
	var errs []RowError
	for i, want := range first.Options {
		got := &r.Options[i]
		if got.Name == "" && got.Value != "" {
			got.Name = want.Name
		}
		nameCol, valueCol := fmt.Sprintf("option%d_name", i+1), fmt.Sprintf("option%d_value", i+1)
		switch {
		case want.Value == "" && got.Value != "":
			errs = append(errs, RowError{Row: r.Row, Column: nameCol, Code: "option_mismatch",
				Message: fmt.Sprintf("the product's first row (row %d) has no option %d", first.Row, i+1)})
		case want.Value != "" && got.Value == "":
			errs = append(errs, RowError{Row: r.Row, Column: valueCol, Code: "required",
				Message: "is required: every variant of the product has a " + want.Name})
		case got.Value != "" && !strings.EqualFold(got.Name, want.Name):
			errs = append(errs, RowError{Row: r.Row, Column: nameCol, Code: "option_mismatch",
				Message: fmt.Sprintf("must be %s, as on the product's first row (row %d)", want.Name, first.Row)})
		default:
			got.Name = want.Name
		}
	}
	if len(errs) > 0 {
		return errs
	}
	for _, v := range p.Variants {
		if v.Options == r.Options {
			return []RowError{{Row: r.Row, Column: "option1_value", Code: "duplicate_in_file",
				Message: fmt.Sprintf("the same options are on row %d", v.Row)}}
		}
	}
	return nil
}
