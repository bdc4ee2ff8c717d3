package storage

import (
	"strings"
	"testing"
)

// The CSV import parser reads any bytes without panicking; every row it
// accepts has a required SKU and name and a price within the bounds.
func FuzzCSVImport(f *testing.F) {
	f.Add([]byte("sku,name,price\nA-1,Abaya,149.99\n"), 2)
	f.Add([]byte("sku;name;price;quantity\nA-1;عباية;١٤٩٫٩٩;٣\n"), 2)
	f.Add([]byte("\xef\xbb\xbfsku,name,price,cost_price,status\r\nA,\"x,y\",1,2,draft\r\n"), 3)
	f.Add([]byte("sku,name,price\n=cmd,+x,99999999999999\n"), 0)
	f.Fuzz(func(t *testing.T, data []byte, exponent int) {
		exponent = ((exponent % 4) + 4) % 4
		records, err := ReadCSV(data)
		if err != nil || len(records) == 0 {
			return
		}
		header, err := ParseCSVHeader(records[0])
		if err != nil {
			return
		}
		for i, rec := range records[1:] {
			row, errs := ParseCSVRow(header, rec, i+2, exponent)
			if len(errs) > 0 {
				continue
			}
			if strings.TrimSpace(row.SKU) == "" || strings.TrimSpace(row.Name) == "" {
				t.Fatalf("row %d accepted without sku or name: %#v", i+2, row)
			}
			if row.Price < 0 || row.Price > MaxAmount {
				t.Fatalf("row %d accepted with price %d", i+2, row.Price)
			}
		}
	})
}

// An order reference is an id only in the uuid's 36-character form.
func FuzzOrderRef(f *testing.F) {
	for _, seed := range []string{"ORD-1001", "01a20bbc-987d-71e4-a754-2bc7b31e11d4", "{01a20bbc-987d-71e4-a754-2bc7b31e11d4}",
		"urn:uuid:01a20bbc-987d-71e4-a754-2bc7b31e11d4", "01A20BBC-987D-71E4-A754-2BC7B31E11D4", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		id, ok := ParseOrderRef(ref)
		if ok && (len(ref) != 36 || !strings.EqualFold(id.String(), ref)) {
			t.Fatalf("%q taken as id %s", ref, id)
		}
	})
}
