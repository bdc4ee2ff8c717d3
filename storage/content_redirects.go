package storage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// URL redirects (decisions §22): the storefront answers a request for
// from_path with 301 to its target. Targets are stored collapsed: a new
// redirect whose target is another's from_path takes that one's target, and
// the redirects that pointed at the new one's from_path follow it, so every
// lookup is one step and a loop is refused when it would be written.

// Redirect is one URL redirect of a store.
type Redirect struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	FromPath  string
	To        string
	CreatedAt time.Time
}

// Refusals of redirect writes.
var (
	// ErrDuplicateRedirect: the store already redirects the path.
	ErrDuplicateRedirect = errors.New("duplicate redirect")
	// ErrRedirectLoop: the redirect would lead back to its own path.
	ErrRedirectLoop = &InvalidError{Field: "to", Code: "loop", Message: "leads back to from_path through the store's redirects"}
)

// RedirectPath is a path as a redirect stores it: a path on the store,
// decoded (Arabic stays readable), without a trailing slash, its query kept.
func RedirectPath(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if !strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "//") || strings.ContainsAny(raw, "#\\\x00\r\n") || len(raw) > 2048 {
		return "", fmt.Errorf("redirect path %q: %w", raw, ErrInvalid)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host != "" || u.Scheme != "" {
		return "", fmt.Errorf("redirect path %q: %w", raw, ErrInvalid)
	}
	p := u.Path
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p, nil
}

// redirectKey is how paths match: case does not count.
func redirectKey(path string) string { return strings.ToLower(path) }

// RedirectTargetAllowed: a path on the store, or an http(s) URL.
func RedirectTargetAllowed(raw string) bool {
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "/") {
		_, err := RedirectPath(raw)
		return err == nil
	}
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil && len(raw) <= 2048 &&
		!strings.ContainsAny(raw, "\\\x00\r\n")
}

const redirectColumns = `id, store_id, from_path, target, created_at`

func scanRedirect(row pgx.Row) (Redirect, error) {
	var r Redirect
	err := row.Scan(&r.ID, &r.StoreID, &r.FromPath, &r.To, &r.CreatedAt)
	return r, err
}

