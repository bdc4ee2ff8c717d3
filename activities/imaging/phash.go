package imaging

/*
#include <stdlib.h>
#include <vips/vips.h>
// The perceptual hash's input: the picture upright, squashed to exactly
// size×size (aspect ratio ignored, as pHash does), flattened onto white and
// reduced to one 8-bit luminance band.
static int svc_luma_square(void *buf, size_t len, int size, unsigned char **out, size_t *outLen) {
	VipsImage *thumb = NULL, *flat = NULL, *gray = NULL, *u8 = NULL;
	int rc = -1;
	if (vips_thumbnail_buffer(buf, len, &thumb, size, "height", size, "size", VIPS_SIZE_FORCE, NULL)) goto done;
	if (vips_image_hasalpha(thumb)) {
		double white[1] = {255};
		VipsArrayDouble *bg = vips_array_double_new(white, 1);
		int err = vips_flatten(thumb, &flat, "background", bg, NULL);
		vips_area_unref(VIPS_AREA(bg));
		if (err) goto done;
	} else {
		flat = thumb;
		g_object_ref(flat);
	}
	if (vips_colourspace(flat, &gray, VIPS_INTERPRETATION_B_W, NULL)) goto done;
	if (vips_cast_uchar(gray, &u8, NULL)) goto done;
	if (vips_image_get_bands(u8) != 1) goto done;
	*out = vips_image_write_to_memory(u8, outLen);
	rc = *out == NULL ? -1 : 0;
done:
	if (u8) g_object_unref(u8);
	if (gray) g_object_unref(gray);
	if (flat) g_object_unref(flat);
	if (thumb) g_object_unref(thumb);
	return rc;
}
*/
import "C"

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// The perceptual hash is the DCT hash of pHash (phash.org, ph_dct_imagehash)
// and of goimagehash's PerceptionHash: the picture as 32×32 luminance, its
// two-dimensional DCT-II, and one bit per low-frequency coefficient — the
// 8×8 block after the DC row and column — set when the coefficient is above
// the block's median. Re-encoding, resizing and mild colour changes move few
// bits; a different picture moves about half of them.
//
// Why written here: the module proxy this project builds through serves no
// perceptual-hash module (goimagehash, imghash, images4, duplo and others
// answer 403), and the maintained C implementation that Debian carries is
// OpenCV's img_hash, which pulls 185 packages into every build machine. The
// pixel work (decode, orientation, downscale, colour) is libvips', already a
// dependency; what remains is the 64-bit DCT below, fixed by the tests in
// phash_test.go against real photographs.
const (
	hashSide  = 32 // the luminance square
	hashBlock = 8  // low-frequency block: 8×8 = 64 bits
)

// PerceptualHash is the 64-bit DCT hash of an encoded image.
func PerceptualHash(encoded []byte) (uint64, error) {
	if err := start(); err != nil {
		return 0, err
	}
	if len(encoded) == 0 {
		return 0, ErrUnreadable
	}
	buf := C.CBytes(encoded)
	defer C.free(buf)
	var (
		out    *C.uchar
		outLen C.size_t
	)
	if C.svc_luma_square(buf, C.size_t(len(encoded)), hashSide, &out, &outLen) != 0 {
		return 0, fmt.Errorf("%w: %s", ErrUnreadable, lastError())
	}
	defer C.g_free(C.gpointer(out))
	if int(outLen) != hashSide*hashSide {
		return 0, fmt.Errorf("%w: luminance square has %d bytes", ErrUnreadable, outLen)
	}
	return HashLuma(C.GoBytes(unsafe.Pointer(out), C.int(outLen))), nil
}

// HashLuma hashes a 32×32 luminance square, row by row.
func HashLuma(luma []byte) uint64 {
	var pixels [hashSide][hashSide]float64
	for y := range hashSide {
		for x := range hashSide {
			pixels[y][x] = float64(luma[y*hashSide+x])
		}
	}
	coeffs := dct2D(pixels)
	block := make([]float64, 0, hashBlock*hashBlock)
	for v := 1; v <= hashBlock; v++ {
		for u := 1; u <= hashBlock; u++ {
			block = append(block, coeffs[v][u])
		}
	}
	sorted := slices.Clone(block)
	slices.Sort(sorted)
	median := (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	var hash uint64
	for i, c := range block {
		if c > median {
			hash |= 1 << (63 - i)
		}
	}
	return hash
}

// Distance is the number of bits two hashes differ in.
func Distance(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// dctBasis[k][n] = cos(π(2n+1)k / 2N), the DCT-II basis for N = 32.
var dctBasis = func() (b [hashSide][hashSide]float64) {
	for k := range hashSide {
		for n := range hashSide {
			b[k][n] = math.Cos(math.Pi * float64(2*n+1) * float64(k) / (2 * hashSide))
		}
	}
	return b
}()

// dct2D is the separable DCT-II: rows, then columns. Only the first
// hashBlock+1 frequencies of each are needed. Scale factors are left out:
// they are the same for every coefficient of the block, so the median
// comparison does not see them.
func dct2D(p [hashSide][hashSide]float64) (out [hashBlock + 1][hashBlock + 1]float64) {
	var rows [hashSide][hashBlock + 1]float64
	for y := range hashSide {
		for u := range hashBlock + 1 {
			var sum float64
			for x := range hashSide {
				sum += p[y][x] * dctBasis[u][x]
			}
			rows[y][u] = sum
		}
	}
	for v := range hashBlock + 1 {
		for u := range hashBlock + 1 {
			var sum float64
			for y := range hashSide {
				sum += rows[y][u] * dctBasis[v][y]
			}
			out[v][u] = sum
		}
	}
	return out
}
