package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/merchantsvc/svc/storage/theme"
)

// MaxThemeVersions is how many snapshots a store keeps (spec §8).
const MaxThemeVersions = 20

// ErrStaleDraft refuses a save whose If-Match is not the current tag.
var ErrStaleDraft = errors.New("draft changed since it was read")

// StaleDraftError is ErrStaleDraft with the current customization, which
// the refusal hands back so the editor can merge.
type StaleDraftError struct {
	Current Customization
}

func (e *StaleDraftError) Error() string { return ErrStaleDraft.Error() }

// Is makes a StaleDraftError match ErrStaleDraft.
func (e *StaleDraftError) Is(target error) bool { return target == ErrStaleDraft }

// ThemeValidationError lists every invalid place of a draft.
type ThemeValidationError struct {
	Errors []theme.ValidationError
}

func (e *ThemeValidationError) Error() string {
	return fmt.Sprintf("theme document has %d invalid places", len(e.Errors))
}

// Customization is a store's theme draft and published document.
type Customization struct {
	StoreID     uuid.UUID
	Draft       json.RawMessage
	ETag        string
	Published   json.RawMessage
	Revision    int64
	SavedAt     time.Time
	PublishedAt *time.Time
	// DraftThemeID and PublishedThemeID are the built-in themes
	// (theme.Builtins) the draft and the published document render with.
	DraftThemeID     string
	PublishedThemeID string
}

// ThemeVersion is a published snapshot.
type ThemeVersion struct {
	ID           uuid.UUID
	Name         string
	Document     json.RawMessage
	Source       string
	RestoredFrom *uuid.UUID
	CreatedAt    time.Time
	ThemeID      string // the built-in theme the document renders with
}

// contentRefs answers the theme validator's reference lookups from the
// store's rows.
type contentRefs struct {
	r       reader
	storeID uuid.UUID
}

// Missing reports which ids of a kind the store does not have.
func (c contentRefs) Missing(ctx context.Context, kind string, ids []string) (map[string]bool, error) {
	var query string
	switch kind {
	case theme.RefProduct:
		query = `SELECT id::text FROM products WHERE store_id = $1 AND id::text = ANY ($2)`
	case theme.RefVariant:
		query = `SELECT id::text FROM variants WHERE store_id = $1 AND id::text = ANY ($2)`
	case theme.RefCollection:
		query = `SELECT id::text FROM collections WHERE store_id = $1 AND id::text = ANY ($2)`
	case theme.RefMenu:
		query = `SELECT handle FROM menus WHERE store_id = $1 AND handle = ANY ($2)`
	case theme.RefImage:
		// A ready image of the store's media library, or a value the
		// store's documents held before image_picker named media (migration
		// 0058 recorded those, so old drafts and snapshots keep validating).
		query = `SELECT id::text FROM media WHERE store_id = $1 AND kind = 'image' AND status = 'ready' AND id::text = ANY ($2)
			UNION ALL SELECT value FROM theme_legacy_images WHERE store_id = $1 AND value = ANY ($2)`
	case theme.RefPage:
		query = `SELECT handle FROM pages WHERE store_id = $1 AND handle = ANY ($2)`
	case theme.RefBlog:
		query = `SELECT handle FROM blogs WHERE store_id = $1 AND handle = ANY ($2)`
	default:
		return nil, fmt.Errorf("unknown reference kind %q", kind)
	}
	rows, err := c.r.q.Query(ctx, query, c.storeID, ids)
	if err != nil {
		return nil, fmt.Errorf("find theme references: %w", err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("find theme references: %w", err)
	}
	missing := map[string]bool{}
	for _, id := range ids {
		missing[id] = true
	}
	for _, id := range found {
		missing[id] = false
	}
	return missing, nil
}

// ValidateThemeDocument checks a draft against the default theme and the
// store's references.
func (r reader) ValidateThemeDocument(ctx context.Context, storeID uuid.UUID, doc json.RawMessage) error {
	errs, err := theme.Default().Validate(ctx, doc, contentRefs{r: r, storeID: storeID})
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return &ThemeValidationError{Errors: errs}
	}
	return nil
}

const customizationColumns = `store_id, draft, draft_etag, published, revision, saved_at, published_at, draft_theme_id, published_theme_id`

func scanCustomization(row pgx.Row) (Customization, error) {
	var c Customization
	err := row.Scan(&c.StoreID, &c.Draft, &c.ETag, &c.Published, &c.Revision, &c.SavedAt, &c.PublishedAt, &c.DraftThemeID, &c.PublishedThemeID)
	return c, err
}

