package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/merchantsvc/svc/storage/theme"
)

// Blog holds articles (decisions §22).
type Blog struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Handle    string
	Title     ContentText
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Article is a post of a blog: a draft while PublishedAt is nil, scheduled
// while it is in the future.
type Article struct {
	ID          uuid.UUID
	StoreID     uuid.UUID
	BlogID      uuid.UUID
	Handle      string
	Title       ContentText
	Body        ContentText
	Excerpt     ContentText
	ImageID     *uuid.UUID
	Author      string
	Tags        []string
	PublishedAt *time.Time
	SEO         ContentSEO
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

const blogColumns = `id, store_id, handle, title_ar, title_en, created_at, updated_at`

func scanBlog(row pgx.Row) (Blog, error) {
	var (
		b                Blog
		titleAr, titleEn *string
	)
	err := row.Scan(&b.ID, &b.StoreID, &b.Handle, &titleAr, &titleEn, &b.CreatedAt, &b.UpdatedAt)
	b.Title = ContentText{AR: textOf(titleAr), EN: textOf(titleEn)}
	return b, err
}

// FindBlog returns one blog of the store.
func (r reader) FindBlog(ctx context.Context, storeID, id uuid.UUID) (Blog, error) {
	b, err := scanBlog(r.q.QueryRow(ctx, `SELECT `+blogColumns+` FROM blogs WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Blog{}, notFoundIfNoRows(err, "find blog "+id.String())
	}
	return b, nil
}

// FindBlogByHandle returns the store's blog at a handle.
func (r reader) FindBlogByHandle(ctx context.Context, storeID uuid.UUID, h string) (Blog, error) {
	b, err := scanBlog(r.q.QueryRow(ctx, `SELECT `+blogColumns+` FROM blogs WHERE store_id = $1 AND handle = $2`, storeID, h))
	if err != nil {
		return Blog{}, notFoundIfNoRows(err, "find blog "+h)
	}
	return b, nil
}

// BlogFilter narrows a list of blogs.
type BlogFilter struct {
	Page
	// Search keeps blogs whose handle or title in either language holds
	// it, ignoring case; "" keeps every blog.
	Search string
}

// FindBlogs returns a page of the store's blogs, newest first.
func (r reader) FindBlogs(ctx context.Context, storeID uuid.UUID, f BlogFilter) ([]Blog, int, error) {
	return findPage(ctx, r, "blogs", listQuery{
		columns: blogColumns, from: "FROM blogs WHERE store_id = $1 AND " + contentSearchSQL(2, "title_ar", "title_en"),
		args:    []any{storeID, contentSearchPattern(f.Search)},
		orderBy: "created_at DESC, id DESC",
	}, f.Limit, int(f.Offset()), func(row pgx.CollectableRow) (Blog, error) { return scanBlog(row) })
}

// CreateBlog adds a blog; an empty handle is derived from the title.
func (tx *Tx) CreateBlog(ctx context.Context, b *Blog) error {
	h, err := contentHandle(ctx, b.Handle, b.Title, "blog", func(h string) (bool, error) {
		var taken bool
		err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM blogs WHERE store_id = $1 AND handle = $2)`, b.StoreID, h).Scan(&taken)
		if err != nil {
			return false, fmt.Errorf("find blog handle: %w", err)
		}
		return taken, nil
	})
	if err != nil {
		return err
	}
	b.ID, b.Handle = NewID(), h
	now := tx.now()
	b.CreatedAt, b.UpdatedAt = now, now
	err = tx.savepoint(ctx, true, func(sub *Tx) error {
		_, err := sub.tx.Exec(ctx, `INSERT INTO blogs (`+blogColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			b.ID, b.StoreID, b.Handle, nullText(b.Title.AR), nullText(b.Title.EN), b.CreatedAt, b.UpdatedAt)
		return err
	})
	if isUniqueViolation(err, "blogs_handle_key") {
		return ErrDuplicateHandle
	}
	if err != nil {
		return fmt.Errorf("create blog: %w", err)
	}
	return nil
}

