package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
)

// Navigation menus and redirects (decisions §22), scopes themes:read and
// themes:write, and the storefront's read of a menu.

var (
	errMenuBuiltIn = newError(http.StatusConflict, "MENU_BUILT_IN",
		"main-menu and footer are built in: they are neither deleted nor renamed; empty their items instead",
		"القائمتان main-menu وfooter مدمجتان: لا تُحذفان ولا يُغيَّر معرّفهما؛ أفرغ عناصرهما بدلًا من ذلك")
	errDuplicateRedirect = newError(http.StatusConflict, "DUPLICATE_REDIRECT",
		"This path is already redirected; delete that redirect first", "هذا المسار مُعاد توجيهه مسبقًا؛ احذف إعادة التوجيه تلك أولًا")
	errMenuPreconditionRequired = newError(http.StatusPreconditionRequired, "PRECONDITION_REQUIRED",
		"Send If-Match with the menu's current ETag: items are replaced whole", "أرسل الترويسة If-Match بقيمة ETag الحالية للقائمة: تُستبدل العناصر كلها")
)

// menuErrors answers the refusals of menus and redirects, and the theme's
// uses of any content (storage.ThemeUsesError).
func menuErrors(err error) *apiError {
	var uses *storage.ThemeUsesError
	switch {
	case errors.As(err, &uses):
		e := &apiError{Status: http.StatusConflict, Code: uses.Code, Details: map[string]any{"pointers": uses.Pointers,
			"referrers": contentReferrers(uses.Referrers)}}
		if uses.Code == "HANDLE_IN_USE_BY_THEME" {
			e.Message = "The theme names this handle; change the theme first (error.details.pointers says where)"
			e.MessageAr = "يشير القالب إلى هذا المعرّف النصي؛ عدّل القالب أولًا (error.details.pointers يبيّن المواضع)"
		} else {
			e.Message = "The theme uses this; take it out of the theme first (error.details.pointers says where)"
			e.MessageAr = "يستخدم القالب هذا العنصر؛ أزله من القالب أولًا (error.details.pointers يبيّن المواضع)"
		}
		return e
	case errors.Is(err, storage.ErrMenuBuiltIn):
		return errMenuBuiltIn
	case errors.Is(err, storage.ErrDuplicateRedirect):
		return errDuplicateRedirect
	}
	return nil
}

// bilingualResponse is {ar, en} text with text, the one in the reader's
// language.
type bilingualResponse struct {
	AR   *string `json:"ar"`
	EN   *string `json:"en"`
	Text string  `json:"text"`
}

func newBilingual(b storage.Bilingual, lang string) bilingualResponse {
	out := bilingualResponse{Text: b.In(lang)}
	if b.AR != "" {
		out.AR = &b.AR
	}
	if b.EN != "" {
		out.EN = &b.EN
	}
	return out
}

// textLanguage is the language of a read's `text` (decisions part three):
// the request's Accept-Language when it names Arabic or English, else the
// store's language.
func (s *Server) textLanguage(r *http.Request, storeID uuid.UUID) string {
	if lang := acceptedLanguage(r.Header.Get("Accept-Language")); lang != "" {
		return lang
	}
	store, err := s.db.FindStoreByID(r.Context(), storeID)
	if err != nil || store.DefaultLanguage == "" {
		return "ar"
	}
	return store.DefaultLanguage
}

type menuItemResponse struct {
	ID         uuid.UUID          `json:"id"`
	Title      bilingualResponse  `json:"title"`
	Type       string             `json:"type"`
	ResourceID *uuid.UUID         `json:"resource_id"`
	URL        *string            `json:"url"`
	Items      []menuItemResponse `json:"items"`
}

func newMenuItems(items []storage.MenuItem, lang string) []menuItemResponse {
	out := make([]menuItemResponse, 0, len(items))
	for _, it := range items {
		item := menuItemResponse{ID: it.ID, Title: newBilingual(it.Title, lang), Type: it.Type, ResourceID: it.ResourceID,
			Items: newMenuItems(it.Items, lang)}
		if it.Type == storage.MenuItemURL {
			item.URL = &it.URL
		}
		out = append(out, item)
	}
	return out
}

type menuResponse struct {
	ID        uuid.UUID          `json:"id"`
	Handle    string             `json:"handle"`
	Title     bilingualResponse  `json:"title"`
	BuiltIn   bool               `json:"built_in"`
	Items     []menuItemResponse `json:"items"`
	ItemCount int                `json:"item_count"`
	CreatedAt time.Time          `json:"created_at"`
	UpdatedAt time.Time          `json:"updated_at"`
}

func countItems(items []storage.MenuItem) int {
	n := len(items)
	for _, it := range items {
		n += countItems(it.Items)
	}
	return n
}

