package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/merchantsvc/svc/storage/handle"
	"github.com/merchantsvc/svc/storage/theme"
)

// Navigation menus (decisions §22): a handle the theme's link_list_picker
// names, a bilingual title and a tree of at most MaxMenuItems items,
// MaxMenuDepth deep, replaced whole by every write.

// Bilingual is text in Arabic and English; at least one is set.
type Bilingual struct {
	AR string `json:"ar,omitempty"`
	EN string `json:"en,omitempty"`
}

// In answers the text in lang ("ar" or "en"), or the other language's when
// that one is empty.
func (b Bilingual) In(lang string) string {
	if lang == "en" && b.EN != "" || b.AR == "" {
		return b.EN
	}
	return b.AR
}

// Menu limits (decisions §22).
const (
	MaxMenuItems = 200
	MaxMenuDepth = 3
)

// The built-in menus every store has: the default theme names them, so they
// are never deleted (409 MENU_BUILT_IN) nor renamed.
var builtInMenus = []struct {
	handle string
	title  Bilingual
}{
	{"main-menu", Bilingual{AR: "القائمة الرئيسية", EN: "Main menu"}},
	{"footer", Bilingual{AR: "التذييل", EN: "Footer"}},
}

// IsBuiltInMenu tells a built-in menu's handle.
func IsBuiltInMenu(handle string) bool {
	for _, m := range builtInMenus {
		if m.handle == handle {
			return true
		}
	}
	return false
}

// Menu item types (decisions §22). The first three link to a fixed place,
// url to the item's URL, the rest to a resource of the store by id.
const (
	MenuItemHome       = "home"
	MenuItemCatalog    = "catalog"
	MenuItemSearch     = "search"
	MenuItemURL        = "url"
	MenuItemPage       = "page"
	MenuItemBlog       = "blog"
	MenuItemArticle    = "article"
	MenuItemCollection = "collection"
	MenuItemCategory   = "category"
	MenuItemProduct    = "product"
)

// MenuItemTypes lists every item type, in the order the docs give them.
var MenuItemTypes = []string{MenuItemHome, MenuItemCatalog, MenuItemSearch, MenuItemPage, MenuItemBlog, MenuItemArticle,
	MenuItemCollection, MenuItemCategory, MenuItemProduct, MenuItemURL}

// MenuItemTargetsResource tells the types whose item names a resource_id.
func MenuItemTargetsResource(itemType string) bool {
	switch itemType {
	case MenuItemPage, MenuItemBlog, MenuItemArticle, MenuItemCollection, MenuItemCategory, MenuItemProduct:
		return true
	}
	return false
}

// MenuItem is one link of a menu, with the items under it. It is stored as
// the menus row's items document, in this shape.
type MenuItem struct {
	ID         uuid.UUID  `json:"id"`
	Title      Bilingual  `json:"title"`
	Type       string     `json:"type"`
	ResourceID *uuid.UUID `json:"resource_id,omitempty"`
	URL        string     `json:"url,omitempty"`
	Items      []MenuItem `json:"items,omitempty"`
}

