package api_test

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage/zatca"
)

// ZATCA (decisions §27): 100 payments at once give ICVs 1-100 without a gap
// or a repeat and a PIH chain that verifies (each PIH the hash of the ICV
// before, the first the hash of 0; each hash the SHA-256 of the canonical
// document); the e-invoice workflows sign each with the store's CSID and
// report it to the ZATCA double, which checks the hash, the chain and the
// signature as ZATCA does. The QR carries tags 1-9. A credit note follows
// the chain with its type code and the invoice it corrects.
func TestZATCAInvoicesChainSignAndReport(t *testing.T) {
	h := newHarness(t, api.Config{RateLimitPerMinute: 1_000_000})
	// Reporting is what is measured here: 200 PDFs would hold the worker's
	// slots (TestInvoicePDFsAndDocument prints them).
	h.noWaybillPrinter = true
	h.startWorker(nil)
	s := newShop(t, h, "zatca", 500)
	cert, key := csid(t, "EGS1-300000000000003")
	body := saudiTaxBody()
	body["zatca"] = map[string]any{"certificate": cert, "private_key": key}
	resp := h.do(request{method: "PUT", path: storePath(s.m.storeID, "/settings/tax"), auth: bearer(s.token), body: body})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Raw))

	const n = 100
	ids := make([]string, n)
	for i := range ids {
		ids[i] = h.placeOrder(s, "bank_transfer", 1)["id"].(string)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paid := h.do(request{method: "POST", path: storePath(s.m.storeID, "/orders/"+id+"/mark-paid"), auth: bearer(s.token)})
			require.Equal(t, http.StatusOK, paid.Status, string(paid.Raw))
		}()
	}
	wg.Wait()

	// The chain, as issued: ICVs 1-100, each PIH the hash before.
	type row struct {
		icv       int64
		pih, hash string
		document  []byte
	}
	rows, err := testenv.SQL(t, h.db).Query(context.Background(), `SELECT icv, pih, hash, document FROM invoices WHERE store_id = $1 ORDER BY icv`,
		s.m.storeID)
	require.NoError(t, err)
	var chain []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.icv, &r.pih, &r.hash, &r.document))
		chain = append(chain, r)
	}
	rows.Close()
	require.Len(t, chain, n)
	for i, r := range chain {
		require.EqualValues(t, i+1, r.icv)
		if i == 0 {
			require.Equal(t, zatca.FirstPIH, r.pih)
		} else {
			require.Equal(t, chain[i-1].hash, r.pih, "ICV %d", r.icv)
		}
		got, err := zatca.Hash(r.document)
		require.NoError(t, err)
		require.Equal(t, r.hash, got, "ICV %d: the hash is the document's", r.icv)
	}

	// Every one signed and reported; the double took each once.
	var list []map[string]any
	counts := map[string]int{}
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		list, counts = h.invoices(s, ""), map[string]int{}
		for _, inv := range list {
			counts[inv["status"].(string)]++
		}
		if counts["reported"] == n || counts["pending"] == 0 {
			break
		}
	}
	require.Equal(t, map[string]int{"reported": n}, counts)
	sort.Slice(list, func(i, j int) bool {
		return list[i]["authority"].(map[string]any)["icv"].(float64) < list[j]["authority"].(map[string]any)["icv"].(float64)
	})
	first := list[0]
	a := first["authority"].(map[string]any)
	require.Equal(t, "zatca", a["regime"])
	require.Equal(t, "REPORTED", a["reference"])
	require.NotEmpty(t, a["uuid"])
	tags, err := zatca.ReadQR(a["qr"].(string))
	require.NoError(t, err)
	require.Len(t, tags, 9)
	require.Equal(t, "عبايات الرياض", string(tags[1]))
	require.Equal(t, "300000000000003", string(tags[2]))
	require.Equal(t, a["hash"], string(tags[6]))
	parsed, err := zatca.ParseCertificate(cert)
	require.NoError(t, err)
	require.Equal(t, parsed.PublicKeyDER, tags[8])
	require.Equal(t, parsed.Signature, tags[9])
	var signed []byte
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT document FROM invoices WHERE id = $1`, first["id"]).Scan(&signed))
	hash, _, err := zatca.Verify(signed)
	require.NoError(t, err)
	require.Equal(t, a["hash"], hash)

	// A credit note: ICV 101, PIH the hash of 100, type 381, reported.
	refund := h.refund(s, ids[0], "zatca-refund", map[string]any{"amount": 1000, "method": "cash", "reason": "damaged", "settled": true})
	require.Equal(t, http.StatusCreated, refund.Status, string(refund.Raw))
	docs := h.invoicesSettled(s, ids[0], 2)
	note := docs[1]
	require.Equal(t, "credit_note", note["kind"])
	require.Equal(t, "reported", note["status"], "%v", note["authority"])
	na := note["authority"].(map[string]any)
	require.EqualValues(t, n+1, na["icv"])
	require.Equal(t, chain[n-1].hash, na["pih"])
	require.NoError(t, testenv.SQL(t, h.db).QueryRow(context.Background(), `SELECT document FROM invoices WHERE id = $1`, note["id"]).Scan(&signed))
	require.Contains(t, string(signed), `<cbc:InvoiceTypeCode name="0200000">381</cbc:InvoiceTypeCode>`)
	require.Contains(t, string(signed), "<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>"+docs[0]["number"].(string)+"<")
}
