package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Customer is a store's buyer.
type Customer struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Name      string
	Email     *string
	Phone     *string
	Addresses json.RawMessage
	// ChatOptOut is set when the customer asked for no chat messages.
	ChatOptOut bool
	// HasAccount is set once the customer signed in by a code (§24).
	HasAccount   bool
	LastSignInAt *time.Time
	Language     *string
	// Marketing is the consent per channel (whatsapp, email) ever set.
	Marketing map[string]MarketingConsent
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CustomerUpdate is a partial update; null clears email or phone.
type CustomerUpdate struct {
	Name       *string
	Email      Field[string]
	Phone      Field[string]
	Addresses  json.RawMessage
	ChatOptOut *bool
	Language   Field[string]
	// Marketing sets a channel's consent state (source merchant).
	Marketing map[string]string
}

const customerColumns = `id, store_id, name, email, phone, addresses, created_at, updated_at`

// customerDetailColumns are a customer's columns with their account,
// consent and chat opt-out (scanCustomerDetail).
const customerDetailColumns = customerColumns + `, chat_opt_out, has_account, last_sign_in_at, language, marketing`

func scanCustomerDetail(row pgx.Row) (Customer, error) {
	var (
		c         Customer
		marketing []byte
	)
	if err := row.Scan(&c.ID, &c.StoreID, &c.Name, &c.Email, &c.Phone, &c.Addresses, &c.CreatedAt, &c.UpdatedAt, &c.ChatOptOut,
		&c.HasAccount, &c.LastSignInAt, &c.Language, &marketing); err != nil {
		return Customer{}, err
	}
	c.Marketing = map[string]MarketingConsent{}
	return c, json.Unmarshal(marketing, &c.Marketing)
}