// CreateRedirect adds a redirect from one of the store's paths, collapsing
// chains both ways; 409 on a path already redirected, 422 `to` on a loop.
func (tx *Tx) CreateRedirect(ctx context.Context, storeID uuid.UUID, fromPath, to string) (Redirect, error) {
	from, err := RedirectPath(fromPath)
	if err != nil {
		return Redirect{}, &InvalidError{Field: "from_path", Code: "invalid", Message: "must be a path on the store"}
	}
	to = strings.TrimSpace(to)
	if strings.HasPrefix(to, "/") {
		if to, err = RedirectPath(to); err != nil {
			return Redirect{}, &InvalidError{Field: "to", Code: "invalid", Message: "must be a path on the store or an http(s) URL"}
		}
		if redirectKey(to) == redirectKey(from) {
			return Redirect{}, ErrRedirectLoop
		}
		// Stored targets are collapsed already: one step reaches the end.
		var next string
		err := tx.tx.QueryRow(ctx, `SELECT target FROM redirects WHERE store_id = $1 AND from_key = $2`, storeID, redirectKey(to)).Scan(&next)
		switch {
		case err == nil && redirectKey(next) == redirectKey(from):
			return Redirect{}, ErrRedirectLoop
		case err == nil:
			to = next
		case !errors.Is(err, pgx.ErrNoRows):
			return Redirect{}, fmt.Errorf("follow redirect: %w", err)
		}
	}
	r, err := scanRedirect(tx.tx.QueryRow(ctx, `INSERT INTO redirects (id, store_id, from_path, from_key, target, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+redirectColumns, NewID(), storeID, from, redirectKey(from), to, tx.now()))
	if isUniqueViolation(err, "redirects_store_id_from_key_key") {
		return Redirect{}, fmt.Errorf("redirect %s: %w", from, ErrDuplicateRedirect)
	}
	if err != nil {
		return Redirect{}, fmt.Errorf("create redirect: %w", err)
	}
	// The redirects that led to from now lead where it leads.
	if _, err := tx.tx.Exec(ctx, `UPDATE redirects SET target = $3 WHERE store_id = $1 AND lower(target) = $2 AND id <> $4`,
		storeID, redirectKey(from), to, r.ID); err != nil {
		return Redirect{}, fmt.Errorf("collapse redirects: %w", err)
	}
	return r, nil
}

// RedirectFilter narrows a redirect list.
type RedirectFilter struct {
	Page
	// Path, when set, lists the redirect from that path (any case).
	Path *string
	// Target, when set, lists the redirects to that target.
	Target *string
}

// FindRedirects lists a store's redirects, newest first.
func (r reader) FindRedirects(ctx context.Context, storeID uuid.UUID, f RedirectFilter) ([]Redirect, int, error) {
	from, args := "FROM redirects WHERE store_id = $1", []any{storeID}
	if f.Path != nil {
		p, err := RedirectPath(*f.Path)
		if err != nil {
			p = *f.Path
		}
		args = append(args, redirectKey(p))
		from += fmt.Sprintf(" AND from_key = $%d", len(args))
	}
	if f.Target != nil {
		args = append(args, strings.ToLower(strings.TrimSpace(*f.Target)))
		from += fmt.Sprintf(" AND lower(target) = $%d", len(args))
	}
	return findPage(ctx, r, "redirects", listQuery{columns: redirectColumns, from: from, args: args, orderBy: "created_at DESC, id DESC"},
		f.Limit, int(f.Offset()), func(row pgx.CollectableRow) (Redirect, error) { return scanRedirect(row) })
}

// FindRedirect reads one redirect by id.
func (r reader) FindRedirect(ctx context.Context, storeID, id uuid.UUID) (Redirect, error) {
	rd, err := scanRedirect(r.q.QueryRow(ctx, `SELECT `+redirectColumns+` FROM redirects WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Redirect{}, notFoundIfNoRows(err, "find redirect "+id.String())
	}
	return rd, nil
}

// RedirectFor answers where a storefront request for path goes, or
// ErrNotFound when the store does not redirect it.
func (r reader) RedirectFor(ctx context.Context, storeID uuid.UUID, path string) (string, error) {
	p, err := RedirectPath(path)
	if err != nil {
		return "", fmt.Errorf("redirect for %q: %w", path, ErrNotFound)
	}
	var to string
	err = r.q.QueryRow(ctx, `SELECT target FROM redirects WHERE store_id = $1 AND from_key = $2`, storeID, redirectKey(p)).Scan(&to)
	if err != nil {
		return "", notFoundIfNoRows(err, "redirect for "+p)
	}
	return to, nil
}

// DeleteRedirect removes a redirect.
func (tx *Tx) DeleteRedirect(ctx context.Context, storeID, id uuid.UUID) (Redirect, error) {
	rd, err := scanRedirect(tx.tx.QueryRow(ctx, `DELETE FROM redirects WHERE store_id = $1 AND id = $2 RETURNING `+redirectColumns, storeID, id))
	if err != nil {
		return Redirect{}, notFoundIfNoRows(err, "delete redirect "+id.String())
	}
	return rd, nil
}

// redirectRenamed keeps a renamed page's, blog's or article's old URL
// working (decisions §22: a rename writes a redirect, no silent dead link):
// a redirect from oldPath to newPath, replacing one that started at oldPath,
// and dropping one that started at newPath, where the content now lives.
// A blog's rename redirects the blog's path; its articles' old paths are
// not redirected one by one.
func (tx *Tx) redirectRenamed(ctx context.Context, storeID uuid.UUID, oldPath, newPath string) error {
	if _, err := tx.tx.Exec(ctx, `DELETE FROM redirects WHERE store_id = $1 AND from_key IN ($2, $3)`,
		storeID, redirectKey(oldPath), redirectKey(newPath)); err != nil {
		return fmt.Errorf("redirect renamed %s: %w", oldPath, err)
	}
	_, err := tx.CreateRedirect(ctx, storeID, oldPath, newPath)
	return err
}