func newMenuResponse(m storage.Menu, lang string) menuResponse {
	return menuResponse{ID: m.ID, Handle: m.Handle, Title: newBilingual(m.Title, lang), BuiltIn: storage.IsBuiltInMenu(m.Handle),
		Items: newMenuItems(m.Items, lang), ItemCount: countItems(m.Items), CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()}
}

// menuView answers a menu with its ETag header, for a write's answer.
func (s *Server) menuView(w http.ResponseWriter, r *http.Request) func(storage.Menu) menuResponse {
	lang := s.textLanguage(r, storeIDFrom(r.Context()))
	return func(m storage.Menu) menuResponse {
		w.Header().Set("ETag", m.ETag())
		return newMenuResponse(m, lang)
	}
}

// handleCreateMenu serves POST /stores/{store_id}/menus.
func (s *Server) handleCreateMenu() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.Menu](r)
		if err != nil {
			return err
		}
		title := req.Title.Stored()
		h := request.HandleOrTitle(req.Handle, title, "menu")
		return writeView(s, w, r, http.StatusCreated, s.menuView(w, r), func(tx *storage.Tx) (storage.Menu, error) {
			return tx.CreateMenu(r.Context(), storeIDFrom(r.Context()), h, title, request.MenuItems(req.Items))
		})
	}
}

// handleListMenus serves GET /stores/{store_id}/menus.
func (s *Server) handleListMenus() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		search := contentSearch(q)
		if err := q.err(); err != nil {
			return err
		}
		storeID := storeIDFrom(r.Context())
		menus, total, err := s.db.FindMenusMatching(r.Context(), storeID, storage.MenuFilter{Page: storage.Page{Page: page, Limit: limit}, Search: search})
		if err != nil {
			return err
		}
		lang := s.textLanguage(r, storeID)
		items := make([]menuResponse, 0, len(menus))
		for _, m := range menus {
			items = append(items, newMenuResponse(m, lang))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleGetMenu serves GET /stores/{store_id}/menus/{menu_id}, with the
// ETag a PATCH names in If-Match.
func (s *Server) handleGetMenu() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "menu_id")
		if err != nil {
			return err
		}
		m, err := s.db.FindMenu(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, s.menuView(w, r)(m))
		return nil
	}
}

// handleUpdateMenu serves PATCH /stores/{store_id}/menus/{menu_id}: If-Match
// must be the menu's ETag (428 without, 412 with the current menu when it
// changed since), items are replaced whole.
func (s *Server) handleUpdateMenu() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "menu_id")
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.UpdateMenu](r)
		if err != nil {
			return err
		}
		ifMatch := strings.TrimSpace(r.Header.Get("If-Match"))
		if ifMatch == "" {
			return errMenuPreconditionRequired
		}
		var change storage.MenuChange
		if req.Handle.Set {
			h, _ := handle.Normalize(req.Handle.Value)
			change.Handle = &h
		}
		if req.Title.Set {
			change.Title = new(req.Title.Value.Stored())
		}
		if req.Items.Set {
			change.Items = new(request.MenuItems(req.Items.Value))
		}
		storeID := storeIDFrom(r.Context())
		view := s.menuView(w, r)
		err = writeView(s, w, r, http.StatusOK, view, func(tx *storage.Tx) (storage.Menu, error) {
			before, after, err := tx.UpdateMenu(r.Context(), storeID, id, ifMatch, change)
			if err == nil {
				auditBefore(r.Context(), view(before))
			}
			return after, err
		})
		var stale *storage.StaleMenuError
		if errors.As(err, &stale) {
			return &apiError{Status: http.StatusPreconditionFailed, Code: "PRECONDITION_FAILED",
				Message:   "The menu changed since you read it; here is the current one",
				MessageAr: "تغيّرت القائمة منذ قراءتها؛ هذه هي النسخة الحالية",
				Header:    http.Header{"Etag": {stale.Current.ETag()}},
				Current:   newMenuResponse(stale.Current, s.textLanguage(r, storeID))}
		}
		return err
	}
}

// handleDeleteMenu serves DELETE /stores/{store_id}/menus/{menu_id}.
func (s *Server) handleDeleteMenu() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "menu_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			m, err := tx.DeleteMenu(r.Context(), storeIDFrom(r.Context()), id)
			if err == nil {
				auditBefore(r.Context(), newMenuResponse(m, "en"))
			}
			return nil, err
		})
	}
}

type redirectResponse struct {
	ID        uuid.UUID `json:"id"`
	FromPath  string    `json:"from_path"`
	To        string    `json:"to"`
	CreatedAt time.Time `json:"created_at"`
}

func newRedirectResponse(rd storage.Redirect) redirectResponse {
	return redirectResponse{ID: rd.ID, FromPath: rd.FromPath, To: rd.To, CreatedAt: rd.CreatedAt.UTC()}
}

