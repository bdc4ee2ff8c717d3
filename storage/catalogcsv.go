package storage

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// CSVColumns are the product CSV columns, in export order (decisions §3).
var CSVColumns = []string{"sku", "name", "description", "status", "price", "cost_price", "quantity", "category_id"}

// requiredCSVColumns must be in every import header.
var requiredCSVColumns = []string{"sku", "name", "price"}

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
type CSVHeader map[string]int

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
	h := CSVHeader{}
	var e HeaderError
	for i, raw := range record {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(raw, "\ufeff")))
		switch {
		case !containsString(CSVColumns, name):
			e.Unknown = append(e.Unknown, raw)
		case h.has(name):
			e.Repeats = append(e.Repeats, name)
		default:
			h[name] = i
		}
	}
	for _, name := range requiredCSVColumns {
		if !h.has(name) {
			e.Missing = append(e.Missing, name)
		}
	}
	if len(e.Missing)+len(e.Unknown)+len(e.Repeats) > 0 {
		return nil, &e
	}
	return h, nil
}

func (h CSVHeader) has(name string) bool { _, ok := h[name]; return ok }

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ImportRow is one valid data row. Has says which optional columns the
// header carries: an update leaves the others untouched.
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
}

const maxCSVQuantity = 1_000_000_000

// ParseCSVRow validates one data row. row is its spreadsheet number;
// exponent the store currency's minor-unit digits. Every problem is reported.
func ParseCSVRow(h CSVHeader, record []string, row, exponent int) (ImportRow, []RowError) {
	out := ImportRow{Row: row, Has: map[string]bool{}}
	var errs []RowError
	bad := func(column, code, message string) {
		errs = append(errs, RowError{Row: row, Column: column, Code: code, Message: message})
	}
	cell := func(name string) (string, bool) {
		i, ok := h[name]
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
	out.SKU = strings.TrimSpace(text("sku", 100))
	if out.SKU == "" {
		bad("sku", "required", "is required: rows are matched to products by SKU")
	}
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
	} else if p, err := ParsePrice(v, exponent); err != nil {
		bad("price", "invalid_number", err.Error())
	} else {
		out.Price = p
	}
	if v, ok := cell("cost_price"); ok && strings.TrimSpace(v) != "" {
		if p, err := ParsePrice(v, exponent); err != nil {
			bad("cost_price", "invalid_number", err.Error())
		} else {
			out.CostPrice = &p
		}
	}
	if v, ok := cell("quantity"); ok && strings.TrimSpace(v) != "" {
		n, err := strconv.Atoi(normalizeDigits(strings.TrimSpace(v)))
		switch {
		case err != nil:
			bad("quantity", "invalid_number", "must be a whole number")
		case n < 0 || n > maxCSVQuantity:
			bad("quantity", "out_of_range", "must be between 0 and 1000000000")
		default:
			out.Quantity = n
		}
	}
	if v, ok := cell("category_id"); ok && strings.TrimSpace(v) != "" {
		id, err := uuid.Parse(strings.TrimSpace(v))
		if err != nil || len(strings.TrimSpace(v)) != 36 {
			bad("category_id", "invalid_uuid", "must be a category id (uuid)")
		} else {
			out.CategoryID = &id
		}
	}
	return out, errs
}

// normalizeDigits turns Arabic-Indic and Persian digits and the Arabic
// decimal separator into ASCII, so "١٤٩٫٩٩" reads as 149.99.
func normalizeDigits(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '٠' && r <= '٩':
			return '0' + (r - '٠')
		case r >= '۰' && r <= '۹':
			return '0' + (r - '۰')
		case r == '٫':
			return '.'
		}
		return r
	}, s)
}

// ParsePrice reads a decimal amount in major units ("149.99") into minor
// units, refusing more fraction digits than the currency has.
func ParsePrice(s string, exponent int) (int64, error) {
	s = normalizeDigits(strings.TrimSpace(s))
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
	if n > MaxAmount {
		return 0, fmt.Errorf("is too large (at most 10^12 minor units)")
	}
	return n, nil
}

// FormatPrice writes minor units as a decimal amount with the currency's digits.
func FormatPrice(minor int64, exponent int) string {
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
