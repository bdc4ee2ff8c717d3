package api_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/merchantsvc/svc/api"
)

// pickerStore is a store with something for every picker to find.
type pickerStore struct {
	m                                  merchant
	lamp, vase, vaseLarge, summer      string
	imageID                            string
	pageHandle, blogHandle, menuHandle string
}

func seedPickerStore(t *testing.T, h *harness, name string) pickerStore {
	m := h.signup(name)
	post := func(path string, body any) map[string]any {
		t.Helper()
		r := h.do(request{method: "POST", path: storePath(m.storeID, path), auth: m.auth(), body: body})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
		if d := r.data(); d != nil {
			return d
		}
		return r.Body
	}
	s := pickerStore{m: m, pageHandle: "about", blogHandle: "news", menuHandle: "sidebar"}
	s.lamp = post("/products", map[string]any{"name": "Brass lamp", "price": 4500, "sku": "LAMP-1"})["id"].(string)
	s.vase = post("/products", map[string]any{"name": "Clay vase", "price": 2500, "sku": "VASE-1"})["id"].(string)
	post("/products/"+s.vase+"/variants", map[string]any{"sku": "VASE-S", "price": 2500, "options": map[string]any{"size": "Small"}})
	s.vaseLarge = post("/products/"+s.vase+"/variants", map[string]any{"sku": "VASE-L", "price": 3500, "options": map[string]any{"size": "Large"}})["id"].(string)
	s.summer = post("/collections", map[string]any{"kind": "manual", "title": map[string]any{"ar": "تشكيلة الصيف", "en": "Summer edit"}})["id"].(string)
	post("/pages", map[string]any{"handle": s.pageHandle, "title": map[string]any{"ar": "من نحن", "en": "About us"}})
	post("/blogs", map[string]any{"handle": s.blogHandle, "title": map[string]any{"ar": "الأخبار", "en": "News"}})
	post("/menus", map[string]any{"handle": s.menuHandle, "title": map[string]any{"ar": "القائمة الجانبية", "en": "Side menu"}})
	media := h.uploadMedia(h.pat(m, "media:write", "media:read"), m.storeID, "terracotta.jpg", jpegBytes(t, 300, 200), nil)
	require.Equal(t, http.StatusCreated, media.Status, string(media.Raw))
	s.imageID = media.data()["id"].(string)
	waitFor(t, "the image to be ready", func() bool {
		return h.do(request{method: "GET", path: storePath(m.storeID, "/media/"+s.imageID), auth: m.auth()}).data()["status"] == "ready"
	})
	return s
}

// pick types query into the picker of setting id and chooses the option
// holding value: by keyboard (arrows to it, Enter) or by a click.
func pick(id, query, value string, byKeyboard bool) chromedp.Tasks {
	input := fmt.Sprintf(`[data-setting-id="%s"] input[role="combobox"]`, id)
	option := fmt.Sprintf(`[data-setting-id="%s"] [role="option"][data-value="%s"]`, id, value)
	tasks := chromedp.Tasks{
		chromedp.Click(input, chromedp.ByQuery),
		chromedp.SendKeys(input, query, chromedp.ByQuery),
		chromedp.WaitVisible(option, chromedp.ByQuery),
	}
	if !byKeyboard {
		return append(tasks, chromedp.Click(option, chromedp.ByQuery))
	}
	return append(tasks, chromedp.ActionFunc(func(ctx context.Context) error {
		// Arrow down until the option is the active one, then Enter.
		for range 20 {
			var selected bool
			if err := chromedp.Evaluate(fmt.Sprintf(`document.querySelector('%s').getAttribute('aria-selected') === 'true'`, option), &selected).Do(ctx); err != nil {
				return err
			}
			if selected {
				return chromedp.SendKeys(input, kb.Enter, chromedp.ByQuery).Do(ctx)
			}
			if err := chromedp.SendKeys(input, kb.ArrowDown, chromedp.ByQuery).Do(ctx); err != nil {
				return err
			}
		}
		return fmt.Errorf("%s never became active", option)
	}))
}

// chosen is the title a picker shows for its choice (the first).
func chosen(id string, text *string) chromedp.Tasks {
	sel := fmt.Sprintf(`[data-setting-id="%s"] .picker-choice .picker-label`, id)
	return chromedp.Tasks{
		chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.Poll(fmt.Sprintf(`document.querySelector('%s').textContent !== '…'`, sel), nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Text(sel, text, chromedp.ByQuery),
	}
}

func selectSection(id string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Click(fmt.Sprintf(`li[data-section-id="%s"] > .section-name`, id), chromedp.ByQuery),
		chromedp.WaitVisible(`#settings-form .field`, chromedp.ByQuery),
	}
}

