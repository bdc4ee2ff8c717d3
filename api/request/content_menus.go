package request

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
)

// TitleText is a short text in Arabic and English as a body sends it (a
// menu's or an item's title); text is what a read adds in the reader's
// language, taken back and ignored, so a client can send what it read.
type TitleText struct {
	AR   *string `json:"ar"`
	EN   *string `json:"en"`
	Text *string `json:"text"`
}

// Stored is the text as storage keeps it, trimmed.
func (b TitleText) Stored() storage.Bilingual {
	var out storage.Bilingual
	if b.AR != nil {
		out.AR = strings.TrimSpace(*b.AR)
	}
	if b.EN != nil {
		out.EN = strings.TrimSpace(*b.EN)
	}
	return out
}

// Bilingual checks {ar, en}: one at least, each at most maxLen characters.
func (c *Checker) Bilingual(field string, b TitleText, maxLen int) {
	t := b.Stored()
	if t.AR == "" && t.EN == "" {
		c.Add(field, "required", "needs ar or en (or both)")
		return
	}
	if t.AR != "" {
		c.Text(field+".ar", t.AR, 1, maxLen)
	}
	if t.EN != "" {
		c.Text(field+".en", t.EN, 1, maxLen)
	}
}

// Handle checks a handle a merchant typed (storage/handle's rule).
func (c *Checker) Handle(field, typed string) {
	if _, err := handle.Normalize(typed); err != nil {
		switch err {
		case handle.ErrBlank:
			c.Add(field, "required", "is blank once normalised")
		case handle.ErrTooLong:
			c.Add(field, "too_long", fmt.Sprintf("must be at most %d characters", handle.MaxLength))
		default:
			c.Add(field, "invalid", "may hold letters, digits, '-' and '_' only")
		}
	}
}

// HandleOrTitle is the handle a create stores: the one sent, normalised, or
// one derived from the title (fallback when the title has nothing usable).
func HandleOrTitle(typed *string, title storage.Bilingual, fallback string) string {
	if typed != nil {
		h, _ := handle.Normalize(*typed)
		return h
	}
	for _, t := range []string{title.EN, title.AR} {
		if h := handle.FromTitle(t); h != "" {
			return h
		}
	}
	return fallback
}

// MenuItem is one item of a menu body, with the items under it.
type MenuItem struct {
	ID         *string    `json:"id"`
	Title      TitleText  `json:"title"`
	Type       string     `json:"type"`
	ResourceID *string    `json:"resource_id"`
	URL        *string    `json:"url"`
	Items      []MenuItem `json:"items"`
}

// Menu is the JSON body handleCreateMenu reads (api/content_menus.go).
type Menu struct {
	Handle *string    `json:"handle"`
	Title  TitleText  `json:"title"`
	Items  []MenuItem `json:"items"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Menu) Valid() []wire.FieldError {
	var c Checker
	if req.Handle != nil {
		c.Handle("handle", *req.Handle)
	}
	c.Bilingual("title", req.Title, 255)
	checkMenuItems(&c, req.Items)
	return c.Result()
}

// UpdateMenu is the JSON body handleUpdateMenu reads: what it sends is
// replaced (items whole).
type UpdateMenu struct {
	Handle wire.Optional[string]     `json:"handle"`
	Title  wire.Optional[TitleText]  `json:"title"`
	Items  wire.Optional[[]MenuItem] `json:"items"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req UpdateMenu) Valid() []wire.FieldError {
	var c Checker
	if notNull(&c, "handle", req.Handle) {
		c.Handle("handle", req.Handle.Value)
	}
	if notNull(&c, "title", req.Title) {
		c.Bilingual("title", req.Title.Value, 255)
	}
	if notNull(&c, "items", req.Items) {
		checkMenuItems(&c, req.Items.Value)
	}
	return c.Result()
}

// checkMenuItems checks a menu's tree: at most storage.MaxMenuItems items
// in all, storage.MaxMenuDepth levels, each item's type and its target.
func checkMenuItems(c *Checker, items []MenuItem) {
	seen := map[uuid.UUID]bool{}
	if n := countMenuItems(items); n > storage.MaxMenuItems {
		c.Add("items", "too_many", fmt.Sprintf("a menu holds at most %d items in all, this one %d", storage.MaxMenuItems, n))
	}
	checkMenuLevel(c, items, "", 1, seen)
}

