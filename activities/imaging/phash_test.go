package imaging_test

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/image/draw"

	"github.com/merchantsvc/svc/activities/imaging"
)

func readPhoto(t *testing.T, name string) []byte {
	data, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return data
}

func decodePhoto(t *testing.T, data []byte) image.Image {
	img, _, err := image.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	return img
}

func resized(img image.Image, scale float64) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, int(float64(b.Dx())*scale), int(float64(b.Dy())*scale)))
	draw.CatmullRom.Scale(out, out.Bounds(), img, b, draw.Src, nil)
	return out
}

func jpegAt(t *testing.T, img image.Image, quality int) []byte {
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}))
	return buf.Bytes()
}

func pngOf(t *testing.T, img image.Image) []byte {
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

func hashOf(t *testing.T, data []byte) uint64 {
	h, err := imaging.PerceptualHash(data)
	require.NoError(t, err)
	return h
}

// The duplicate gate (distance ≤ 5) must catch the same photograph sent
// again after a messenger re-compressed or resized it.
func TestPerceptualHashFindsTheSamePhotoAltered(t *testing.T) {
	for _, name := range []string{"chelsea.jpg", "coffee.jpg", "astronaut.jpg"} {
		original := readPhoto(t, name)
		img := decodePhoto(t, original)
		want := hashOf(t, original)
		altered := map[string][]byte{
			"re-encoded at quality 35":  jpegAt(t, img, 35),
			"resized to 50%, JPEG 70":   jpegAt(t, resized(img, 0.5), 70),
			"resized to 160%, PNG":      pngOf(t, resized(img, 1.6)),
			"resized to 30%, JPEG 60":   jpegAt(t, resized(img, 0.3), 60),
			"brightened by 8%, JPEG 80": jpegAt(t, brightened(img, 1.08), 80),
		}
		for how, data := range altered {
			d := imaging.Distance(want, hashOf(t, data))
			t.Logf("%s %s: %d", name, how, d)
			require.LessOrEqualf(t, d, 5, "%s %s: distance %d", name, how, d)
		}
	}
}

// A different photograph must not come near the similar-search radius (8).
func TestPerceptualHashSeparatesDifferentPhotos(t *testing.T) {
	names := []string{"chelsea.jpg", "coffee.jpg", "astronaut.jpg"}
	hashes := map[string]uint64{}
	for _, n := range names {
		hashes[n] = hashOf(t, readPhoto(t, n))
	}
	for i, a := range names {
		for _, b := range names[i+1:] {
			d := imaging.Distance(hashes[a], hashes[b])
			t.Logf("%s vs %s: %d", a, b, d)
			require.Greaterf(t, d, 16, "%s vs %s: distance %d", a, b, d)
		}
	}
	// A mirrored photo is a different picture to the hash, too.
	mirrored := decodePhoto(t, readPhoto(t, "chelsea.jpg"))
	flipped := image.NewRGBA(mirrored.Bounds())
	b := mirrored.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			flipped.Set(b.Max.X-1-(x-b.Min.X), y, mirrored.At(x, y))
		}
	}
	require.Greater(t, imaging.Distance(hashes["chelsea.jpg"], hashOf(t, jpegAt(t, flipped, 90))), 8)
}

func brightened(img image.Image, factor float64) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			scale := func(v uint32) uint8 { return uint8(min(float64(v>>8)*factor, 255)) }
			out.Set(x, y, color.RGBA{scale(r), scale(g), scale(bl), uint8(a >> 8)})
		}
	}
	return out
}

// The hash reads structure, not level: the same picture brighter keeps its
// hash, and the negative (every AC coefficient's sign flipped) inverts the
// bits that carry the picture.
func TestHashLumaRules(t *testing.T) {
	picture, brighter, negative := make([]byte, 32*32), make([]byte, 32*32), make([]byte, 32*32)
	for y := range 32 {
		for x := range 32 {
			v := byte(30 + 3*x + 2*y) // a diagonal ramp, at most 185
			if (x-10)*(x-10)+(y-20)*(y-20) < 36 {
				v = 10 // a dark disc
			}
			picture[y*32+x], brighter[y*32+x], negative[y*32+x] = v, v+12, 255-v
		}
	}
	h := imaging.HashLuma(picture)
	require.Equal(t, h, imaging.HashLuma(brighter))
	require.Greater(t, imaging.Distance(h, imaging.HashLuma(negative)), 48)
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b uint64
		want int
	}{
		{0, 0, 0},
		{0, 1, 1},
		{0xFFFFFFFFFFFFFFFF, 0, 64},
		{0xF0F0, 0x0F0F, 16},
		{1 << 63, 1, 2},
	} {
		require.Equal(t, tc.want, imaging.Distance(tc.a, tc.b))
	}
}

func TestPerceptualHashRefusesNonImages(t *testing.T) {
	_, err := imaging.PerceptualHash([]byte("not an image"))
	require.ErrorIs(t, err, imaging.ErrUnreadable)
	_, err = imaging.PerceptualHash(nil)
	require.ErrorIs(t, err, imaging.ErrUnreadable)
}
