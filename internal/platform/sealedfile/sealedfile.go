// Package sealedfile writes and reads files whose contents are encrypted
// and authenticated with a caller's key (AES-256-GCM), in chunks, so
// neither side holds the whole file in memory. A file that was cut short,
// had chunks reordered or dropped, was altered, or was sealed with another
// key is refused. A file appears under its name only once complete
// (written beside it, then renamed).
//
// Layout: magic, a random salt, the caller's header (in clear, but bound
// to every chunk), then chunks of up to chunkSize plaintext bytes, each
// its length and its ciphertext. Each file has its own key (the caller's
// key and the salt), so chunk numbers can serve as nonces; the last chunk
// is sealed under a nonce of its own kind, so a file missing its end is
// told from a complete one.
package sealedfile

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

const (
	magic     = "SBSEALED1\n"
	saltSize  = 16
	chunkSize = 1 << 20
	// maxHeader bounds the clear header a reader accepts.
	maxHeader = 1 << 16
)

// ErrCorrupt is returned for a file that is not a complete sealed file
// made with the key given.
var ErrCorrupt = errors.New("sealed file corrupt, cut short or sealed with another key")

// Writer seals what is written to it into a new file; Commit completes it.
type Writer struct {
	f    *os.File
	out  *bufio.Writer
	path string
	aead cipher.AEAD
	aad  []byte
	buf  []byte // plaintext of the chunk being filled
	n    uint64 // chunks written
	err  error
}

// Create starts a sealed file at path with a clear header (something a
// reader checks before it decrypts anything, e.g. what wrote the file).
// Nothing is at path until Commit.
func Create(path string, key, header []byte) (*Writer, error) {
	if len(header) > maxHeader {
		return nil, fmt.Errorf("sealed file header: %d bytes, at most %d", len(header), maxHeader)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sealed file directory: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("create sealed file: %w", err)
	}
	salt := make([]byte, saltSize)
	if _, err := rand.Read(salt); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("sealed file salt: %w", err)
	}
	aead, aad, err := fileCipher(key, salt, header)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	w := &Writer{f: f, out: bufio.NewWriterSize(f, 64<<10), path: path, aead: aead, aad: aad, buf: make([]byte, 0, chunkSize)}
	w.out.WriteString(magic)
	w.out.Write(salt)
	w.writeLen(len(header))
	w.out.Write(header)
	return w, nil
}

// Write buffers p, sealing each full chunk.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := len(p)
	for len(p) > 0 {
		take := min(len(p), chunkSize-len(w.buf))
		w.buf = append(w.buf, p[:take]...)
		p = p[take:]
		if len(w.buf) == chunkSize {
			w.seal(false)
		}
	}
	return n, w.err
}

// Commit seals the last chunk, syncs the file and puts it at its path
// (replacing any file there).
func (w *Writer) Commit() error {
	w.seal(true)
	if w.err == nil {
		w.err = w.out.Flush()
	}
	if w.err == nil {
		w.err = w.f.Sync()
	}
	if cerr := w.f.Close(); w.err == nil {
		w.err = cerr
	}
	if w.err == nil {
		w.err = os.Rename(w.f.Name(), w.path)
	}
	if w.err != nil {
		os.Remove(w.f.Name())
		return fmt.Errorf("write sealed file: %w", w.err)
	}
	return nil
}

// Abort drops the file being written.
func (w *Writer) Abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

func (w *Writer) seal(last bool) {
	if w.err != nil {
		return
	}
	sealed := w.aead.Seal(nil, nonce(w.n, last), w.buf, w.aad)
	w.n++
	w.buf = w.buf[:0]
	w.writeLen(len(sealed))
	_, w.err = w.out.Write(sealed)
}

func (w *Writer) writeLen(n int) {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(n))
	if _, err := w.out.Write(b[:]); err != nil && w.err == nil {
		w.err = err
	}
}

