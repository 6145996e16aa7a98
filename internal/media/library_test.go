package media_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/media/mediatest"
)

func TestDetectFromBytes(t *testing.T) {
	cases := map[string]struct {
		b    []byte
		want media.Format
	}{
		"wav":          {[]byte("RIFF\x24\x00\x00\x00WAVEfmt "), media.WAV},
		"ogg":          {[]byte("OggS\x00\x02"), media.OGG},
		"flac":         {[]byte("fLaC\x00\x00\x00\x22"), media.FLAC},
		"mp3 id3":      {[]byte("ID3\x04\x00\x00"), media.MP3},
		"mp3 frame":    {[]byte{0xFF, 0xFB, 0x90, 0x64}, media.MP3},
		"riff not wav": {[]byte("RIFF\x24\x00\x00\x00AVI LIST"), ""},
		"png":          {[]byte("\x89PNG\r\n\x1a\n"), ""},
		"text":         {[]byte("hello world, this is not audio"), ""},
		"bad mpeg":     {[]byte{0xFF, 0xFB, 0xF0, 0x64}, ""},
		"empty":        {nil, ""},
	}
	for name, c := range cases {
		got, err := media.Detect(c.b)
		if got != c.want || (c.want == "") != errors.Is(err, media.ErrUnsupported) {
			t.Errorf("%s: Detect = %q, %v; want %q", name, got, err, c.want)
		}
	}
}

func TestIngestConvertsRealWAVAndMP3(t *testing.T) {
	lib := &media.Library{Root: t.TempDir(), MaxBytes: 16 << 20}
	for _, c := range []struct {
		file string
		rate int
		want media.Format
	}{
		{"in.wav", 16000, media.WAV}, {"in.mp3", 8000, media.MP3}, {"in.ogg", 8000, media.OGG}, {"in.flac", 16000, media.FLAC},
	} {
		audio := mediatest.Tone(t, c.file, 2)
		st, err := lib.Ingest(context.Background(), "acme/prompts", audio, c.rate, media.Bounds{})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if st.Source != c.want || st.Rate != c.rate || st.DurationMS < 1900 || st.DurationMS > 2100 {
			t.Errorf("%s: stored %+v", c.file, st)
		}
		// What sox itself reads back from the stored file: mono, 16-bit, the rate asked.
		path, _ := lib.Path(st.Rel)
		out, err := exec.Command("soxi", path).CombinedOutput()
		if err != nil {
			t.Fatalf("soxi: %v %s", err, out)
		}
		for _, want := range []string{"Channels       : 1", "Precision      : 16-bit", "Sample Encoding: 16-bit Signed Integer PCM"} {
			if !contains(string(out), want) {
				t.Errorf("%s: soxi lacks %q:\n%s", c.file, want, out)
			}
		}
		if !contains(string(out), "Sample Rate    : "+itoa(c.rate)) {
			t.Errorf("%s: rate not %d:\n%s", c.file, c.rate, out)
		}
	}
	assertOnlyFinalFiles(t, filepath.Join(lib.Root, "acme/prompts"), 4)
}

func TestIngestRefusesAndLeavesNothing(t *testing.T) {
	lib := &media.Library{Root: t.TempDir(), MaxBytes: 4096}
	big := mediatest.Tone(t, "big.wav", 2)
	if _, err := lib.Ingest(context.Background(), "acme/prompts", big, 8000, media.Bounds{}); !errors.Is(err, media.ErrTooLarge) {
		t.Fatalf("oversize: %v", err)
	}
	lib.MaxBytes = 16 << 20
	if _, err := lib.Ingest(context.Background(), "acme/prompts", []byte("plain text, not audio at all"), 8000, media.Bounds{}); !errors.Is(err, media.ErrUnsupported) {
		t.Fatalf("text: %v", err)
	}
	// Looks like a WAV, is not one: sox refuses; nothing is left behind.
	if _, err := lib.Ingest(context.Background(), "acme/prompts", []byte("RIFF\x24\x00\x00\x00WAVEjunkjunkjunk"), 8000, media.Bounds{}); !errors.Is(err, media.ErrUndecodable) {
		t.Fatalf("corrupt: %v", err)
	}
	assertOnlyFinalFiles(t, filepath.Join(lib.Root, "acme/prompts"), 0)
}

