package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Invoices and credit notes (decisions §27). An order's invoice is written
// in the transaction that makes it paid, numbered from the store's counter
// row for the year; every later change that lowers what the sale is worth
// (a refund, a partial acceptance, unmark-paid, a cancel) writes a credit
// note for what no note credited yet. The e-invoice:<id> workflow reports
// each document to the tax authority.

// InvoiceStatus is where an invoice is with the authority.
type InvoiceStatus string

// Invoice statuses: pending until the authority took it (reported, or
// cleared for a standard ZATCA invoice), issued when it is final without
// being sent, rejected when the authority refused it, failed when it could
// not be sent, cancelled once a note credited it whole.
const (
	InvoicePending   InvoiceStatus = "pending"
	InvoiceIssued    InvoiceStatus = "issued"
	InvoiceReported  InvoiceStatus = "reported"
	InvoiceCleared   InvoiceStatus = "cleared"
	InvoiceRejected  InvoiceStatus = "rejected"
	InvoiceFailed    InvoiceStatus = "failed"
	InvoiceCancelled InvoiceStatus = "cancelled"
)

// InvoiceStatuses are the statuses in the order the API lists them.
var InvoiceStatuses = []string{"pending", "issued", "reported", "cleared", "rejected", "failed", "cancelled"}

// Invoice kinds: every kind shares one numbered series.
const (
	InvoiceKindInvoice    = "invoice"
	InvoiceKindCreditNote = "credit_note"
	InvoiceKindDebitNote  = "debit_note"
)

// InvoiceKinds are the kinds in the order the API lists them.
var InvoiceKinds = []string{InvoiceKindInvoice, InvoiceKindCreditNote, InvoiceKindDebitNote}

// Why a document was written.
const (
	InvoiceReasonPaid              = "paid"
	InvoiceReasonRefund            = "refund"
	InvoiceReasonPartialAcceptance = "partial_acceptance"
	InvoiceReasonUnmarkPaid        = "unmark_paid"
	InvoiceReasonCancellation      = "cancellation"
)

// Tax classes of a line.
const (
	TaxClassStandard = "standard"
	TaxClassZero     = "zero"
	TaxClassExempt   = "exempt"
)

// InvoiceSeller is the store as the invoice names it.
type InvoiceSeller struct {
	Name      Bilingual       `json:"name"`
	VATNumber *string         `json:"vat_number,omitempty"`
	CRNumber  *string         `json:"cr_number,omitempty"`
	Address   json.RawMessage `json:"address,omitempty"`
}

// InvoiceBuyer is who bought, as far as the invoice needs them.
type InvoiceBuyer struct {
	Name      string          `json:"name"`
	Phone     *string         `json:"phone,omitempty"`
	VATNumber *string         `json:"vat_number,omitempty"`
	Address   json.RawMessage `json:"address,omitempty"`
}

// InvoiceLine is one line of an invoice or note, amounts in minor units.
// TotalIncl is what the buyer paid for it (tax included), Tax its share of
// tax, UnitPriceExcl and Discount the price and discount without tax.
type InvoiceLine struct {
	// Key names what the line is: an order line's id, or "shipping". A
	// note's lines carry the key of the invoice line they credit.
	Key           string     `json:"key"`
	LineID        *uuid.UUID `json:"line_id,omitempty"`
	Description   string     `json:"description"`
	Quantity      int        `json:"quantity"`
	UnitPriceExcl int64      `json:"unit_price_excl"`
	Discount      int64      `json:"discount"`
	TaxClass      string     `json:"tax_class"`
	TaxRateBP     int        `json:"tax_rate_bp"`
	Tax           int64      `json:"tax"`
	TotalIncl     int64      `json:"total_incl"`
}

// InvoiceTotals are the sums of the lines: Net is the total without tax.
type InvoiceTotals struct {
	Net      int64
	Discount int64
	Tax      int64
	Total    int64
}

// InvoiceAuthority is what the tax authority knows of a document.
type InvoiceAuthority struct {
	Regime      *string
	UUID        *uuid.UUID
	ICV         *int64
	PIH         *string
	Hash        *string
	QR          *string
	Reference   *string
	SubmittedAt *time.Time
	Warnings    []string
	Errors      []string
}

