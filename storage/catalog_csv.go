package storage

import "github.com/merchantsvc/svc/storage/catalogcsv"

// The catalog's CSV format (decisions §3) is read and written by
// storage/catalogcsv, a package of its own so that its fuzz tests link
// nothing but the parser. These names keep it where storage's callers and
// the import (catalog_imports.go) find it.
type (
	// RowError is one problem with one cell of an import.
	RowError = catalogcsv.RowError
	// ImportRow is one valid data row of an import.
	ImportRow = catalogcsv.ImportRow
	// ImportProduct is one product of an import file.
	ImportProduct = catalogcsv.ImportProduct
	// ImportBatch is one batch of an import.
	ImportBatch = catalogcsv.ImportBatch
	// CSVOption is one option name/value pair of a row.
	CSVOption = catalogcsv.CSVOption
	// CSVHeader maps column names to their index in a row.
	CSVHeader = catalogcsv.CSVHeader
)

// catalogcsv cannot import storage, so it holds its own price bound; this
// constant does not compile (a negative uint64) unless the two are equal.
const _ = uint64(MaxAmount-catalogcsv.MaxPrice) + uint64(catalogcsv.MaxPrice-MaxAmount)

var (
	// CSVColumns are the products format's columns, in export order.
	CSVColumns = catalogcsv.CSVColumns
	// VariantCSVColumns are the variants format's columns, in export order.
	VariantCSVColumns = catalogcsv.VariantCSVColumns
)

// CurrencyExponent is the number of minor-unit digits of a currency (ISO 4217).
func CurrencyExponent(currency string) int { return catalogcsv.CurrencyExponent(currency) }

// FormatPrice writes minor units as a decimal with exponent digits.
func FormatPrice(minor int64, exponent int) string { return catalogcsv.FormatPrice(minor, exponent) }

// NeutralizeCSVCell keeps a cell from being read as a spreadsheet formula.
func NeutralizeCSVCell(s string) string { return catalogcsv.NeutralizeCSVCell(s) }

// ReadCSV reads an import file's records.
func ReadCSV(data []byte) ([][]string, error) { return catalogcsv.ReadCSV(data) }

// ParseCSVHeader checks an import file's header row.
func ParseCSVHeader(record []string) (CSVHeader, error) { return catalogcsv.ParseCSVHeader(record) }

// SplitImport parses a file's data rows into batches of about size rows.
func SplitImport(h CSVHeader, records [][]string, exponent, size int) []ImportBatch {
	return catalogcsv.SplitImport(h, records, exponent, size)
}
