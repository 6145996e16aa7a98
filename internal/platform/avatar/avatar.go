// Package avatar turns an uploaded picture (a data: URL holding a PNG,
// JPEG or GIF) into the one form Switchboard stores and serves: a 256×256
// PNG, the centre square of the picture scaled to fit. Re-encoding also
// drops whatever else the upload carried (metadata, extra frames, a
// payload disguised as an image).
package avatar

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"

	"golang.org/x/image/draw"
)

// Size is the stored picture's width and height in pixels.
const Size = 256

// MaxBytes bounds the uploaded image (decoded).
const MaxBytes = 1 << 20

// maxPixels bounds the decoded picture, so a small file cannot claim a
// huge canvas (a decompression bomb).
const maxPixels = 40_000_000

// Errors a caller reports to the client.
var (
	ErrNotImage = errors.New("not a PNG, JPEG or GIF image in a data: URL (data:image/png;base64,…)")
	ErrTooLarge = errors.New("the image is larger than 1 MiB")
)

var decoders = map[string]func([]byte) (image.Image, error){
	"image/png":  func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) },
	"image/jpeg": func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) },
	"image/gif":  func(b []byte) (image.Image, error) { return gif.Decode(bytes.NewReader(b)) },
}

var configs = map[string]func([]byte) (image.Config, error){
	"image/png":  func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) },
	"image/jpeg": func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) },
	"image/gif":  func(b []byte) (image.Config, error) { return gif.DecodeConfig(bytes.NewReader(b)) },
}

// Normalize decodes a data: URL and answers the stored form: a data: URL
// of a 256×256 PNG. An already normalized picture comes back unchanged.
func Normalize(dataURL string) (string, error) {
	typ, raw, err := decodeDataURL(dataURL)
	if err != nil {
		return "", err
	}
	if len(raw) > MaxBytes {
		return "", ErrTooLarge
	}
	cfg, err := configs[typ](raw)
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return "", ErrNotImage
	}
	if cfg.Width*cfg.Height > maxPixels {
		return "", fmt.Errorf("%w (%d×%d pixels)", ErrTooLarge, cfg.Width, cfg.Height)
	}
	if typ == "image/png" && cfg.Width == Size && cfg.Height == Size {
		if _, err := png.Decode(bytes.NewReader(raw)); err == nil {
			return dataURL, nil
		}
	}
	src, err := decoders[typ](raw)
	if err != nil {
		return "", ErrNotImage
	}
	// The centre square, scaled to Size×Size.
	b := src.Bounds()
	side := min(b.Dx(), b.Dy())
	corner := image.Pt(b.Min.X+(b.Dx()-side)/2, b.Min.Y+(b.Dy()-side)/2)
	crop := image.Rectangle{Min: corner, Max: corner.Add(image.Pt(side, side))}
	dst := image.NewRGBA(image.Rect(0, 0, Size, Size))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, crop, draw.Src, nil)
	var out bytes.Buffer
	if err := png.Encode(&out, dst); err != nil {
		return "", fmt.Errorf("encode avatar: %w", err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(out.Bytes()), nil
}

// PNG returns the PNG bytes of a stored (normalized) picture.
func PNG(stored string) ([]byte, error) {
	typ, raw, err := decodeDataURL(stored)
	if err != nil || typ != "image/png" {
		return nil, ErrNotImage
	}
	return raw, nil
}

// Hash is a short content hash of a stored picture: it names the picture
// in its URL, so a changed picture gets a new URL (and caches may keep
// the old one for ever) and URLs cannot be guessed from ids alone.
func Hash(stored string) string {
	sum := sha256.Sum256([]byte(stored))
	return hex.EncodeToString(sum[:8])
}

func decodeDataURL(s string) (typ string, raw []byte, err error) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return "", nil, ErrNotImage
	}
	meta, payload, ok := strings.Cut(rest, ",")
	typ, enc, _ := strings.Cut(meta, ";")
	if !ok || enc != "base64" || decoders[typ] == nil {
		return "", nil, ErrNotImage
	}
	if base64.StdEncoding.DecodedLen(len(payload)) > MaxBytes+3 {
		return "", nil, ErrTooLarge
	}
	raw, err = base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, ErrNotImage
	}
	return typ, raw, nil
}