// Invoice is an invoice, credit note or debit note of an order.
type Invoice struct {
	ID                      uuid.UUID
	StoreID                 uuid.UUID
	OrderID                 uuid.UUID
	OrderNumber             string
	Number                  string
	Kind                    string
	Type                    string
	Reason                  string
	CreditsInvoiceID        *uuid.UUID
	RefundID                *uuid.UUID
	IssuedAt                time.Time
	SupplyDate              time.Time
	Currency                string
	Seller                  InvoiceSeller
	Buyer                   InvoiceBuyer
	Lines                   []InvoiceLine
	Totals                  InvoiceTotals
	Status                  InvoiceStatus
	CancelledByCreditNoteID *uuid.UUID
	Authority               InvoiceAuthority
	CreatedAt               time.Time
	UpdatedAt               time.Time
	// PDFReadyAt is when its PDFs were printed (nil: not yet).
	PDFReadyAt *time.Time
	// sellerAddress is the seller's address as the tax settings keep it.
	sellerAddress *TaxAddress
}

const invoiceColumns = `i.id, i.store_id, i.order_id, o.order_number, i.number, i.kind, i.type, i.reason, i.credits_invoice_id,
	i.refund_id, i.issued_at, i.supply_date, i.currency, i.seller, i.buyer, i.lines, i.net_total, i.discount_total, i.tax_total,
	i.total, i.status, i.cancelled_by_credit_note_id, i.regime, i.authority_uuid, i.icv, i.pih, i.hash, i.qr, i.authority_reference,
	i.submitted_at, i.warnings, i.errors, i.created_at, i.updated_at, i.pdf_ready_at`

const invoiceFrom = `FROM invoices i JOIN orders o ON o.store_id = i.store_id AND o.id = i.order_id`

func scanInvoice(row pgx.Row) (Invoice, error) {
	var (
		i                           Invoice
		seller, buyer, lines        []byte
		a                           = &i.Authority
		warnings, errorsOfAuthority []byte
	)
	err := row.Scan(&i.ID, &i.StoreID, &i.OrderID, &i.OrderNumber, &i.Number, &i.Kind, &i.Type, &i.Reason, &i.CreditsInvoiceID,
		&i.RefundID, &i.IssuedAt, &i.SupplyDate, &i.Currency, &seller, &buyer, &lines, &i.Totals.Net, &i.Totals.Discount, &i.Totals.Tax,
		&i.Totals.Total, &i.Status, &i.CancelledByCreditNoteID, &a.Regime, &a.UUID, &a.ICV, &a.PIH, &a.Hash, &a.QR, &a.Reference,
		&a.SubmittedAt, &warnings, &errorsOfAuthority, &i.CreatedAt, &i.UpdatedAt, &i.PDFReadyAt)
	if err != nil {
		return Invoice{}, err
	}
	for _, f := range []struct {
		raw  []byte
		into any
	}{{seller, &i.Seller}, {buyer, &i.Buyer}, {lines, &i.Lines}, {warnings, &a.Warnings}, {errorsOfAuthority, &a.Errors}} {
		if err := json.Unmarshal(f.raw, f.into); err != nil {
			return Invoice{}, fmt.Errorf("decode invoice %s: %w", i.ID, err)
		}
	}
	return i, nil
}

// FindInvoice reads one invoice or note of the store.
func (r reader) FindInvoice(ctx context.Context, storeID, id uuid.UUID) (Invoice, error) {
	i, err := scanInvoice(r.q.QueryRow(ctx, `SELECT `+invoiceColumns+` `+invoiceFrom+` WHERE i.store_id = $1 AND i.id = $2`, storeID, id))
	if err != nil {
		return Invoice{}, notFoundIfNoRows(err, "find invoice "+id.String())
	}
	return i, nil
}

// InvoiceFilter narrows a store's invoices; IssuedFrom and IssuedBefore
// bound the issue time (the API turns the store's local dates into them).
type InvoiceFilter struct {
	OrderID      *uuid.UUID
	Kind         *string
	Status       *string
	IssuedFrom   *time.Time
	IssuedBefore *time.Time
}