func scanCustomer(row pgx.Row) (Customer, error) {
	var c Customer
	err := row.Scan(&c.ID, &c.StoreID, &c.Name, &c.Email, &c.Phone, &c.Addresses, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// FindCustomerByID returns one customer of the store, with the chat opt-out.
func (r reader) FindCustomerByID(ctx context.Context, storeID, id uuid.UUID) (Customer, error) {
	c, err := scanCustomerDetail(r.q.QueryRow(ctx, `SELECT `+customerDetailColumns+` FROM customers WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Customer{}, notFoundIfNoRows(err, "find customer "+id.String())
	}
	return c, nil
}

func customerConflict(err error) error {
	switch {
	case isUniqueViolation(err, "customers_store_email_idx"):
		return &ConflictError{Field: "email", Message: "a customer with this email exists in the store"}
	case isUniqueViolation(err, "customers_store_phone_idx"):
		return &ConflictError{Field: "phone", Message: "a customer with this phone exists in the store"}
	}
	return err
}

// CreateCustomer adds a customer; email and phone are unique per store.
func (tx *Tx) CreateCustomer(ctx context.Context, c *Customer) error {
	c.ID = NewID()
	now := tx.now()
	c.CreatedAt, c.UpdatedAt = now, now
	if len(c.Addresses) == 0 {
		c.Addresses = json.RawMessage(`[]`)
	}
	_, err := tx.tx.Exec(ctx, `INSERT INTO customers (`+customerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
		c.ID, c.StoreID, c.Name, c.Email, c.Phone, c.Addresses, now)
	if err != nil {
		return fmt.Errorf("create customer: %w", customerConflict(err))
	}
	return nil
}

// FindCustomers returns a page of the store's customers, newest first,
// optionally matching a search on name, email or phone.
func (r reader) FindCustomers(ctx context.Context, storeID uuid.UUID, search *string, page Page) ([]Customer, int, error) {
	pattern := "%"
	if search != nil {
		pattern = "%" + escapeLike(*search) + "%"
	}
	return findPage(ctx, r, "customers", listQuery{
		columns: customerDetailColumns,
		from:    "FROM customers WHERE store_id = $1 AND (name ILIKE $2 OR email ILIKE $2 OR phone ILIKE $2)", args: []any{storeID, pattern},
		orderBy: "created_at DESC, id DESC",
	}, page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (Customer, error) { return scanCustomerDetail(row) })
}

// UpdateCustomer applies a partial update.
func (tx *Tx) UpdateCustomer(ctx context.Context, storeID, id uuid.UUID, upd CustomerUpdate) (Customer, error) {
	return tx.updateCustomer(ctx, storeID, id, upd, "merchant")
}

// updateCustomer applies a partial update; consent changes carry source
// (merchant, account).
func (tx *Tx) updateCustomer(ctx context.Context, storeID, id uuid.UUID, upd CustomerUpdate, source string) (Customer, error) {
	if _, err := tx.tx.Exec(ctx, `SELECT 1 FROM customers WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id); err != nil {
		return Customer{}, fmt.Errorf("lock customer: %w", err)
	}
	c, err := tx.FindCustomerByID(ctx, storeID, id)
	if err != nil {
		return Customer{}, err
	}
	if upd.Name != nil {
		c.Name = *upd.Name
	}
	if upd.Email.Set {
		c.Email = upd.Email.ptr()
	}
	if upd.Phone.Set {
		c.Phone = upd.Phone.ptr()
	}
	if upd.Addresses != nil {
		c.Addresses = upd.Addresses
	}
	if upd.ChatOptOut != nil {
		c.ChatOptOut = *upd.ChatOptOut
	}
	if upd.Language.Set {
		c.Language = upd.Language.ptr()
	}
	c.UpdatedAt = tx.now()
	setConsent(c.Marketing, upd.Marketing, source, c.UpdatedAt)
	marketing, err := json.Marshal(c.Marketing)
	if err != nil {
		return Customer{}, err
	}
	_, err = tx.tx.Exec(ctx, `UPDATE customers SET name = $3, email = $4, phone = $5, addresses = $6, chat_opt_out = $7, updated_at = $8,
			language = $9, marketing = $10
		WHERE store_id = $1 AND id = $2`, storeID, id, c.Name, c.Email, c.Phone, c.Addresses, c.ChatOptOut, c.UpdatedAt, c.Language, marketing)
	if err != nil {
		return Customer{}, fmt.Errorf("update customer: %w", customerConflict(err))
	}
	return c, nil
}

// DeleteCustomer removes a customer; their orders keep the snapshot.
func (tx *Tx) DeleteCustomer(ctx context.Context, storeID, id uuid.UUID) error {
	tag, err := tx.tx.Exec(ctx, `DELETE FROM customers WHERE store_id = $1 AND id = $2`, storeID, id)
	if err != nil {
		return fmt.Errorf("delete customer: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete customer %s: %w", id, ErrNotFound)
	}
	return nil
}

// FindOrCreateCustomer returns the store's customer with this phone, else
// this email (citext: in any letter case), else a new one (an order's
// inline customer).
func (tx *Tx) FindOrCreateCustomer(ctx context.Context, storeID uuid.UUID, name string, email, phone *string) (Customer, error) {
	return tx.findOrCreateCustomer(ctx, storeID, name, email, phone, nil)
}

// findOrCreateCustomer is FindOrCreateCustomer reading the store into
// store, when it is given, in the same round trip as the contacts' locks.
func (tx *Tx) findOrCreateCustomer(ctx context.Context, storeID uuid.UUID, name string, email, phone *string, store *Store) (Customer, error) {
	var contacts []customerContact
	if phone != nil {
		contacts = append(contacts, customerContact{"phone", *phone})
	}
	if email != nil {
		contacts = append(contacts, customerContact{"email", *email})
	}
	found, ok, err := tx.lockAndFindCustomer(ctx, storeID, contacts, store)
	if err != nil || ok {
		return found, err
	}
	c := Customer{StoreID: storeID, Name: name, Email: email, Phone: phone}
	return c, tx.CreateCustomer(ctx, &c)
}

// customerContact is a column of customers that names one (phone, email)
// and its value.
type customerContact struct{ column, value string }

// lockAndFindCustomer takes the transaction's lock on each contact, in
// order, and returns the customer the first contact that has one names.
// Concurrent first orders from one new customer must not both create them
// (the loser would hit the unique index), so the locks are held until the
// transaction ends, always phone before email. The locks and the lookups
// go in one round trip; each lookup is a statement of its own, so it sees
// a customer that a transaction holding a lock before it committed. With
// store given, the store is read into it first, in the same round trip.
func (tx *Tx) lockAndFindCustomer(ctx context.Context, storeID uuid.UUID, contacts []customerContact, store *Store) (Customer, bool, error) {
	batch := &pgx.Batch{}
	if store != nil {
		batch.Queue(`SELECT `+storeColumns+` FROM stores WHERE id = $1`, storeID)
	}
	for _, c := range contacts {
		// lower: the email column is citext, so emails in other letters are
		// one customer and must take one lock.
		batch.Queue(`SELECT pg_advisory_xact_lock(hashtextextended($1 || ':' || lower($2), 0))`, storeID.String(), c.value)
	}
	for _, c := range contacts {
		batch.Queue(`SELECT `+customerColumns+` FROM customers WHERE store_id = $1 AND `+c.column+` = $2`, storeID, c.value)
	}
	results := tx.tx.SendBatch(ctx, batch)
	defer results.Close()
	if store != nil {
		s, err := scanStore(results.QueryRow())
		if err != nil {
			return Customer{}, false, notFoundIfNoRows(err, "find store")
		}
		*store = s
	}
	for range contacts {
		if _, err := results.Exec(); err != nil {
			return Customer{}, false, fmt.Errorf("lock customer contact: %w", err)
		}
	}
	for _, c := range contacts {
		customer, err := scanCustomer(results.QueryRow())
		if err == nil {
			return customer, true, results.Close()
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Customer{}, false, fmt.Errorf("find customer by %s: %w", c.column, err)
		}
	}
	return Customer{}, false, results.Close()
}
