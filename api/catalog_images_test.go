package api_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/image/webp"

	"github.com/merchantsvc/svc/api"
	"github.com/merchantsvc/svc/internal/testenv"
	"github.com/merchantsvc/svc/storage"
)

func picture(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	return img
}

func jpegBytes(t *testing.T, w, h int) []byte {
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, picture(w, h), nil))
	return buf.Bytes()
}

// pngHeaderOnly is a PNG whose header declares w×h: a decompression bomb
// needs nothing more to be recognised.
func pngHeaderOnly(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 0, 0, 0, 0)
	chunk := func(kind string, data []byte) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		out = append(out, kind...)
		out = append(out, data...)
		return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(append([]byte(kind), data...)))
	}
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, chunk("IHDR", ihdr)...)
	return append(out, chunk("IEND", nil)...)
}

// uploadFile posts a multipart body with the file under a misleading name and type.
func (h *harness) uploadFile(token, path, field string, data []byte, extra map[string]string) response {
	h.t.Helper()
	return h.uploadFileWith(token, path, field, data, extra, nil)
}

// uploadFileWith is uploadFile with more request headers.
func (h *harness) uploadFileWith(token, path, field string, data []byte, extra, headers map[string]string) response {
	h.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range extra {
		require.NoError(h.t, mw.WriteField(k, v))
	}
	part, err := mw.CreatePart(map[string][]string{
		"Content-Disposition": {`form-data; name="` + field + `"; filename="upload.txt"`},
		"Content-Type":        {"text/plain"},
	})
	require.NoError(h.t, err)
	_, _ = part.Write(data)
	require.NoError(h.t, mw.Close())
	all := map[string]string{"Content-Type": mw.FormDataContentType()}
	for k, v := range headers {
		all[k] = v
	}
	return h.do(request{method: "POST", path: path, auth: bearer(token), body: body.Bytes(), headers: all})
}

func (h *harness) fetch(url string) (int, http.Header, []byte) {
	h.t.Helper()
	resp, err := http.Get(url)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func TestImageUploadEveryFormatToThreeSizes(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("images")
	token := h.pat(m, "catalog:write")
	p := h.createProduct(token, m.storeID, map[string]any{"name": "Vase", "price": 1})
	path := storePath(m.storeID, "/products/"+p["id"].(string)+"/images")

	var pngBuf, gifBuf bytes.Buffer
	require.NoError(t, png.Encode(&pngBuf, picture(1600, 1000)))
	require.NoError(t, gif.Encode(&gifBuf, picture(1600, 1000), nil))
	for name, data := range map[string][]byte{"jpeg": jpegBytes(t, 3000, 1875), "png": pngBuf.Bytes(), "gif": gifBuf.Bytes()} {
		resp := h.uploadFile(token, path, "file", data, nil)
		require.Equal(t, http.StatusCreated, resp.Status, "%s: %s", name, resp.Raw)
		img := resp.data()
		require.Equal(t, "ready", img["status"])
		require.Equal(t, img["url"], img["large_url"])
		require.EqualValues(t, 1200, img["width"], name)
		require.EqualValues(t, 750, img["height"], name)
		for field, want := range map[string][2]int{"large_url": {1200, 750}, "medium_url": {600, 375}, "thumbnail_url": {150, 94}} {
			status, header, body := h.fetch(img[field].(string))
			require.Equal(t, http.StatusOK, status, field)
			require.Equal(t, "image/webp", header.Get("Content-Type"))
			require.Contains(t, header.Get("Cache-Control"), "immutable")
			decoded, err := webp.Decode(bytes.NewReader(body))
			require.NoError(t, err)
			require.Equal(t, want, [2]int{decoded.Bounds().Dx(), decoded.Bounds().Dy()}, "%s %s", name, field)
		}
	}
	// A WebP upload, too (the large output of the first one).
	got := h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+p["id"].(string)), auth: bearer(token)})
	images := got.data()["images"].([]any)
	require.Len(t, images, 3)
	_, _, webpBytes := h.fetch(images[0].(map[string]any)["large_url"].(string))
	resp := h.uploadFile(token, path, "file", webpBytes, nil)
	require.Equal(t, http.StatusCreated, resp.Status, string(resp.Raw))
	require.EqualValues(t, 4, resp.data()["position"])
}

func TestImageUploadRefusals(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("refusals")
	token := h.pat(m, "catalog:write")
	p := h.createProduct(token, m.storeID, map[string]any{"name": "Vase", "price": 1})
	path := storePath(m.storeID, "/products/"+p["id"].(string)+"/images")

	big := append(jpegBytes(t, 64, 64), make([]byte, 5<<20)...)
	cases := []struct {
		name   string
		data   []byte
		status int
		code   string
	}{
		{"over 5 MB", big, 413, "PAYLOAD_TOO_LARGE"},
		{"text named .jpg", []byte("just some words, not an image at all"), 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"pdf", []byte("%PDF-1.4\n%âãÏÓ\n1 0 obj"), 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"bomb: 10000×5000 declared", pngHeaderOnly(10000, 5000), 422, "VALIDATION_FAILED"},
		{"broken header", []byte("\x89PNG\r\n\x1a\nnot really"), 422, "VALIDATION_FAILED"},
	}
	for _, tc := range cases {
		resp := h.uploadFile(token, path, "file", tc.data, nil)
		require.Equal(t, tc.status, resp.Status, "%s: %s", tc.name, resp.Raw)
		require.Equal(t, tc.code, resp.errorCode(), tc.name)
		require.NotEmpty(t, resp.errorField("message_ar"))
	}
	noFile := h.uploadFile(token, path, "picture", jpegBytes(t, 10, 10), nil)
	require.Equal(t, http.StatusUnprocessableEntity, noFile.Status)
	require.Equal(t, []string{"file"}, noFile.fieldNames())
	notMultipart := h.do(request{method: "POST", path: path, auth: bearer(token), body: map[string]any{"file": "x"}})
	require.Equal(t, http.StatusUnsupportedMediaType, notMultipart.Status)

	got := h.do(request{method: "GET", path: storePath(m.storeID, "/products/"+p["id"].(string)), auth: bearer(token)})
	require.Empty(t, got.data()["images"], "refused uploads change nothing")
	var rows int
	require.NoError(t, testenv.SQL(h.t, h.db).QueryRow(context.Background(), `SELECT count(*) FROM product_images`).Scan(&rows))
	require.Zero(t, rows)
}

