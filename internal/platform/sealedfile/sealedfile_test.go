package sealedfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

var key = bytes.Repeat([]byte{7}, 32)

// write seals content under header into a new file and returns its path.
func write(t *testing.T, header, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "models.sealed")
	w, err := Create(path, key, header)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the file is at its path before Commit: %v", err)
	}
	// In pieces of odd sizes, so chunks fill across writes.
	for rest := content; len(rest) > 0; {
		n := min(len(rest), 333_333)
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}

func readAll(path string, key []byte) ([]byte, []byte, error) {
	r, header, err := Open(path, key)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	content, err := io.ReadAll(r)
	return header, content, err
}

// content is n bytes that differ from chunk to chunk.
func content(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/chunkSize)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, chunkSize, chunkSize + 1, 3*chunkSize + 12345} {
		want := content(n)
		path := write(t, []byte(`{"cursor":42}`), want)
		header, got, err := readAll(path, key)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if string(header) != `{"cursor":42}` || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: read back header %q and %d bytes (equal: %v)", n, header, len(got), bytes.Equal(got, want))
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n >= 64 && bytes.Contains(raw, want[:64]) {
			t.Fatalf("%d bytes: the plaintext is in the file", n)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.tmp")); len(left) > 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	}
}

// Every way a file can be damaged, or opened with the wrong key, is
// refused as a whole or at the damaged chunk: never read as content.
func TestDamagedFilesAreRefused(t *testing.T) {
	want := content(2*chunkSize + 100)
	path := write(t, []byte("header"), want)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	headerEnd := len(magic) + saltSize + 4 + len("header")
	chunk := 4 + chunkSize + 16 // a full chunk's length and ciphertext
	damaged := map[string][]byte{
		"cut short at the end":    raw[:len(raw)-1],
		"its last chunk dropped":  raw[:headerEnd+2*chunk],
		"a byte changed":          flip(raw, headerEnd+chunk+100),
		"the header changed":      flip(raw, headerEnd-1),
		"the salt changed":        flip(raw, len(magic)+1),
		"chunks swapped":          swap(raw, headerEnd, chunk),
		"something appended":      append(append([]byte{}, raw...), 0),
		"not a sealed file":       []byte("hello"),
		"an empty file":           {},
		"a header length too big": append(append([]byte(magic), make([]byte, saltSize)...), 0xff, 0xff, 0xff, 0xff),
	}
	for what, b := range damaged {
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, got, err := readAll(p, key)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: read %d bytes, error %v; want ErrCorrupt", what, len(got), err)
		}
	}
	other := bytes.Repeat([]byte{8}, 32)
	if _, _, err := readAll(path, other); !errors.Is(err, ErrCorrupt) {
		t.Errorf("another key: error %v, want ErrCorrupt", err)
	}
	if _, _, err := readAll(filepath.Join(t.TempDir(), "none"), key); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no file: error %v, want fs.ErrNotExist", err)
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 1
	return c
}

// swap exchanges the two chunks of size n starting at from.
func swap(b []byte, from, n int) []byte {
	c := append([]byte{}, b...)
	copy(c[from:], b[from+n:from+2*n])
	copy(c[from+n:], b[from:from+n])
	return c
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "f"), key, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("partial"))
	w.Abort()
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Fatalf("files left: %v", left)
	}
}
