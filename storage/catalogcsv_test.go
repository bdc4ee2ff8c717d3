package storage_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/storage"
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
		got, err := storage.ParsePrice(tc.in, tc.exponent)
		if !tc.ok {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	require.Equal(t, "149.99", storage.FormatPrice(14999, 2))
	require.Equal(t, "0.05", storage.FormatPrice(5, 2))
	require.Equal(t, "1.250", storage.FormatPrice(1250, 3))
	require.Equal(t, "0.000", storage.FormatPrice(0, 3))
}

func TestCSVCellNeutralisation(t *testing.T) {
	for _, s := range []string{"=1+1", "+1", "-1", "@x", "'quoted", "plain", "", "''x", "'", "\t=1+1", "\r=1+1", "'\tx"} {
		require.Equal(t, s, storage.RestoreCSVCell(storage.NeutralizeCSVCell(s)), s)
	}
	require.Equal(t, "'=SUM(A1)", storage.NeutralizeCSVCell("=SUM(A1)"))
	require.Equal(t, "'\t=SUM(A1)", storage.NeutralizeCSVCell("\t=SUM(A1)"), "a leading TAB is neutralised too")
	require.Equal(t, "'\r=SUM(A1)", storage.NeutralizeCSVCell("\r=SUM(A1)"), "and a leading CR")
	require.Equal(t, "plain", storage.NeutralizeCSVCell("plain"))
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
		records, err := storage.ReadCSV([]byte(text))
		if err != nil {
			return
		}
		header, err := storage.ParseCSVHeader(records[0])
		if err != nil {
			return
		}
		for i, rec := range records[1:] {
			row, errs := storage.ParseCSVRow(header, rec, i+2, exponent)
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
			again, err := storage.ParsePrice(storage.FormatPrice(row.Price, exponent), exponent)
			if err != nil || again != row.Price {
				t.Fatalf("price %d does not survive a round trip: %v %d", row.Price, err, again)
			}
		}
	})
}
