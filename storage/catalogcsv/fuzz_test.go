package catalogcsv

import (
	"strings"
	"testing"
)

// The CSV import parser reads any bytes without panicking; every product
// it accepts has a required SKU and name and a price within the bounds,
// and every data row ends up exactly once: in a product or in the errors.
func FuzzCSVImport(f *testing.F) {
	f.Add([]byte("sku,name,price\nA-1,Abaya,149.99\n"), 2, 1)
	f.Add([]byte("sku;name;price;quantity\nA-1;عباية;١٤٩٫٩٩;٣\n"), 2, 1)
	f.Add([]byte("\xef\xbb\xbfsku,name,price,cost_price,status\r\nA,\"x,y\",1,2,draft\r\n"), 3, 2)
	f.Add([]byte("sku,name,price\n=cmd,+x,99999999999999\n"), 0, 1)
	f.Add([]byte("sku,name,price,option1_name,option1_value,variant_sku,quantity\nA,Tee,10,Size,S,A-S,3\nA,,,,M,A-M,4\nA,,,Size,S,A-S2,1\nB,Cap,5,,,,\nB,,,,,,\n"), 2, 2)
	f.Fuzz(func(t *testing.T, data []byte, exponent, size int) {
		exponent = ((exponent % 4) + 4) % 4
		size = ((size%5)+5)%5 + 1
		records, err := ReadCSV(data)
		if err != nil || len(records) == 0 {
			return
		}
		header, err := ParseCSVHeader(records[0])
		if err != nil {
			return
		}
		rows := map[int]bool{}
		next := 0
		for _, b := range SplitImport(header, records[1:], exponent, size) {
			if b.Start != next || b.Count < 1 {
				t.Fatalf("batch starts at %d with %d rows, want start %d", b.Start, b.Count, next)
			}
			next += b.Count
			for _, e := range b.Errors {
				rows[e.Row] = true
			}
			for _, p := range b.Products {
				if strings.TrimSpace(p.SKU) == "" || strings.TrimSpace(p.Name) == "" {
					t.Fatalf("row %d accepted without sku or name: %#v", p.Row, p)
				}
				if p.Price < 0 || p.Price > MaxPrice {
					t.Fatalf("row %d accepted with price %d", p.Row, p.Price)
				}
				for _, r := range p.Rows() {
					if rows[r.Row] || r.Row < b.Start+2 || r.Row >= b.Start+b.Count+2 {
						t.Fatalf("row %d counted twice or outside its batch", r.Row)
					}
					rows[r.Row] = true
				}
			}
		}
		if next != len(records)-1 || len(rows) != len(records)-1 {
			t.Fatalf("batches cover %d rows and account for %d, the file has %d", next, len(rows), len(records)-1)
		}
	})
}
