package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/migrations"
	"github.com/merchantsvc/svc/storage"
)

// Migrations 0068 and 0069: the e_invoices of before (one row per payment, a cancel
// asked of the authority on unmark-paid) become one invoice per payment
// plus notes. Each row keeps its id; an invoice cancelled or asked to be
// gains the credit note that is now its cancellation; numbers run in
// creation order per store and year of the store's zone (Riyadh here, so
// 2025-12-31 22:00 UTC is 2026); the counters carry on from there.
func TestInvoicesMigrationFromEInvoices(t *testing.T) {
	ctx := context.Background()
	url := testenv.DatabaseURL(t, false)
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.NoError(t, migrations.UpTo(ctx, db, 67))

	const (
		user   = "00000000-0000-0000-0000-0000000068a1"
		store  = "00000000-0000-0000-0000-0000000068b1"
		first  = "00000000-0000-0000-0000-0000000068c1"
		second = "00000000-0000-0000-0000-0000000068c2"
		third  = "00000000-0000-0000-0000-0000000068c3"
		inv1   = "00000000-0000-0000-0000-0000000068d1"
		note1  = "00000000-0000-0000-0000-0000000068d2"
		inv2a  = "00000000-0000-0000-0000-0000000068d3"
		inv2b  = "00000000-0000-0000-0000-0000000068d4"
		inv3   = "00000000-0000-0000-0000-0000000068d5"
		refund = "00000000-0000-0000-0000-0000000068e1"
	)
	exec := func(query string, args ...any) {
		t.Helper()
		_, err := db.ExecContext(ctx, query, args...)
		require.NoError(t, err, query)
	}
	exec(`INSERT INTO users (id, email, password_hash, name, locale, created_at, updated_at)
		VALUES ($1, 'invoices68@example.com', 'x', 'Inv', 'ar', now(), now())`, user)
	exec(`INSERT INTO stores (id, owner_user_id, name, subdomain, currency, default_language, lifecycle_state, e_invoicing, created_at, updated_at)
		VALUES ($1, $2, 'متجر الفواتير', 'old-invoices', 'SAR', 'ar', 'trial', true, now(), now())`, store, user)
	for i, id := range []string{first, second, third} {
		exec(`INSERT INTO orders (id, store_id, order_number, status, payment_method, currency, customer, shipping_address, subtotal, total, collectible_total)
			VALUES ($1, $2, $3, 'DELIVERED', 'bank_transfer', 'SAR', '{"name": "Noura", "phone": "+966500000001"}', '{}', 11500, 11500, 11500)`,
			id, store, fmt.Sprint(1001+i))
	}
	exec(`INSERT INTO e_invoices (id, store_id, order_id, amount, currency, status, authority_reference, cancel_reason, last_error,
			sync_started_at, issued_at, cancelled_at, created_at, updated_at, kind, refund_id, credits) VALUES
		($1, $6, $7, 11500, 'SAR', 'issued', 'ETA-1', NULL, NULL, '2025-12-31 22:00Z', '2025-12-31 22:01Z', NULL, '2025-12-31 22:00Z', '2025-12-31 22:01Z', 'invoice', NULL, NULL),
		($2, $6, $7, 2000, 'SAR', 'issued', 'ETA-4', NULL, NULL, '2026-01-01 10:00Z', '2026-01-01 10:01Z', NULL, '2026-01-01 10:00Z', '2026-01-01 10:01Z', 'credit_note', $10, $1),
		($3, $6, $8, 11500, 'SAR', 'cancelled', 'ETA-2', 'bounced', NULL, '2026-01-02 12:00Z', '2026-01-02 09:01Z', '2026-01-02 12:00Z', '2026-01-02 09:00Z', '2026-01-02 12:00Z', 'invoice', NULL, NULL),
		($4, $6, $8, 11500, 'SAR', 'pending', NULL, NULL, NULL, '2026-01-03 09:00Z', NULL, NULL, '2026-01-03 09:00Z', '2026-01-03 09:00Z', 'invoice', NULL, NULL),
		($5, $6, $9, 11500, 'SAR', 'cancel_requested', 'ETA-3', 'bounced', NULL, NULL, '2025-06-01 09:01Z', NULL, '2025-06-01 09:00Z', '2026-01-04 09:00Z', 'invoice', NULL, NULL)`,
		inv1, note1, inv2a, inv2b, inv3, store, first, second, third, refund)

	require.NoError(t, migrations.Up(ctx, db))

	sdb, err := storage.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(sdb.Close)
	storeID := uuid.MustParse(store)
	docs := func(order string) []storage.Invoice {
		list, err := sdb.FindOrderInvoices(ctx, storeID, uuid.MustParse(order))
		require.NoError(t, err)
		return list
	}
	one := docs(first)
	require.Len(t, one, 2)
	require.Equal(t, inv1, one[0].ID.String())
	require.Equal(t, "INV-2026-000001", one[0].Number, "22:00 UTC on New Year's Eve is 2026 in Riyadh")
	require.Equal(t, storage.InvoiceReported, one[0].Status)
	require.Equal(t, "ETA-1", *one[0].Authority.Reference)
	require.EqualValues(t, 11500, one[0].Totals.Total)
	require.Equal(t, "متجر الفواتير", one[0].Seller.Name.AR)
	require.Equal(t, "Noura", one[0].Buyer.Name)
	require.Len(t, one[0].Lines, 1)
	require.Equal(t, "Order 1001", one[0].Lines[0].Description)
	require.Equal(t, "INV-2026-000002", one[1].Number)
	require.Equal(t, storage.InvoiceKindCreditNote, one[1].Kind)
	require.Equal(t, "refund", one[1].Reason)
	require.Equal(t, refund, one[1].RefundID.String())
	require.Equal(t, inv1, one[1].CreditsInvoiceID.String())
	require.EqualValues(t, 2000, one[1].Totals.Total)
	require.Nil(t, one[0].CancelledByCreditNoteID)

	two := docs(second)
	require.Len(t, two, 3)
	require.Equal(t, []string{"INV-2026-000003", "INV-2026-000004", "INV-2026-000005"}, []string{two[0].Number, two[1].Number, two[2].Number})
	require.Equal(t, storage.InvoiceCancelled, two[0].Status)
	require.Equal(t, two[1].ID, *two[0].CancelledByCreditNoteID)
	require.Equal(t, "unmark_paid", two[1].Reason)
	require.Equal(t, storage.InvoiceIssued, two[1].Status, "the authority cancelled the invoice itself; the note was never sent")
	require.Equal(t, inv2b, two[2].ID.String())
	require.Equal(t, storage.InvoicePending, two[2].Status)
	require.Nil(t, two[2].CancelledByCreditNoteID, "the second payment's invoice is the live one")

	three := docs(third)
	require.Len(t, three, 2)
	require.Equal(t, "INV-2025-000001", three[0].Number)
	require.Equal(t, storage.InvoiceReported, three[0].Status, "the authority has it; the pending note will cancel it")
	require.Equal(t, three[1].ID, *three[0].CancelledByCreditNoteID)
	require.Equal(t, "INV-2026-000006", three[1].Number)
	require.Equal(t, storage.InvoicePending, three[1].Status)

	// What the worker still has to tell the authority: the pending invoice
	// and the pending note, nothing already done.
	due, err := sdb.FindInvoicesAwaitingSync(ctx, 100)
	require.NoError(t, err)
	var dueIDs []uuid.UUID
	for _, d := range due {
		dueIDs = append(dueIDs, d.ID)
	}
	require.ElementsMatch(t, []uuid.UUID{uuid.MustParse(inv2b), three[1].ID}, dueIDs)

	counters := map[int]int{}
	rows, err := db.QueryContext(ctx, `SELECT year, last_number FROM invoice_counters WHERE store_id = $1`, store)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var y, n int
		require.NoError(t, rows.Scan(&y, &n))
		counters[y] = n
	}
	require.Equal(t, map[int]int{2025: 1, 2026: 6}, counters)

	// Migration 0069: the e_invoicing switch became the regime of the
	// store's currency, with its rate and its name as the legal name.
	tax, err := sdb.FindTaxSettings(ctx, storeID)
	require.NoError(t, err)
	require.Equal(t, storage.TaxRegimeZATCA, tax.Regime)
	require.Equal(t, 1500, tax.DefaultRateBP)
	require.Equal(t, "متجر الفواتير", tax.LegalName.AR)
	require.Equal(t, "INV", tax.InvoicePrefix)
}