// Reader opens a sealed file's chunks in order.
type Reader struct {
	f    *os.File
	in   *bufio.Reader
	aead cipher.AEAD
	aad  []byte
	buf  []byte // plaintext not read yet
	// sealed and plain are the current chunk's buffers, reused: an open
	// that fails clears its output, so the two never overlap.
	sealed, plain []byte
	n             uint64
	last          bool // the last chunk was opened
	err           error
}

// Open opens the sealed file at path and returns its clear header. The
// header is only proven to belong to the file once the first chunk is
// read; the contents only as they are read. The error wraps fs.ErrNotExist
// when there is no file.
func Open(path string, key []byte) (*Reader, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open sealed file: %w", err)
	}
	in := bufio.NewReaderSize(f, 64<<10)
	head := make([]byte, len(magic)+saltSize+4)
	if _, err := io.ReadFull(in, head); err != nil || string(head[:len(magic)]) != magic {
		f.Close()
		return nil, nil, ErrCorrupt
	}
	salt := head[len(magic) : len(magic)+saltSize]
	n := binary.BigEndian.Uint32(head[len(magic)+saltSize:])
	if n > maxHeader {
		f.Close()
		return nil, nil, ErrCorrupt
	}
	header := make([]byte, n)
	if _, err := io.ReadFull(in, header); err != nil {
		f.Close()
		return nil, nil, ErrCorrupt
	}
	aead, aad, err := fileCipher(key, salt, header)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return &Reader{f: f, in: in, aead: aead, aad: aad}, header, nil
}

// Read returns the file's plaintext; io.EOF only after its last chunk,
// ErrCorrupt for anything else that does not open.
func (r *Reader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.last {
			r.err = io.EOF
			return 0, r.err
		}
		r.open()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// open reads and opens the next chunk.
func (r *Reader) open() {
	var lb [4]byte
	if _, err := io.ReadFull(r.in, lb[:]); err != nil {
		r.err = ErrCorrupt // the last chunk is missing
		return
	}
	n := binary.BigEndian.Uint32(lb[:])
	if n > chunkSize+uint32(r.aead.Overhead()) {
		r.err = ErrCorrupt
		return
	}
	if cap(r.sealed) < int(n) {
		r.sealed = make([]byte, n)
	}
	sealed := r.sealed[:n]
	if _, err := io.ReadFull(r.in, sealed); err != nil {
		r.err = ErrCorrupt
		return
	}
	// A chunk opens under either nonce of its number: which one tells
	// whether it is the last.
	for _, last := range []bool{false, true} {
		if plain, err := r.aead.Open(r.plain[:0], nonce(r.n, last), sealed, r.aad); err == nil {
			r.plain = plain
			r.buf, r.last = plain, last
			r.n++
			if last {
				// Nothing may follow the last chunk.
				if _, err := r.in.ReadByte(); err != io.EOF {
					r.err = ErrCorrupt
				}
			}
			return
		}
	}
	r.err = ErrCorrupt
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// fileCipher is the file's AEAD (its key made from key and salt) and the
// additional data binding every chunk to the file's header.
func fileCipher(key, salt, header []byte) (cipher.AEAD, []byte, error) {
	if len(key) < 32 {
		return nil, nil, errors.New("sealed file: the key must be at least 32 bytes")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("sealedfile key"))
	mac.Write(salt)
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, nil, fmt.Errorf("sealed file cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, nil, fmt.Errorf("sealed file cipher: %w", err)
	}
	h := sha256.New()
	h.Write([]byte(magic))
	h.Write(salt)
	h.Write(header)
	return aead, h.Sum(nil), nil
}

// nonce is chunk i's nonce: its number, and whether it is the last.
func nonce(i uint64, last bool) []byte {
	var n [12]byte
	binary.BigEndian.PutUint64(n[:8], i)
	if last {
		n[8] = 1
	}
	return n[:]
}