// FindInvoices lists a store's invoices and notes, newest first.
func (r reader) FindInvoices(ctx context.Context, storeID uuid.UUID, f InvoiceFilter, page Page) ([]Invoice, int, error) {
	where := []string{"i.store_id = $1"}
	args := []any{storeID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.OrderID != nil {
		add("i.order_id = ?", *f.OrderID)
	}
	if f.Kind != nil {
		add("i.kind = ?", *f.Kind)
	}
	if f.Status != nil {
		add("i.status = ?", *f.Status)
	}
	if f.IssuedFrom != nil {
		add("i.issued_at >= ?", *f.IssuedFrom)
	}
	if f.IssuedBefore != nil {
		add("i.issued_at < ?", *f.IssuedBefore)
	}
	return findPage(ctx, r, "invoices", listQuery{columns: invoiceColumns, from: invoiceFrom + " WHERE " + strings.Join(where, " AND "),
		args: args, orderBy: "i.created_at DESC, i.id DESC"}, page.Limit, int(page.Offset()),
		func(row pgx.CollectableRow) (Invoice, error) { return scanInvoice(row) })
}

// FindOrderInvoices lists an order's invoices and notes, oldest first.
func (r reader) FindOrderInvoices(ctx context.Context, storeID, orderID uuid.UUID) ([]Invoice, error) {
	rows, err := r.q.Query(ctx, `SELECT `+invoiceColumns+` `+invoiceFrom+`
		WHERE i.store_id = $1 AND i.order_id = $2 ORDER BY i.created_at, i.sequence`, storeID, orderID)
	if err != nil {
		return nil, fmt.Errorf("find order invoices: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Invoice, error) { return scanInvoice(row) })
}

// roundHalfUp is n ÷ d rounded half up, for n ≥ 0 and d > 0.
func roundHalfUp(n, d int64) int64 { return (2*n + d) / (2 * d) }

// withoutTax is an amount that includes tax at rateBP without it:
// round_half_up(amount × 10000 ÷ (10000 + rate_bp)) (§27).
func withoutTax(amount int64, rateBP int) int64 {
	if amount <= 0 {
		return 0
	}
	return roundHalfUp(amount*10000, 10000+int64(rateBP))
}

// taxLines fills each line's tax from its inclusive total: per rate, the
// net of the rate's whole is rounded once and spread over its lines by
// largest remainder (§14), so the lines sum to the totals.
func taxLines(lines []InvoiceLine) InvoiceTotals {
	byRate := map[int][]int{}
	var rates []int
	for i, l := range lines {
		if _, ok := byRate[l.TaxRateBP]; !ok {
			rates = append(rates, l.TaxRateBP)
		}
		byRate[l.TaxRateBP] = append(byRate[l.TaxRateBP], i)
	}
	var t InvoiceTotals
	for _, rate := range rates {
		idx := byRate[rate]
		weights := make([]int64, len(idx))
		var whole int64
		for k, i := range idx {
			weights[k] = lines[i].TotalIncl
			whole += lines[i].TotalIncl
		}
		nets := spread(withoutTax(whole, rate), weights)
		for k, i := range idx {
			lines[i].Tax = lines[i].TotalIncl - nets[k]
		}
	}
	for _, l := range lines {
		t.Tax += l.Tax
		t.Total += l.TotalIncl
		t.Discount += l.Discount
	}
	t.Net = t.Total - t.Tax
	return t
}

// taxTerms are what the lines of a store's invoices are taxed at: the
// default rate, and the class of each product that is not standard.
type taxTerms struct {
	defaultRateBP int
	classes       map[uuid.UUID]string
}

// rate is a line's tax class and rate.
func (t taxTerms) rate(productID *uuid.UUID) (string, int) {
	if productID != nil {
		switch t.classes[*productID] {
		case TaxClassZero:
			return TaxClassZero, 0
		case TaxClassExempt:
			return TaxClassExempt, 0
		}
	}
	return TaxClassStandard, t.defaultRateBP
}

// DefaultTaxRateBP is the VAT rate a store's invoices use until it sets
// one, by currency: Saudi Arabia 15 %, Egypt 14 %, the Emirates 5 %.
func DefaultTaxRateBP(currency string) int {
	switch currency {
	case "SAR":
		return 1500
	case "EGP":
		return 1400
	case "AED":
		return 500
	}
	return 0
}

// invoiceLinesOf are the lines of what an order's buyer keeps: each order
// line's kept pieces less their share of its discount, then the shipping
// less what discounts took off it. Gift cards sold are exempt (a voucher is
// taxed when it is spent).
func invoiceLinesOf(o Order, terms taxTerms) []InvoiceLine {
	var legacy []int64
	if o.pricedWithoutLineDiscounts() { // §10's orders kept the discount whole
		weights := make([]int64, len(o.Lines))
		for i, l := range o.Lines {
			weights[i] = int64(l.Quantity-l.ReturnedQuantity) * l.UnitPrice
		}
		legacy = spread(o.Discount, weights)
	}
	var lines []InvoiceLine
	for i, l := range o.Lines {
		kept := l.Quantity - l.ReturnedQuantity
		if kept <= 0 {
			continue
		}
		discount := ProrateDiscount(l.Discount, kept, l.Quantity)
		if legacy != nil {
			discount = legacy[i]
		}
		class, rate := terms.rate(l.ProductID)
		if l.GiftCardValue != nil {
			class, rate = TaxClassExempt, 0
		}
		id := l.ID
		lines = append(lines, InvoiceLine{Key: l.ID.String(), LineID: &id, Description: l.Name, Quantity: kept,
			UnitPriceExcl: withoutTax(l.UnitPrice, rate), Discount: withoutTax(discount, rate), TaxClass: class, TaxRateBP: rate,
			TotalIncl: max(int64(kept)*l.UnitPrice-discount, 0)})
	}
	shipping := o.ShippingFee
	if legacy == nil {
		for _, d := range o.Discounts {
			shipping -= d.ShippingAmount
		}
	}
	if shipping > 0 {
		name := "Shipping"
		if len(o.ShippingLines) > 0 && o.ShippingLines[0].Name != "" {
			name = o.ShippingLines[0].Name
		}
		lines = append(lines, InvoiceLine{Key: "shipping", Description: name, Quantity: 1, UnitPriceExcl: withoutTax(shipping, terms.defaultRateBP),
			TaxClass: TaxClassStandard, TaxRateBP: terms.defaultRateBP, TotalIncl: shipping})
	}
	return lines
}

// invoiceIssuer is what a store's documents read of it when one is written.
type invoiceIssuer struct {
	seller   InvoiceSeller
	location *time.Location
	prefix   string
	terms    taxTerms
	regime   string
	address  *TaxAddress
}

func (tx *Tx) invoiceIssuer(ctx context.Context, o Order) (invoiceIssuer, error) {
	settings, err := tx.FindTaxSettings(ctx, o.StoreID)
	if err != nil {
		return invoiceIssuer{}, err
	}
	var timezone *string
	if err := tx.tx.QueryRow(ctx, `SELECT timezone FROM stores WHERE id = $1`, o.StoreID).Scan(&timezone); err != nil {
		return invoiceIssuer{}, fmt.Errorf("find store time zone: %w", err)
	}
	zone := DefaultTimezone(o.Currency)
	if timezone != nil {
		zone = *timezone
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return invoiceIssuer{}, fmt.Errorf("store time zone %q: %w", zone, err)
	}
	terms := taxTerms{defaultRateBP: settings.DefaultRateBP, classes: map[uuid.UUID]string{}}
	var products []uuid.UUID
	for _, l := range o.Lines {
		if l.ProductID != nil {
			products = append(products, *l.ProductID)
		}
	}
	if len(products) > 0 {
		rows, err := tx.tx.Query(ctx, `SELECT id, tax_class FROM products WHERE store_id = $1 AND id = ANY($2) AND tax_class <> 'standard'`,
			o.StoreID, products)
		if err != nil {
			return invoiceIssuer{}, fmt.Errorf("find tax classes: %w", err)
		}
		for rows.Next() {
			var id uuid.UUID
			var class string
			if err := rows.Scan(&id, &class); err != nil {
				rows.Close()
				return invoiceIssuer{}, fmt.Errorf("find tax classes: %w", err)
			}
			terms.classes[id] = class
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return invoiceIssuer{}, fmt.Errorf("find tax classes: %w", err)
		}
	}
	seller := InvoiceSeller{Name: settings.LegalName, VATNumber: settings.VATNumber, CRNumber: settings.CRNumber}
	if settings.Address != nil {
		if seller.Address, err = json.Marshal(settings.Address); err != nil {
			return invoiceIssuer{}, err
		}
	}
	return invoiceIssuer{seller: seller, address: settings.Address, location: loc, prefix: settings.InvoicePrefix, terms: terms,
		regime: settings.Regime}, nil
}

// insertInvoice numbers a document from the store's counter row for the
// year of its issue (locked until the transaction ends, so numbers have no
// gap) and writes it for the authority's workflow.
func (tx *Tx) insertInvoice(ctx context.Context, iss invoiceIssuer, inv *Invoice) error {
	now := tx.now()
	local := now.In(iss.location)
	year := local.Year()
	var seq int64
	if err := tx.tx.QueryRow(ctx, `INSERT INTO invoice_counters (store_id, year, last_number) VALUES ($1, $2, 1)
		ON CONFLICT (store_id, year) DO UPDATE SET last_number = invoice_counters.last_number + 1 RETURNING last_number`,
		inv.StoreID, year).Scan(&seq); err != nil {
		return fmt.Errorf("number invoice: %w", err)
	}
	inv.ID, inv.Number, inv.Status = NewID(), fmt.Sprintf("%s-%d-%06d", iss.prefix, year, seq), InvoicePending
	inv.IssuedAt, inv.SupplyDate, inv.CreatedAt, inv.UpdatedAt = now, time.Date(year, local.Month(), local.Day(), 0, 0, 0, 0, time.UTC), now, now
	inv.Seller, inv.sellerAddress = iss.seller, iss.address
	if iss.regime != TaxRegimeNone {
		inv.Authority.Regime = &iss.regime
	}
	inv.Totals = taxLines(inv.Lines)
	var document []byte
	if iss.regime == TaxRegimeZATCA {
		var err error
		if document, err = tx.chainZATCA(ctx, inv); err != nil {
			return err
		}
	}
	seller, err := json.Marshal(inv.Seller)
	if err != nil {
		return err
	}
	buyer, err := json.Marshal(inv.Buyer)
	if err != nil {
		return err
	}
	lines, err := json.Marshal(inv.Lines)
	if err != nil {
		return err
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO invoices (id, store_id, order_id, number, year, sequence, kind, type, reason,
			credits_invoice_id, refund_id, issued_at, supply_date, currency, seller, buyer, lines, net_total, discount_total, tax_total,
			total, status, regime, authority_uuid, icv, pih, hash, document, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26,
			$27, $28, $12, $12)`,
		inv.ID, inv.StoreID, inv.OrderID, inv.Number, year, seq, inv.Kind, inv.Type, inv.Reason, inv.CreditsInvoiceID, inv.RefundID,
		now, inv.SupplyDate, inv.Currency, seller, buyer, lines, inv.Totals.Net, inv.Totals.Discount, inv.Totals.Tax, inv.Totals.Total,
		inv.Status, inv.Authority.Regime, inv.Authority.UUID, inv.Authority.ICV, inv.Authority.PIH, inv.Authority.Hash, document); err != nil {
		return fmt.Errorf("write invoice: %w", err)
	}
	return tx.notifyDispatcher(ctx)
}

// issueInvoice writes the invoice of an order that became paid, in the
// transaction that made it so. An order with a live invoice (paid before,
// never credited whole) gets none.
func (tx *Tx) issueInvoice(ctx context.Context, o Order) error {
	var live bool
	if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM invoices WHERE store_id = $1 AND order_id = $2 AND kind = 'invoice'
		AND cancelled_by_credit_note_id IS NULL)`, o.StoreID, o.ID).Scan(&live); err != nil {
		return fmt.Errorf("find live invoice: %w", err)
	}
	if live {
		return nil
	}
	if len(o.Lines) == 0 {
		var err error
		if o.Lines, err = tx.orderLinesOf(ctx, o.StoreID, o.ID); err != nil {
			return err
		}
	}
	iss, err := tx.invoiceIssuer(ctx, o)
	if err != nil {
		return err
	}
	inv := Invoice{StoreID: o.StoreID, OrderID: o.ID, Kind: InvoiceKindInvoice, Type: "simplified", Reason: InvoiceReasonPaid,
		Currency: o.Currency, Buyer: InvoiceBuyer{Name: o.Customer.Name, Phone: o.Customer.Phone}, Lines: invoiceLinesOf(o, iss.terms)}
	return tx.insertInvoice(ctx, iss, &inv)
}

// correctInvoice writes the credit note an order's change calls for, in
// the change's transaction. What the sale is worth now is the value of the
// pieces kept (nothing once the payment is undone or the order cancelled),
// at most what was paid less what was refunded; the note credits what the
// live invoice exceeds that by, less what notes credited already, so a
// prepaid partial acceptance writes its note and the refund of refund_due
// that follows writes none. A note that credits the invoice whole cancels
// it. refundID names the refund that asked for the note.
func (tx *Tx) correctInvoice(ctx context.Context, o Order, reason string, refundID *uuid.UUID) error {
	inv, err := scanInvoice(tx.tx.QueryRow(ctx, `SELECT `+invoiceColumns+` `+invoiceFrom+`
		WHERE i.store_id = $1 AND i.order_id = $2 AND i.kind = 'invoice' AND i.cancelled_by_credit_note_id IS NULL FOR UPDATE OF i`, o.StoreID, o.ID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // not invoiced, or credited whole already
	}
	if err != nil {
		return fmt.Errorf("find the invoice to correct: %w", err)
	}
	rows, err := tx.tx.Query(ctx, `SELECT lines FROM invoices WHERE store_id = $1 AND credits_invoice_id = $2 AND kind = 'credit_note'`,
		o.StoreID, inv.ID)
	if err != nil {
		return fmt.Errorf("find credit notes: %w", err)
	}
	notes, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return fmt.Errorf("find credit notes: %w", err)
	}
	remaining := make([]int64, len(inv.Lines))
	index := map[string]int{}
	var open int64
	for i, l := range inv.Lines {
		remaining[i], index[l.Key] = l.TotalIncl, i
	}
	for _, raw := range notes {
		var lines []InvoiceLine
		if err := json.Unmarshal(raw, &lines); err != nil {
			return fmt.Errorf("decode credit note: %w", err)
		}
		for _, l := range lines {
			if i, ok := index[l.Key]; ok {
				remaining[i] -= l.TotalIncl
			}
		}
	}
	for _, r := range remaining {
		open += r
	}
	// What each line is worth now.
	worthOf := make([]int64, len(inv.Lines))
	var worth int64
	if reason != InvoiceReasonUnmarkPaid && o.Status != OrderCancelled {
		if len(o.Lines) == 0 {
			if o.Lines, err = tx.orderLinesOf(ctx, o.StoreID, o.ID); err != nil {
				return err
			}
		}
		for _, l := range invoiceLinesOf(o, taxTerms{}) {
			if i, ok := index[l.Key]; ok {
				worthOf[i] = l.TotalIncl
				worth += l.TotalIncl
			}
		}
		var refunded int64
		if err := tx.tx.QueryRow(ctx, `SELECT COALESCE(sum(amount), 0)::bigint FROM order_refunds
			WHERE store_id = $1 AND order_id = $2 AND status = 'succeeded'`, o.StoreID, o.ID).Scan(&refunded); err != nil {
			return fmt.Errorf("sum refunds: %w", err)
		}
		worth = max(min(worth, o.PaidTotal-refunded), 0)
	}
	credit := open - worth
	if credit <= 0 {
		return nil
	}
	// Lines worth less than they were credit the difference first; the rest
	// (money given back beyond the pieces) spreads over what stays open.
	shares := make([]int64, len(inv.Lines))
	var first int64
	for i := range remaining {
		shares[i] = max(remaining[i]-worthOf[i], 0)
		first += shares[i]
	}
	if first >= credit {
		shares = spread(credit, shares)
	} else {
		rest := make([]int64, len(remaining))
		for i := range remaining {
			rest[i] = remaining[i] - shares[i]
		}
		for i, s := range spread(credit-first, rest) {
			shares[i] += s
		}
	}
	note := Invoice{StoreID: o.StoreID, OrderID: o.ID, Kind: InvoiceKindCreditNote, Type: inv.Type, Reason: reason,
		CreditsInvoiceID: &inv.ID, RefundID: refundID, Currency: inv.Currency, Buyer: inv.Buyer}
	for i, l := range inv.Lines {
		if shares[i] <= 0 {
			continue
		}
		l.TotalIncl, l.Tax = shares[i], 0
		if shares[i] != remaining[i] || remaining[i] != inv.Lines[i].TotalIncl { // part of the line: one unit of the amount
			l.Quantity, l.UnitPriceExcl, l.Discount = 1, withoutTax(shares[i], l.TaxRateBP), 0
		}
		note.Lines = append(note.Lines, l)
	}
	iss, err := tx.invoiceIssuer(ctx, o)
	if err != nil {
		return err
	}
	if err := tx.insertInvoice(ctx, iss, &note); err != nil {
		return err
	}
	if credit < open {
		return nil
	}
	if _, err := tx.tx.Exec(ctx, `UPDATE invoices SET cancelled_by_credit_note_id = $3, updated_at = $4 WHERE store_id = $1 AND id = $2`,
		o.StoreID, inv.ID, note.ID, tx.now()); err != nil {
		return fmt.Errorf("cancel invoice: %w", err)
	}
	return nil
}

// InvoiceRef names an invoice with its store.
type InvoiceRef struct {
	StoreID uuid.UUID
	ID      uuid.UUID
}

// InvoiceChange is a document the authority has not been told of, as of
// UpdatedAt.
type InvoiceChange struct {
	InvoiceRef
	UpdatedAt      time.Time
	StoreSubdomain string // for the workflow's summary
}

// FindInvoicesAwaitingSync lists documents with news for the authority and
// no workflow started for it.
func (db *DB) FindInvoicesAwaitingSync(ctx context.Context, limit int) ([]InvoiceChange, error) {
	rows, err := db.pool.Query(ctx, `SELECT i.store_id, i.id, i.updated_at, COALESCE(s.subdomain, '')
		FROM invoices i LEFT JOIN stores s ON s.id = i.store_id
		WHERE i.sync_started_at IS NULL ORDER BY i.updated_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("find invoices awaiting sync: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (InvoiceChange, error) {
		var c InvoiceChange
		err := row.Scan(&c.StoreID, &c.ID, &c.UpdatedAt, &c.StoreSubdomain)
		return c, err
	})
}

// MarkInvoiceSyncStarted records that a workflow took the document's
// change. A change made since it was found stays unmarked for the next round.
func (db *DB) MarkInvoiceSyncStarted(ctx context.Context, c InvoiceChange) error {
	if _, err := db.pool.Exec(ctx, `UPDATE invoices SET sync_started_at = $4
		WHERE store_id = $1 AND id = $2 AND sync_started_at IS NULL AND updated_at = $3`,
		c.StoreID, c.ID, c.UpdatedAt, db.now()); err != nil {
		return fmt.Errorf("mark invoice sync started: %w", err)
	}
	return nil
}

// RecordInvoiceReported stores the authority's acceptance (reported, or
// cleared). A credit note that credits its invoice whole cancels it now.
func (db *DB) RecordInvoiceReported(ctx context.Context, storeID, id uuid.UUID, answer InvoiceAnswer) error {
	warnings, err := json.Marshal(nonNilStrings(answer.Warnings))
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		now := db.now()
		if _, err := tx.Exec(ctx, `UPDATE invoices SET authority_reference = $3, submitted_at = $4, errors = '[]', warnings = $6,
				updated_at = $4, document = COALESCE($7, document),
				status = CASE WHEN cancelled_by_credit_note_id IS NOT NULL AND EXISTS (SELECT 1 FROM invoices n
					WHERE n.id = invoices.cancelled_by_credit_note_id AND n.status IN ('reported', 'cleared', 'issued')) THEN 'cancelled'
					ELSE $5 END
			WHERE store_id = $1 AND id = $2`, storeID, id, answer.Reference, now, answer.Status, warnings, answer.Document); err != nil {
			return fmt.Errorf("record invoice reported: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE invoices SET status = 'cancelled', updated_at = $3
			WHERE store_id = $1 AND cancelled_by_credit_note_id = $2 AND status IN ('reported', 'cleared', 'issued')`, storeID, id, now); err != nil {
			return fmt.Errorf("cancel credited invoice: %w", err)
		}
		return nil
	})
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// RecordInvoiceRefused keeps why the document was not accepted: rejected
// when the authority refused it, failed when it could not be sent.
func (db *DB) RecordInvoiceRefused(ctx context.Context, storeID, id uuid.UUID, status InvoiceStatus, messages ...string) error {
	errs, err := json.Marshal(nonNilStrings(messages))
	if err != nil {
		return err
	}
	if _, err := db.pool.Exec(ctx, `UPDATE invoices SET status = $3, errors = $4, updated_at = $5 WHERE store_id = $1 AND id = $2`,
		storeID, id, status, errs, db.now()); err != nil {
		return fmt.Errorf("record invoice refusal: %w", err)
	}
	return nil
}

// InvoicePDFKey is where an invoice's PDF in format (a4 or receipt) is kept
// in the object store.
func InvoicePDFKey(storeID, id uuid.UUID, format string) string {
	return "stores/" + storeID.String() + "/invoices/" + id.String() + "-" + format + ".pdf"
}

// MarkInvoicePDFReady records that an invoice's PDFs are stored.
func (db *DB) MarkInvoicePDFReady(ctx context.Context, storeID, id uuid.UUID) error {
	if _, err := db.pool.Exec(ctx, `UPDATE invoices SET pdf_ready_at = $3 WHERE store_id = $1 AND id = $2`, storeID, id, db.now()); err != nil {
		return fmt.Errorf("mark invoice PDF ready: %w", err)
	}
	return nil
}

// FindInvoiceDocumentBytes reads the document as sent (or as it will be).
func (r reader) FindInvoiceDocumentBytes(ctx context.Context, storeID, id uuid.UUID) ([]byte, error) {
	var document []byte
	err := r.q.QueryRow(ctx, `SELECT document FROM invoices WHERE store_id = $1 AND id = $2`, storeID, id).Scan(&document)
	if err != nil {
		return nil, notFoundIfNoRows(err, "find invoice document")
	}
	return document, nil
}

// ErrInvoiceNotRetryable refuses a retry of an invoice the authority did
// not refuse (pending, or taken).
var ErrInvoiceNotRetryable = errors.New("the invoice is not rejected or failed")

// RetryInvoice sends a rejected or failed invoice to the authority again,
// with the number, ICV and hash it has: pending, its errors cleared, for the
// dispatcher to start its e-invoice:<id> workflow again.
func (tx *Tx) RetryInvoice(ctx context.Context, storeID, id uuid.UUID) (Invoice, error) {
	tag, err := tx.tx.Exec(ctx, `UPDATE invoices SET status = 'pending', errors = '[]', sync_started_at = NULL, updated_at = $3
		WHERE store_id = $1 AND id = $2 AND status IN ('rejected', 'failed')`, storeID, id, tx.now())
	if err != nil {
		return Invoice{}, fmt.Errorf("retry invoice: %w", err)
	}
	if tag.RowsAffected() == 0 {
		if _, err := tx.FindInvoice(ctx, storeID, id); err != nil {
			return Invoice{}, err
		}
		return Invoice{}, ErrInvoiceNotRetryable
	}
	if err := tx.notifyDispatcher(ctx); err != nil {
		return Invoice{}, err
	}
	return tx.FindInvoice(ctx, storeID, id)
}