func addSection(preset string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Evaluate(fmt.Sprintf(`(() => {
			const s = document.getElementById('add-section');
			s.value = [...s.options].find((o) => o.textContent === %q).value;
			s.dispatchEvent(new Event('change'));
		})()`, preset), nil),
	}
}

func waitSaved() chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.WaitVisible(`#save-state[data-state="dirty"], #save-state[data-state="saving"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#save-state[data-state="saved"]`, chromedp.ByQuery),
	}
}

// pickerShots keeps screenshots of the open picker id at 1280 and 390 px
// and fails when a picker's box leaves the viewport sideways.
func pickerShots(t *testing.T, tab context.Context, id, name string) {
	t.Helper()
	dir := screenshotDir(t)
	input := fmt.Sprintf(`[data-setting-id="%s"] input[role="combobox"]`, id)
	for _, width := range []int64{1280, 390} {
		var bad []string
		var shot []byte
		require.NoError(t, chromedp.Run(tab,
			chromedp.EmulateViewport(width, 900),
			chromedp.Sleep(150*time.Millisecond),
			chromedp.SendKeys(input, kb.ArrowDown, chromedp.ByQuery), // opens the list
			chromedp.WaitVisible(fmt.Sprintf(`[data-setting-id="%s"] .picker-popup [role="option"]`, id), chromedp.ByQuery),
			chromedp.Evaluate(fmt.Sprintf(`document.querySelector('[data-setting-id="%s"]').scrollIntoView({block: "start"})`, id), nil),
			chromedp.Evaluate(`(() => {
				const W = document.documentElement.clientWidth, bad = [];
				for (const el of document.querySelectorAll(".picker, .picker *")) {
					const r = el.getBoundingClientRect();
					if (r.width === 0 && r.height === 0) continue;
					if (r.left < -1 || r.right > W + 1) bad.push(el.tagName + "." + el.className + " " + Math.round(r.left) + ".." + Math.round(r.right) + " of " + W);
				}
				return bad.slice(0, 10);
			})()`, &bad),
			chromedp.CaptureScreenshot(&shot),
		))
		require.Empty(t, bad, "%s at %d px", name, width)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, width)), shot, 0o644))
	}
	require.NoError(t, chromedp.Run(tab, chromedp.Blur(input, chromedp.ByQuery), chromedp.EmulateViewport(1280, 900)))
}

