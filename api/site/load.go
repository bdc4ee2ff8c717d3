package site

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/storage/handle"
)

// loader reads what one request's page shows, for one store.
type loader struct {
	db       *storage.DB
	store    storage.Store
	mediaURL string // the API's base URL, where media are served
}

// ProductView is a product's page (or a featured product).
type ProductView struct {
	ID          uuid.UUID
	Title       string
	URL         string
	Description string
	Images      []Image
	Variants    []VariantView
	Selected    VariantView
	Available   bool
	SKU         string
}

// VariantView is one variant to choose.
type VariantView struct {
	ID        uuid.UUID
	Label     string
	Price     int64
	Available bool
}

func (l *loader) imagesOf(raw json.RawMessage, alt string) []Image {
	var entries []storage.ImageEntry
	_ = json.Unmarshal(raw, &entries)
	out := make([]Image, 0, len(entries))
	for _, e := range entries {
		if e.LargeURL == "" {
			continue
		}
		out = append(out, Image{Src: e.MediumURL, Alt: alt, Width: e.Width, Height: e.Height,
			SrcSet: fmt.Sprintf("%s 150w, %s 600w, %s 1200w", e.ThumbnailURL, e.MediumURL, e.LargeURL)})
		if out[len(out)-1].Src == "" {
			out[len(out)-1].Src = e.LargeURL
		}
	}
	return out
}

// largeURL is the large size of a srcset's image, for OpenGraph.
func (i Image) LargeURL() string {
	parts := strings.Split(i.SrcSet, ", ")
	last := parts[len(parts)-1]
	u, _, _ := strings.Cut(last, " ")
	return u
}

// cards makes list entries of products, with their "from" prices.
func (l *loader) cards(ctx context.Context, p *Page, products []storage.Product) ([]Card, error) {
	ids := make([]uuid.UUID, 0, len(products))
	for _, pr := range products {
		ids = append(ids, pr.ID)
	}
	from, err := l.db.FindFromPrices(ctx, l.store.ID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Card, 0, len(products))
	for _, pr := range products {
		c := Card{Title: pr.Name, URL: p.Link("/products/" + handle.Path(pr.Handle)), Price: pr.Price,
			Available: pr.Quantity > 0 || pr.Kind == storage.ProductKindGiftCard}
		if lowest, ok := from[pr.ID]; ok {
			c.From, c.Price = lowest != pr.Price, lowest
		}
		if imgs := l.imagesOf(pr.Images, pr.Name); len(imgs) > 0 {
			c.Image = &imgs[0]
		}
		out = append(out, c)
	}
	return out, nil
}

// cardsByID makes cards of the active products among ids, in their order.
func (l *loader) cardsByID(ctx context.Context, p *Page, ids []uuid.UUID) ([]Card, error) {
	var products []storage.Product
	for _, id := range ids {
		pr, err := l.db.FindProductByID(ctx, l.store.ID, id)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if pr.Status == "active" {
			products = append(products, pr)
		}
	}
	return l.cards(ctx, p, products)
}

