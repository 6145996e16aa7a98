package media_test

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/media/mediatest"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestSweepOrphansRemovesOnlyOldUnnamedMediaFiles: files of media's own
// that no row names and older than OrphanAge go (a crash's leftovers);
// a prompt's file, a fresh file (its row may be on its way) and other
// packages' files (fax) stay.
func TestSweepOrphansRemovesOnlyOldUnnamedMediaFiles(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		o := newTenant(t, st)
		root := t.TempDir()
		svc := &media.Service{Store: st, Lib: &media.Library{Root: root, MaxBytes: 16 << 20}}
		st.SetAudioSink(svc)
		p, err := st.Create(ctx, st.Registry().Resource("voice_prompts"), o, map[string]any{"name": "kept", "audio_base64": base64.StdEncoding.EncodeToString(mediatest.Tone(t, "p.wav", 1))})
		if err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-2 * media.OrphanAge)
		file := func(rel string, mtime time.Time) string {
			path := filepath.Join(root, o.Tenant, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); err != nil {
				if err := os.WriteFile(path, []byte("RIFF"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chtimes(path, mtime, mtime); err != nil {
				t.Fatal(err)
			}
			return rel
		}
		kept := []string{
			file(p["filename"].(string), old),
			file("recordings/fresh.wav", time.Now()),
			file("fax/in.tif", old),
		}
		gone := []string{
			file("stray.wav", old),
			file(".upload-123.flac", old),
			file("moh/jazz/stray.wav", old),
			file("recordings/stray.wav", old),
			file("voicemail-imports/stray.wav", old),
		}
		n, err := svc.SweepOrphans(ctx)
		if err != nil || n != len(gone) {
			t.Fatalf("swept %d, %v; want %d", n, err, len(gone))
		}
		var left []string
		_ = filepath.Walk(filepath.Join(root, o.Tenant), func(path string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				rel, _ := filepath.Rel(filepath.Join(root, o.Tenant), path)
				left = append(left, rel)
			}
			return nil
		})
		slices.Sort(left)
		slices.Sort(kept)
		if !slices.Equal(left, kept) {
			t.Fatalf("left %v, want %v", left, kept)
		}
	})
}