// Every kind of picker searches the store as the merchant types and saves
// what the server stores: ids, lists of ids, handles and a media id. The
// page is in English here; the next test is in Arabic.
func TestThemeEditorPickersInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := seedPickerStore(t, h, "pickers")
	h.setLocale(s.m.email, "en")
	tab, _ := editorBrowser(t, h, s.m.email)
	require.NoError(t, chromedp.Run(tab, openEditor(h, s.m.storeID)))

	// Theme settings: the favicon from the media library (a thumbnail in
	// the list), the main menu by its handle.
	var label, note string
	var thumbs int
	require.NoError(t, chromedp.Run(tab,
		chromedp.Click(`#theme-settings`, chromedp.ByID),
		chromedp.WaitVisible(`[data-setting-id="favicon"] input[role="combobox"]`, chromedp.ByQuery),
	))
	pickerShots(t, tab, "favicon", "pickers-image-en")
	require.NoError(t, chromedp.Run(tab,
		chromedp.Click(`[data-setting-id="favicon"] input[role="combobox"]`, chromedp.ByQuery),
		chromedp.SendKeys(`[data-setting-id="favicon"] input[role="combobox"]`, "terra", chromedp.ByQuery),
		chromedp.WaitVisible(`[data-setting-id="favicon"] [role="option"][data-value="`+s.imageID+`"] img`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('[data-setting-id="favicon"] [role="option"] img').length`, &thumbs),
	))
	require.Equal(t, 1, thumbs, "the image is listed with its thumbnail")
	require.NoError(t, chromedp.Run(tab,
		chromedp.SendKeys(`[data-setting-id="favicon"] input[role="combobox"]`, kb.Enter, chromedp.ByQuery),
		chosen("favicon", &label),
		waitSaved(),
	))
	require.Equal(t, "terracotta.jpg", label)

	// The main menu: its default (main-menu) shows by its title; a search
	// with nothing to find says so; then the side menu.
	var status string
	require.NoError(t, chromedp.Run(tab,
		chosen("main_menu", &label),
		chromedp.Click(`[data-setting-id="main_menu"] input[role="combobox"]`, chromedp.ByQuery),
		chromedp.SendKeys(`[data-setting-id="main_menu"] input[role="combobox"]`, "zzz", chromedp.ByQuery),
		chromedp.Poll(`document.querySelector('[data-setting-id="main_menu"] .picker-status').textContent === 'Nothing matches.'`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Text(`[data-setting-id="main_menu"] .picker-status`, &status, chromedp.ByQuery),
	))
	require.Equal(t, "Main menu", label)
	require.Equal(t, "Nothing matches.", status)
	require.NoError(t, chromedp.Run(tab,
		// Escape closes the list, and again empties the search.
		chromedp.SendKeys(`[data-setting-id="main_menu"] input[role="combobox"]`, kb.Escape, chromedp.ByQuery),
		chromedp.WaitNotVisible(`[data-setting-id="main_menu"] .picker-popup`, chromedp.ByQuery),
		chromedp.SendKeys(`[data-setting-id="main_menu"] input[role="combobox"]`, kb.Escape, chromedp.ByQuery),
		chromedp.Value(`[data-setting-id="main_menu"] input[role="combobox"]`, &status, chromedp.ByQuery),
	))
	require.Equal(t, "", status)
	require.NoError(t, chromedp.Run(tab,
		pick("main_menu", "side", s.menuHandle, true),
		chosen("main_menu", &label),
		waitSaved(),
	))
	require.Equal(t, "Side menu", label)

	// A collection, by keyboard; the rich text's page and blog by handle.
	require.NoError(t, chromedp.Run(tab,
		selectSection("featured-collection"),
		pick("collection", "summer", s.summer, true),
		chosen("collection", &label),
		selectSection("rich-text"),
		pick("page", "about", s.pageHandle, false),
		pick("blog", "new", s.blogHandle, true),
		waitSaved(),
	))
	require.Equal(t, "Summer edit", label)

	// A featured product and one of its variants: the variant picker
	// lists the section's product's variants first.
	require.NoError(t, chromedp.Run(tab,
		addSection("Featured product"),
		selectSection("featured-product-1"),
		pick("product", "clay", s.vase, true),
		chosen("product", &label),
	))
	require.Equal(t, "Clay vase", label)
	require.NoError(t, chromedp.Run(tab,
		pick("variant", "", s.vaseLarge, false),
		chosen("variant", &label),
		chromedp.Text(`[data-setting-id="variant"] .picker-choice .picker-note`, &note, chromedp.ByQuery),
		waitSaved(),
	))
	require.Equal(t, "Clay vase — Large", label)
	require.Equal(t, "VASE-L", note)

	// Hand-picked products and collections: several, up to the limit,
	// each removable.
	var count int
	require.NoError(t, chromedp.Run(tab,
		addSection("Hand-picked products"),
		selectSection("product-grid-1"),
		pick("products", "lamp", s.lamp, true),
		pick("products", "vase", s.vase, false),
		pick("products", "LAMP", s.lamp, true), // already chosen: nothing changes
		pick("collections", "تشكيلة", s.summer, true),
		waitSaved(),
		chromedp.Evaluate(`document.querySelectorAll('[data-setting-id="products"] .picker-choice').length`, &count),
	))
	require.Equal(t, 2, count)
	pickerShots(t, tab, "products", "pickers-products-en")

	// Collections up to the setting's limit (6): then the search takes no
	// more and says why; taking one out opens it again.
	var extras []string
	for i := range 5 {
		c := h.do(request{method: "POST", path: storePath(s.m.storeID, "/collections"), auth: s.m.auth(),
			body: map[string]any{"kind": "manual", "title": map[string]any{"en": fmt.Sprintf("Extra %d", i+1)}}})
		require.Equal(t, http.StatusCreated, c.Status, string(c.Raw))
		extras = append(extras, c.data()["id"].(string))
	}
	for i, id := range extras {
		require.NoError(t, chromedp.Run(tab, pick("collections", fmt.Sprintf("Extra %d", i+1), id, false)))
	}
	var disabled bool
	var placeholder string
	collectionsInput := `[data-setting-id="collections"] input[role="combobox"]`
	require.NoError(t, chromedp.Run(tab,
		waitSaved(),
		chromedp.Evaluate(`document.querySelector('`+collectionsInput+`').disabled`, &disabled),
		chromedp.AttributeValue(collectionsInput, "placeholder", &placeholder, nil, chromedp.ByQuery),
	))
	require.True(t, disabled, "six of six")
	require.Equal(t, "At most 6; remove one to add another", placeholder)
	require.NoError(t, chromedp.Run(tab,
		chromedp.Click(`[data-setting-id="collections"] .picker-choice[data-value="`+extras[0]+`"] .picker-remove`, chromedp.ByQuery),
		waitSaved(),
		chromedp.Evaluate(`document.querySelector('`+collectionsInput+`').disabled`, &disabled),
	))
	require.False(t, disabled)

	_, draft := h.draftRevision(s.m)
	settings := draft["settings"].(map[string]any)
	require.Equal(t, s.imageID, settings["favicon"])
	require.Equal(t, s.menuHandle, settings["main_menu"])
	sections := draft["templates"].(map[string]any)["index"].(map[string]any)["sections"].(map[string]any)
	sectionSettings := func(id string) map[string]any {
		return sections[id].(map[string]any)["settings"].(map[string]any)
	}
	require.Equal(t, s.summer, sectionSettings("featured-collection")["collection"])
	require.Equal(t, s.pageHandle, sectionSettings("rich-text")["page"])
	require.Equal(t, s.blogHandle, sectionSettings("rich-text")["blog"])
	require.Equal(t, s.vase, sectionSettings("featured-product-1")["product"])
	require.Equal(t, s.vaseLarge, sectionSettings("featured-product-1")["variant"])
	require.Equal(t, []any{s.lamp, s.vase}, sectionSettings("product-grid-1")["products"])
	require.Equal(t, []any{s.summer, extras[1], extras[2], extras[3], extras[4]}, sectionSettings("product-grid-1")["collections"])

	// Taking one out saves the rest; undo puts it back.
	require.NoError(t, chromedp.Run(tab,
		chromedp.Click(`[data-setting-id="products"] .picker-choice[data-value="`+s.lamp+`"] .picker-remove`, chromedp.ByQuery),
		waitSaved(),
	))
	_, draft = h.draftRevision(s.m)
	sections = draft["templates"].(map[string]any)["index"].(map[string]any)["sections"].(map[string]any)
	require.Equal(t, []any{s.vase}, sectionSettings("product-grid-1")["products"])
	require.NoError(t, chromedp.Run(tab, chromedp.Click(`#undo`, chromedp.ByID), waitSaved()))
	_, draft = h.draftRevision(s.m)
	sections = draft["templates"].(map[string]any)["index"].(map[string]any)["sections"].(map[string]any)
	require.Equal(t, []any{s.lamp, s.vase}, sectionSettings("product-grid-1")["products"])
}

// In Arabic: titles in Arabic, searches typed in Arabic, a deleted target
// and an old image URL shown for what they are, and a member whose role
// cannot read the catalog told so instead of a broken page.
func TestThemeEditorPickersInArabicInHeadlessChromium(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	s := seedPickerStore(t, h, "pickers-ar")
	// An old draft, written behind the API's back: a slide's image by URL,
	// and a collection the store no longer has.
	h.draftRevision(s.m) // the draft exists
	gone := "00000000-0000-4000-8000-000000000001"
	h.exec(`UPDATE theme_customizations SET draft = jsonb_set(jsonb_set(draft,
		'{templates,index,sections,slideshow,blocks,slide-1,settings,image}', '"https://cdn.example.com/old/slide.jpg"'),
		'{templates,index,sections,featured-collection,settings,collection}', to_jsonb($2::text)) WHERE store_id = $1`, s.m.storeID, gone)
	h.exec(`INSERT INTO theme_legacy_images (store_id, value) VALUES ($1, 'https://cdn.example.com/old/slide.jpg')`, s.m.storeID)
	tab, _ := editorBrowser(t, h, s.m.email)
	require.NoError(t, chromedp.Run(tab, openEditor(h, s.m.storeID)))

	var label, note, placeholder, dir string
	require.NoError(t, chromedp.Run(tab,
		selectSection("featured-collection"),
		chosen("collection", &label),
		chromedp.Text(`[data-setting-id="collection"] .picker-choice .picker-note`, &note, chromedp.ByQuery),
	))
	require.Equal(t, gone, label, "a collection that is gone: its id")
	require.Contains(t, note, "غير موجود في المتجر")
	require.NoError(t, chromedp.Run(tab,
		chromedp.AttributeValue(`[data-setting-id="collection"] input[role="combobox"]`, "placeholder", &placeholder, nil, chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.dir`, &dir),
		pick("collection", "الصيف", s.summer, true),
		chosen("collection", &label),
	))
	require.Equal(t, "rtl", dir)
	require.Equal(t, "ابحث…", placeholder)
	require.Equal(t, "تشكيلة الصيف", label, "the Arabic title")
	pickerShots(t, tab, "collection", "pickers-collection-ar")
	require.NoError(t, chromedp.Run(tab,
		selectSection("rich-text"),
		pick("page", "نحن", s.pageHandle, false),
		chosen("page", &label),
		waitSaved(),
	))
	require.Equal(t, "من نحن", label)
	_, draft := h.draftRevision(s.m)
	sections := draft["templates"].(map[string]any)["index"].(map[string]any)["sections"].(map[string]any)
	require.Equal(t, s.summer, sections["featured-collection"].(map[string]any)["settings"].(map[string]any)["collection"])
	require.Equal(t, s.pageHandle, sections["rich-text"].(map[string]any)["settings"].(map[string]any)["page"])

	// A variant through its product: the product's row opens its variants
	// (with a way back), one of which is chosen.
	require.NoError(t, chromedp.Run(tab,
		addSection("Featured product"),
		selectSection("featured-product-1"),
		pick("variant", "clay", s.vase, true),
		chromedp.WaitVisible(`[data-setting-id="variant"] [role="option"].picker-back`, chromedp.ByQuery),
	))
	pickerShots(t, tab, "variant", "pickers-variant-ar")
	require.NoError(t, chromedp.Run(tab,
		chromedp.Click(`[data-setting-id="variant"] input[role="combobox"]`, chromedp.ByQuery),
		chromedp.SendKeys(`[data-setting-id="variant"] input[role="combobox"]`, "clay", chromedp.ByQuery),
		chromedp.WaitVisible(`[data-setting-id="variant"] [role="option"][data-value="`+s.vase+`"]`, chromedp.ByQuery),
		chromedp.SendKeys(`[data-setting-id="variant"] input[role="combobox"]`, kb.Enter, chromedp.ByQuery),
		chromedp.Click(`[data-setting-id="variant"] [role="option"][data-value="`+s.vaseLarge+`"]`, chromedp.ByQuery),
		waitSaved(),
	))
	_, draft = h.draftRevision(s.m)
	sections = draft["templates"].(map[string]any)["index"].(map[string]any)["sections"].(map[string]any)
	require.Equal(t, s.vaseLarge, sections["featured-product-1"].(map[string]any)["settings"].(map[string]any)["variant"])

	// The old image URL is shown as such and can be replaced.
	require.NoError(t, chromedp.Run(tab,
		chromedp.Click(`li[data-block-id="slide-1"] > .block-name`, chromedp.ByQuery),
		chosen("image", &label),
		chromedp.Text(`[data-setting-id="image"] .picker-choice .picker-note`, &note, chromedp.ByQuery),
	))
	require.Equal(t, "https://cdn.example.com/old/slide.jpg", label)
	require.Contains(t, note, "رابط صورة قديم")
	pickerShots(t, tab, "image", "pickers-image-ar")
	require.NoError(t, chromedp.Run(tab,
		pick("image", "terra", s.imageID, true),
		chosen("image", &label),
		waitSaved(),
	))
	require.Equal(t, "terracotta.jpg", label)

	// A member whose role reads and writes themes but not the catalog.
	other := h.signup("pickers-designer")
	role := h.do(request{method: "POST", path: storePath(s.m.storeID, "/roles"), auth: s.m.auth(),
		body: map[string]any{"name": "Designer", "scopes": []string{"themes:read", "themes:write"}}})
	require.Equal(t, http.StatusCreated, role.Status, string(role.Raw))
	h.addMember(s.m, other, "Designer")
	designer, _ := editorBrowser(t, h, other.email)
	var nodes []*cdp.Node
	require.NoError(t, chromedp.Run(designer,
		openEditor(h, s.m.storeID),
		selectSection("featured-collection"),
		chromedp.Click(`[data-setting-id="collection"] input[role="combobox"]`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector('[data-setting-id="collection"] .picker-status').textContent.includes('المجموعات')`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Text(`[data-setting-id="collection"] .picker-status`, &note, chromedp.ByQuery),
		chromedp.Nodes(`#settings-form .field`, &nodes, chromedp.ByQueryAll),
	))
	require.Equal(t, "لا يسمح دورك بعرض المجموعات.", note)
	require.NotEmpty(t, nodes, "the rest of the form stands")
}
