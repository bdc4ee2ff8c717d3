package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/merchantsvc/svc/storage/theme"
)

// The reads of the rendered storefront (decisions §23) that the JSON
// storefront does not already make: a product by its handle, the lowest
// available price of a list's products, a category's page and the sitemap.

// FindActiveProductByHandle returns the active product at /products/{h};
// a draft, archived or unknown one is ErrNotFound (the storefront's 404).
func (r reader) FindActiveProductByHandle(ctx context.Context, storeID uuid.UUID, h string) (Product, error) {
	p, err := scanProduct(r.q.QueryRow(ctx, `SELECT `+productColumns+` FROM products WHERE store_id = $1 AND handle = $2 AND status = 'active'`,
		storeID, h))
	if err != nil {
		return Product{}, notFoundIfNoRows(err, "find product by handle "+h)
	}
	return p, nil
}

// FindFromPrices answers, for each product, the lowest price of its
// variants that can be bought (in stock, or a gift card's), else its lowest
// variant price: what a list shows "from" (decisions §23). One query.
func (r reader) FindFromPrices(ctx context.Context, storeID uuid.UUID, productIDs []uuid.UUID) (map[uuid.UUID]int64, error) {
	out := make(map[uuid.UUID]int64, len(productIDs))
	if len(productIDs) == 0 {
		return out, nil
	}
	rows, err := r.q.Query(ctx, `SELECT product_id,
			COALESCE(min(price) FILTER (WHERE quantity > 0 OR value IS NOT NULL), min(price))
		FROM variants WHERE store_id = $1 AND product_id = ANY ($2) GROUP BY product_id`, storeID, productIDs)
	if err != nil {
		return nil, fmt.Errorf("find from prices: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id    uuid.UUID
			price int64
		)
		if err := rows.Scan(&id, &price); err != nil {
			return nil, fmt.Errorf("find from prices: %w", err)
		}
		out[id] = price
	}
	return out, rows.Err()
}

// FindPublishedCollectionByHandle returns a published collection by its
// handle; category says it must be a category's own collection (the page
// /categories/{h}), whose id is the category's.
func (r reader) FindPublishedCollectionByHandle(ctx context.Context, storeID uuid.UUID, h string, category bool) (Collection, error) {
	query := `SELECT ` + collectionColumns + ` FROM collections c WHERE c.store_id = $1 AND c.handle = $2 AND c.published`
	if category {
		query += ` AND EXISTS (SELECT 1 FROM categories k WHERE k.store_id = c.store_id AND k.id = c.id)`
	}
	c, err := scanCollection(r.q.QueryRow(ctx, query, storeID, h))
	if err != nil {
		return Collection{}, notFoundIfNoRows(err, "find collection "+h)
	}
	return c, nil
}

// SitemapEntry is one address of a store's sitemap: a path of the site
// (without a language prefix) and when it last changed.
type SitemapEntry struct {
	Path      string
	UpdatedAt time.Time
}

// MaxSitemapEntries bounds one sitemap file (the protocol's limit).
const MaxSitemapEntries = 50000

// FindSitemap lists what buyers may visit: active products, published
// collections, pages and articles, and the blogs, newest change first.
func (r reader) FindSitemap(ctx context.Context, storeID uuid.UUID, now time.Time) ([]SitemapEntry, error) {
	rows, err := r.q.Query(ctx, `SELECT path, updated_at FROM (
			SELECT '/products/' || handle AS path, updated_at FROM products WHERE store_id = $1 AND status = 'active'
			UNION ALL SELECT '/collections/' || handle, updated_at FROM collections WHERE store_id = $1 AND published
			UNION ALL SELECT '/pages/' || handle, updated_at FROM pages WHERE store_id = $1 AND published_at <= $2
			UNION ALL SELECT '/blogs/' || handle, updated_at FROM blogs WHERE store_id = $1
			UNION ALL SELECT '/blogs/' || b.handle || '/' || a.handle, a.updated_at FROM articles a JOIN blogs b ON b.id = a.blog_id
				WHERE a.store_id = $1 AND a.published_at <= $2
		) s ORDER BY updated_at DESC, path LIMIT $3`, storeID, now, MaxSitemapEntries)
	if err != nil {
		return nil, fmt.Errorf("find sitemap: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (SitemapEntry, error) {
		var e SitemapEntry
		err := row.Scan(&e.Path, &e.UpdatedAt)
		return e, err
	})
}

// SiteState is what a storefront request reads before anything else: the
// store, the digits it shows, and what its page cache is keyed by.
type SiteState struct {
	Store    Store
	Numerals string
	// ContentVersion moves in the transaction of every change that shows
	// on a page (migration 0067's triggers).
	ContentVersion int64
	// PublishedAt and PublishedThemeID say which published document the
	// pages render (zero and the default before the first publish).
	PublishedAt      time.Time
	PublishedThemeID string
}

// FindSiteState reads a storefront's state by subdomain in one query.
func (r reader) FindSiteState(ctx context.Context, subdomain string) (SiteState, error) {
	var (
		st          SiteState
		publishedAt *time.Time
		themeID     *string
	)
	s := &st.Store
	err := r.q.QueryRow(ctx, `SELECT s.id, s.owner_user_id, s.name, s.subdomain, s.currency, s.default_language, s.lifecycle_state,
			s.created_at, s.numerals, COALESCE(v.version, 1), c.published_at, COALESCE(c.published_theme_id, $2)
		FROM stores s LEFT JOIN site_versions v ON v.store_id = s.id LEFT JOIN theme_customizations c ON c.store_id = s.id
		WHERE s.subdomain = $1`, subdomain, theme.DefaultID).Scan(&s.ID, &s.OwnerUserID, &s.Name, &s.Subdomain, &s.Currency, &s.DefaultLanguage,
		&s.LifecycleState, &s.CreatedAt, &st.Numerals, &st.ContentVersion, &publishedAt, &themeID)
	if err != nil {
		return SiteState{}, notFoundIfNoRows(err, "find site state")
	}
	if publishedAt != nil {
		st.PublishedAt = *publishedAt
	}
	if themeID != nil {
		st.PublishedThemeID = *themeID
	}
	return st, nil
}
