package api_test

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// variantsHeader is the variants format's header (decisions §11).
var variantsHeader = []string{"sku", "name", "description", "status", "price", "cost_price", "quantity", "category_id",
	"option1_name", "option1_value", "option2_name", "option2_value", "option3_name", "option3_value",
	"variant_sku", "variant_price", "variant_cost_price", "barcode", "weight_grams"}

// csvText writes rows as a CSV file.
func csvText(t *testing.T, rows ...[]string) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, csv.NewWriter(&buf).WriteAll(rows))
	return buf.String()
}

// variantsOf lists a product's variants by position.
func (h *harness) variantsOf(token, storeID, productID string) []map[string]any {
	h.t.Helper()
	resp := h.do(request{method: "GET", path: storePath(storeID, "/products/"+productID+"/variants"), auth: bearer(token)})
	require.Equal(h.t, http.StatusOK, resp.Status, string(resp.Raw))
	var out []map[string]any
	for _, v := range resp.list() {
		out = append(out, v.(map[string]any))
	}
	return out
}

// rowErrorKeys lists an import's errors as (row, column, code).
func rowErrorKeys(t *testing.T, d map[string]any) [][3]any {
	t.Helper()
	var got [][3]any
	for _, e := range d["errors"].([]any) {
		m := e.(map[string]any)
		require.NotEmpty(t, m["message"])
		require.NotEmpty(t, m["message_ar"])
		got = append(got, [3]any{int(m["row"].(float64)), m["column"], m["code"]})
	}
	return got
}