// FindCustomization reads a store's customization, creating it from the
// default theme on first use (the menus it names are the store's built-in
// ones, there from its signup).
func (db *DB) FindCustomization(ctx context.Context, storeID uuid.UUID) (Customization, error) {
	c, err := scanCustomization(db.pool.QueryRow(ctx, `SELECT `+customizationColumns+` FROM theme_customizations WHERE store_id = $1`, storeID))
	if !errors.Is(err, pgx.ErrNoRows) {
		if err != nil {
			return Customization{}, fmt.Errorf("find customization: %w", err)
		}
		return c, nil
	}
	err = db.InTx(ctx, func(tx *Tx) error {
		doc := theme.Default().DefaultDocument()
		_, tag, err := theme.Canonical(doc)
		if err != nil {
			return err
		}
		// A concurrent first read may have created it: that one stands.
		if _, err := tx.tx.Exec(ctx, `INSERT INTO theme_customizations (store_id, draft, draft_etag, saved_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (store_id) DO NOTHING`, storeID, doc, tag, tx.now()); err != nil {
			return fmt.Errorf("create customization: %w", err)
		}
		c, err = scanCustomization(tx.tx.QueryRow(ctx, `SELECT `+customizationColumns+` FROM theme_customizations WHERE store_id = $1`, storeID))
		return err
	})
	return c, err
}