func TestDecodeBase64Limit(t *testing.T) {
	if _, err := media.DecodeBase64("AAAAAAAA", 3); !errors.Is(err, media.ErrTooLarge) {
		t.Errorf("6 bytes over 3: %v", err)
	}
	if b, err := media.DecodeBase64("AAAA", 3); err != nil || len(b) != 3 {
		t.Errorf("3 bytes: %v %d", err, len(b))
	}
	if _, err := media.DecodeBase64("A*AA", 3); !errors.Is(err, media.ErrBadBase64) {
		t.Errorf("bad: %v", err)
	}
}

func TestPathStaysInside(t *testing.T) {
	lib := &media.Library{Root: "/srv/media"}
	if p, err := lib.Path("../../etc/passwd"); err == nil {
		t.Errorf("escaped to %s", p)
	}
	if _, err := media.Dir("..", "prompts"); err == nil {
		t.Error("tenant .. accepted")
	}
}

// assertOnlyFinalFiles checks dir holds exactly n finished .wav files and
// no temporary ones.
func assertOnlyFinalFiles(t *testing.T, dir string, n int) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(entries) != n {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("%s holds %v, want %d finished files", dir, names, n)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".wav" || e.Name()[0] == '.' {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func itoa(n int) string { return strconv.Itoa(n) }

// TestIngestBoundsTheConversion: audio whose header does not tell its
// length (here sox --i is made to fail) is still cut off by the conversion
// just past the limit and refused, with nothing left behind; the same
// audio within the limits is taken.
func TestIngestBoundsTheConversion(t *testing.T) {
	tone := mediatest.Tone(t, "long.wav", 5)
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "sox-without-info")
	script := "#!/bin/sh\nif [ \"$1\" = --i ]; then exit 1; fi\necho \"$@\" >> " + filepath.Join(dir, "calls") + "\nexec sox \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	lib := &media.Library{Root: t.TempDir(), MaxBytes: 16 << 20, Conv: media.Converter{Sox: wrapper}}
	_, err := lib.Ingest(context.Background(), "acme/prompts", tone, 8000, media.Bounds{MaxDuration: 2 * time.Second})
	var le *media.LimitError
	if !errors.Is(err, media.ErrTooLong) || !errors.As(err, &le) || !strings.Contains(le.Msg, "2s") {
		t.Fatalf("5 s over 2 s: %v", err)
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	if !strings.Contains(string(calls), "trim 0 2.100") {
		t.Fatalf("the conversion was not bounded: sox %s", calls)
	}
	// 8000 Hz, 16-bit: 16 kB a second; 40 kB is 2.5 s.
	lib.MaxStoredBytes = 40000
	if _, err := lib.Ingest(context.Background(), "acme/prompts", tone, 8000, media.Bounds{}); !errors.Is(err, media.ErrTooLarge) {
		t.Fatalf("5 s over 40 kB: %v", err)
	}
	assertOnlyFinalFiles(t, filepath.Join(lib.Root, "acme/prompts"), 0)
	lib.MaxStoredBytes = 0
	admitted := int64(0)
	st, err := lib.Ingest(context.Background(), "acme/prompts", tone, 8000, media.Bounds{MaxDuration: 6 * time.Second, Admit: func(_ context.Context, size int64) error {
		admitted = size
		return nil
	}})
	if err != nil || st.DurationMS < 4900 || admitted != st.SizeBytes {
		t.Fatalf("5 s within 6 s: %+v, admitted %d, %v", st, admitted, err)
	}
	assertOnlyFinalFiles(t, filepath.Join(lib.Root, "acme/prompts"), 1)
}