// A variants-format file creates products with their variants, one row per
// variant, and refuses what does not fit the product's first row.
func TestCSVVariantsImportCreates(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("csvvariants")
	token := h.pat(m, "catalog:write")
	h.createProduct(token, m.storeID, map[string]any{"name": "Taken", "price": 100, "sku": "TAKEN"})
	h.createProduct(token, m.storeID, map[string]any{"name": "Also taken", "price": 100, "sku": "OTHER"})

	file := csvText(t, variantsHeader,
		// 2-5: a tee in three sizes and two colours; later rows leave the product
		// cells and even the option names blank.
		[]string{"TEE", "Cotton tee", "Soft", "active", "120", "40", "5", "", "Size", "S", "Color", "Red", "", "", "TEE-S-R", "", "", "6221", "180"},
		[]string{"TEE", "", "", "", "", "", "7", "", "", "M", "", "Red", "", "", "TEE-M-R", "125.50", "42", "", "200"},
		[]string{"TEE", "", "", "", "", "", "0", "", "Size", "L", "Color", "Blue", "", "", "", "", "", "", ""},
		[]string{"TEE", "", "", "", "", "", "1", "", "Size", "M", "Color", "Red", "", "", "TEE-DUP", "", "", "", ""}, // same options as row 3
		// 6: a cap without options: its default variant.
		[]string{"CAP", "Cap", "", "", "35", "", "9", "", "", "", "", "", "", "", "CAP-1", "", "", "6222", "90"},
		[]string{"CAP", "", "", "", "", "", "1", "", "", "", "", "", "", "", "", "", "", "", ""}, // 7: a second row without options
		// 8-10: refusals of later rows.
		[]string{"SCARF", "Scarf", "", "", "60", "", "2", "", "Material", "Silk", "", "", "", "", "", "", "", "", ""},
		[]string{"SCARF", "", "", "", "", "", "2", "", "Colour", "Wool", "", "", "", "", "", "", "", "", ""},    // 9: another option name
		[]string{"SCARF", "", "", "", "", "", "2", "", "", "", "", "", "", "", "", "", "", "", ""},              // 10: no value
		[]string{"SCARF", "", "", "", "", "", "2", "", "", "Linen", "Size", "M", "", "", "", "", "", "", ""},    // 11: an option the first row lacks
		[]string{"SCARF", "", "", "", "", "", "2", "", "", "Cotton", "", "", "", "", "TEE-S-R", "", "", "", ""}, // 12: SKU earlier in the file
		// 13-14: a broken first row takes its product's rows with it.
		[]string{"BAD", "", "", "", "1", "", "1", "", "Size", "S", "", "", "", "", "", "", "", "", ""},
		[]string{"BAD", "", "", "", "", "", "1", "", "Size", "M", "", "", "", "", "", "", "", "", ""},
		// 15: the tee again, after another product.
		[]string{"TEE", "Tee again", "", "", "1", "", "1", "", "Size", "XL", "", "", "", "", "", "", "", "", ""},
		// 16-17: a variant SKU the store has on a product: the first row fails the product.
		[]string{"MUG", "Mug", "", "", "10", "", "1", "", "Size", "S", "", "", "", "", "TAKEN", "", "", "", ""},
		[]string{"MUG", "", "", "", "", "", "1", "", "Size", "L", "", "", "", "", "", "", "", "", ""},
		// 18-19: on a later row only that row fails.
		[]string{"BAG", "Bag", "", "", "10", "", "3", "", "Size", "S", "", "", "", "", "", "", "", "", ""},
		[]string{"BAG", "", "", "", "", "", "1", "", "Size", "L", "", "", "", "", "OTHER", "", "", "", ""},
		// 20: a variant's SKU may not be its product's.
		[]string{"HAT", "Hat", "", "", "10", "", "1", "", "", "", "", "", "", "", "HAT", "", "", "", ""},
	)
	resp := h.importCSV(token, m.storeID, file, nil)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	d := resp.data()
	require.Equal(t, "succeeded", d["status"])
	require.EqualValues(t, 19, d["total_rows"])
	require.EqualValues(t, 6, d["created"], "rows: three tee variants, the cap, the silk scarf and the small bag")
	require.ElementsMatch(t, [][3]any{
		{5, "option1_value", "duplicate_in_file"}, {7, "sku", "duplicate_in_file"}, {9, "option1_name", "option_mismatch"},
		{10, "option1_value", "required"}, {11, "option2_name", "option_mismatch"}, {12, "variant_sku", "duplicate_in_file"},
		{13, "name", "required"}, {14, "sku", "product_row_invalid"}, {15, "sku", "duplicate_in_file"},
		{16, "variant_sku", "sku_in_use"}, {17, "sku", "product_row_invalid"}, {19, "variant_sku", "sku_in_use"},
		{20, "variant_sku", "duplicate"},
	}, rowErrorKeys(t, d))
	require.EqualValues(t, 13, d["failed"])

	tee := h.productBySKU(token, m.storeID, "TEE")
	require.Equal(t, "Cotton tee", tee["name"])
	require.EqualValues(t, 12, tee["quantity"], "the product's quantity sums its variants'")
	vs := h.variantsOf(token, m.storeID, tee["id"].(string))
	require.Len(t, vs, 3)
	require.Equal(t, map[string]any{"Size": "S", "Color": "Red"}, vs[0]["options"])
	require.Equal(t, "TEE-S-R", vs[0]["sku"])
	require.EqualValues(t, 12000, vs[0]["price"], "a blank variant_price is the product's")
	require.Nil(t, vs[0]["cost_price"], "a blank variant_cost_price is none, as in the API")
	require.EqualValues(t, 5, vs[0]["quantity"])
	require.Equal(t, "6221", vs[0]["barcode"])
	require.EqualValues(t, 180, vs[0]["weight_grams"])
	require.Equal(t, false, vs[0]["is_default"])
	require.Equal(t, map[string]any{"Size": "M", "Color": "Red"}, vs[1]["options"], "a blank option name is the first row's")
	require.EqualValues(t, 12550, vs[1]["price"])
	require.EqualValues(t, 4200, vs[1]["cost_price"])
	require.EqualValues(t, 2, vs[1]["position"])
	require.Nil(t, vs[2]["sku"])
	require.Nil(t, vs[2]["weight_grams"])
	onHand, reserved := h.level(vs[1]["id"].(string), h.defaultLocation(m.storeID))
	require.Equal(t, [2]int{7, 0}, [2]int{onHand, reserved}, "stock lands at the default location")

	cap := h.variantsOf(token, m.storeID, h.productBySKU(token, m.storeID, "CAP")["id"].(string))
	require.Len(t, cap, 1)
	require.Equal(t, true, cap[0]["is_default"], "a product whose one row has no options sells as its default variant")
	require.Equal(t, "CAP-1", cap[0]["sku"])
	require.EqualValues(t, 9, cap[0]["quantity"])
	require.EqualValues(t, 90, cap[0]["weight_grams"])

	require.Len(t, h.variantsOf(token, m.storeID, h.productBySKU(token, m.storeID, "SCARF")["id"].(string)), 1)
	require.Len(t, h.variantsOf(token, m.storeID, h.productBySKU(token, m.storeID, "BAG")["id"].(string)), 1)
	require.Nil(t, h.productBySKU(token, m.storeID, "MUG"), "a product whose first row failed is not created")
	require.Nil(t, h.productBySKU(token, m.storeID, "BAD"))
	h.requireLedgerBalances(m.storeID)
}