// SaveDraft replaces the draft if its tag is still ifMatch: one statement
// compares and swaps, so of two concurrent saves with the same tag only one
// wins; the other gets ErrStaleDraft and the current customization (created
// then, for a store that never read it).
func (db *DB) SaveDraft(ctx context.Context, storeID uuid.UUID, ifMatch string, doc json.RawMessage) (Customization, error) {
	canonical, tag, err := theme.Canonical(doc)
	if err != nil {
		return Customization{}, &ThemeValidationError{Errors: []theme.ValidationError{{Code: "invalid_json", Message: "the document is not JSON"}}}
	}
	if err := db.ValidateThemeDocument(ctx, storeID, canonical); err != nil {
		return Customization{}, err
	}
	var c Customization
	err = db.InTx(ctx, func(tx *Tx) error {
		var err error
		c, err = scanCustomization(tx.tx.QueryRow(ctx, `UPDATE theme_customizations
			SET draft = $3, draft_etag = $4, revision = revision + 1, saved_at = $5
			WHERE store_id = $1 AND draft_etag = $2 RETURNING `+customizationColumns, storeID, ifMatch, canonical, tag, tx.now()))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		current, findErr := db.FindCustomization(ctx, storeID)
		if findErr != nil {
			return Customization{}, findErr
		}
		return current, &StaleDraftError{Current: current}
	}
	if err != nil {
		return Customization{}, fmt.Errorf("save draft: %w", err)
	}
	return c, nil
}

const themeVersionColumns = `id, name, document, source, restored_from, created_at, theme_id`

func scanThemeVersion(row pgx.Row) (ThemeVersion, error) {
	var v ThemeVersion
	err := row.Scan(&v.ID, &v.Name, &v.Document, &v.Source, &v.RestoredFrom, &v.CreatedAt, &v.ThemeID)
	return v, err
}

// snapshot adds a version on top and rotates the oldest beyond 20 out (the
// newest is never among them).
func (tx *Tx) snapshot(ctx context.Context, storeID uuid.UUID, name, source string, doc json.RawMessage, from *uuid.UUID, themeID string) (ThemeVersion, error) {
	v, err := scanThemeVersion(tx.tx.QueryRow(ctx, `INSERT INTO theme_versions (id, store_id, name, document, source, restored_from, created_at, theme_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+themeVersionColumns, NewID(), storeID, name, doc, source, from, tx.now(), themeID))
	if err != nil {
		return ThemeVersion{}, fmt.Errorf("snapshot theme: %w", err)
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM theme_versions WHERE store_id = $1 AND id NOT IN (
			SELECT id FROM theme_versions WHERE store_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2)`, storeID, MaxThemeVersions); err != nil {
		return ThemeVersion{}, fmt.Errorf("rotate theme versions: %w", err)
	}
	return v, nil
}

// PublishDraft makes the draft the published document and snapshots it, in
// one transaction; a new draft opens on top (the same document).
func (db *DB) PublishDraft(ctx context.Context, storeID uuid.UUID, name string) (ThemeVersion, error) {
	if _, err := db.FindCustomization(ctx, storeID); err != nil {
		return ThemeVersion{}, err
	}
	var v ThemeVersion
	err := db.InTx(ctx, func(tx *Tx) error {
		c, err := scanCustomization(tx.tx.QueryRow(ctx, `SELECT `+customizationColumns+` FROM theme_customizations WHERE store_id = $1 FOR UPDATE`, storeID))
		if err != nil {
			return fmt.Errorf("lock customization: %w", err)
		}
		if name == "" {
			name = "Published " + tx.now().UTC().Format("2006-01-02 15:04")
		}
		if v, err = tx.snapshot(ctx, storeID, name, "publish", c.Draft, nil, c.DraftThemeID); err != nil {
			return err
		}
		_, err = tx.tx.Exec(ctx, `UPDATE theme_customizations SET published = draft, published_theme_id = draft_theme_id, published_at = $2
			WHERE store_id = $1`, storeID, tx.now())
		return err
	})
	return v, err
}

// FindThemeVersions lists a store's snapshots, newest first.
func (r reader) FindThemeVersions(ctx context.Context, storeID uuid.UUID) ([]ThemeVersion, error) {
	rows, err := r.q.Query(ctx, `SELECT `+themeVersionColumns+` FROM theme_versions WHERE store_id = $1 ORDER BY created_at DESC, id DESC`, storeID)
	if err != nil {
		return nil, fmt.Errorf("find theme versions: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ThemeVersion, error) { return scanThemeVersion(row) })
}

// FindThemeVersion reads one snapshot of the store.
func (r reader) FindThemeVersion(ctx context.Context, storeID, id uuid.UUID) (ThemeVersion, error) {
	v, err := scanThemeVersion(r.q.QueryRow(ctx, `SELECT `+themeVersionColumns+` FROM theme_versions WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return ThemeVersion{}, notFoundIfNoRows(err, "find theme version")
	}
	return v, nil
}

// RestoreThemeVersion re-validates a snapshot against today's schemas and,
// when it still holds, puts it on top as a new version and makes it the
// draft.
func (db *DB) RestoreThemeVersion(ctx context.Context, storeID, id uuid.UUID) (ThemeVersion, Customization, error) {
	if _, err := db.FindCustomization(ctx, storeID); err != nil {
		return ThemeVersion{}, Customization{}, err
	}
	old, err := db.FindThemeVersion(ctx, storeID, id)
	if err != nil {
		return ThemeVersion{}, Customization{}, err
	}
	if err := db.ValidateThemeDocument(ctx, storeID, old.Document); err != nil {
		return ThemeVersion{}, Customization{}, err
	}
	_, tag, err := theme.Canonical(old.Document)
	if err != nil {
		return ThemeVersion{}, Customization{}, err
	}
	var (
		v ThemeVersion
		c Customization
	)
	err = db.InTx(ctx, func(tx *Tx) error {
		if v, err = tx.snapshot(ctx, storeID, "Restored: "+old.Name, "restore", old.Document, &old.ID, old.ThemeID); err != nil {
			return err
		}
		c, err = scanCustomization(tx.tx.QueryRow(ctx, `UPDATE theme_customizations SET draft = $2, draft_etag = $3, revision = revision + 1,
			saved_at = $4, draft_theme_id = $5 WHERE store_id = $1 RETURNING `+customizationColumns, storeID, old.Document, tag, tx.now(), old.ThemeID))
		return err
	})
	return v, c, err
}

// ErrUnknownTheme refuses a switch to a theme that is not built in.
var ErrUnknownTheme = errors.New("unknown theme")

// SwitchTheme puts a built-in theme's defaults in the draft (decisions
// §23): the old draft is saved on top of the versions first (source
// "switch"), so nothing the merchant made is lost; the published document
// stays until Publish.
func (db *DB) SwitchTheme(ctx context.Context, storeID uuid.UUID, themeID string) (Customization, ThemeVersion, error) {
	b, ok := theme.FindBuiltin(themeID)
	if !ok {
		return Customization{}, ThemeVersion{}, fmt.Errorf("switch theme %q: %w", themeID, ErrUnknownTheme)
	}
	if _, err := db.FindCustomization(ctx, storeID); err != nil {
		return Customization{}, ThemeVersion{}, err
	}
	doc, tag, err := theme.Canonical(b.DefaultDocument())
	if err != nil {
		return Customization{}, ThemeVersion{}, err
	}
	var (
		c Customization
		v ThemeVersion
	)
	err = db.InTx(ctx, func(tx *Tx) error {
		old, err := scanCustomization(tx.tx.QueryRow(ctx, `SELECT `+customizationColumns+` FROM theme_customizations WHERE store_id = $1 FOR UPDATE`, storeID))
		if err != nil {
			return fmt.Errorf("lock customization: %w", err)
		}
		name := "Before switching to " + b.Name.En
		if v, err = tx.snapshot(ctx, storeID, name, "switch", old.Draft, nil, old.DraftThemeID); err != nil {
			return err
		}
		c, err = scanCustomization(tx.tx.QueryRow(ctx, `UPDATE theme_customizations SET draft = $2, draft_etag = $3, revision = revision + 1,
			saved_at = $4, draft_theme_id = $5 WHERE store_id = $1 RETURNING `+customizationColumns, storeID, doc, tag, tx.now(), b.ID))
		return err
	})
	return c, v, err
}