// UpdateBlog changes a blog under a row lock; a new handle is refused
// while the theme names the old one.
func (tx *Tx) UpdateBlog(ctx context.Context, storeID, id uuid.UUID, change func(*Blog) error) (Blog, error) {
	current, err := scanBlog(tx.tx.QueryRow(ctx, `SELECT `+blogColumns+` FROM blogs WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Blog{}, notFoundIfNoRows(err, "update blog "+id.String())
	}
	b := current
	if err := change(&b); err != nil {
		return Blog{}, err
	}
	if b.Handle, err = tx.renameContent(ctx, storeID, theme.RefBlog, "/blogs/", current.Handle, b.Handle); err != nil {
		return Blog{}, err
	}
	b.UpdatedAt = tx.now()
	err = tx.savepoint(ctx, true, func(sub *Tx) error {
		_, err := sub.tx.Exec(ctx, `UPDATE blogs SET handle = $3, title_ar = $4, title_en = $5, updated_at = $6 WHERE store_id = $1 AND id = $2`,
			storeID, id, b.Handle, nullText(b.Title.AR), nullText(b.Title.EN), b.UpdatedAt)
		return err
	})
	if isUniqueViolation(err, "blogs_handle_key") {
		return Blog{}, ErrDuplicateHandle
	}
	if err != nil {
		return Blog{}, fmt.Errorf("update blog: %w", err)
	}
	return b, nil
}

// DeleteBlog removes a blog the theme does not name, and its articles.
func (tx *Tx) DeleteBlog(ctx context.Context, storeID, id uuid.UUID) (Blog, error) {
	b, err := scanBlog(tx.tx.QueryRow(ctx, `SELECT `+blogColumns+` FROM blogs WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Blog{}, notFoundIfNoRows(err, "delete blog "+id.String())
	}
	if err := tx.refuseThemeUses(ctx, storeID, theme.RefBlog, b.Handle, "CONTENT_IN_USE"); err != nil {
		return Blog{}, err
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM blogs WHERE store_id = $1 AND id = $2`, storeID, id); err != nil {
		return Blog{}, fmt.Errorf("delete blog: %w", err)
	}
	return b, nil
}

const articleColumns = `id, store_id, blog_id, handle, title_ar, title_en, body_ar, body_en, excerpt_ar, excerpt_en, image_id, author, tags,
	published_at, seo_title, seo_description, created_at, updated_at`

func scanArticle(row pgx.Row) (Article, error) {
	var (
		a                                      Article
		titleAr, titleEn, excerptAr, excerptEn *string
	)
	err := row.Scan(&a.ID, &a.StoreID, &a.BlogID, &a.Handle, &titleAr, &titleEn, &a.Body.AR, &a.Body.EN, &excerptAr, &excerptEn, &a.ImageID,
		&a.Author, &a.Tags, &a.PublishedAt, &a.SEO.Title, &a.SEO.Description, &a.CreatedAt, &a.UpdatedAt)
	a.Title = ContentText{AR: textOf(titleAr), EN: textOf(titleEn)}
	a.Excerpt = ContentText{AR: textOf(excerptAr), EN: textOf(excerptEn)}
	return a, err
}

// ArticleFilter narrows a blog's articles.
type ArticleFilter struct {
	Page
	// Status is published, scheduled or draft; "" is every article.
	Status string
	// Tag keeps the articles that carry it.
	Tag string
}

// FindArticle returns one article of a blog of the store.
func (r reader) FindArticle(ctx context.Context, storeID, blogID, id uuid.UUID) (Article, error) {
	a, err := scanArticle(r.q.QueryRow(ctx, `SELECT `+articleColumns+` FROM articles WHERE store_id = $1 AND blog_id = $2 AND id = $3`, storeID, blogID, id))
	if err != nil {
		return Article{}, notFoundIfNoRows(err, "find article "+id.String())
	}
	return a, nil
}

// FindArticles returns a page of a blog's articles, latest published first
// (drafts last).
func (db *DB) FindArticles(ctx context.Context, storeID, blogID uuid.UUID, f ArticleFilter) ([]Article, int, error) {
	from := "FROM articles WHERE store_id = $1 AND blog_id = $4 AND ($3 = '' OR " + publishedSQL + " = $3) AND ($5 = '' OR EXISTS (SELECT 1 FROM unnest(tags) t WHERE lower(t) = lower($5)))"
	return findPage(ctx, db.reader, "articles", listQuery{
		columns: articleColumns, from: from, args: []any{storeID, db.now(), f.Status, blogID, f.Tag},
		orderBy: "published_at DESC NULLS LAST, id DESC",
	}, f.Limit, int(f.Offset()), func(row pgx.CollectableRow) (Article, error) { return scanArticle(row) })
}

// FindPublishedArticle returns the article a buyer may read at a handle of
// a blog: one whose publication time has come.
func (db *DB) FindPublishedArticle(ctx context.Context, storeID, blogID uuid.UUID, h string) (Article, error) {
	a, err := scanArticle(db.pool.QueryRow(ctx, `SELECT `+articleColumns+` FROM articles WHERE store_id = $1 AND blog_id = $2 AND handle = $3
		AND published_at IS NOT NULL AND published_at <= $4`, storeID, blogID, h, db.now()))
	if err != nil {
		return Article{}, notFoundIfNoRows(err, "find published article "+h)
	}
	return a, nil
}

// articleHandleTaken says whether the blog has an article at h.
func (tx *Tx) articleHandleTaken(ctx context.Context, blogID uuid.UUID, h string) (bool, error) {
	var taken bool
	err := tx.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM articles WHERE blog_id = $1 AND handle = $2)`, blogID, h).Scan(&taken)
	if err != nil {
		return false, fmt.Errorf("find article handle: %w", err)
	}
	return taken, nil
}

// CreateArticle adds an article to a blog of the store; an empty handle is
// derived from the title.
func (tx *Tx) CreateArticle(ctx context.Context, a *Article) error {
	if _, err := tx.FindBlog(ctx, a.StoreID, a.BlogID); err != nil {
		return err
	}
	if err := tx.checkMediaImage(ctx, a.StoreID, "image_id", a.ImageID); err != nil {
		return err
	}
	h, err := contentHandle(ctx, a.Handle, a.Title, "article", func(h string) (bool, error) { return tx.articleHandleTaken(ctx, a.BlogID, h) })
	if err != nil {
		return err
	}
	if err := tx.checkBodies(ctx, a.StoreID, "body", a.Body); err != nil {
		return err
	}
	a.ID, a.Handle = NewID(), h
	now := tx.now()
	a.CreatedAt, a.UpdatedAt = now, now
	err = tx.savepoint(ctx, true, func(sub *Tx) error { return sub.writeArticle(ctx, a, true) })
	if isUniqueViolation(err, "articles_handle_key") {
		return ErrDuplicateHandle
	}
	if err != nil {
		return fmt.Errorf("create article: %w", err)
	}
	return nil
}

// writeArticle inserts or updates an article's row.
func (tx *Tx) writeArticle(ctx context.Context, a *Article, insert bool) error {
	args := []any{a.ID, a.StoreID, a.BlogID, a.Handle, nullText(a.Title.AR), nullText(a.Title.EN), a.Body.AR, a.Body.EN,
		nullText(a.Excerpt.AR), nullText(a.Excerpt.EN), a.ImageID, a.Author, a.Tags, a.PublishedAt, a.SEO.Title, a.SEO.Description,
		a.UpdatedAt, a.CreatedAt}
	query := `INSERT INTO articles (` + articleColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $18, $17)`
	if !insert {
		args = args[:17]
		query = `UPDATE articles SET handle = $4, title_ar = $5, title_en = $6, body_ar = $7, body_en = $8, excerpt_ar = $9, excerpt_en = $10,
			image_id = $11, author = $12, tags = $13, published_at = $14, seo_title = $15, seo_description = $16, updated_at = $17
			WHERE id = $1 AND store_id = $2 AND blog_id = $3`
	}
	_, err := tx.tx.Exec(ctx, query, args...)
	return err
}

// UpdateArticle changes an article under a row lock: change edits it as it
// is, and what it becomes is checked whole.
func (tx *Tx) UpdateArticle(ctx context.Context, storeID, blogID, id uuid.UUID, change func(*Article) error) (Article, error) {
	current, err := scanArticle(tx.tx.QueryRow(ctx, `SELECT `+articleColumns+` FROM articles WHERE store_id = $1 AND blog_id = $2 AND id = $3 FOR UPDATE`,
		storeID, blogID, id))
	if err != nil {
		return Article{}, notFoundIfNoRows(err, "update article "+id.String())
	}
	a := current
	a.Tags = append([]string{}, current.Tags...) // never nil: the column is NOT NULL
	if err := change(&a); err != nil {
		return Article{}, err
	}
	if a.ImageID != nil && (current.ImageID == nil || *a.ImageID != *current.ImageID) {
		if err := tx.checkMediaImage(ctx, storeID, "image_id", a.ImageID); err != nil {
			return Article{}, err
		}
	}
	if a.Handle != current.Handle {
		// Only a handle sent is normalised: one stored before the rules
		// stands until the merchant changes it.
		if a.Handle, err = typedHandle(a.Handle); err != nil {
			return Article{}, err
		}
	}
	// A new handle keeps the old URL working (no theme setting names an
	// article, so nothing refuses the rename).
	if a.Handle != current.Handle {
		var blog string
		if err := tx.tx.QueryRow(ctx, `SELECT handle FROM blogs WHERE store_id = $1 AND id = $2`, storeID, blogID).Scan(&blog); err != nil {
			return Article{}, fmt.Errorf("read the article's blog: %w", err)
		}
		if err := tx.redirectRenamed(ctx, storeID, "/blogs/"+blog+"/articles/"+current.Handle, "/blogs/"+blog+"/articles/"+a.Handle); err != nil {
			return Article{}, err
		}
	}
	if a.Body != current.Body {
		if err := tx.checkBodies(ctx, storeID, "body", a.Body); err != nil {
			return Article{}, err
		}
	}
	a.UpdatedAt = tx.now()
	err = tx.savepoint(ctx, true, func(sub *Tx) error { return sub.writeArticle(ctx, &a, false) })
	if isUniqueViolation(err, "articles_handle_key") {
		return Article{}, ErrDuplicateHandle
	}
	if err != nil {
		return Article{}, fmt.Errorf("update article: %w", err)
	}
	return a, nil
}

// DeleteArticle removes an article of a blog of the store.
func (tx *Tx) DeleteArticle(ctx context.Context, storeID, blogID, id uuid.UUID) (Article, error) {
	a, err := scanArticle(tx.tx.QueryRow(ctx, `DELETE FROM articles WHERE store_id = $1 AND blog_id = $2 AND id = $3 RETURNING `+articleColumns,
		storeID, blogID, id))
	if err != nil {
		return Article{}, notFoundIfNoRows(err, "delete article "+id.String())
	}
	return a, nil
}
