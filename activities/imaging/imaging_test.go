package imaging_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/image/webp"

	"github.com/merchantsvc/svc/activities/imaging"
)

// gradient is a test picture whose top-left corner is red.
func gradient(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(255 * x / w), uint8(255 * y / h), 128, 255})
		}
	}
	for y := range h / 4 {
		for x := range w / 4 {
			img.Set(x, y, color.RGBA{255, 0, 0, 255})
		}
	}
	return img
}

func encodeJPEG(t *testing.T, img image.Image) []byte {
	var buf bytes.Buffer
	require.NoError(t, jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}))
	return buf.Bytes()
}

// withEXIF inserts an APP1 segment with an Orientation tag and a GPS IFD.
func withEXIF(jpg []byte, orientation uint16) []byte {
	le := binary.LittleEndian
	tiff := []byte("II*\x00")
	tiff = le.AppendUint32(tiff, 8)
	// IFD0: Orientation, GPS pointer.
	tiff = le.AppendUint16(tiff, 2)
	tiff = le.AppendUint16(tiff, 0x0112)
	tiff = le.AppendUint16(tiff, 3)
	tiff = le.AppendUint32(tiff, 1)
	tiff = le.AppendUint16(tiff, orientation)
	tiff = le.AppendUint16(tiff, 0)
	tiff = le.AppendUint16(tiff, 0x8825)
	tiff = le.AppendUint16(tiff, 4)
	tiff = le.AppendUint32(tiff, 1)
	tiff = le.AppendUint32(tiff, 8+2+2*12+4)
	tiff = le.AppendUint32(tiff, 0)
	// GPS IFD: GPSLatitudeRef "N".
	tiff = le.AppendUint16(tiff, 1)
	tiff = le.AppendUint16(tiff, 0x0001)
	tiff = le.AppendUint16(tiff, 2)
	tiff = le.AppendUint32(tiff, 2)
	tiff = append(tiff, 'N', 0, 0, 0)
	tiff = le.AppendUint32(tiff, 0)
	payload := append([]byte("Exif\x00\x00"), tiff...)
	seg := []byte{0xFF, 0xE1}
	seg = binary.BigEndian.AppendUint16(seg, uint16(len(payload)+2))
	seg = append(seg, payload...)
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

func decodeWebP(t *testing.T, b []byte) image.Image {
	require.Equal(t, "RIFF", string(b[:4]))
	require.Equal(t, "WEBP", string(b[8:12]))
	img, err := webp.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	return img
}

// riffChunks lists the chunk ids of a WebP file.
func riffChunks(b []byte) []string {
	var ids []string
	for i := 12; i+8 <= len(b); {
		ids = append(ids, string(b[i:i+4]))
		size := int(binary.LittleEndian.Uint32(b[i+4 : i+8]))
		i += 8 + size + size%2
	}
	return ids
}

func TestEveryFormatToThreeWebPSizes(t *testing.T) {
	src := gradient(3000, 2000)
	var pngBuf, gifBuf bytes.Buffer
	require.NoError(t, png.Encode(&pngBuf, src))
	require.NoError(t, gif.Encode(&gifBuf, gradient(1500, 1000), nil))
	fromJPEG, err := imaging.Process(encodeJPEG(t, src), imaging.Sizes)
	require.NoError(t, err)

	inputs := map[string]struct {
		data []byte
		w, h int
	}{
		"jpeg": {encodeJPEG(t, src), 3000, 2000},
		"png":  {pngBuf.Bytes(), 3000, 2000},
		"gif":  {gifBuf.Bytes(), 1500, 1000},
		"webp": {fromJPEG[0].WebP, 1200, 800},
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			variants, err := imaging.Process(in.data, imaging.Sizes)
			require.NoError(t, err)
			require.Len(t, variants, 3)
			want := map[string][2]int{"large": {1200, 800}, "medium": {600, 400}, "thumbnail": {150, 100}}
			for _, v := range variants {
				img := decodeWebP(t, v.WebP)
				got := [2]int{img.Bounds().Dx(), img.Bounds().Dy()}
				require.Equal(t, want[v.Name], got, "%s from %s", v.Name, name)
				require.Equal(t, got, [2]int{v.Width, v.Height})
				r, g, b, _ := img.At(2, 2).RGBA()
				require.Greater(t, r>>8, uint32(200), "top-left stays red")
				require.Less(t, g>>8, uint32(60))
				require.Less(t, b>>8, uint32(60))
				require.Contains(t, riffChunks(v.WebP), "VP8 ", "lossy WebP")
			}
		})
	}
}

func TestSmallImagesAreNeverUpscaled(t *testing.T) {
	variants, err := imaging.Process(encodeJPEG(t, gradient(400, 300)), imaging.Sizes)
	require.NoError(t, err)
	got := map[string][2]int{}
	for _, v := range variants {
		img := decodeWebP(t, v.WebP)
		got[v.Name] = [2]int{img.Bounds().Dx(), img.Bounds().Dy()}
	}
	require.Equal(t, map[string][2]int{"large": {400, 300}, "medium": {400, 300}, "thumbnail": {150, 113}}, got)
}

// EXIF orientation 6 (rotate 90° clockwise) is applied, and every tag,
// GPS included, is stripped from the output.
func TestOrientationAppliedAndMetadataStripped(t *testing.T) {
	in := withEXIF(encodeJPEG(t, gradient(800, 400)), 6)
	require.Contains(t, string(in), "Exif")
	variants, err := imaging.Process(in, imaging.Sizes)
	require.NoError(t, err)
	for _, v := range variants {
		img := decodeWebP(t, v.WebP)
		require.Greater(t, img.Bounds().Dy(), img.Bounds().Dx(), "%s is portrait after rotation", v.Name)
		// Rotated clockwise, the red top-left corner moves to the top-right.
		r, _, _, _ := img.At(img.Bounds().Dx()-3, 2).RGBA()
		require.Greater(t, r>>8, uint32(200), v.Name)
		for _, id := range riffChunks(v.WebP) {
			require.NotContains(t, []string{"EXIF", "XMP ", "ICCP"}, id, v.Name)
		}
		require.NotContains(t, string(v.WebP), "Exif")
	}
	require.Equal(t, [2]int{75, 150}, [2]int{variants[2].Width, variants[2].Height})
}

func TestUnreadableInput(t *testing.T) {
	_, err := imaging.Process([]byte("this is not an image"), imaging.Sizes)
	require.ErrorIs(t, err, imaging.ErrUnreadable)
	_, err = imaging.Process(encodeJPEG(t, gradient(100, 100))[:200], imaging.Sizes)
	require.Error(t, err)
}
