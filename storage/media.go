package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/merchantsvc/svc/storage/theme"
)

// MediaKind is what a media item is: an image (three WebP sizes) or a file
// kept as uploaded (a PDF).
type MediaKind string

// Media kinds.
const (
	MediaImage MediaKind = "image"
	MediaFile  MediaKind = "file"
)

// MediaSizes are the files of a ready image, as the pipeline names them.
var MediaSizes = []string{"thumbnail", "medium", "large"}

// MediaAlt is an item's alt text in Arabic and English; either may be absent.
type MediaAlt struct {
	Ar *string
	En *string
}

// Media is one item of a store's media library (decisions §22).
type Media struct {
	ID          uuid.UUID
	StoreID     uuid.UUID
	Kind        MediaKind
	Filename    string
	Mime        string
	Size        int64
	Width       *int
	Height      *int
	Alt         MediaAlt
	Status      ImageStatus
	OriginalKey string
	Error       *string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// MediaPrefix is the object-store prefix of everything a media item owns.
func MediaPrefix(storeID, mediaID uuid.UUID) string {
	return fmt.Sprintf("stores/%s/media/%s/", storeID, mediaID)
}

// MediaKey is the object key of one file of a media item ("original",
// "large.webp", …).
func MediaKey(storeID, mediaID uuid.UUID, name string) string {
	return MediaPrefix(storeID, mediaID) + name
}

const mediaColumns = `id, store_id, kind, filename, mime, size, width, height, alt_ar, alt_en, status, original_key, error, created_at, updated_at`

func scanMedia(row pgx.Row) (Media, error) {
	var m Media
	err := row.Scan(&m.ID, &m.StoreID, &m.Kind, &m.Filename, &m.Mime, &m.Size, &m.Width, &m.Height, &m.Alt.Ar, &m.Alt.En,
		&m.Status, &m.OriginalKey, &m.Error, &m.CreatedAt, &m.UpdatedAt)
	return m, err
}

// CreateMedia records an upload whose original is stored already: a file
// is ready at once, an image is processing until its workflow attaches the
// sizes (MarkMediaReady).
func (tx *Tx) CreateMedia(ctx context.Context, m *Media) error {
	if m.ID == uuid.Nil {
		m.ID = NewID()
	}
	m.Status = ImageProcessing
	if m.Kind == MediaFile {
		m.Status = ImageReady
	}
	m.CreatedAt = tx.now()
	m.UpdatedAt = m.CreatedAt
	if _, err := tx.tx.Exec(ctx, `INSERT INTO media (id, store_id, kind, filename, mime, size, width, height, alt_ar, alt_en, status,
		original_key, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`,
		m.ID, m.StoreID, m.Kind, m.Filename, m.Mime, m.Size, m.Width, m.Height, m.Alt.Ar, m.Alt.En, m.Status, m.OriginalKey,
		m.CreatedAt); err != nil {
		return fmt.Errorf("create media: %w", err)
	}
	return nil
}

// FindMedia returns one media item of the store.
func (r reader) FindMedia(ctx context.Context, storeID, id uuid.UUID) (Media, error) {
	m, err := scanMedia(r.q.QueryRow(ctx, `SELECT `+mediaColumns+` FROM media WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Media{}, notFoundIfNoRows(err, "find media "+id.String())
	}
	return m, nil
}

// MediaFilter narrows the media list: a kind, and a search on the file
// name and the alt text in either language.
type MediaFilter struct {
	Kind   *MediaKind
	Search *string
}

// FindMedias returns a page of the store's media, newest first.
func (r reader) FindMedias(ctx context.Context, storeID uuid.UUID, f MediaFilter, page Page) ([]Media, int, error) {
	from := "FROM media WHERE store_id = $1"
	args := []any{storeID}
	if f.Kind != nil {
		args = append(args, *f.Kind)
		from += fmt.Sprintf(" AND kind = $%d", len(args))
	}
	if f.Search != nil && *f.Search != "" {
		args = append(args, "%"+escapeLike(*f.Search)+"%")
		n := len(args)
		from += fmt.Sprintf(" AND (filename ILIKE $%d OR alt_ar ILIKE $%d OR alt_en ILIKE $%d)", n, n, n)
	}
	return findPage(ctx, r, "media", listQuery{columns: mediaColumns, from: from, args: args, orderBy: "created_at DESC, id DESC"},
		page.Limit, int(page.Offset()), func(row pgx.CollectableRow) (Media, error) { return scanMedia(row) })
}

// UpdateMediaAlt replaces an item's alt text (both languages at once).
func (tx *Tx) UpdateMediaAlt(ctx context.Context, storeID, id uuid.UUID, alt MediaAlt) (Media, error) {
	m, err := scanMedia(tx.tx.QueryRow(ctx, `UPDATE media SET alt_ar = $3, alt_en = $4, updated_at = $5
		WHERE store_id = $1 AND id = $2 RETURNING `+mediaColumns, storeID, id, alt.Ar, alt.En, tx.now()))
	if err != nil {
		return Media{}, notFoundIfNoRows(err, "update media alt "+id.String())
	}
	return m, nil
}

// ContentReferrer is one place that names a media item: today the theme's
// draft or published document at a JSON Pointer; pages, articles and
// collections add their own kinds (with the row's ID) in ContentReferrers.
type ContentReferrer struct {
	Kind    string     // "theme_draft", "theme_published"
	ID      *uuid.UUID // the referring row, for content that has one
	Pointer string     // the JSON Pointer, for the theme
}

// MediaInUseError refuses deleting a media item something still names.
type MediaInUseError struct {
	Referrers []ContentReferrer
}

func (e *MediaInUseError) Error() string {
	return fmt.Sprintf("media named by %d places", len(e.Referrers))
}

// Is lets errors.Is(err, ErrConflict) match it.
func (e *MediaInUseError) Is(target error) bool { return target == ErrConflict }

// ContentReferrers lists every place of the store that names the media item:
// the theme's draft and published document (image_picker settings), page
// and article bodies (an img of one of its URLs), and article and collection
// images. It is the one answer to "who refers to this media?", so a delete is
// refused while any of them does.
func (r reader) ContentReferrers(ctx context.Context, storeID, mediaID uuid.UUID) ([]ContentReferrer, error) {
	var draft, published json.RawMessage
	err := r.q.QueryRow(ctx, `SELECT draft, published FROM theme_customizations WHERE store_id = $1`, storeID).Scan(&draft, &published)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("find media referrers: %w", err)
	}
	var out []ContentReferrer
	id := mediaID.String()
	for _, doc := range []struct {
		kind string
		doc  json.RawMessage
	}{{"theme_draft", draft}, {"theme_published", published}} {
		if len(doc.doc) == 0 {
			continue
		}
		for _, u := range theme.Default().Uses(doc.doc, theme.RefImage) {
			if u.ID == id {
				out = append(out, ContentReferrer{Kind: doc.kind, Pointer: u.Pointer})
			}
		}
	}
	// A body names the item by a URL whose path holds /files/{store}/{id}/;
	// the id is a UUID, so the substring names no other item.
	inBody := "%" + MediaURLPath(storeID, mediaID, "") + "%"
	rows, err := r.q.Query(ctx, `
		SELECT 'page', id, created_at FROM pages WHERE store_id = $1 AND (body_ar LIKE $3 OR body_en LIKE $3)
		UNION ALL
		SELECT 'article', id, created_at FROM articles WHERE store_id = $1 AND (image_id = $2 OR body_ar LIKE $3 OR body_en LIKE $3)
		UNION ALL
		SELECT 'collection', id, created_at FROM collections WHERE store_id = $1 AND image_id = $2
		ORDER BY 1, 3, 2`, storeID, mediaID, inBody)
	if err != nil {
		return nil, fmt.Errorf("find media referrers: %w", err)
	}
	content, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ContentReferrer, error) {
		var ref ContentReferrer
		var id uuid.UUID
		var created time.Time
		err := row.Scan(&ref.Kind, &id, &created)
		ref.ID = &id
		return ref, err
	})
	if err != nil {
		return nil, fmt.Errorf("find media referrers: %w", err)
	}
	return append(out, content...), nil
}

// checkMediaImage refuses an image id that is not a ready image of the
// store's media, under field; the item is share-locked, so a delete waits
// for this write (and then sees it) or has gone before it (decisions §22).
func (tx *Tx) checkMediaImage(ctx context.Context, storeID uuid.UUID, field string, id *uuid.UUID) error {
	if id == nil {
		return nil
	}
	var kind MediaKind
	var status ImageStatus
	err := tx.tx.QueryRow(ctx, `SELECT kind, status FROM media WHERE store_id = $1 AND id = $2 FOR SHARE`, storeID, *id).Scan(&kind, &status)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && (kind != MediaImage || status != ImageReady)) {
		return &InvalidError{Field: field, Code: "not_found", Message: "no ready image of this store's media has this id"}
	}
	if err != nil {
		return fmt.Errorf("find media %s: %w", id, err)
	}
	return nil
}

// DeleteMedia removes an item no content names, returning it so the caller
// removes its objects after commit; one that is named is MediaInUseError.
// The row is locked first, so a theme save that names it concurrently
// either sees it gone or waits (SaveDraft validates outside this lock, the
// window a Shopify file delete has too).
func (tx *Tx) DeleteMedia(ctx context.Context, storeID, id uuid.UUID) (Media, error) {
	m, err := scanMedia(tx.tx.QueryRow(ctx, `SELECT `+mediaColumns+` FROM media WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Media{}, notFoundIfNoRows(err, "delete media "+id.String())
	}
	refs, err := tx.ContentReferrers(ctx, storeID, id)
	if err != nil {
		return Media{}, err
	}
	if len(refs) > 0 {
		return Media{}, &MediaInUseError{Referrers: refs}
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM media WHERE store_id = $1 AND id = $2`, storeID, id); err != nil {
		return Media{}, fmt.Errorf("delete media %s: %w", id, err)
	}
	return m, nil
}

// MediaURLPath is the path, under the API's base URL, of one file of a
// media item: /files/{store_id}/{media_id}/{name}.
func MediaURLPath(storeID, mediaID uuid.UUID, name string) string {
	return fmt.Sprintf("/files/%s/%s/%s", storeID, mediaID, name)
}

// MediaFileName is the served name of a media item's size ("large" →
// "large.webp") or, for a file, of the file itself.
func MediaFileName(kind MediaKind, size string) string {
	if kind == MediaFile {
		return "file.pdf"
	}
	return size + ".webp"
}

// mediaOfURL is the media id and served file name url names when it is a
// media URL of the store: the path /files/{store_id}/{media_id}/{name}, or
// that path under baseURL (when baseURL is set). ok is false otherwise.
func mediaOfURL(storeID uuid.UUID, baseURL, url string) (id uuid.UUID, name string, ok bool) {
	path := url
	if base := strings.TrimSuffix(baseURL, "/"); base != "" {
		path = strings.TrimPrefix(url, base)
	}
	rest, found := strings.CutPrefix(path, "/files/"+storeID.String()+"/")
	if !found {
		return uuid.Nil, "", false
	}
	rawID, name, found := strings.Cut(rest, "/")
	id, err := uuid.Parse(rawID)
	if !found || err != nil || id.String() != rawID || name == "" || strings.ContainsAny(name, "/?#") {
		return uuid.Nil, "", false
	}
	return id, name, true
}

// isMediaURL answers whether src is the URL of one of the store's ready
// images, of any size: what a page or article body's img must name
// (decisions §22). The item is share-locked like checkMediaImage's.
func (tx *Tx) isMediaURL(ctx context.Context, storeID uuid.UUID, src string) (bool, error) {
	id, name, ok := mediaOfURL(storeID, tx.filesBase, src)
	if !ok {
		return false, nil
	}
	m, err := scanMedia(tx.tx.QueryRow(ctx, `SELECT `+mediaColumns+` FROM media WHERE store_id = $1 AND id = $2 FOR SHARE`, storeID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find body media: %w", err)
	}
	return m.Kind == MediaImage && m.Status == ImageReady && slices.Contains(m.ServedNames(), name), nil
}

// ServedNames are the file names under which a ready item is served.
func (m Media) ServedNames() []string {
	if m.Kind == MediaFile {
		return []string{MediaFileName(MediaFile, "")}
	}
	names := make([]string, 0, len(MediaSizes))
	for _, s := range MediaSizes {
		names = append(names, MediaFileName(MediaImage, s))
	}
	return names
}

// MarkMediaReady records an image's processed size; a retried activity
// marks it again harmlessly. An item deleted meanwhile is ErrNotFound.
func (db *DB) MarkMediaReady(ctx context.Context, storeID, id uuid.UUID, width, height int) (Media, error) {
	m, err := scanMedia(db.pool.QueryRow(ctx, `UPDATE media SET status = 'ready', width = $3, height = $4, error = NULL,
		updated_at = $5 WHERE store_id = $1 AND id = $2 RETURNING `+mediaColumns, storeID, id, width, height, db.now()))
	if err != nil {
		return Media{}, notFoundIfNoRows(err, "mark media ready "+id.String())
	}
	return m, nil
}

// FailMedia records why an image could not be processed.
func (db *DB) FailMedia(ctx context.Context, storeID, id uuid.UUID, reason string) error {
	_, err := db.pool.Exec(ctx, `UPDATE media SET status = 'failed', error = $3, updated_at = $4
		WHERE store_id = $1 AND id = $2 AND status = 'processing'`, storeID, id, reason, db.now())
	if err != nil {
		return fmt.Errorf("fail media: %w", err)
	}
	return nil
}

// MarkMediaStarted records that the image's workflow was started.
func (db *DB) MarkMediaStarted(ctx context.Context, storeID, id uuid.UUID) error {
	_, err := db.pool.Exec(ctx, `UPDATE media SET workflow_started_at = $3 WHERE store_id = $1 AND id = $2 AND workflow_started_at IS NULL`,
		storeID, id, db.now())
	if err != nil {
		return fmt.Errorf("mark media started: %w", err)
	}
	return nil
}

// FindLostMediaStarts lists up to limit images still processing whose
// workflow was not recorded as started within olderThan of their upload.
func (db *DB) FindLostMediaStarts(ctx context.Context, olderThan time.Duration, limit int) ([]WorkRef, error) {
	rows, err := db.pool.Query(ctx, `SELECT w.store_id, w.id, w.id, 0, COALESCE(s.subdomain, '') FROM media w
		LEFT JOIN stores s ON s.id = w.store_id WHERE w.workflow_started_at IS NULL AND w.status = 'processing'
		AND w.created_at <= $1 ORDER BY w.created_at LIMIT $2`, db.now().Add(-max(olderThan, 0)), limit)
	if err != nil {
		return nil, fmt.Errorf("find lost media starts: %w", err)
	}
	refs, err := collectWorkRefs(rows)
	if err != nil {
		return nil, fmt.Errorf("find lost media starts: %w", err)
	}
	return refs, nil
}