// On products that exist, rows name variants by variant_sku or options;
// a new one converts the default variant in place; a refused row changes
// nothing of its own; a dry run changes nothing at all.
func TestCSVVariantsImportUpdates(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("csvvariantsupd")
	token := h.pat(m, "catalog:write", "catalog:read", "settings:write")
	plain := h.createProduct(token, m.storeID, map[string]any{"name": "Kaftan", "price": 30000, "sku": "KAFTAN", "quantity": 4})
	plainDefault := h.variantsOf(token, m.storeID, plain["id"].(string))[0]["id"]
	dress := h.createProduct(token, m.storeID, map[string]any{"name": "Dress", "price": 50000, "sku": "DRESS"})
	h.createProduct(token, m.storeID, map[string]any{"name": "Shoes", "price": 100, "sku": "SHOES"})
	dressPath := storePath(m.storeID, "/products/"+dress["id"].(string)+"/variants")
	for _, body := range []map[string]any{
		{"sku": "DRESS-S", "options": map[string]any{"Size": "S"}, "quantity": 2, "barcode": "111"},
		{"sku": "DRESS-M", "options": map[string]any{"Size": "M"}, "quantity": 3},
		{"sku": "DRESS-L", "options": map[string]any{"Size": "L"}, "quantity": 1},
	} {
		require.Equal(t, http.StatusCreated, h.do(request{method: "POST", path: dressPath, auth: bearer(token), body: body}).Status)
	}
	dressVariants := h.variantsOf(token, m.storeID, dress["id"].(string))
	// DRESS-L also sits at a second location: a quantity write cannot say where.
	loc := h.do(request{method: "POST", path: storePath(m.storeID, "/locations"), auth: bearer(token),
		body: map[string]any{"name": "Giza", "address": map[string]any{"line1": "1 Pyramids Rd", "city": "Giza", "country": "EG"}}})
	require.Equal(t, http.StatusCreated, loc.Status)
	moved := h.adjust(shop{m: m, token: token}, "second-location", map[string]any{"reason": "received", "changes": []any{
		map[string]any{"variant_id": dressVariants[2]["id"], "location_id": loc.data()["id"], "delta": 4}}})
	require.Equal(t, http.StatusCreated, moved.Status, string(moved.Raw))

	file := csvText(t, variantsHeader,
		// 2-3: the kaftan gains sizes: its default variant becomes the first.
		[]string{"KAFTAN", "Kaftan", "", "active", "300", "", "6", "", "Size", "S", "", "", "", "", "KAFTAN-S", "", "", "", "500"},
		[]string{"KAFTAN", "", "", "", "", "", "2", "", "Size", "M", "", "", "", "", "KAFTAN-M", "310", "", "", ""},
		// 4-8: the dress, by SKU and by options.
		[]string{"DRESS", "Summer dress", "", "active", "500", "", "9", "", "Size", "S", "", "", "", "", "DRESS-S", "", "", "111", ""},
		[]string{"DRESS", "", "", "", "", "", "3", "", "Size", "M", "", "", "", "", "", "", "", "", ""},           // unchanged
		[]string{"DRESS", "", "", "", "", "", "6", "", "Size", "L", "", "", "", "", "DRESS-L", "", "", "999", ""}, // refused: two locations
		[]string{"DRESS", "", "", "", "", "", "1", "", "Size", "XL", "", "", "", "", "SHOES", "", "", "", ""},     // refused: the shoes' SKU
		[]string{"DRESS", "", "", "", "", "", "1", "", "Size", "XS", "", "", "", "", "DRESS-XS", "", "", "", ""},
	)
	dry := h.importCSV(token, m.storeID, file, map[string]string{"dry_run": "true"})
	require.Equal(t, http.StatusOK, dry.Status, string(dry.Raw))
	require.EqualValues(t, 3, dry.data()["created"], "a dry run counts")
	require.EqualValues(t, 1, dry.data()["updated"])
	require.EqualValues(t, 1, dry.data()["unchanged"])
	require.EqualValues(t, 2, dry.data()["failed"])
	require.Len(t, h.variantsOf(token, m.storeID, plain["id"].(string)), 1, "a dry run writes nothing")
	require.Equal(t, "Dress", h.productBySKU(token, m.storeID, "DRESS")["name"])

	resp := h.importCSV(token, m.storeID, file, nil)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	d := resp.data()
	require.EqualValues(t, 3, d["created"], "KAFTAN-S (the default variant, converted), KAFTAN-M and DRESS-XS")
	require.EqualValues(t, 1, d["updated"], "DRESS-S")
	require.EqualValues(t, 1, d["unchanged"])
	require.ElementsMatch(t, [][3]any{{6, "quantity", "multiple_locations"}, {7, "variant_sku", "sku_in_use"}}, rowErrorKeys(t, d))

	kaftan := h.variantsOf(token, m.storeID, plain["id"].(string))
	require.Len(t, kaftan, 2)
	require.Equal(t, plainDefault, kaftan[0]["id"], "the default variant converts in place")
	require.Equal(t, false, kaftan[0]["is_default"])
	require.Equal(t, "KAFTAN-S", kaftan[0]["sku"])
	require.EqualValues(t, 6, kaftan[0]["quantity"])
	require.EqualValues(t, 500, kaftan[0]["weight_grams"])
	require.EqualValues(t, 31000, kaftan[1]["price"])

	dv := h.variantsOf(token, m.storeID, dress["id"].(string))
	require.Len(t, dv, 4)
	require.EqualValues(t, 9, dv[0]["quantity"])
	require.Equal(t, "Summer dress", h.productBySKU(token, m.storeID, "DRESS")["name"])
	require.Equal(t, "DRESS-L", dv[2]["sku"])
	require.Nil(t, dv[2]["barcode"], "the refused row's barcode is not written either")
	require.EqualValues(t, 5, dv[2]["quantity"])
	require.Equal(t, "DRESS-XS", dv[3]["sku"])

	// A row without options cannot name one of several variants.
	noOptions := h.importCSV(token, m.storeID, csvText(t, variantsHeader,
		[]string{"DRESS", "Summer dress", "", "active", "500", "", "1", "", "", "", "", "", "", "", "", "", "", "", ""}), nil)
	require.ElementsMatch(t, [][3]any{{2, "option1_value", "managed_by_variants"}}, rowErrorKeys(t, noOptions.data()))
	h.requireLedgerBalances(m.storeID)
}

