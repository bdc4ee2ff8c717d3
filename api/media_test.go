package api_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/image/webp"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
)

// uploadMedia posts file under filename with a misleading client type: the
// library decides by content.
func (h *harness) uploadMedia(token, storeID, filename string, data []byte, headers map[string]string) response {
	h.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreatePart(map[string][]string{
		"Content-Disposition": {`form-data; name="file"; filename="` + filename + `"`},
		"Content-Type":        {"application/octet-stream"},
	})
	require.NoError(h.t, err)
	_, _ = part.Write(data)
	require.NoError(h.t, mw.Close())
	all := map[string]string{"Content-Type": mw.FormDataContentType()}
	for k, v := range headers {
		all[k] = v
	}
	return h.do(request{method: "POST", path: storePath(storeID, "/media"), auth: bearer(token), body: body.Bytes(), headers: all})
}

// jpegWithEXIF is a w×h JPEG carrying an APP1 EXIF segment with the given
// orientation and a GPS latitude, as a phone writes one.
func jpegWithEXIF(t *testing.T, w, h int, orientation uint16) []byte {
	jpg := jpegBytes(t, w, h)
	le := binary.LittleEndian
	tiff := []byte("II*\x00")
	tiff = le.AppendUint32(tiff, 8)
	tiff = le.AppendUint16(tiff, 2)
	tiff = le.AppendUint16(tiff, 0x0112) // Orientation
	tiff = le.AppendUint16(tiff, 3)
	tiff = le.AppendUint32(tiff, 1)
	tiff = le.AppendUint16(tiff, orientation)
	tiff = le.AppendUint16(tiff, 0)
	tiff = le.AppendUint16(tiff, 0x8825) // GPS IFD
	tiff = le.AppendUint16(tiff, 4)
	tiff = le.AppendUint32(tiff, 1)
	tiff = le.AppendUint32(tiff, 8+2+2*12+4)
	tiff = le.AppendUint32(tiff, 0)
	tiff = le.AppendUint16(tiff, 1)
	tiff = le.AppendUint16(tiff, 0x0001) // GPSLatitudeRef
	tiff = le.AppendUint16(tiff, 2)
	tiff = le.AppendUint32(tiff, 2)
	tiff = append(tiff, 'N', 0, 0, 0)
	tiff = le.AppendUint32(tiff, 0)
	payload := append([]byte("Exif\x00\x00"), tiff...)
	seg := binary.BigEndian.AppendUint16([]byte{0xFF, 0xE1}, uint16(len(payload)+2))
	out := append(append(append([]byte{}, jpg[:2]...), seg...), payload...)
	return append(out, jpg[2:]...)
}

// pdfBytes is a small PDF whose body is padded to about size bytes.
func pdfBytes(size int) []byte {
	out := []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n")
	for len(out) < size {
		out = append(out, "% padding padding padding padding padding padding\n"...)
	}
	return append(out, "%%EOF\n"...)
}

