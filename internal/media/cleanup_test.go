package media_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
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

// TestDeletedMOHClassFilesGoWithoutTheirRows: a deleted class's files go
// when its change is handled even if its moh_files rows are already gone:
// a crash (or another replica's cleaner) between deleting the rows and
// removing the files leaves only the change to go by. A class created
// again under the same name after the delete keeps its new files. Seen in
// CI as TestDeletedMediaLeavesNoFiles: servers sharing a database each ran
// the cleaner, and the first one took the rows the others needed.
func TestDeletedMOHClassFilesGoWithoutTheirRows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		o := newTenant(t, st)
		root := t.TempDir()
		svc := &media.Service{Store: st, Lib: &media.Library{Root: root, MaxBytes: 16 << 20}}
		st.SetAudioSink(svc)
		res := st.Registry().Resource("music_on_hold")
		wav := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "m.wav", 1))
		class, err := st.Create(ctx, res, o, map[string]any{"name": "gone"})
		if err != nil {
			t.Fatal(err)
		}
		id := class["id"].(int64)
		if _, _, err := svc.ImportMOHFile(ctx, o, id, media.MOHFileImport{ExternalID: "m-1", AudioBase64: wav}); err != nil {
			t.Fatal(err)
		}
		classDir := filepath.Join(root, o.Tenant, "moh", "gone")
		if files := filesBelow(t, classDir); len(files) != 1 {
			t.Fatalf("class files %v", files)
		}
		head, err := st.OutboxHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, res, o, fmt.Sprint(id)); err != nil {
			t.Fatal(err)
		}
		cs, err := st.OutboxAfter(ctx, head, 100)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(cs, func(c changes.Change) bool {
			return c.Resource == "music_on_hold" && c.Op == changes.Delete && c.Tenant == o.Tenant
		})
		if i < 0 {
			t.Fatalf("no delete change among %d", len(cs))
		}
		cleaner := svc.FileCleaner()
		// Another cleaner got there first: the rows are gone, its files
		// (in its own library) too.
		other := &media.Service{Store: st, Lib: &media.Library{Root: t.TempDir(), MaxBytes: 16 << 20}}
		if err := other.FileCleaner().Handle(ctx, cs[i]); err != nil {
			t.Fatal(err)
		}
		if err := cleaner.Handle(ctx, cs[i]); err != nil {
			t.Fatal(err)
		}
		if files := filesBelow(t, classDir); len(files) != 0 {
			t.Fatalf("the deleted class's files stayed: %v", files)
		}

		// A new class of the same name: a late redelivery of the old
		// delete leaves its files alone.
		again, err := st.Create(ctx, res, o, map[string]any{"name": "gone"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.ImportMOHFile(ctx, o, again["id"].(int64), media.MOHFileImport{ExternalID: "m-2", AudioBase64: wav}); err != nil {
			t.Fatal(err)
		}
		future := time.Now().Add(time.Minute) // the new file is newer than the delete
		for _, f := range filesBelow(t, classDir) {
			if err := os.Chtimes(f, future, future); err != nil {
				t.Fatal(err)
			}
		}
		if err := cleaner.Handle(ctx, cs[i]); err != nil {
			t.Fatal(err)
		}
		if files := filesBelow(t, classDir); len(files) != 1 {
			t.Fatalf("the new class's files: %v", files)
		}
	})
}

// filesBelow lists the regular files under dir (none when it is missing).
func filesBelow(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	return files
}