func TestImageAltDeleteAndProductDeleteRemoveObjects(t *testing.T) {
	h := newHarness(t, api.Config{})
	h.startWorker(nil)
	m := h.signup("imgdelete")
	token := h.pat(m, "catalog:write")
	p := h.createProduct(token, m.storeID, map[string]any{"name": "Vase", "price": 1})
	productID := p["id"].(string)
	base := storePath(m.storeID, "/products/"+productID)
	first := h.uploadFile(token, base+"/images", "file", jpegBytes(t, 800, 600), nil).data()
	second := h.uploadFile(token, base+"/images", "file", jpegBytes(t, 800, 600), nil).data()
	url := first["url"].(string)

	alt := h.do(request{method: "PATCH", path: base + "/images/alt", auth: bearer(token), body: map[string]any{"url": url, "alt": "مزهرية زرقاء"}})
	require.Equal(t, http.StatusOK, alt.Status, string(alt.Raw))
	require.Equal(t, map[string]any{"url": url, "alt": "مزهرية زرقاء"}, alt.data())
	unknown := h.do(request{method: "PATCH", path: base + "/images/alt", auth: bearer(token), body: map[string]any{"url": "https://elsewhere/x.webp", "alt": "x"}})
	require.Equal(t, http.StatusUnprocessableEntity, unknown.Status)
	upd := h.do(request{method: "PATCH", path: base, auth: bearer(token), body: map[string]any{"attributes": map[string]any{"k": "v"}, "name": "Blue vase"}})
	require.Equal(t, map[string]any{url: map[string]any{"alt": "مزهرية زرقاء"}}, upd.data()["media_urls"], "alt survives the update")

	storeID, imageID := m.storeID, first["id"].(string)
	keys := func(id string) []string {
		var out []string
		for _, name := range []string{"original", "large.webp", "medium.webp", "thumbnail.webp"} {
			out = append(out, "stores/"+storeID+"/products/"+productID+"/images/"+id+"/"+name)
		}
		return out
	}
	for _, key := range keys(imageID) {
		exists, err := h.blob.Exists(context.Background(), key)
		require.NoError(t, err)
		require.True(t, exists, key)
	}
	del := h.do(request{method: "DELETE", path: base + "/images", auth: bearer(token), body: map[string]any{"url": url}})
	require.Equal(t, http.StatusNoContent, del.Status, string(del.Raw))
	for _, key := range keys(imageID) {
		exists, err := h.blob.Exists(context.Background(), key)
		require.NoError(t, err)
		require.False(t, exists, key)
	}
	after := h.do(request{method: "GET", path: base, auth: bearer(token)})
	require.Len(t, after.data()["images"], 1)
	require.Equal(t, map[string]any{}, after.data()["media_urls"], "the alt text went with the image")
	status, _, _ := h.fetch(url)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, http.StatusNotFound, h.do(request{method: "DELETE", path: base + "/images", auth: bearer(token), body: map[string]any{"url": url}}).Status)

	require.Equal(t, http.StatusNoContent, h.do(request{method: "DELETE", path: base, auth: bearer(token)}).Status)
	for _, key := range keys(second["id"].(string)) {
		exists, err := h.blob.Exists(context.Background(), key)
		require.NoError(t, err)
		require.False(t, exists, "deleting the product deletes its objects: %s", key)
	}
}

func TestImageUploadAnswers202WhenProcessingIsSlow(t *testing.T) {
	h := newHarness(t, api.Config{ImageWait: time.Millisecond})
	h.startWorker(nil)
	m := h.signup("slowimg")
	token := h.pat(m, "catalog:read", "catalog:write")
	p := h.createProduct(token, m.storeID, map[string]any{"name": "Vase", "price": 1})
	resp := h.uploadFile(token, storePath(m.storeID, "/products/"+p["id"].(string)+"/images"), "file", jpegBytes(t, 2000, 1500), nil)
	require.Equal(t, http.StatusAccepted, resp.Status, string(resp.Raw))
	require.Equal(t, "processing", resp.data()["status"])
	statusURL := resp.data()["status_url"].(string)
	require.True(t, strings.HasPrefix(statusURL, h.url))
	waitFor(t, "the image to be ready", func() bool {
		st := h.do(request{method: "GET", path: strings.TrimPrefix(statusURL, h.url), auth: bearer(token)})
		return st.data()["status"] == string(storage.ImageReady)
	})
	st := h.do(request{method: "GET", path: strings.TrimPrefix(statusURL, h.url), auth: bearer(token)})
	require.EqualValues(t, 1200, st.data()["width"])
}