// The variants export is one row per variant with the product's fields on
// its first; importing it changes nothing. The template says the same
// columns, and the products format stays the default.
func TestCSVVariantsExportRoundTrip(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("csvvariantsexp")
	token := h.pat(m, "catalog:write", "catalog:read")
	tee := h.createProduct(token, m.storeID, map[string]any{"name": "Tee", "price": 12000, "sku": "TEE", "cost_price": 4000})
	teePath := storePath(m.storeID, "/products/"+tee["id"].(string)+"/variants")
	for _, body := range []map[string]any{
		{"sku": "TEE-S", "options": map[string]any{"Size": "S", "Color": "=Red"}, "quantity": 2, "barcode": "+201", "weight_grams": 150},
		{"options": map[string]any{"Size": "M", "Color": "=Red"}, "quantity": 3, "price": 12500},
	} {
		resp := h.do(request{method: "POST", path: teePath, auth: bearer(token), body: body})
		require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
	}
	h.createProduct(token, m.storeID, map[string]any{"name": "كوب", "price": 900, "sku": "CUP", "quantity": 4})

	bad := h.do(request{method: "GET", path: storePath(m.storeID, "/products/export?format=rows"), auth: bearer(token)})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
	require.Equal(t, "one_of", bad.fieldCode("format"))

	template := h.do(request{method: "GET", path: storePath(m.storeID, "/products/template?format=variants"), auth: bearer(token)})
	require.Equal(t, http.StatusOK, template.Status)
	require.Equal(t, "\ufeff"+csvText(t, variantsHeader), string(template.Raw))

	export := h.do(request{method: "GET", path: storePath(m.storeID, "/products/export?format=variants"), auth: bearer(token)})
	require.Equal(t, http.StatusOK, export.Status)
	require.Contains(t, export.Header.Get("Content-Disposition"), "variants-")
	records, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(export.Raw, []byte("\ufeff")))).ReadAll()
	require.NoError(t, err)
	require.Equal(t, [][]string{variantsHeader,
		{"TEE", "Tee", "", "active", "120.00", "40.00", "2", "", "Size", "S", "Color", "'=Red", "", "", "TEE-S", "120.00", "", "'+201", "150"},
		{"TEE", "", "", "", "", "", "3", "", "Size", "M", "Color", "'=Red", "", "", "", "125.00", "", "", ""},
		{"CUP", "كوب", "", "active", "9.00", "", "4", "", "", "", "", "", "", "", "", "9.00", "", "", ""},
	}, records)

	products := h.export(token, m.storeID)
	require.Len(t, products, 3, "the products format is still the default: one row per product")
	require.Equal(t, "5", products[1][6], "its quantity is the product's, summed over variants")

	before := h.do(request{method: "GET", path: teePath, auth: bearer(token)}).Raw
	events := h.outboxCount(m.storeID)
	resp := h.importCSV(token, m.storeID, string(export.Raw), nil)
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))
	d := resp.data()
	require.Empty(t, d["errors"])
	require.EqualValues(t, 0, d["created"])
	require.EqualValues(t, 0, d["updated"])
	require.EqualValues(t, 3, d["unchanged"])
	require.JSONEq(t, string(before), string(h.do(request{method: "GET", path: teePath, auth: bearer(token)}).Raw), "importing an export changes nothing")
	require.Equal(t, events, h.outboxCount(m.storeID))
}

// export reads the products-format export.
func (h *harness) export(token, storeID string) [][]string {
	h.t.Helper()
	resp := h.do(request{method: "GET", path: storePath(storeID, "/products/export"), auth: bearer(token)})
	require.Equal(h.t, http.StatusOK, resp.Status)
	records, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(resp.Raw, []byte("\ufeff")))).ReadAll()
	require.NoError(h.t, err)
	return records
}
