package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/merchantsvc/svc/storage/theme"
)

// ContentPage is an online store page (decisions §22): a draft while
// PublishedAt is nil, scheduled while it is in the future.
type ContentPage struct {
	ID          uuid.UUID
	StoreID     uuid.UUID
	Handle      string
	Title       ContentText
	Body        ContentText
	Template    string
	PublishedAt *time.Time
	SEO         ContentSEO
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// PageFilter narrows a list of pages.
type PageFilter struct {
	Page
	// Status is published, scheduled or draft; "" is every page.
	Status string
	// Search keeps pages whose handle or title in either language holds
	// it, ignoring case; "" keeps every page.
	Search string
}

const pageColumns = `id, store_id, handle, title_ar, title_en, body_ar, body_en, template, published_at, seo_title, seo_description, created_at, updated_at`

func scanPage(row pgx.Row) (ContentPage, error) {
	var (
		p                ContentPage
		titleAr, titleEn *string
	)
	err := row.Scan(&p.ID, &p.StoreID, &p.Handle, &titleAr, &titleEn, &p.Body.AR, &p.Body.EN, &p.Template, &p.PublishedAt,
		&p.SEO.Title, &p.SEO.Description, &p.CreatedAt, &p.UpdatedAt)
	p.Title = ContentText{AR: textOf(titleAr), EN: textOf(titleEn)}
	return p, err
}

// FindPage returns one page of the store.
func (r reader) FindPage(ctx context.Context, storeID, id uuid.UUID) (ContentPage, error) {
	p, err := scanPage(r.q.QueryRow(ctx, `SELECT `+pageColumns+` FROM pages WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return ContentPage{}, notFoundIfNoRows(err, "find page "+id.String())
	}
	return p, nil
}

// publishedSQL is the condition of a row's status at $2 (now).
const publishedSQL = `CASE WHEN published_at IS NULL THEN 'draft' WHEN published_at > $2 THEN 'scheduled' ELSE 'published' END`

// FindPages returns a page of the store's pages, newest first.
func (db *DB) FindPages(ctx context.Context, storeID uuid.UUID, f PageFilter) ([]ContentPage, int, error) {
	from := "FROM pages WHERE store_id = $1 AND ($3 = '' OR " + publishedSQL + " = $3) AND " + contentSearchSQL(4, "title_ar", "title_en")
	return findPage(ctx, db.reader, "pages", listQuery{
		columns: pageColumns, from: from, args: []any{storeID, db.now(), f.Status, contentSearchPattern(f.Search)},
		orderBy: "created_at DESC, id DESC",
	}, f.Limit, int(f.Offset()), func(row pgx.CollectableRow) (ContentPage, error) { return scanPage(row) })
}

// contentSearchSQL is the search condition of a content list on the
// argument $n: the handle or either title holds the pattern
// (contentSearchPattern), case ignored like the products' and
// collections' search; an empty pattern keeps every row.
func contentSearchSQL(n int, titleAR, titleEN string) string {
	p := fmt.Sprintf("$%d::text", n)
	return "(" + p + " = '' OR handle ILIKE " + p + " OR " + titleAR + " ILIKE " + p + " OR " + titleEN + " ILIKE " + p + ")"
}

// contentSearchPattern is the LIKE pattern of a search, "" for none.
func contentSearchPattern(search string) string {
	if search == "" {
		return ""
	}
	return "%" + escapeLike(search) + "%"
}

// FindPublishedPage returns the page a buyer may read at handle: one whose
// publication time has come.
func (db *DB) FindPublishedPage(ctx context.Context, storeID uuid.UUID, h string) (ContentPage, error) {
	p, err := scanPage(db.pool.QueryRow(ctx, `SELECT `+pageColumns+` FROM pages WHERE store_id = $1 AND handle = $2
		AND published_at IS NOT NULL AND published_at <= $3`, storeID, h, db.now()))
	if err != nil {
		return ContentPage{}, notFoundIfNoRows(err, "find published page "+h)
	}
	return p, nil
}

// pageHandleTaken says whether the store has a page at h.
func (tx *Tx) pageHandleTaken(ctx context.Context, storeID uuid.UUID, h string) (bool, error) {
	var taken bool
	err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pages WHERE store_id = $1 AND handle = $2)`, storeID, h).Scan(&taken)
	if err != nil {
		return false, fmt.Errorf("find page handle: %w", err)
	}
	return taken, nil
}

// CreatePage adds a page; an empty handle is derived from the title.
func (tx *Tx) CreatePage(ctx context.Context, p *ContentPage) error {
	h, err := contentHandle(ctx, p.Handle, p.Title, "page", func(h string) (bool, error) { return tx.pageHandleTaken(ctx, p.StoreID, h) })
	if err != nil {
		return err
	}
	if err := tx.checkBodies(ctx, p.StoreID, "body", p.Body); err != nil {
		return err
	}
	p.ID, p.Handle = NewID(), h
	now := tx.now()
	p.CreatedAt, p.UpdatedAt = now, now
	err = tx.savepoint(ctx, true, func(sub *Tx) error {
		_, err := sub.tx.Exec(ctx, `INSERT INTO pages (`+pageColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			p.ID, p.StoreID, p.Handle, nullText(p.Title.AR), nullText(p.Title.EN), p.Body.AR, p.Body.EN, p.Template, p.PublishedAt,
			p.SEO.Title, p.SEO.Description, p.CreatedAt, p.UpdatedAt)
		return err
	})
	if isUniqueViolation(err, "pages_handle_key") {
		return ErrDuplicateHandle
	}
	if err != nil {
		return fmt.Errorf("create page: %w", err)
	}
	return nil
}

// UpdatePage changes a page under a row lock: change edits the page as it
// is, and what it becomes is checked whole. A new handle is refused while
// the theme names the old one.
func (tx *Tx) UpdatePage(ctx context.Context, storeID, id uuid.UUID, change func(*ContentPage) error) (ContentPage, error) {
	current, err := scanPage(tx.tx.QueryRow(ctx, `SELECT `+pageColumns+` FROM pages WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return ContentPage{}, notFoundIfNoRows(err, "update page "+id.String())
	}
	p := current
	if err := change(&p); err != nil {
		return ContentPage{}, err
	}
	if p.Handle, err = tx.renameContent(ctx, storeID, theme.RefPage, "/pages/", current.Handle, p.Handle); err != nil {
		return ContentPage{}, err
	}
	if p.Body != current.Body {
		if err := tx.checkBodies(ctx, storeID, "body", p.Body); err != nil {
			return ContentPage{}, err
		}
	}
	p.UpdatedAt = tx.now()
	err = tx.savepoint(ctx, true, func(sub *Tx) error {
		_, err := sub.tx.Exec(ctx, `UPDATE pages SET handle = $3, title_ar = $4, title_en = $5, body_ar = $6, body_en = $7, template = $8,
			published_at = $9, seo_title = $10, seo_description = $11, updated_at = $12 WHERE store_id = $1 AND id = $2`,
			storeID, id, p.Handle, nullText(p.Title.AR), nullText(p.Title.EN), p.Body.AR, p.Body.EN, p.Template, p.PublishedAt,
			p.SEO.Title, p.SEO.Description, p.UpdatedAt)
		return err
	})
	if isUniqueViolation(err, "pages_handle_key") {
		return ContentPage{}, ErrDuplicateHandle
	}
	if err != nil {
		return ContentPage{}, fmt.Errorf("update page: %w", err)
	}
	return p, nil
}

// DeletePage removes a page the theme does not name.
func (tx *Tx) DeletePage(ctx context.Context, storeID, id uuid.UUID) (ContentPage, error) {
	p, err := scanPage(tx.tx.QueryRow(ctx, `SELECT `+pageColumns+` FROM pages WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return ContentPage{}, notFoundIfNoRows(err, "delete page "+id.String())
	}
	if err := tx.refuseThemeUses(ctx, storeID, theme.RefPage, p.Handle, "CONTENT_IN_USE"); err != nil {
		return ContentPage{}, err
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM pages WHERE store_id = $1 AND id = $2`, storeID, id); err != nil {
		return ContentPage{}, fmt.Errorf("delete page: %w", err)
	}
	return p, nil
}

// ContentClock is the time publication is judged by (the store's clock,
// which tests may set): a page or article is published once its
// PublishedAt is at or before it.
func (db *DB) ContentClock() time.Time { return db.now() }