// handleCreateRedirect serves POST /stores/{store_id}/redirects.
func (s *Server) handleCreateRedirect() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		req, err := wire.Decode[request.Redirect](r)
		if err != nil {
			return err
		}
		return writeView(s, w, r, http.StatusCreated, newRedirectResponse, func(tx *storage.Tx) (storage.Redirect, error) {
			return tx.CreateRedirect(r.Context(), storeIDFrom(r.Context()), req.FromPath, req.To)
		})
	}
}

// handleListRedirects serves GET /stores/{store_id}/redirects (?path, ?target).
func (s *Server) handleListRedirects() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQueryParser(r)
		page, limit := q.page(20)
		f := storage.RedirectFilter{Page: storage.Page{Page: page, Limit: limit}, Path: q.str("path"), Target: q.str("target")}
		if err := q.err(); err != nil {
			return err
		}
		list, total, err := s.db.FindRedirects(r.Context(), storeIDFrom(r.Context()), f)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newList(views(list, newRedirectResponse), page, limit, total))
		return nil
	}
}

// handleGetRedirect serves GET /stores/{store_id}/redirects/{redirect_id}.
func (s *Server) handleGetRedirect() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "redirect_id")
		if err != nil {
			return err
		}
		rd, err := s.db.FindRedirect(r.Context(), storeIDFrom(r.Context()), id)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newRedirectResponse(rd))
		return nil
	}
}

// handleDeleteRedirect serves DELETE /stores/{store_id}/redirects/{redirect_id}.
func (s *Server) handleDeleteRedirect() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathUUID(r, "redirect_id")
		if err != nil {
			return err
		}
		return s.writeTx(w, r, http.StatusNoContent, func(tx *storage.Tx) (any, error) {
			rd, err := tx.DeleteRedirect(r.Context(), storeIDFrom(r.Context()), id)
			if err == nil {
				auditBefore(r.Context(), newRedirectResponse(rd))
			}
			return nil, err
		})
	}
}

type storefrontMenuItem struct {
	ID    uuid.UUID            `json:"id"`
	Title bilingualResponse    `json:"title"`
	Type  string               `json:"type"`
	URL   string               `json:"url"`
	Items []storefrontMenuItem `json:"items"`
}

type storefrontMenu struct {
	Handle string               `json:"handle"`
	Title  bilingualResponse    `json:"title"`
	Items  []storefrontMenuItem `json:"items"`
}

func newStorefrontMenuItems(items []storage.ResolvedMenuItem, lang string) []storefrontMenuItem {
	out := make([]storefrontMenuItem, 0, len(items))
	for _, it := range items {
		out = append(out, storefrontMenuItem{ID: it.Item.ID, Title: newBilingual(it.Item.Title, lang), Type: it.Item.Type, URL: it.URL,
			Items: newStorefrontMenuItems(it.Items, lang)})
	}
	return out
}

// handleStorefrontMenu serves GET /storefront/{subdomain}/menus/{handle}: the
// items with their URLs on the storefront, those whose target is gone or
// not published left out.
func (s *Server) handleStorefrontMenu() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		h, err := handle.Normalize(chi.URLParam(r, "handle"))
		if err != nil {
			return errNotFound
		}
		// One round trip: the store, the menu and its targets.
		store, m, resolved, err := s.db.FindStorefrontMenu(r.Context(), chi.URLParam(r, "subdomain"), h)
		if err != nil {
			return err
		}
		if !storefrontOpen(store) {
			return errNotFound
		}
		lang := acceptedLanguage(r.Header.Get("Accept-Language"))
		if lang == "" {
			lang = store.DefaultLanguage
		}
		respond(w, http.StatusOK, storefrontMenu{Handle: m.Handle, Title: newBilingual(m.Title, lang), Items: newStorefrontMenuItems(resolved, lang)})
		return nil
	}
}

// menuRemovals is what a content delete took out of menus.
type menuRemovals struct {
	RemovedMenuItems []storage.RemovedMenuItem `json:"removed_menu_items"`
}

// deleteAnswer is the answer of a delete of content menus can name
// (decisions §22): 204, or 200 {removed_menu_items} when the delete took
// items out of menus, which its audit entry lists too.
func deleteAnswer(ctx context.Context, removed []storage.RemovedMenuItem) any {
	if len(removed) == 0 {
		return nil
	}
	auditNote(ctx, "removed_menu_items", removed)
	return withStatus{status: http.StatusOK, body: ok(menuRemovals{RemovedMenuItems: removed})}
}

// removeMenuItems takes the menu items naming a deleted resource out of the
// store's menus in the delete's transaction, and lists them in its audit
// entry as removed_menu_items.
func (s *Server) removeMenuItems(ctx context.Context, tx *storage.Tx, storeID uuid.UUID, kind string, id uuid.UUID) error {
	removed, err := tx.RemoveMenuItemsTargeting(ctx, storeID, kind, id)
	if err == nil && len(removed) > 0 {
		auditNote(ctx, "removed_menu_items", removed)
	}
	return err
}
