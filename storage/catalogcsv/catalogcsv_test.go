package catalogcsv_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage/catalogcsv"
)

func TestParsePrice(t *testing.T) {
	cases := []struct {
		in       string
		exponent int
		want     int64
		ok       bool
	}{
		{"149.99", 2, 14999, true},
		{"149.9", 2, 14990, true},
		{"149", 2, 14900, true},
		{"0.5", 2, 50, true},
		{" 7 ", 2, 700, true},
		{"١٤٩٫٩٩", 2, 14999, true},
		{"۱۲", 2, 1200, true},
		{"1.250", 3, 1250, true},
		{"1.999", 2, 0, false},
		{"-1", 2, 0, false},
		{"+1", 2, 0, false},
		{"1,000", 2, 0, false},
		{"1e3", 2, 0, false},
		{"", 2, 0, false},
		{".5", 2, 0, false},
		{"5.", 2, 0, false},
		{"99999999999999", 2, 0, false},
	}
	for _, tc := range cases {
		got, err := catalogcsv.ParsePrice(tc.in, tc.exponent)
		if !tc.ok {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	require.Equal(t, "149.99", catalogcsv.FormatPrice(14999, 2))
	require.Equal(t, "0.05", catalogcsv.FormatPrice(5, 2))
	require.Equal(t, "1.250", catalogcsv.FormatPrice(1250, 3))
	require.Equal(t, "0.000", catalogcsv.FormatPrice(0, 3))
}

func TestCSVCellNeutralisation(t *testing.T) {
	for _, s := range []string{"=1+1", "+1", "-1", "@x", "'quoted", "plain", "", "''x", "'", "\t=1+1", "\r=1+1", "'\tx"} {
		require.Equal(t, s, catalogcsv.RestoreCSVCell(catalogcsv.NeutralizeCSVCell(s)), s)
	}
	require.Equal(t, "'=SUM(A1)", catalogcsv.NeutralizeCSVCell("=SUM(A1)"))
	require.Equal(t, "'\t=SUM(A1)", catalogcsv.NeutralizeCSVCell("\t=SUM(A1)"), "a leading TAB is neutralised too")
	require.Equal(t, "'\r=SUM(A1)", catalogcsv.NeutralizeCSVCell("\r=SUM(A1)"), "and a leading CR")
	require.Equal(t, "plain", catalogcsv.NeutralizeCSVCell("plain"))
}

// FuzzParseCSVRow feeds arbitrary CSV text through the reader and the row
// parser: nothing may panic, and a row accepted without errors must hold
// values the catalog accepts; its price must survive a format round trip.
func FuzzParseCSVRow(f *testing.F) {
	for _, seed := range []string{
		"sku,name,price\nA-1,Mug,7.50\n",
		"sku;name;price;quantity;status\nA;\"x;y\";١٤٩٫٩٩;3;draft\n",
		"\ufeffsku,name,description,status,price,cost_price,quantity,category_id\n'=x,\"a\nb\",\"\"\"q\"\"\",archived,0,0.01,0,00000000-0000-0000-0000-000000000000\n",
		"sku,name,price\n,,\n",
		"sku,name,price\nA,B\n",
	} {
		f.Add(seed, 2)
	}
	f.Fuzz(func(t *testing.T, text string, exponent int) {
		exponent = ((exponent % 4) + 4) % 4
		records, err := catalogcsv.ReadCSV([]byte(text))
		if err != nil {
			return
		}
		header, err := catalogcsv.ParseCSVHeader(records[0])
		if err != nil {
			return
		}
		for i, rec := range records[1:] {
			row, errs := catalogcsv.ParseCSVRow(header, rec, i+2, exponent, true)
			for _, e := range errs {
				if e.Row != i+2 || e.Column == "" || e.Code == "" || e.Message == "" {
					t.Fatalf("incomplete row error %+v", e)
				}
			}
			if len(errs) > 0 {
				continue
			}
			if row.SKU == "" || strings.TrimSpace(row.Name) == "" || row.Price < 0 || row.Quantity < 0 {
				t.Fatalf("accepted an invalid row: %+v", row)
			}
			if row.CostPrice != nil && *row.CostPrice < 0 {
				t.Fatalf("accepted a negative cost: %+v", row)
			}
			again, err := catalogcsv.ParsePrice(catalogcsv.FormatPrice(row.Price, exponent), exponent)
			if err != nil || again != row.Price {
				t.Fatalf("price %d does not survive a round trip: %v %d", row.Price, err, again)
			}
		}
	})
}

// SplitImport groups a variants-format file's rows into products, never
// splits a product between batches, and tells the two formats apart by
// the header.
func TestSplitImport(t *testing.T) {
	variants := "sku,name,price,option1_name,option1_value,variant_sku\n"
	for _, tc := range []struct {
		name     string
		file     string
		size     int
		batches  [][2]int // start, count
		products [][]int  // the rows of each product, batch after batch
		errors   [][2]any // row, code
	}{
		{name: "products format: a row each", file: "sku,name,price\nA,a,1\nB,b,1\nC,c,1\n", size: 2,
			batches: [][2]int{{0, 2}, {2, 1}}, products: [][]int{{2}, {3}, {4}}},
		{name: "variants: a product's rows stay in one batch", size: 2,
			file:    variants + "A,a,1,Size,S,\nA,,,,M,\nA,,,,L,\nB,b,1,Size,S,\n",
			batches: [][2]int{{0, 3}, {3, 1}}, products: [][]int{{2, 3, 4}, {5}}},
		{name: "variants: one row without options is the default variant", size: 10,
			file: variants + "A,a,1,,,A-1\nB,b,1,,,\n", batches: [][2]int{{0, 2}}, products: [][]int{{2}, {3}}},
		{name: "variants: a product may not come back", size: 10,
			file:    variants + "A,a,1,Size,S,\nB,b,1,Size,S,\nA,a,1,Size,M,\n",
			batches: [][2]int{{0, 3}}, products: [][]int{{2}, {3}}, errors: [][2]any{{4, "duplicate_in_file"}}},
		{name: "variants: a broken first row takes the product's rows", size: 10,
			file:    variants + "A,,1,Size,S,\nA,,,,M,\nB,b,1,Size,S,\n",
			batches: [][2]int{{0, 3}}, products: [][]int{{4}}, errors: [][2]any{{2, "required"}, {3, "product_row_invalid"}}},
		{name: "variants: a variant SKU is unique in the file", size: 10,
			file:    variants + "A,a,1,Size,S,X\nA,,,,M,X\nB,b,1,,,A\n",
			batches: [][2]int{{0, 3}}, products: [][]int{{2}}, errors: [][2]any{{3, "duplicate_in_file"}, {4, "duplicate_in_file"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			records, err := catalogcsv.ReadCSV([]byte(tc.file))
			require.NoError(t, err)
			header, err := catalogcsv.ParseCSVHeader(records[0])
			require.NoError(t, err)
			require.Equal(t, strings.Contains(tc.file, "option1_name"), header.Variants)
			var (
				batches  [][2]int
				products [][]int
				errors   [][2]any
			)
			for _, b := range catalogcsv.SplitImport(header, records[1:], 2, tc.size) {
				batches = append(batches, [2]int{b.Start, b.Count})
				for _, p := range b.Products {
					rows := []int{p.Row}
					for _, v := range p.Variants[min(1, len(p.Variants)):] {
						rows = append(rows, v.Row)
					}
					products = append(products, rows)
				}
				for _, e := range b.Errors {
					errors = append(errors, [2]any{e.Row, e.Code})
				}
			}
			require.Equal(t, tc.batches, batches)
			require.Equal(t, tc.products, products)
			require.Equal(t, tc.errors, errors)
		})
	}
}