func (h *harness) mediaRows(storeID string) int {
	h.t.Helper()
	var n int
	require.NoError(h.t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM media WHERE store_id = $1`, storeID).Scan(&n))
	return n
}

func TestMediaUploadImagePDFAndRefusals(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("media")
	token := h.pat(m, "media:write")

	// A phone photo: EXIF orientation 6 and a GPS tag. It comes back upright,
	// in three WebP sizes, with no metadata left.
	photo := jpegWithEXIF(t, 2000, 1000, 6)
	require.Contains(t, string(photo), "Exif")
	resp := h.uploadMedia(token, m.storeID, "holiday/beach photo.txt", photo, nil)
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
	img := resp.data()
	require.Equal(t, "image", img["kind"])
	require.Equal(t, "image/jpeg", img["mime"], "by content, not by name or client type")
	require.Equal(t, "beach photo.txt", img["filename"], "the base name only")
	require.EqualValues(t, len(photo), img["size"])
	require.Equal(t, "ready", img["status"])
	require.EqualValues(t, 600, img["width"], "rotated upright: portrait")
	require.EqualValues(t, 1200, img["height"])
	require.Nil(t, img["url"])
	require.Nil(t, img["alt"])
	urls := img["urls"].(map[string]any)
	imageID := img["id"].(string)
	for size, want := range map[string][2]int{"large": {600, 1200}, "medium": {300, 600}, "thumbnail": {75, 150}} {
		u := urls[size].(string)
		require.Equal(t, h.url+"/files/"+m.storeID+"/"+imageID+"/"+size+".webp", u)
		status, header, body := h.fetch(u)
		require.Equal(t, http.StatusOK, status, size)
		require.Equal(t, "image/webp", header.Get("Content-Type"))
		require.Equal(t, "nosniff", header.Get("X-Content-Type-Options"))
		require.Equal(t, "public, max-age=31536000, immutable", header.Get("Cache-Control"))
		require.Empty(t, header.Get("Content-Disposition"))
		require.NotContains(t, string(body), "Exif", "%s: EXIF stripped", size)
		decoded, err := webp.Decode(bytes.NewReader(body))
		require.NoError(t, err)
		require.Equal(t, want, [2]int{decoded.Bounds().Dx(), decoded.Bounds().Dy()}, size)
	}
	got := h.do(request{method: "GET", path: storePath(m.storeID, "/media/"+imageID), auth: bearer(token)})
	require.Equal(t, http.StatusOK, got.Status, string(got.Raw))
	require.Equal(t, img, got.data())

	// A PDF is kept byte for byte and downloads as an attachment.
	pdf := pdfBytes(200_000)
	resp = h.uploadMedia(token, m.storeID, "قائمة الأسعار.pdf", pdf, nil)
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
	file := resp.data()
	require.Equal(t, "file", file["kind"])
	require.Equal(t, "application/pdf", file["mime"])
	require.Equal(t, "قائمة الأسعار.pdf", file["filename"])
	require.Equal(t, "ready", file["status"])
	require.Nil(t, file["urls"])
	require.Nil(t, file["width"])
	status, header, body := h.fetch(file["url"].(string))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, pdf, body)
	require.Equal(t, "application/pdf", header.Get("Content-Type"))
	require.Equal(t, "nosniff", header.Get("X-Content-Type-Options"))
	require.Contains(t, header.Get("Content-Disposition"), "attachment")
	require.Contains(t, header.Get("Content-Disposition"), "filename*=utf-8''%D9%82")
	require.Contains(t, header.Get("Cache-Control"), "immutable")

	// Another store's path, or a size the item does not have, is not found.
	other := h.signup("media-other")
	for _, u := range []string{
		h.url + "/files/" + other.storeID + "/" + imageID + "/large.webp",
		h.url + "/files/" + m.storeID + "/" + imageID + "/file.pdf",
		h.url + "/files/" + m.storeID + "/" + file["id"].(string) + "/large.webp",
		h.url + "/files/" + m.storeID + "/" + imageID + "/original",
	} {
		status, _, _ := h.fetch(u)
		require.Equal(t, http.StatusNotFound, status, u)
	}
	otherToken := h.pat(other, "media:read")
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(other.storeID, "/media/"+imageID), auth: bearer(otherToken)}).Status)

	// Refusals store nothing.
	before := h.mediaRows(m.storeID)
	exe := append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"), make([]byte, 4096)...)
	cases := []struct {
		name, filename string
		data           []byte
		status         int
		code           string
	}{
		{"a program renamed .jpg", "photo.jpg", exe, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"a program renamed .pdf", "invoice.pdf", exe, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"text", "notes.png", []byte("just some words, not an image at all"), 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"an image over 5 MB", "big.jpg", append(jpegBytes(t, 64, 64), make([]byte, 5<<20)...), 413, "PAYLOAD_TOO_LARGE"},
		{"a PDF over 10 MB", "big.pdf", pdfBytes(10<<20 + 10), 413, "PAYLOAD_TOO_LARGE"},
		{"a decompression bomb", "bomb.png", pngHeaderOnly(10000, 5000), 422, "VALIDATION_FAILED"},
	}
	for _, tc := range cases {
		resp := h.uploadMedia(token, m.storeID, tc.filename, tc.data, nil)
		require.Equal(t, tc.status, resp.Status, "%s: %s", tc.name, resp.Raw)
		require.Equal(t, tc.code, resp.errorCode(), tc.name)
		require.NotEmpty(t, resp.errorField("message_ar"), tc.name)
	}
	require.Equal(t, before, h.mediaRows(m.storeID), "refused uploads store no row")
	list := h.do(request{method: "GET", path: storePath(m.storeID, "/media"), auth: bearer(token)})
	require.Len(t, list.data()["items"], 2)

	// A PDF of 6 MB goes through with an Idempotency-Key (the key's body limit
	// covers it), and the retry replays the answer without a second item.
	key := map[string]string{"Idempotency-Key": "media-pdf-1"}
	first := h.uploadMedia(token, m.storeID, "catalogue.pdf", pdfBytes(6<<20), key)
	require.Equal(t, http.StatusCreated, first.Status, string(first.Raw))
	again := h.uploadMedia(token, m.storeID, "catalogue.pdf", pdfBytes(6<<20), key)
	require.Equal(t, http.StatusCreated, again.Status, string(again.Raw))
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	require.Equal(t, first.data()["id"], again.data()["id"])
	require.Equal(t, before+1, h.mediaRows(m.storeID))
}

func TestMediaImageProcessingAndFailure(t *testing.T) {
	h := newHarness(t, api.Config{ImageWait: time.Millisecond})
	h.startWorker(nil)
	m := h.signup("media-slow")
	token := h.pat(m, "media:write")
	// Not done within the wait: 201 processing, then ready.
	resp := h.uploadMedia(token, m.storeID, "slow.jpg", jpegBytes(t, 1600, 1200), nil)
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
	require.Equal(t, "processing", resp.data()["status"])
	require.Nil(t, resp.data()["urls"])
	id := resp.data()["id"].(string)
	waitFor(t, "the image to be ready", func() bool {
		return h.do(request{method: "GET", path: storePath(m.storeID, "/media/"+id), auth: bearer(token)}).data()["status"] == "ready"
	})
	ready := h.do(request{method: "GET", path: storePath(m.storeID, "/media/"+id), auth: bearer(token)}).data()
	require.EqualValues(t, 1200, ready["width"])
	require.NotNil(t, ready["urls"])

	// A header that reads but no pixels libvips can decode: the workflow
	// records the failure.
	resp = h.uploadMedia(token, m.storeID, "broken.png", pngHeaderOnly(640, 480), nil)
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
	id = resp.data()["id"].(string)
	waitFor(t, "the broken image to fail", func() bool {
		return h.do(request{method: "GET", path: storePath(m.storeID, "/media/"+id), auth: bearer(token)}).data()["status"] == "failed"
	})
}

func TestMediaListFiltersAndAlt(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("media-list")
	token := h.pat(m, "media:write")
	vase := h.uploadMedia(token, m.storeID, "vase.jpg", jpegBytes(t, 300, 200), nil).data()
	h.uploadMedia(token, m.storeID, "lamp.png", jpegBytes(t, 300, 200), nil)
	h.uploadMedia(token, m.storeID, "price-list.pdf", pdfBytes(1000), nil)
	list := func(query string, headers map[string]string) response {
		return h.do(request{method: "GET", path: storePath(m.storeID, "/media"+query), auth: bearer(token), headers: headers})
	}
	names := func(r response) []string {
		var out []string
		for _, it := range r.data()["items"].([]any) {
			out = append(out, it.(map[string]any)["filename"].(string))
		}
		return out
	}
	require.Equal(t, []string{"price-list.pdf", "lamp.png", "vase.jpg"}, names(list("", nil)), "newest first")
	require.Equal(t, []string{"lamp.png", "vase.jpg"}, names(list("?kind=image", nil)))
	require.Equal(t, []string{"price-list.pdf"}, names(list("?kind=file", nil)))
	require.Equal(t, []string{"vase.jpg"}, names(list("?q=VASE", nil)), "file name, any case")
	paged := list("?limit=1&page=2", nil)
	require.Equal(t, []string{"lamp.png"}, names(paged))
	require.EqualValues(t, 3, paged.data()["pagination"].(map[string]any)["total"])
	bad := list("?kind=video", nil)
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status)
	require.Equal(t, []string{"kind"}, bad.fieldNames())

	// Alt text in both languages; reads add text in the asked language.
	path := storePath(m.storeID, "/media/"+vase["id"].(string))
	patch := func(body any, headers map[string]string) response {
		return h.do(request{method: "PATCH", path: path, auth: bearer(token), body: body, headers: headers})
	}
	set := patch(map[string]any{"alt": map[string]any{"ar": " مزهرية زرقاء ", "en": "Blue vase"}}, map[string]string{"Accept-Language": "ar-EG,en;q=0.5"})
	require.Equal(t, http.StatusOK, set.Status, string(set.Raw))
	require.Equal(t, map[string]any{"ar": "مزهرية زرقاء", "en": "Blue vase", "text": "مزهرية زرقاء"}, set.data()["alt"])
	require.Equal(t, vase["urls"], set.data()["urls"])
	english := h.do(request{method: "GET", path: path, auth: bearer(token), headers: map[string]string{"Accept-Language": "en-GB"}})
	require.Equal(t, "Blue vase", english.data()["alt"].(map[string]any)["text"])
	require.Equal(t, []string{"vase.jpg"}, names(list("?q=زرقاء", nil)), "alt text, Arabic")
	require.Equal(t, []string{"vase.jpg"}, names(list("?q=blue", nil)), "alt text, English")

	onlyArabic := patch(map[string]any{"alt": map[string]any{"en": nil}}, map[string]string{"Accept-Language": "en"})
	require.Equal(t, http.StatusOK, onlyArabic.Status, string(onlyArabic.Raw))
	require.Equal(t, map[string]any{"ar": "مزهرية زرقاء", "text": "مزهرية زرقاء"}, onlyArabic.data()["alt"], "the other language stands in")
	cleared := patch(map[string]any{"alt": nil}, nil)
	require.Equal(t, http.StatusOK, cleared.Status, string(cleared.Raw))
	require.Nil(t, cleared.data()["alt"])

	for _, tc := range []struct {
		body  any
		field string
	}{
		{map[string]any{}, "alt"},
		{map[string]any{"alt": map[string]any{"ar": strings.Repeat("م", 513)}}, "alt.ar"},
		{map[string]any{"alt": map[string]any{"en": "x"}, "filename": "y"}, "filename"},
	} {
		resp := patch(tc.body, nil)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, string(resp.Raw))
		require.Equal(t, []string{tc.field}, resp.fieldNames())
	}
	unchanged := h.do(request{method: "GET", path: path, auth: bearer(token)})
	require.Nil(t, unchanged.data()["alt"], "refused patches change nothing")
	require.Equal(t, http.StatusNotFound, h.do(request{method: "PATCH", path: storePath(m.storeID, "/media/0190d3c4-0000-7000-8000-00000000abcd"),
		auth: bearer(token), body: map[string]any{"alt": nil}}).Status)
}

// setFavicon saves the draft with its favicon set to value and returns the answer.
func (h *harness) setFavicon(token, storeID string, value any) response {
	h.t.Helper()
	path := storePath(storeID, "/themes/v3/customization")
	got := h.do(request{method: "GET", path: path, auth: bearer(token)})
	require.Equal(h.t, http.StatusOK, got.Status, string(got.Raw))
	draft := got.data()["draft"].(map[string]any)
	draft["settings"].(map[string]any)["favicon"] = value
	body, err := json.Marshal(draft)
	require.NoError(h.t, err)
	return h.do(request{method: "PUT", path: path, auth: bearer(token), body: body, headers: map[string]string{"If-Match": got.data()["etag"].(string)}})
}

func TestMediaInTheThemeAndDelete(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("media-theme")
	token := h.pat(m, "media:write", "themes:write")
	img := h.uploadMedia(token, m.storeID, "logo.png", jpegBytes(t, 256, 256), nil).data()
	pdf := h.uploadMedia(token, m.storeID, "menu.pdf", pdfBytes(1000), nil).data()
	imageID := img["id"].(string)
	other := h.signup("media-theme-other")
	otherImg := h.uploadMedia(h.pat(other, "media:write"), other.storeID, "theirs.png", jpegBytes(t, 64, 64), nil).data()

	// image_picker takes a ready image of the store's media, nothing else.
	for name, value := range map[string]any{
		"an unknown id":             "0190d3c4-0000-7000-8000-00000000abcd",
		"a PDF":                     pdf["id"],
		"another store's image":     otherImg["id"],
		"an image URL from outside": "https://cdn.example.com/logo.png",
		"a URL of its own media":    img["urls"].(map[string]any)["large"],
	} {
		resp := h.setFavicon(token, m.storeID, value)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s: %s", name, resp.Raw)
		require.Equal(t, []string{"/settings/favicon"}, resp.fieldNames(), name)
	}
	saved := h.setFavicon(token, m.storeID, imageID)
	require.Equal(t, http.StatusOK, saved.Status, string(saved.Raw))

	// Named by the draft: the delete is refused with the pointer.
	del := func() response {
		return h.do(request{method: "DELETE", path: storePath(m.storeID, "/media/"+imageID), auth: bearer(token)})
	}
	refused := del()
	require.Equal(t, http.StatusConflict, refused.Status, string(refused.Raw))
	require.Equal(t, "CONTENT_IN_USE", refused.errorCode())
	require.NotEmpty(t, refused.errorField("message_ar"))
	details := refused.errorField("details").(map[string]any)
	require.Equal(t, []any{"/settings/favicon"}, details["pointers"])
	require.Equal(t, []any{map[string]any{"kind": "theme_draft", "pointer": "/settings/favicon"}}, details["referrers"])

	// Published, then cleared from the draft: the published document still names it.
	pub := h.do(request{method: "POST", path: storePath(m.storeID, "/themes/v3/customization/publish"), auth: bearer(token), body: map[string]any{"name": "logo"}})
	require.Equal(t, http.StatusCreated, pub.Status, string(pub.Raw))
	require.Equal(t, http.StatusOK, h.setFavicon(token, m.storeID, nil).Status)
	refused = del()
	require.Equal(t, http.StatusConflict, refused.Status, string(refused.Raw))
	require.Equal(t, []any{map[string]any{"kind": "theme_published", "pointer": "/settings/favicon"}},
		refused.errorField("details").(map[string]any)["referrers"])
	status, _, _ := h.fetch(img["urls"].(map[string]any)["large"].(string))
	require.Equal(t, http.StatusOK, status, "a refused delete removes nothing")

	// Published without it: the delete goes through and takes the files.
	pub = h.do(request{method: "POST", path: storePath(m.storeID, "/themes/v3/customization/publish"), auth: bearer(token), body: map[string]any{"name": "no logo"}})
	require.Equal(t, http.StatusCreated, pub.Status, string(pub.Raw))
	gone := del()
	require.Equal(t, http.StatusNoContent, gone.Status, string(gone.Raw))
	for _, name := range []string{"original", "large.webp", "medium.webp", "thumbnail.webp"} {
		exists, err := h.blob.Exists(context.Background(), "stores/"+m.storeID+"/media/"+imageID+"/"+name)
		require.NoError(t, err)
		require.False(t, exists, name)
	}
	status, _, _ = h.fetch(img["urls"].(map[string]any)["large"].(string))
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, http.StatusNotFound, del().Status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "GET", path: storePath(m.storeID, "/media/"+imageID), auth: bearer(token)}).Status)

	pdfDel := h.do(request{method: "DELETE", path: storePath(m.storeID, "/media/"+pdf["id"].(string)), auth: bearer(token)})
	require.Equal(t, http.StatusNoContent, pdfDel.Status, string(pdfDel.Raw))
	exists, err := h.blob.Exists(context.Background(), "stores/"+m.storeID+"/media/"+pdf["id"].(string)+"/original")
	require.NoError(t, err)
	require.False(t, exists)

	// The audit log has the upload and the delete.
	entries := auditEntries(t, h, m, "?resource_type=media")
	var actions []string
	for _, e := range entries {
		actions = append(actions, e["action"].(string))
	}
	require.Contains(t, actions, "media.uploaded")
	require.Contains(t, actions, "media.deleted")
}

// Pages, articles and collections name media too (decisions §22): a body's
// img by one of the item's URLs, an article's or collection's image_id by
// its id; while any does, the delete is refused with every referrer.
func TestMediaInContentAndDelete(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("media-content")
	token := h.pat(m, "media:write", "themes:write", "catalog:write")
	call := func(method, path string, body any) response {
		return h.do(request{method: method, path: storePath(m.storeID, path), auth: bearer(token), body: body})
	}
	img := h.uploadMedia(token, m.storeID, "banner.png", jpegBytes(t, 320, 200), nil).data()
	pdf := h.uploadMedia(token, m.storeID, "menu.pdf", pdfBytes(1000), nil).data()
	require.Equal(t, "ready", img["status"])
	imageID := img["id"].(string)
	other := h.signup("media-content-other")
	theirs := h.uploadMedia(h.pat(other, "media:write"), other.storeID, "theirs.png", jpegBytes(t, 64, 64), nil).data()

	// A body's img: the absolute URL the media answer gives, or its path.
	large := img["urls"].(map[string]any)["large"].(string)
	page := call("POST", "/pages", map[string]any{"title": map[string]any{"en": "About"},
		"body": map[string]any{"en": `<p><img src="` + large + `" alt="banner"></p>`}})
	require.Equal(t, http.StatusCreated, page.Status, string(page.Raw))
	thumbPath := "/files/" + m.storeID + "/" + imageID + "/thumbnail.webp"
	blog := call("POST", "/blogs", map[string]any{"title": map[string]any{"en": "News"}})
	require.Equal(t, http.StatusCreated, blog.Status, string(blog.Raw))
	articles := "/blogs/" + blog.data()["id"].(string) + "/articles"
	article := call("POST", articles, map[string]any{"title": map[string]any{"en": "Sale"}, "image_id": imageID,
		"body": map[string]any{"en": `<img src="` + thumbPath + `">`}})
	require.Equal(t, http.StatusCreated, article.Status, string(article.Raw))
	require.Equal(t, imageID, article.data()["image_id"])
	collection := call("POST", "/collections", map[string]any{"title": map[string]any{"en": "Summer"}, "kind": "manual", "image_id": imageID})
	require.Equal(t, http.StatusCreated, collection.Status, string(collection.Raw))
	require.Equal(t, imageID, collection.data()["image_id"])

	// Anything else is refused with its field and changes nothing.
	for name, c := range map[string]struct {
		path, field string
		body        map[string]any
	}{
		"a PDF as an article's image":     {articles, "image_id", map[string]any{"title": map[string]any{"en": "x"}, "image_id": pdf["id"]}},
		"another store's image":           {"/collections", "image_id", map[string]any{"title": map[string]any{"en": "x"}, "kind": "manual", "image_id": theirs["id"]}},
		"an unknown id":                   {"/collections", "image_id", map[string]any{"title": map[string]any{"en": "x"}, "kind": "manual", "image_id": "0190d3c4-0000-7000-8000-00000000abcd"}},
		"not an id":                       {"/collections", "image_id", map[string]any{"title": map[string]any{"en": "x"}, "kind": "manual", "image_id": "banner.png"}},
		"an img of another host":          {"/pages", "body.en", map[string]any{"title": map[string]any{"en": "x"}, "body": map[string]any{"en": `<img src="https://cdn.example.com` + thumbPath + `">`}}},
		"an img of another store's media": {"/pages", "body.en", map[string]any{"title": map[string]any{"en": "x"}, "body": map[string]any{"en": `<img src="/files/` + other.storeID + "/" + theirs["id"].(string) + `/large.webp">`}}},
		"an img of a PDF":                 {"/pages", "body.en", map[string]any{"title": map[string]any{"en": "x"}, "body": map[string]any{"en": `<img src="/files/` + m.storeID + "/" + pdf["id"].(string) + `/file.pdf">`}}},
	} {
		resp := call("POST", c.path, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.Status, "%s: %s", name, resp.Raw)
		require.Contains(t, resp.fieldNames(), c.field, name)
	}
	require.Len(t, call("GET", "/pages", nil).list(), 1, "a refused page writes nothing")

	// Named three ways: the delete is refused and lists them all.
	del := func() response { return call("DELETE", "/media/"+imageID, nil) }
	refused := del()
	require.Equal(t, http.StatusConflict, refused.Status, string(refused.Raw))
	require.Equal(t, "CONTENT_IN_USE", refused.errorCode())
	details := refused.errorField("details").(map[string]any)
	require.Equal(t, []any{}, details["pointers"], "no theme pointer")
	require.ElementsMatch(t, []any{
		map[string]any{"kind": "article", "id": article.data()["id"]},
		map[string]any{"kind": "collection", "id": collection.data()["id"]},
		map[string]any{"kind": "page", "id": page.data()["id"]},
	}, details["referrers"])

	// Each let go in turn; the last one frees it.
	require.Equal(t, http.StatusOK, call("PATCH", "/pages/"+page.data()["id"].(string), map[string]any{"body": map[string]any{"en": "<p>About</p>"}}).Status)
	require.Equal(t, http.StatusOK, call("PATCH", articles+"/"+article.data()["id"].(string), map[string]any{"image_id": nil, "body": map[string]any{"en": "<p>Sale</p>"}}).Status)
	require.Equal(t, http.StatusConflict, del().Status, "the collection still shows it")
	cleared := call("PATCH", "/collections/"+collection.data()["id"].(string), map[string]any{"image_id": nil})
	require.Equal(t, http.StatusOK, cleared.Status, string(cleared.Raw))
	require.Nil(t, cleared.data()["image_id"])
	require.Equal(t, http.StatusNoContent, del().Status)
	gone := call("PATCH", "/collections/"+collection.data()["id"].(string), map[string]any{"image_id": imageID})
	require.Equal(t, http.StatusUnprocessableEntity, gone.Status, "a deleted image can no longer be named: %s", gone.Raw)
}
