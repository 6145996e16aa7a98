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
	"time"
)

// ErrTooLarge means the decoded audio is over the configured limit (413).
var ErrTooLarge = errors.New("audio over the size limit")

// ErrTooLong means the audio plays longer than the configured limit (413).
var ErrTooLong = errors.New("audio over the duration limit")

// ErrQuota means storing the audio would take the tenant over its
// max_storage_mb (413).
var ErrQuota = errors.New("tenant storage quota exceeded")

// LimitError is a refusal for a limit (ErrTooLong, ErrTooLarge, ErrQuota)
// with a message for the client naming the limit.
type LimitError struct {
	Err error
	Msg string
}

func (e *LimitError) Error() string { return e.Msg }

// Unwrap makes errors.Is(err, e.Err) hold.
func (e *LimitError) Unwrap() error { return e.Err }

// ErrBadBase64 means audio_base64 is not valid standard base64 (400).
var ErrBadBase64 = errors.New("audio_base64 is not valid base64")

// Library is the media directory: <Root>/<tenant>/<kind>/<file>.wav.
type Library struct {
	Root string
	// MaxBytes caps one decoded upload.
	MaxBytes int64
	// MaxDuration caps the play time of one stored file unless an Ingest
	// asks for less (voice prompts); 0 leaves it to MaxStoredBytes.
	MaxDuration time.Duration
	// MaxPromptDuration caps a voice prompt (StoreAudio).
	MaxPromptDuration time.Duration
	// MaxStoredBytes caps one converted file (0: no cap); with the rate it
	// bounds the play time too, so a small, highly compressed upload (a
	// FLAC of silence) cannot become a huge WAV.
	MaxStoredBytes int64
	Conv           Converter
}

// Bounds are what one Ingest allows beyond the library's own limits.
type Bounds struct {
	// MaxDuration caps the play time when below the library's MaxDuration.
	MaxDuration time.Duration
	// Admit, when set, is asked with the converted file's size before the
	// file is placed (the tenant's storage quota); its error refuses it.
	Admit func(ctx context.Context, size int64) error
}

// wavHeader is the size of the header of the WAV files sox writes.
const wavHeader = 44

// maxDuration is the play time one Ingest at b allows (0: no cap).
func (l *Library) maxDuration(b Bounds) time.Duration {
	d := l.MaxDuration
	if b.MaxDuration > 0 && (d <= 0 || b.MaxDuration < d) {
		d = b.MaxDuration
	}
	return d
}

// overLimit refuses audio of secs seconds stored at rate (16-bit mono)
// when it plays longer than maxDur or the file would exceed MaxStoredBytes.
func (l *Library) overLimit(secs float64, rate int, maxDur time.Duration) error {
	if maxDur > 0 && secs > maxDur.Seconds() {
		return &LimitError{Err: ErrTooLong, Msg: fmt.Sprintf("the audio is longer than this server's limit of %s", maxDur)}
	}
	if size := wavHeader + int64(secs*float64(rate))*2; l.MaxStoredBytes > 0 && size > l.MaxStoredBytes {
		return &LimitError{Err: ErrTooLarge, Msg: fmt.Sprintf("converted to a %d Hz WAV the audio would take more than this server's limit of %d bytes per file", rate, l.MaxStoredBytes)}
	}
	return nil
}

// maxSeconds is the play time a conversion at rate may produce before it
// is cut (and then refused): just over what overLimit admits; 0 for none.
func (l *Library) maxSeconds(rate int, maxDur time.Duration) float64 {
	secs := maxDur.Seconds()
	if l.MaxStoredBytes > 0 {
		if b := float64(l.MaxStoredBytes-wavHeader) / float64(2*rate); secs <= 0 || b < secs {
			secs = b
		}
	}
	if secs <= 0 {
		return 0
	}
	return secs + 0.1
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
// <Root>/<dir>, answering ErrTooLarge, ErrTooLong, ErrUnsupported,
// ErrUndecodable or b.Admit's error for refused input. The play time the
// upload declares is checked before converting, and the conversion itself
// stops just past the limit, so an upload that lies about its length
// never writes more. The file appears under its final name only complete
// (a temporary file renamed into place); on any error nothing is left
// behind. The caller removes Stored.Rel when it cannot record the file.
func (l *Library) Ingest(ctx context.Context, dir string, audio []byte, rate int, b Bounds) (Stored, error) {
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
	// The format's extension is how sox --i picks its reader.
	in, err := os.CreateTemp(abs, ".upload-*."+string(format))
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
	maxDur := l.maxDuration(b)
	if secs, ok := l.Conv.declaredSeconds(ctx, in.Name()); ok {
		if err := l.overLimit(secs, rate, maxDur); err != nil {
			return Stored{}, err
		}
	}
	if err := l.Conv.convert(ctx, in.Name(), format, part, rate, l.maxSeconds(rate, maxDur)); err != nil {
		return Stored{}, err
	}
	info, err := readWAVInfo(part)
	if err != nil {
		return Stored{}, err
	}
	if err := l.overLimit(float64(info.DurationMS)/1000, rate, maxDur); err != nil {
		return Stored{}, err
	}
	st, err := os.Stat(part)
	if err != nil {
		return Stored{}, fmt.Errorf("converted audio: %w", err)
	}
	if b.Admit != nil {
		if err := b.Admit(ctx, st.Size()); err != nil {
			return Stored{}, err
		}
	}
	if err := syncFile(part); err != nil {
		return Stored{}, err
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