func countMenuItems(items []MenuItem) int {
	n := len(items)
	for _, it := range items {
		n += countMenuItems(it.Items)
	}
	return n
}

func checkMenuLevel(c *Checker, items []MenuItem, prefix string, depth int, seen map[uuid.UUID]bool) {
	for i, it := range items {
		field := fmt.Sprintf("%sitems[%d]", prefix, i)
		if it.ID != nil {
			if id, err := ParseUUID(*it.ID); err != nil {
				c.Add(field+".id", "invalid_uuid", "must be a uuid (or left out for a new item)")
			} else if seen[id] {
				c.Add(field+".id", "duplicate", "another item of the menu has this id")
			} else {
				seen[id] = true
			}
		}
		c.Bilingual(field+".title", it.Title, 255)
		c.OneOf(field+".type", it.Type, storage.MenuItemTypes)
		switch {
		case storage.MenuItemTargetsResource(it.Type):
			if it.ResourceID == nil {
				c.Add(field+".resource_id", "required", "names the "+it.Type+" the item links to")
			} else {
				c.UUID(field+".resource_id", *it.ResourceID)
			}
		case it.ResourceID != nil:
			c.Add(field+".resource_id", "not_allowed", "only an item of a page, blog, article, collection, category or product names a resource")
		}
		switch {
		case it.Type == storage.MenuItemURL && it.URL == nil:
			c.Add(field+".url", "required", "is the link of a url item")
		case it.Type == storage.MenuItemURL:
			if !menuURLAllowed(*it.URL) {
				c.Add(field+".url", "invalid", "must be a relative path, an https URL, mailto: or tel:")
			}
		case it.URL != nil:
			c.Add(field+".url", "not_allowed", "only a url item has a url")
		}
		if len(it.Items) > 0 && depth == storage.MaxMenuDepth {
			c.Add(field+".items", "depth_exceeded", fmt.Sprintf("menus nest at most %d levels", storage.MaxMenuDepth))
			continue
		}
		checkMenuLevel(c, it.Items, field+".", depth+1, seen)
	}
}

// menuURLAllowed: a relative path (not //host), an https URL with a host,
// mailto: or tel: (decisions §22). Never javascript: or data:.
func menuURLAllowed(raw string) bool {
	if raw == "" || len(raw) > 2048 || strings.TrimSpace(raw) != raw || strings.ContainsAny(raw, "\\\x00\r\n\t") {
		return false
	}
	if strings.HasPrefix(raw, "/") {
		return !strings.HasPrefix(raw, "//")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host != "" && u.User == nil
	case "mailto", "tel":
		return u.Opaque != ""
	}
	return false
}

// MenuItems is the tree as storage keeps it; the body was checked by Valid.
func MenuItems(items []MenuItem) []storage.MenuItem {
	out := make([]storage.MenuItem, 0, len(items))
	for _, it := range items {
		item := storage.MenuItem{Title: it.Title.Stored(), Type: it.Type, Items: MenuItems(it.Items)}
		if it.ID != nil {
			item.ID, _ = ParseUUID(*it.ID)
		}
		if it.ResourceID != nil {
			id, _ := ParseUUID(*it.ResourceID)
			item.ResourceID = &id
		}
		if it.URL != nil {
			item.URL = *it.URL
		}
		out = append(out, item)
	}
	return out
}

// Redirect is the JSON body handleCreateRedirect reads (api/content_redirects.go).
type Redirect struct {
	FromPath string `json:"from_path"`
	To       string `json:"to"`
}

// Valid lists what is wrong with the body, for wire.Decode's 422.
func (req Redirect) Valid() []wire.FieldError {
	var c Checker
	if _, err := storage.RedirectPath(req.FromPath); err != nil {
		c.Add("from_path", "invalid", "must be a path on the store starting with / (no //, no fragment)")
	}
	if !storage.RedirectTargetAllowed(req.To) {
		c.Add("to", "invalid", "must be a path on the store starting with /, or an http(s) URL")
	}
	return c.Result()
}
