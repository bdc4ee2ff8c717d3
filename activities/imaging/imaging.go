// Package imaging turns an uploaded image into the WebP sizes the catalog
// serves, through libvips (Debian's libvips-dev; `make deps` installs it).
//
// Why libvips: it decodes JPEG with shrink-on-load (a 12-megapixel photo is
// decoded straight at 1/2, 1/4 or 1/8 scale), streams rather than holding
// whole bitmaps, applies the EXIF orientation, and encodes with libwebp. The
// binding is these few calls; the Go module proxy here carries no maintained
// libvips binding (govips, bimg and vipsgen are not served).
package imaging

/*
#cgo pkg-config: vips
#include <stdlib.h>
#include <vips/vips.h>

static int svc_init(void) {
	if (VIPS_INIT("svc")) return -1;
	// Uploads are unique: the operation cache would only hold memory.
	vips_cache_set_max(0);
	return 0;
}

// The largest size: decode with shrink-on-load, rotate upright by the EXIF
// orientation, never upscale.
static int svc_thumbnail_buffer(void *buf, size_t len, VipsImage **out, int size) {
	return vips_thumbnail_buffer(buf, len, out, size, "height", size, "size", VIPS_SIZE_DOWN, NULL);
}

static int svc_thumbnail_image(VipsImage *in, VipsImage **out, int size) {
	return vips_thumbnail_image(in, out, size, "height", size, "size", VIPS_SIZE_DOWN, NULL);
}

static int svc_copy_memory(VipsImage *in, VipsImage **out) {
	*out = vips_image_copy_memory(in);
	return *out == NULL ? -1 : 0;
}

// Drop every metadata field: the EXIF blob and its parsed exif-* tags (GPS
// among them), XMP, IPTC, ICC and the orientation. libvips 8.14's "strip"
// save option alone still wrote an EXIF chunk to WebP.
static void svc_strip(VipsImage *img) {
	gchar **fields = vips_image_get_fields(img);
	for (int i = 0; fields[i] != NULL; i++) {
		const char *f = fields[i];
		if (g_str_has_prefix(f, "exif-") || g_str_has_prefix(f, "xmp-") || g_str_has_prefix(f, "iptc-") ||
			g_str_has_prefix(f, "icc-") || g_str_has_prefix(f, "orientation") || g_str_has_prefix(f, "gif-") ||
			g_str_has_prefix(f, "png-comment") || g_str_has_prefix(f, "jpeg-") || g_str_has_prefix(f, "heif-")) {
			vips_image_remove(img, f);
		}
	}
	g_strfreev(fields);
}

// Lossy WebP without any metadata (EXIF, XMP, ICC).
static int svc_webpsave(VipsImage *in, void **buf, size_t *len, int quality) {
	return vips_webpsave_buffer(in, buf, len, "Q", quality, "strip", TRUE, NULL);
}

static void svc_unref(VipsImage *img) { g_object_unref(img); }

*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// Size is one output: the longest side in pixels.
type Size struct {
	Name    string
	Longest int
}

// Sizes are the catalog's three variants, largest first.
var Sizes = []Size{{"large", 1200}, {"medium", 600}, {"thumbnail", 150}}

// Quality is the WebP quality of every variant.
const Quality = 85

// Variant is one encoded output.
type Variant struct {
	Size
	WebP   []byte
	Width  int
	Height int
}

var (
	initOnce sync.Once
	initErr  error
)

func start() error {
	initOnce.Do(func() {
		if C.svc_init() != 0 {
			initErr = fmt.Errorf("start libvips: %s", lastError())
		}
	})
	return initErr
}

// ErrUnreadable marks input libvips cannot decode; retrying will not help.
var ErrUnreadable = errors.New("image cannot be decoded")

// Process decodes original once (at reduced scale where the format allows),
// and writes every size as WebP. sizes must be largest first.
func Process(original []byte, sizes []Size) ([]Variant, error) {
	if err := start(); err != nil {
		return nil, err
	}
	if len(original) == 0 || len(sizes) == 0 {
		return nil, ErrUnreadable
	}
	buf := C.CBytes(original)
	defer C.free(buf)
	var lazy *C.VipsImage
	if C.svc_thumbnail_buffer(buf, C.size_t(len(original)), &lazy, C.int(sizes[0].Longest)) != 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnreadable, lastError())
	}
	defer C.svc_unref(lazy)
	// Render the largest once; the smaller sizes come from it, not from a
	// second decode of the original.
	var largest *C.VipsImage
	if C.svc_copy_memory(lazy, &largest) != 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnreadable, lastError())
	}
	defer C.svc_unref(largest)
	C.svc_strip(largest)

	variants := make([]Variant, 0, len(sizes))
	for i, size := range sizes {
		img := largest
		if i > 0 {
			if C.svc_thumbnail_image(largest, &img, C.int(size.Longest)) != 0 {
				return nil, fmt.Errorf("resize to %d: %s", size.Longest, lastError())
			}
		}
		v, err := encode(img, size)
		if i > 0 {
			C.svc_unref(img)
		}
		if err != nil {
			return nil, err
		}
		variants = append(variants, v)
	}
	return variants, nil
}

func encode(img *C.VipsImage, size Size) (Variant, error) {
	var (
		out    unsafe.Pointer
		outLen C.size_t
	)
	if C.svc_webpsave(img, &out, &outLen, C.int(Quality)) != 0 {
		return Variant{}, fmt.Errorf("encode webp %s: %s", size.Name, lastError())
	}
	defer C.g_free(C.gpointer(out))
	webp, err := StripWebPMetadata(C.GoBytes(out, C.int(outLen)))
	if err != nil {
		return Variant{}, err
	}
	return Variant{Size: size, WebP: webp,
		Width: int(C.vips_image_get_width(img)), Height: int(C.vips_image_get_height(img))}, nil
}

// imageChunks are the WebP chunks that carry pixels.
var imageChunks = map[string]bool{"VP8 ": true, "VP8L": true, "VP8X": true, "ALPH": true, "ANIM": true, "ANMF": true}

// VP8X flag bits for metadata.
const (
	vp8xICC  = 0x20
	vp8xEXIF = 0x08
	vp8xXMP  = 0x04
)

// StripWebPMetadata rewrites a WebP file without EXIF, XMP or ICC chunks and
// with their VP8X flags cleared. libvips 8.14 writes an EXIF chunk even when
// asked to strip, so the guarantee is kept here, on the bytes.
func StripWebPMetadata(b []byte) ([]byte, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return nil, errors.New("not a WebP file")
	}
	out := append(make([]byte, 0, len(b)), b[:12]...)
	for i := 12; i < len(b); {
		if i+8 > len(b) {
			return nil, errors.New("truncated WebP chunk header")
		}
		id := string(b[i : i+4])
		size := int(binary.LittleEndian.Uint32(b[i+4 : i+8]))
		end := i + 8 + size + size%2
		if end > len(b) {
			return nil, errors.New("truncated WebP chunk")
		}
		if imageChunks[id] {
			start := len(out)
			out = append(out, b[i:end]...)
			if id == "VP8X" && size >= 1 {
				out[start+8] &^= vp8xICC | vp8xEXIF | vp8xXMP
			}
		}
		i = end
	}
	binary.LittleEndian.PutUint32(out[4:8], uint32(len(out)-8))
	return out, nil
}

func lastError() string {
	msg := strings.TrimSpace(C.GoString(C.vips_error_buffer()))
	C.vips_error_clear()
	return msg
}