// Menu is a navigation menu.
type Menu struct {
	ID        uuid.UUID
	StoreID   uuid.UUID
	Handle    string
	Title     Bilingual
	Items     []MenuItem
	Revision  int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ETag is the menu's entity tag: a PATCH names it in If-Match.
func (m Menu) ETag() string { return fmt.Sprintf(`"%d"`, m.Revision) }

// MenuChange is what a PATCH sets; nil leaves a part as it is (items are
// replaced whole).
type MenuChange struct {
	Handle *string
	Title  *Bilingual
	Items  *[]MenuItem
}

// RemovedMenuItem is an item a delete of its target took out of a menu.
type RemovedMenuItem struct {
	MenuID uuid.UUID `json:"menu_id"`
	ItemID uuid.UUID `json:"item_id"`
}

// Refusals of menu writes.
var (
	// ErrDuplicateHandle: another menu (page, blog …) of the store has the handle.
	ErrDuplicateHandle = errors.New("duplicate handle")
	// ErrMenuBuiltIn: main-menu and footer are neither deleted nor renamed.
	ErrMenuBuiltIn = errors.New("built-in menu")
)

// StaleMenuError is a PATCH whose If-Match is not the menu's current tag.
type StaleMenuError struct{ Current Menu }

func (e *StaleMenuError) Error() string { return "menu changed since it was read" }

// ThemeUsesError refuses a delete or a rename of content the theme's draft
// or published document names: Code is CONTENT_IN_USE or
// HANDLE_IN_USE_BY_THEME, Pointers where the documents name it.
type ThemeUsesError struct {
	Code      string
	Pointers  []string
	Referrers []ContentReferrer
}

func (e *ThemeUsesError) Error() string { return fmt.Sprintf("%s at %v", e.Code, e.Pointers) }

const menuColumns = `id, store_id, handle, title, items, revision, created_at, updated_at`

func scanMenu(row pgx.Row) (Menu, error) {
	var m Menu
	err := row.Scan(&m.ID, &m.StoreID, &m.Handle, &m.Title, &m.Items, &m.Revision, &m.CreatedAt, &m.UpdatedAt)
	if m.Items == nil {
		m.Items = []MenuItem{}
	}
	return m, err
}

// createBuiltInMenus gives a new store its two built-in menus, empty.
func (tx *Tx) createBuiltInMenus(ctx context.Context, storeID uuid.UUID, now time.Time) error {
	for _, m := range builtInMenus {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO menus (id, store_id, handle, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (store_id, handle) DO NOTHING`, NewID(), storeID, m.handle, m.title, now); err != nil {
			return fmt.Errorf("create built-in menus: %w", err)
		}
	}
	return nil
}

// CreateMenu adds a menu; the handle is normalised by the caller. Every item
// naming a resource must name one of the store's (422 on its field).
func (tx *Tx) CreateMenu(ctx context.Context, storeID uuid.UUID, handle string, title Bilingual, items []MenuItem) (Menu, error) {
	items = withItemIDs(items)
	if err := tx.checkMenuTargets(ctx, storeID, items); err != nil {
		return Menu{}, err
	}
	now := tx.now()
	m, err := scanMenu(tx.tx.QueryRow(ctx, `INSERT INTO menus (id, store_id, handle, title, items, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING `+menuColumns, NewID(), storeID, handle, title, items, now))
	if isUniqueViolation(err, "menus_store_id_handle_key") {
		return Menu{}, fmt.Errorf("create menu %q: %w", handle, ErrDuplicateHandle)
	}
	if err != nil {
		return Menu{}, fmt.Errorf("create menu: %w", err)
	}
	return m, tx.writeMenuTargets(ctx, m)
}

// FindMenus lists a store's menus by handle.
func (r reader) FindMenus(ctx context.Context, storeID uuid.UUID, page Page) ([]Menu, int, error) {
	return r.FindMenusMatching(ctx, storeID, MenuFilter{Page: page})
}

// MenuFilter narrows a list of menus.
type MenuFilter struct {
	Page
	// Search keeps menus whose handle or title in either language holds
	// it, ignoring case; "" keeps every menu.
	Search string
}

// FindMenusMatching lists a store's menus that match f by handle.
func (r reader) FindMenusMatching(ctx context.Context, storeID uuid.UUID, f MenuFilter) ([]Menu, int, error) {
	return findPage(ctx, r, "menus", listQuery{columns: menuColumns,
		from: "FROM menus WHERE store_id = $1 AND " + contentSearchSQL(2, "title->>'ar'", "title->>'en'"),
		args: []any{storeID, contentSearchPattern(f.Search)}, orderBy: "handle, id"},
		f.Limit, int(f.Offset()), func(row pgx.CollectableRow) (Menu, error) { return scanMenu(row) })
}

// FindMenu reads one menu by id.
func (r reader) FindMenu(ctx context.Context, storeID, id uuid.UUID) (Menu, error) {
	m, err := scanMenu(r.q.QueryRow(ctx, `SELECT `+menuColumns+` FROM menus WHERE store_id = $1 AND id = $2`, storeID, id))
	if err != nil {
		return Menu{}, notFoundIfNoRows(err, "find menu "+id.String())
	}
	return m, nil
}

// FindMenuByHandle reads one menu by handle (the storefront's read).
func (r reader) FindMenuByHandle(ctx context.Context, storeID uuid.UUID, handle string) (Menu, error) {
	m, err := scanMenu(r.q.QueryRow(ctx, `SELECT `+menuColumns+` FROM menus WHERE store_id = $1 AND handle = $2`, storeID, handle))
	if err != nil {
		return Menu{}, notFoundIfNoRows(err, "find menu "+handle)
	}
	return m, nil
}

// UpdateMenu applies a change to the menu whose tag is still ifMatch: a menu
// changed since is *StaleMenuError with the current one. A built-in menu's
// handle does not change, and a handle the theme names is not renamed.
func (tx *Tx) UpdateMenu(ctx context.Context, storeID, id uuid.UUID, ifMatch string, change MenuChange) (before, after Menu, err error) {
	before, err = scanMenu(tx.tx.QueryRow(ctx, `SELECT `+menuColumns+` FROM menus WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Menu{}, Menu{}, notFoundIfNoRows(err, "update menu "+id.String())
	}
	if ifMatch != before.ETag() {
		return Menu{}, Menu{}, &StaleMenuError{Current: before}
	}
	after = before
	if change.Handle != nil && *change.Handle != before.Handle {
		if IsBuiltInMenu(before.Handle) {
			return Menu{}, Menu{}, fmt.Errorf("rename menu %s: %w", before.Handle, ErrMenuBuiltIn)
		}
		if err := tx.refuseThemeUses(ctx, storeID, theme.RefMenu, before.Handle, "HANDLE_IN_USE_BY_THEME"); err != nil {
			return Menu{}, Menu{}, err
		}
		after.Handle = *change.Handle
	}
	if change.Title != nil {
		after.Title = *change.Title
	}
	if change.Items != nil {
		after.Items = withItemIDs(*change.Items)
		if err := tx.checkMenuTargets(ctx, storeID, after.Items); err != nil {
			return Menu{}, Menu{}, err
		}
	}
	after, err = scanMenu(tx.tx.QueryRow(ctx, `UPDATE menus SET handle = $3, title = $4, items = $5, revision = revision + 1, updated_at = $6
		WHERE store_id = $1 AND id = $2 RETURNING `+menuColumns, storeID, id, after.Handle, after.Title, after.Items, tx.now()))
	if isUniqueViolation(err, "menus_store_id_handle_key") {
		return Menu{}, Menu{}, fmt.Errorf("rename menu to %q: %w", after.Handle, ErrDuplicateHandle)
	}
	if err != nil {
		return Menu{}, Menu{}, fmt.Errorf("update menu: %w", err)
	}
	return before, after, tx.writeMenuTargets(ctx, after)
}

// DeleteMenu removes a menu that is neither built in nor named by the theme.
func (tx *Tx) DeleteMenu(ctx context.Context, storeID, id uuid.UUID) (Menu, error) {
	m, err := scanMenu(tx.tx.QueryRow(ctx, `SELECT `+menuColumns+` FROM menus WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, id))
	if err != nil {
		return Menu{}, notFoundIfNoRows(err, "delete menu "+id.String())
	}
	if IsBuiltInMenu(m.Handle) {
		return Menu{}, fmt.Errorf("delete menu %s: %w", m.Handle, ErrMenuBuiltIn)
	}
	if err := tx.refuseThemeUses(ctx, storeID, theme.RefMenu, m.Handle, "CONTENT_IN_USE"); err != nil {
		return Menu{}, err
	}
	if _, err := tx.tx.Exec(ctx, `DELETE FROM menus WHERE store_id = $1 AND id = $2`, storeID, id); err != nil {
		return Menu{}, fmt.Errorf("delete menu: %w", err)
	}
	return m, nil
}

// themeDocuments reads the store's theme draft and published document
// under a share lock, so a draft save or a publish waits for the change that
// asked and then finds the content as it left it; found is false for a
// store that never opened its theme.
func (tx *Tx) themeDocuments(ctx context.Context, storeID uuid.UUID) (draft, published json.RawMessage, found bool, err error) {
	err = tx.tx.QueryRow(ctx, `SELECT draft, published FROM theme_customizations WHERE store_id = $1 FOR SHARE`, storeID).Scan(&draft, &published)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("read theme documents: %w", err)
	}
	if string(published) == "null" {
		published = nil
	}
	return draft, published, true, nil
}

// pointersTo lists where doc's pickers of kind name id (an id or a handle,
// as its pickers name it), each place once, in document order.
func pointersTo(doc json.RawMessage, kind, id string) []string {
	if len(doc) == 0 {
		return nil
	}
	var pointers []string
	for _, u := range theme.Default().Uses(doc, kind) {
		if u.ID == id && !slices.Contains(pointers, u.Pointer) {
			pointers = append(pointers, u.Pointer)
		}
	}
	return pointers
}

// refuseThemeUses answers *ThemeUsesError with code when the store's theme
// draft or published document names the content of kind by id.
func (tx *Tx) refuseThemeUses(ctx context.Context, storeID uuid.UUID, kind, id, code string) error {
	draft, published, found, err := tx.themeDocuments(ctx, storeID)
	if err != nil {
		return err
	}
	if !found {
		// A store that never opened its theme names what the default
		// document names.
		draft = theme.Default().DefaultDocument()
	}
	var refused ThemeUsesError
	for _, doc := range []struct {
		kind string
		doc  json.RawMessage
	}{{"theme_draft", draft}, {"theme_published", published}} {
		for _, pointer := range pointersTo(doc.doc, kind, id) {
			refused.Referrers = append(refused.Referrers, ContentReferrer{Kind: doc.kind, Pointer: pointer})
			if !slices.Contains(refused.Pointers, pointer) {
				refused.Pointers = append(refused.Pointers, pointer)
			}
		}
	}
	if len(refused.Pointers) > 0 {
		refused.Code = code
		return &refused
	}
	return nil
}

// withItemIDs gives every item without an id a new one; ids a client kept
// from an earlier read stay.
func withItemIDs(items []MenuItem) []MenuItem {
	out := make([]MenuItem, len(items))
	for i, it := range items {
		if it.ID == uuid.Nil {
			it.ID = NewID()
		}
		if !MenuItemTargetsResource(it.Type) {
			it.ResourceID = nil
		}
		if it.Type != MenuItemURL {
			it.URL = ""
		}
		it.Items = withItemIDs(it.Items)
		out[i] = it
	}
	return out
}

// menuTarget is an item that names a resource, with its field path in the
// request (items[0].items[2].resource_id).
type menuTarget struct {
	itemID     uuid.UUID
	kind       string
	resourceID uuid.UUID
	field      string
}

func menuTargets(items []MenuItem, prefix string, out []menuTarget) []menuTarget {
	for i, it := range items {
		path := fmt.Sprintf("%sitems[%d]", prefix, i)
		if it.ResourceID != nil && MenuItemTargetsResource(it.Type) {
			out = append(out, menuTarget{it.ID, it.Type, *it.ResourceID, path + ".resource_id"})
		}
		out = menuTargets(it.Items, path+".", out)
	}
	return out
}

// menuTargetQueries read, for the ids of a kind an item can target, each
// row's id, the handles of its storefront path and whether buyers see it.
// A category's path is its collection's (the same id), a draft or archived
// product, an unpublished collection and a page or article not yet
// published are not seen.
var menuTargetQueries = map[string]string{
	MenuItemProduct: `SELECT id, handle, '', status = 'active' FROM products WHERE store_id = $1 AND id = ANY ($2)`,
	MenuItemCategory: `SELECT c.id, COALESCE(col.handle, c.id::text), '', COALESCE(col.published, true)
		FROM categories c LEFT JOIN collections col ON col.store_id = c.store_id AND col.id = c.id WHERE c.store_id = $1 AND c.id = ANY ($2)`,
	MenuItemCollection: `SELECT id, handle, '', published FROM collections WHERE store_id = $1 AND id = ANY ($2)`,
	MenuItemPage:       `SELECT id, handle, '', published_at IS NOT NULL AND published_at <= now() FROM pages WHERE store_id = $1 AND id = ANY ($2)`,
	MenuItemBlog:       `SELECT id, handle, '', true FROM blogs WHERE store_id = $1 AND id = ANY ($2)`,
	MenuItemArticle: `SELECT a.id, b.handle, a.handle, a.published_at IS NOT NULL AND a.published_at <= now()
		FROM articles a JOIN blogs b ON b.store_id = a.store_id AND b.id = a.blog_id WHERE a.store_id = $1 AND a.id = ANY ($2)`,
}

// menuTargetRow is one target an item names, as menuTargetQueries read it.
type menuTargetRow struct {
	id             uuid.UUID
	handle, second string
	visible        bool
}

func scanMenuTarget(row pgx.CollectableRow) (menuTargetRow, error) {
	var t menuTargetRow
	err := row.Scan(&t.id, &t.handle, &t.second, &t.visible)
	return t, err
}

// menuTargetsByHandle is menuTargetQueries for every kind at once, for the
// store of subdomain $1, the ids read from menu_item_targets of its menu
// with handle $2: what the storefront resolves, in the same round trip as
// the store and the menu.
var menuTargetsByHandle = func() string {
	var parts []string
	for _, kind := range sortedKinds(menuTargetQueries) {
		ids := `ARRAY(SELECT t.resource_id FROM menu_item_targets t JOIN menus m ON m.store_id = t.store_id AND m.id = t.menu_id
			WHERE m.store_id = (SELECT id FROM store) AND m.handle = $2 AND t.kind = '` + kind + `')`
		query := strings.Replace(menuTargetQueries[kind], "ANY ($2)", "ANY ("+ids+")", 1)
		parts = append(parts, "("+strings.ReplaceAll(query, "$1", "(SELECT id FROM store)")+")")
	}
	return `WITH store AS (SELECT id FROM stores WHERE subdomain = $1) ` + strings.Join(parts, "\nUNION ALL\n")
}()

// findMenuTargets reads the targets the items name, by id.
func (r reader) findMenuTargets(ctx context.Context, storeID uuid.UUID, items []MenuItem) (map[uuid.UUID]menuTargetRow, error) {
	byKind := map[string][]uuid.UUID{}
	for _, t := range menuTargets(items, "", nil) {
		byKind[t.kind] = append(byKind[t.kind], t.resourceID)
	}
	found := map[uuid.UUID]menuTargetRow{}
	for _, kind := range sortedKinds(byKind) {
		rows, err := r.q.Query(ctx, menuTargetQueries[kind], storeID, byKind[kind])
		if err != nil {
			return nil, fmt.Errorf("find menu targets: %w", err)
		}
		targets, err := pgx.CollectRows(rows, scanMenuTarget)
		if err != nil {
			return nil, fmt.Errorf("find menu targets: %w", err)
		}
		for _, t := range targets {
			found[t.id] = t
		}
	}
	return found, nil
}

// checkMenuTargets refuses (422 not_found on the item's resource_id) an
// item naming what the store does not have.
func (tx *Tx) checkMenuTargets(ctx context.Context, storeID uuid.UUID, items []MenuItem) error {
	found, err := tx.findMenuTargets(ctx, storeID, items)
	if err != nil {
		return err
	}
	for _, t := range menuTargets(items, "", nil) {
		if _, ok := found[t.resourceID]; !ok {
			return &InvalidError{Field: t.field, Code: "not_found", Message: fmt.Sprintf("no %s %s in this store", t.kind, t.resourceID)}
		}
	}
	return nil
}

func sortedKinds[V any](m map[string]V) []string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// writeMenuTargets replaces the menu's rows in menu_item_targets.
func (tx *Tx) writeMenuTargets(ctx context.Context, m Menu) error {
	if _, err := tx.tx.Exec(ctx, `DELETE FROM menu_item_targets WHERE store_id = $1 AND menu_id = $2`, m.StoreID, m.ID); err != nil {
		return fmt.Errorf("write menu targets: %w", err)
	}
	targets := menuTargets(m.Items, "", nil)
	if len(targets) == 0 {
		return nil
	}
	items, kinds, resources := make([]uuid.UUID, len(targets)), make([]string, len(targets)), make([]uuid.UUID, len(targets))
	for i, t := range targets {
		items[i], kinds[i], resources[i] = t.itemID, t.kind, t.resourceID
	}
	if _, err := tx.tx.Exec(ctx, `INSERT INTO menu_item_targets (store_id, menu_id, item_id, kind, resource_id)
		SELECT $1, $2, item, kind, resource FROM unnest($3::uuid[], $4::text[], $5::uuid[]) AS t (item, kind, resource)
		ON CONFLICT DO NOTHING`, m.StoreID, m.ID, items, kinds, resources); err != nil {
		return fmt.Errorf("write menu targets: %w", err)
	}
	return nil
}

// RemoveMenuItemsOfBlog takes out of the store's menus the items naming a
// blog or one of its articles, before the blog's delete takes its articles.
func (tx *Tx) RemoveMenuItemsOfBlog(ctx context.Context, storeID, blogID uuid.UUID) ([]RemovedMenuItem, error) {
	rows, err := tx.tx.Query(ctx, `SELECT id FROM articles WHERE store_id = $1 AND blog_id = $2`, storeID, blogID)
	if err != nil {
		return nil, fmt.Errorf("find the blog's articles: %w", err)
	}
	articles, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("find the blog's articles: %w", err)
	}
	removed, err := tx.RemoveMenuItemsTargeting(ctx, storeID, MenuItemBlog, blogID)
	if err != nil || len(articles) == 0 {
		return removed, err
	}
	more, err := tx.RemoveMenuItemsTargeting(ctx, storeID, MenuItemArticle, articles...)
	return append(removed, more...), err
}

// RemoveMenuItemsTargeting takes every item naming one of ids (resources of
// kind) out of the store's menus, in the delete's transaction; the items
// under a removed one move up into its place. It answers what it removed.
func (tx *Tx) RemoveMenuItemsTargeting(ctx context.Context, storeID uuid.UUID, kind string, ids ...uuid.UUID) ([]RemovedMenuItem, error) {
	rows, err := tx.tx.Query(ctx, `SELECT DISTINCT menu_id FROM menu_item_targets WHERE store_id = $1 AND kind = $2 AND resource_id = ANY ($3)
		ORDER BY menu_id`, storeID, kind, ids)
	if err != nil {
		return nil, fmt.Errorf("find menu items targeting %s: %w", kind, err)
	}
	menuIDs, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("find menu items targeting %s: %w", kind, err)
	}
	var removed []RemovedMenuItem
	for _, menuID := range menuIDs {
		m, err := scanMenu(tx.tx.QueryRow(ctx, `SELECT `+menuColumns+` FROM menus WHERE store_id = $1 AND id = $2 FOR UPDATE`, storeID, menuID))
		if err != nil {
			return nil, fmt.Errorf("lock menu %s: %w", menuID, err)
		}
		var gone []uuid.UUID
		m.Items = pruneItems(m.Items, func(it MenuItem) bool {
			if it.Type == kind && it.ResourceID != nil && slices.Contains(ids, *it.ResourceID) {
				gone = append(gone, it.ID)
				return true
			}
			return false
		})
		if len(gone) == 0 {
			continue
		}
		m, err = scanMenu(tx.tx.QueryRow(ctx, `UPDATE menus SET items = $3, revision = revision + 1, updated_at = $4
			WHERE store_id = $1 AND id = $2 RETURNING `+menuColumns, storeID, menuID, m.Items, tx.now()))
		if err != nil {
			return nil, fmt.Errorf("remove menu items: %w", err)
		}
		if err := tx.writeMenuTargets(ctx, m); err != nil {
			return nil, err
		}
		for _, id := range gone {
			removed = append(removed, RemovedMenuItem{MenuID: menuID, ItemID: id})
		}
	}
	return removed, nil
}

// pruneItems drops the items drop says to, lifting their children into
// their place.
func pruneItems(items []MenuItem, drop func(MenuItem) bool) []MenuItem {
	out := make([]MenuItem, 0, len(items))
	for _, it := range items {
		it.Items = pruneItems(it.Items, drop)
		if drop(it) {
			out = append(out, it.Items...)
			continue
		}
		out = append(out, it)
	}
	return out
}

// ResolvedMenuItem is a menu item as a buyer follows it: its URL relative
// to the storefront (or the item's own URL).
type ResolvedMenuItem struct {
	Item  MenuItem
	URL   string
	Items []ResolvedMenuItem
}

// FindStorefrontMenu reads, for the storefront of subdomain, the store and
// its menu by handle with the items' storefront URLs, leaving out those
// whose target buyers do not see (their children move up): one round trip,
// the store, the menu and every target its items name (found through
// menu_item_targets) going to Postgres in one batch. The menu's items come
// only when its revision is not the one this process keeps decoded (every
// change of a menu's items moves its revision), so a busy storefront reads
// and decodes a menu once per change. An unknown store or menu is
// ErrNotFound; the caller decides what a suspended store shows.
func (db *DB) FindStorefrontMenu(ctx context.Context, subdomain, h string) (Store, Menu, []ResolvedMenuItem, error) {
	var (
		store             Store
		m                 Menu
		items             []byte
		storeErr, menuErr error
		found             = map[uuid.UUID]menuTargetRow{}
	)
	key := subdomain + "\x00" + h
	known := db.menus.get(key)
	batch := &pgx.Batch{}
	batch.Queue(`SELECT `+storeColumns+` FROM stores WHERE subdomain = $1`, subdomain).QueryRow(func(row pgx.Row) error {
		store, storeErr = scanStore(row)
		return nil
	})
	batch.Queue(`SELECT id, store_id, handle, title, CASE WHEN id = $3 AND revision = $4 THEN NULL ELSE items END, revision, created_at, updated_at
		FROM menus WHERE store_id = (SELECT id FROM stores WHERE subdomain = $1) AND handle = $2`,
		subdomain, h, known.id, known.revision).QueryRow(func(row pgx.Row) error {
		menuErr = row.Scan(&m.ID, &m.StoreID, &m.Handle, &m.Title, &items, &m.Revision, &m.CreatedAt, &m.UpdatedAt)
		return nil
	})
	batch.Queue(menuTargetsByHandle, subdomain, h).Query(func(rows pgx.Rows) error {
		targets, err := pgx.CollectRows(rows, scanMenuTarget)
		for _, t := range targets {
			found[t.id] = t
		}
		return err
	})
	if err := db.q.SendBatch(ctx, batch).Close(); err != nil {
		return Store{}, Menu{}, nil, fmt.Errorf("find storefront menu %s: %w", h, err)
	}
	if storeErr != nil {
		return Store{}, Menu{}, nil, notFoundIfNoRows(storeErr, "find store by subdomain")
	}
	if menuErr != nil {
		return Store{}, Menu{}, nil, notFoundIfNoRows(menuErr, "find menu "+h)
	}
	if items == nil && known.id == m.ID && known.revision == m.Revision {
		m.Items = known.items
	} else {
		if err := json.Unmarshal(items, &m.Items); err != nil {
			return Store{}, Menu{}, nil, fmt.Errorf("decode menu %s: %w", h, err)
		}
		db.menus.put(key, cachedMenuItems{id: m.ID, revision: m.Revision, items: m.Items})
	}
	if m.Items == nil {
		m.Items = []MenuItem{}
	}
	return store, m, resolvedMenu(m, found), nil
}

// menuItemsCache keeps, per storefront menu (subdomain and handle), its
// items decoded at one revision. Entries are read-only once stored.
type menuItemsCache struct {
	mu    sync.Mutex
	menus map[string]cachedMenuItems
}

type cachedMenuItems struct {
	id       uuid.UUID
	revision int64
	items    []MenuItem
}

// menuItemsCacheSize bounds the cache: past it, it starts afresh.
const menuItemsCacheSize = 4096

func newMenuItemsCache() *menuItemsCache {
	return &menuItemsCache{menus: map[string]cachedMenuItems{}}
}

func (c *menuItemsCache) get(key string) cachedMenuItems {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.menus[key]
}

func (c *menuItemsCache) put(key string, m cachedMenuItems) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.menus) >= menuItemsCacheSize {
		c.menus = map[string]cachedMenuItems{}
	}
	c.menus[key] = m
}

// resolvedMenu gives each item naming a target the buyer sees its path;
// an item whose target is gone or hidden is left out, its children moving
// up in its place.
func resolvedMenu(m Menu, found map[uuid.UUID]menuTargetRow) []ResolvedMenuItem {
	paths := map[uuid.UUID]string{}
	for _, t := range menuTargets(m.Items, "", nil) {
		if row, ok := found[t.resourceID]; ok && row.visible {
			paths[t.resourceID] = menuTargetPath(t.kind, row.handle, row.second)
		}
	}
	return resolveItems(m.Items, paths)
}

// menuTargetPath is where a resource lives on the storefront, its handles
// percent-encoded (an article's path names its blog's handle, then its own).
func menuTargetPath(kind, key, second string) string {
	switch kind {
	case MenuItemProduct:
		return "/products/" + handle.Path(key)
	case MenuItemCategory, MenuItemCollection:
		return "/collections/" + handle.Path(key)
	case MenuItemPage:
		return "/pages/" + handle.Path(key)
	case MenuItemBlog:
		return "/blogs/" + handle.Path(key)
	case MenuItemArticle:
		return "/blogs/" + handle.Path(key) + "/articles/" + handle.Path(second)
	}
	return "/" + handle.Path(key)
}

func resolveItems(items []MenuItem, paths map[uuid.UUID]string) []ResolvedMenuItem {
	out := make([]ResolvedMenuItem, 0, len(items))
	for _, it := range items {
		children := resolveItems(it.Items, paths)
		var url string
		switch it.Type {
		case MenuItemHome:
			url = "/"
		case MenuItemCatalog:
			url = "/collections/all"
		case MenuItemSearch:
			url = "/search"
		case MenuItemURL:
			url = it.URL
		default:
			if it.ResourceID != nil {
				url = paths[*it.ResourceID]
			}
		}
		if url == "" {
			out = append(out, children...)
			continue
		}
		out = append(out, ResolvedMenuItem{Item: it, URL: url, Items: children})
	}
	return out
}
