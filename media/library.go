package media

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrTooLarge means the decoded audio is over the configured limit (413).
var ErrTooLarge = errors.New("audio over the size limit")

// ErrBadBase64 means audio_base64 is not valid standard base64 (400).
var ErrBadBase64 = errors.New("audio_base64 is not valid base64")

// Library is the media directory: <Root>/<tenant>/<kind>/<file>.wav.
type Library struct {
	Root string
	// MaxBytes caps one decoded upload.
	MaxBytes int64
	Conv     Converter
}

// Stored describes a converted file now in the library.
type Stored struct {
	// Rel is the path below Root ("acme/prompts/1a2b….wav").
	Rel      string
	Filename string
	// Source is the format the upload arrived in.
	Source     Format
	Rate       int
	DurationMS int64
	SizeBytes  int64
	// Digest is the SHA-256 of the uploaded bytes: what idempotent imports
	// compare to tell a repeat from different content.
	Digest string
}

// Digest is the hex SHA-256 of b, as Stored.Digest.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// DecodeBase64 decodes standard base64, refusing before decoding anything
// that would come out over max bytes.
func DecodeBase64(s string, max int64) ([]byte, error) {
	if int64(base64.StdEncoding.DecodedLen(len(s))) > max+2 {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil && int64(len(b)) <= max {
			return b, nil
		}
		return nil, ErrTooLarge
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrBadBase64
	}
	return b, nil
}

// safePart reports whether s can be one path component chosen by us from
// validated names (tenant names, class names): no separators, no dots first.
func safePart(s string) bool {
	if s == "" || len(s) > 64 || strings.HasPrefix(s, ".") {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Dir is the directory below Root holding a tenant's files of one kind
// (kind may have several parts, "moh/jazz").
func Dir(tenant string, kind ...string) (string, error) {
	parts := append([]string{tenant}, kind...)
	for _, p := range parts {
		if !safePart(p) {
			return "", fmt.Errorf("media path part %q is not a safe name", p)
		}
	}
	return filepath.Join(parts...), nil
}

// Ingest detects, converts and stores audio as mono 16-bit WAV at rate in
// <Root>/<dir>, answering ErrTooLarge, ErrUnsupported or ErrUndecodable for
// refused input. The file appears under its final name only complete (a
// temporary file renamed into place); on any error nothing is left behind.
// The caller removes Stored.Rel when it cannot record the file.
func (l *Library) Ingest(ctx context.Context, dir string, audio []byte, rate int) (Stored, error) {
	if l.MaxBytes > 0 && int64(len(audio)) > l.MaxBytes {
		return Stored{}, ErrTooLarge
	}
	format, err := Detect(audio)
	if err != nil {
		return Stored{}, err
	}
	abs := filepath.Join(l.Root, dir)
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return Stored{}, fmt.Errorf("media directory: %w", err)
	}
	in, err := os.CreateTemp(abs, ".upload-*")
	if err != nil {
		return Stored{}, fmt.Errorf("media upload file: %w", err)
	}
	defer os.Remove(in.Name())
	if _, err := in.Write(audio); err != nil {
		in.Close()
		return Stored{}, fmt.Errorf("write media upload: %w", err)
	}
	if err := in.Close(); err != nil {
		return Stored{}, fmt.Errorf("write media upload: %w", err)
	}
	name := randomName() + ".wav"
	part := filepath.Join(abs, "."+name+".part")
	defer os.Remove(part) // gone after the rename; removes leftovers on failure
	if err := l.Conv.convert(ctx, in.Name(), format, part, rate); err != nil {
		return Stored{}, err
	}
	info, err := readWAVInfo(part)
	if err != nil {
		return Stored{}, err
	}
	if err := syncFile(part); err != nil {
		return Stored{}, err
	}
	st, err := os.Stat(part)
	if err != nil {
		return Stored{}, fmt.Errorf("converted audio: %w", err)
	}
	if err := os.Rename(part, filepath.Join(abs, name)); err != nil {
		return Stored{}, fmt.Errorf("place converted audio: %w", err)
	}
	return Stored{
		Rel: filepath.ToSlash(filepath.Join(dir, name)), Filename: name, Source: format,
		Rate: info.Rate, DurationMS: info.DurationMS, SizeBytes: st.Size(), Digest: Digest(audio),
	}, nil
}

// Path is the absolute path of a file below Root, refusing any rel that
// would leave it.
func (l *Library) Path(rel string) (string, error) {
	clean := filepath.Clean("/" + rel)
	if clean == "/" || strings.Contains(rel, "..") {
		return "", fmt.Errorf("media path %q is not inside the library", rel)
	}
	return filepath.Join(l.Root, clean), nil
}

// Remove deletes a stored file; a file already gone is not an error.
func (l *Library) Remove(rel string) error {
	p, err := l.Path(rel)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove media %s: %w", rel, err)
	}
	return nil
}

// syncFile flushes a file to disk so a rename never exposes an empty file
// after a crash.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("sync media: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync media: %w", err)
	}
	return nil
}

func randomName() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	return hex.EncodeToString(b[:])
}

// Copy copies the file at rel to dst (both below Root) through a temporary
// file renamed into place, answering dst's rel.
func (l *Library) Copy(ctx context.Context, rel, dst string) (string, error) {
	src, err := l.Path(rel)
	if err != nil {
		return "", err
	}
	out, err := l.Path(dst)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("copy media %s: %w", rel, err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", fmt.Errorf("media directory: %w", err)
	}
	part := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".part")
	defer os.Remove(part)
	w, err := os.Create(part)
	if err != nil {
		return "", fmt.Errorf("copy media %s: %w", rel, err)
	}
	if _, err := io.Copy(w, in); err != nil {
		w.Close()
		return "", fmt.Errorf("copy media %s: %w", rel, err)
	}
	if err := w.Sync(); err != nil {
		w.Close()
		return "", fmt.Errorf("copy media %s: %w", rel, err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("copy media %s: %w", rel, err)
	}
	if err := os.Rename(part, out); err != nil {
		return "", fmt.Errorf("place media copy: %w", err)
	}
	return filepath.ToSlash(dst), nil
}