// collectionCards are the first n products of a published collection (by
// id), or, when the section names none, the newest products of the store.
func (l *loader) collectionCards(ctx context.Context, p *Page, id string, n int) ([]Card, *CollectionLink, error) {
	if id == "" {
		active := "active"
		products, _, err := l.db.FindProducts(ctx, l.store.ID, storage.ProductFilter{Status: &active, Descending: true,
			Page: storage.Page{Page: 1, Limit: n}})
		if err != nil {
			return nil, nil, err
		}
		cards, err := l.cards(ctx, p, products)
		return cards, &CollectionLink{Title: word(p.Lang, "all_products"), URL: p.Link("/collections/all")}, err
	}
	cid, err := uuid.Parse(id)
	if err != nil {
		return nil, nil, nil
	}
	c, err := l.db.FindCollectionByID(ctx, l.store.ID, cid)
	if errors.Is(err, storage.ErrNotFound) || err == nil && !c.Published {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	products, _, err := l.db.FindPublishedCollectionProducts(ctx, l.store.ID, c.Handle, "", storage.Page{Page: 1, Limit: n})
	if err != nil {
		return nil, nil, err
	}
	cards, err := l.cards(ctx, p, products)
	return cards, &CollectionLink{Title: collectionTitle(c, p.Lang), URL: p.Link("/collections/" + handle.Path(c.Handle))}, err
}

// productView reads an active product with its variants; the selected
// variant is the one named (when it is the product's and can be bought),
// else the first available, else the first.
func (l *loader) productView(ctx context.Context, p *Page, id uuid.UUID, variant string) (*ProductView, error) {
	pr, err := l.db.FindProductByID(ctx, l.store.ID, id)
	if err != nil {
		return nil, err
	}
	if pr.Status != "active" {
		return nil, storage.ErrNotFound
	}
	return l.productViewOf(ctx, p, pr, variant)
}

func (l *loader) productViewOf(ctx context.Context, p *Page, pr storage.Product, variant string) (*ProductView, error) {
	variants, err := l.db.FindVariants(ctx, l.store.ID, pr.ID)
	if err != nil {
		return nil, err
	}
	v := &ProductView{ID: pr.ID, Title: pr.Name, URL: p.Link("/products/" + handle.Path(pr.Handle)), Description: pr.Description,
		Images: l.imagesOf(pr.Images, pr.Name)}
	if pr.SKU != nil {
		v.SKU = *pr.SKU
	}
	selected := -1
	for i, va := range variants {
		vv := VariantView{ID: va.ID, Label: optionLabel(va.Options), Price: va.Price, Available: va.Quantity > 0 || va.Value != nil}
		v.Variants = append(v.Variants, vv)
		v.Available = v.Available || vv.Available
		if va.ID.String() == variant && vv.Available {
			selected = i
		}
	}
	if selected < 0 {
		for i, vv := range v.Variants {
			if vv.Available {
				selected = i
				break
			}
		}
	}
	switch {
	case selected >= 0:
		v.Selected = v.Variants[selected]
	case len(v.Variants) > 0:
		v.Selected = v.Variants[0]
	default:
		v.Selected = VariantView{Price: pr.Price}
	}
	return v, nil
}

// optionLabel writes a variant's options ("red / L"), or "" for a product
// without options.
func optionLabel(raw json.RawMessage) string {
	var opts map[string]any
	if json.Unmarshal(raw, &opts) != nil || len(opts) == 0 {
		return ""
	}
	var parts []string
	for _, k := range sortedKeys(opts) {
		parts = append(parts, fmt.Sprint(opts[k]))
	}
	return strings.Join(parts, " / ")
}

// mediaImage is a ready image of the store's media library by id.
func (l *loader) mediaImage(ctx context.Context, id string) *Image {
	mid, err := uuid.Parse(id)
	if err != nil {
		return nil
	}
	m, err := l.db.FindMedia(ctx, l.store.ID, mid)
	if err != nil || m.Kind != storage.MediaImage || m.Status != storage.ImageReady {
		return nil
	}
	url := func(size string) string {
		return l.mediaURL + storage.MediaURLPath(m.StoreID, m.ID, storage.MediaFileName(m.Kind, size))
	}
	img := &Image{Src: url("large"), SrcSet: fmt.Sprintf("%s 150w, %s 600w, %s 1200w", url("thumbnail"), url("medium"), url("large"))}
	if m.Width != nil && m.Height != nil {
		img.Width, img.Height = *m.Width, *m.Height
	}
	if m.Alt.Ar != nil {
		img.Alt = *m.Alt.Ar
	}
	return img
}

// menu resolves a menu by handle; a missing menu is an empty one.
func (l *loader) menu(ctx context.Context, p *Page, h string) []MenuLink {
	if h == "" {
		return nil
	}
	_, _, items, err := l.db.FindStorefrontMenu(ctx, l.store.Subdomain, h)
	if err != nil {
		return nil
	}
	return menuLinks(p, items)
}

func menuLinks(p *Page, items []storage.ResolvedMenuItem) []MenuLink {
	out := make([]MenuLink, 0, len(items))
	for _, it := range items {
		u := it.URL
		if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
			u = p.Link(u)
		}
		out = append(out, MenuLink{Title: it.Item.Title.In(p.Lang), URL: u, Items: menuLinks(p, it.Items)})
	}
	return out
}
