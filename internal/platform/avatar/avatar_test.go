package avatar

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
)

func dataURL(typ string, b []byte) string {
	return "data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// picture is w×h: red left half, blue right half.
func picture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{255, 0, 0, 255}
			if x >= w/2 {
				c = color.RGBA{0, 0, 255, 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}

func TestNormalizeEachFormat(t *testing.T) {
	var pngB, jpgB, gifB bytes.Buffer
	_ = png.Encode(&pngB, picture(600, 300))
	_ = jpeg.Encode(&jpgB, picture(300, 500), &jpeg.Options{Quality: 90})
	_ = gif.Encode(&gifB, picture(64, 64), nil)
	for _, in := range []string{dataURL("image/png", pngB.Bytes()), dataURL("image/jpeg", jpgB.Bytes()), dataURL("image/gif", gifB.Bytes())} {
		out, err := Normalize(in)
		if err != nil {
			t.Fatalf("%.30s: %v", in, err)
		}
		raw, err := PNG(out)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil || img.Bounds().Dx() != Size || img.Bounds().Dy() != Size {
			t.Fatalf("%.30s: not a %d² PNG: %v %v", in, Size, err, img.Bounds())
		}
		// The centre square keeps both halves: red on the left, blue on the right.
		if r, _, b, _ := img.At(20, 128).RGBA(); r < 0xe000 || b > 0x2000 {
			t.Errorf("%.30s: left is not red", in)
		}
		if r, _, b, _ := img.At(235, 128).RGBA(); b < 0xe000 || r > 0x2000 {
			t.Errorf("%.30s: right is not blue", in)
		}
		again, err := Normalize(out)
		if err != nil || again != out {
			t.Errorf("a stored picture is not stable: %v", err)
		}
	}
}

func TestNormalizeRefusals(t *testing.T) {
	big := make([]byte, MaxBytes+1)
	copy(big, "\x89PNG\r\n\x1a\n")
	// A tiny PNG header claiming a huge canvas.
	var bomb bytes.Buffer
	_ = png.Encode(&bomb, image.NewGray(image.Rect(0, 0, 1, 1)))
	b := bomb.Bytes()
	b[16], b[17], b[18], b[19] = 0, 0, 0x7f, 0xff // width 32767
	b[20], b[21], b[22], b[23] = 0, 0, 0x7f, 0xff // height 32767
	binary.BigEndian.PutUint32(b[29:33], crc32.ChecksumIEEE(b[12:29]))
	for _, c := range []struct {
		in   string
		want error
	}{
		{dataURL("image/png", []byte("just some text")), ErrNotImage},
		{dataURL("image/jpeg", []byte("<svg/>")), ErrNotImage},
		{"data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte("<svg/>")), ErrNotImage},
		{"https://example.com/a.png", ErrNotImage},
		{dataURL("image/png", big), ErrTooLarge},
		{dataURL("image/png", b), ErrTooLarge},
	} {
		if _, err := Normalize(c.in); !errors.Is(err, c.want) {
			t.Errorf("%.40s: %v, want %v", strings.TrimPrefix(c.in, "data:"), err, c.want)
		}
	}
}
