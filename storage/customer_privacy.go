package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Merging, exporting and erasing customers (decisions §24): one
// transaction each; an erase keeps every amount and redacts who the buyer
// was (PDPL in KSA, Law 151/2020 in Egypt).

// Refusals of merge and erase.
var (
	ErrCustomersBothHaveAccounts = errors.New("both customers have accounts")
	ErrCustomerHasOpenOrders     = errors.New("the customer has open orders")
)

// RedactedName is what an erased customer and their orders' copies are
// called.
const RedactedName = "[erased]"

// MergeCustomers moves everything of customer from into customer into, in
// one transaction, and deletes from: orders, discount usages and
// redemptions, gift cards and store credit, sessions, addresses (appended),
// a contact into lacks, the account, the chat opt-out and consent per
// channel into has not set. Two customers with accounts are not merged
// (ErrCustomersBothHaveAccounts): each signs in by their own identifier.
func (tx *Tx) MergeCustomers(ctx context.Context, storeID, into, from uuid.UUID) (Customer, error) {
	if into == from {
		return Customer{}, &InvalidError{Field: "from_customer_id", Code: "same_customer", Message: "must be another customer"}
	}
	type side struct {
		email, phone *string
		addresses    []json.RawMessage
		hasAccount   bool
		optOut       bool
		marketing    map[string]json.RawMessage
	}
	read := func(id uuid.UUID, field string) (side, error) {
		var (
			s                    side
			addresses, marketing []byte
		)
		err := tx.tx.QueryRow(ctx, `SELECT email, phone, addresses, has_account, chat_opt_out, marketing FROM customers
			WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id).Scan(&s.email, &s.phone, &addresses, &s.hasAccount, &s.optOut, &marketing)
		if errors.Is(err, pgx.ErrNoRows) {
			if field == "" {
				return side{}, fmt.Errorf("merge customers: %w", ErrNotFound)
			}
			return side{}, &InvalidError{Field: field, Code: "not_found", Message: "is not a customer of this store"}
		}
		if err != nil {
			return side{}, fmt.Errorf("lock customer: %w", err)
		}
		if err := json.Unmarshal(addresses, &s.addresses); err != nil {
			return side{}, err
		}
		return s, json.Unmarshal(marketing, &s.marketing)
	}
	// Locked in id order, so two merges of one pair cannot deadlock.
	first, second := into, from
	if compareUUID(from, into) < 0 {
		first, second = from, into
	}
	sides := map[uuid.UUID]side{}
	for _, id := range []uuid.UUID{first, second} {
		field := ""
		if id == from {
			field = "from_customer_id"
		}
		s, err := read(id, field)
		if err != nil {
			return Customer{}, err
		}
		sides[id] = s
	}
	a, b := sides[into], sides[from]
	if a.hasAccount && b.hasAccount {
		return Customer{}, ErrCustomersBothHaveAccounts
	}
	for channel, consent := range b.marketing {
		if _, set := a.marketing[channel]; !set {
			a.marketing[channel] = consent
		}
	}
	if a.email == nil {
		a.email = b.email
	}
	if a.phone == nil {
		a.phone = b.phone
	}
	addresses, err := json.Marshal(append(a.addresses, b.addresses...))
	if err != nil {
		return Customer{}, err
	}
	marketing, err := json.Marshal(a.marketing)
	if err != nil {
		return Customer{}, err
	}
	batch := &pgx.Batch{}
	batch.Queue(`UPDATE orders SET customer_id = $3 WHERE store_id = $1 AND customer_id = $2`, storeID, from, into)
	batch.Queue(`UPDATE gift_cards SET customer_id = $3 WHERE store_id = $1 AND customer_id = $2`, storeID, from, into)
	batch.Queue(`UPDATE discount_redemptions SET customer_id = $3 WHERE store_id = $1 AND customer_id = $2`, storeID, from, into)
	batch.Queue(`INSERT INTO discount_customer_usage (store_id, discount_id, customer_id, times_used)
		SELECT store_id, discount_id, $3, times_used FROM discount_customer_usage WHERE store_id = $1 AND customer_id = $2
		ON CONFLICT (discount_id, customer_id) DO UPDATE SET times_used = discount_customer_usage.times_used + EXCLUDED.times_used`, storeID, from, into)
	batch.Queue(`DELETE FROM discount_customer_usage WHERE store_id = $1 AND customer_id = $2`, storeID, from)
	batch.Queue(`UPDATE customer_sessions SET customer_id = $3 WHERE store_id = $1 AND customer_id = $2`, storeID, from, into)
	// The merged customer goes first: its contacts are unique in the store.
	batch.Queue(`DELETE FROM customers WHERE store_id = $1 AND id = $2`, storeID, from)
	batch.Queue(`UPDATE customers SET email = $3, phone = $4, addresses = $5, has_account = $6, chat_opt_out = $7, marketing = $8,
			updated_at = $9
		WHERE store_id = $1 AND id = $2`, storeID, into, a.email, a.phone, addresses, a.hasAccount || b.hasAccount, a.optOut || b.optOut,
		marketing, tx.now())
	if err := tx.tx.SendBatch(ctx, batch).Close(); err != nil {
		return Customer{}, fmt.Errorf("merge customers: %w", err)
	}
	return tx.FindCustomerByID(ctx, storeID, into)
}

// CustomerExport is everything the store keeps about a customer, for the
// customer's access request.
type CustomerExport struct {
	Customer  Customer
	Orders    []Order
	GiftCards []GiftCard
}

// ExportCustomer reads everything the store keeps about a customer.
func (r reader) ExportCustomer(ctx context.Context, storeID, id uuid.UUID) (CustomerExport, error) {
	a, err := r.FindCustomerByID(ctx, storeID, id)
	if err != nil {
		return CustomerExport{}, err
	}
	out := CustomerExport{Customer: a}
	rows, err := r.q.Query(ctx, `SELECT `+orderColumns+` FROM orders WHERE store_id = $1 AND customer_id = $2 ORDER BY created_at, id`, storeID, id)
	if err != nil {
		return CustomerExport{}, fmt.Errorf("export orders: %w", err)
	}
	if out.Orders, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Order, error) { return scanOrder(row) }); err != nil {
		return CustomerExport{}, fmt.Errorf("export orders: %w", err)
	}
	for i := range out.Orders {
		if out.Orders[i].Lines, err = r.orderLinesOf(ctx, storeID, out.Orders[i].ID); err != nil {
			return CustomerExport{}, err
		}
	}
	rows, err = r.q.Query(ctx, `SELECT `+giftCardColumns+` `+giftCardFrom+` WHERE g.store_id = $1 AND g.customer_id = $2 ORDER BY g.created_at`,
		storeID, id)
	if err != nil {
		return CustomerExport{}, fmt.Errorf("export gift cards: %w", err)
	}
	if out.GiftCards, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (GiftCard, error) { return scanGiftCard(row) }); err != nil {
		return CustomerExport{}, fmt.Errorf("export gift cards: %w", err)
	}
	return out, nil
}

// EraseCustomer redacts a customer: their name, contacts, addresses,
// consent and account, and the copies of name, contacts and address their
// orders keep; amounts stay. Their sessions end. A customer with an order
// still on its way (not delivered, returned or cancelled) is refused
// (ErrCustomerHasOpenOrders): the courier needs the address.
func (tx *Tx) EraseCustomer(ctx context.Context, storeID, id uuid.UUID) (Customer, error) {
	if _, err := tx.tx.Exec(ctx, `SELECT 1 FROM customers WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id); err != nil {
		return Customer{}, fmt.Errorf("lock customer: %w", err)
	}
	var open bool
	if err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM orders WHERE store_id = $1 AND customer_id = $2
		AND status NOT IN ('DELIVERED', 'RETURNED', 'CANCELLED', 'DRAFT'))`, storeID, id).Scan(&open); err != nil {
		return Customer{}, fmt.Errorf("find open orders: %w", err)
	}
	if open {
		return Customer{}, ErrCustomerHasOpenOrders
	}
	now := tx.now()
	tag, err := tx.tx.Exec(ctx, `UPDATE customers SET name = $3, email = NULL, phone = NULL, addresses = '[]', marketing = '{}',
		has_account = false, last_sign_in_at = NULL, updated_at = $4 WHERE store_id = $1 AND id = $2`, storeID, id, RedactedName, now)
	if err != nil {
		return Customer{}, fmt.Errorf("erase customer: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return Customer{}, fmt.Errorf("erase customer %s: %w", id, ErrNotFound)
	}
	batch := &pgx.Batch{}
	batch.Queue(`UPDATE orders SET customer = jsonb_build_object('id', customer->'id', 'name', $3::text, 'email', NULL, 'phone', NULL),
			shipping_address = jsonb_build_object('name', $3::text, 'phone', '', 'line1', $3::text, 'city', $3::text,
				'country', shipping_address->'country'),
			customer_phone = NULL, search_text = lower(order_number), updated_at = $4
		WHERE store_id = $1 AND customer_id = $2`, storeID, id, RedactedName, now)
	batch.Queue(`UPDATE customer_sessions SET ended_at = $3 WHERE store_id = $1 AND customer_id = $2 AND ended_at IS NULL`, storeID, id, now)
	batch.Queue(`UPDATE gift_cards SET recipient = NULL WHERE store_id = $1 AND customer_id = $2`, storeID, id)
	if err := tx.tx.SendBatch(ctx, batch).Close(); err != nil {
		return Customer{}, fmt.Errorf("erase customer's copies: %w", err)
	}
	return tx.FindCustomerByID(ctx, storeID, id)
}
