package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
)

// FileCleaner is the changes.Subscriber that removes library files once
// the rows naming them are deleted: a voice prompt's file, a
// music-on-hold class's files (with their moh_files rows), and everything
// a deleted tenant stored (with its recordings, voicemail and hold-music
// rows). The row always goes first, in its own committed transaction, so
// a crash can leave a file no row names (removed when the change is
// delivered again) but never a row naming a missing file. Handle is
// idempotent, as delivery is at least once.
func (s *Service) FileCleaner() changes.Subscriber {
	return changes.Func{ID: "media-files", Fn: s.cleanUp}
}

func (s *Service) cleanUp(ctx context.Context, c changes.Change) error {
	if c.Op != changes.Delete || s.Lib == nil {
		return nil
	}
	var before struct {
		ID       int64  `json:"id"`
		Name     string `json:"name"`
		Filename string `json:"filename"`
	}
	if len(c.Before) > 0 {
		if err := json.Unmarshal(c.Before, &before); err != nil {
			return fmt.Errorf("media cleanup of %s %s: %w", c.Resource, c.Key, err)
		}
	}
	switch c.Resource {
	case "voice_prompts":
		if before.Filename == "" || !safePart(before.Filename) {
			return nil
		}
		dir, err := Dir(c.Tenant)
		if err != nil {
			return nil
		}
		return s.Lib.Remove(filepath.Join(dir, before.Filename))
	case "music_on_hold":
		return s.dropMOHClass(ctx, c, before.ID, before.Name)
	case "tenants":
		return s.dropTenant(ctx, c)
	}
	return nil
}

// dropMOHClass deletes a deleted class's moh_files rows, then its files:
// those the rows named and those in the class's directory that are not
// newer than the delete. The directory matters on a redelivery after a
// crash between the two steps, and when the cleaner of another replica
// with a library of its own took the rows first: the rows are gone then,
// the files not. A class created since under the same name has only newer
// files, which stay.
func (s *Service) dropMOHClass(ctx context.Context, c changes.Change, classID int64, name string) error {
	var paths []string
	q := "SELECT path FROM moh_files WHERE moh_id = ? AND tenant_id IN (SELECT id FROM tenants WHERE tenant = ?)"
	if err := s.Store.Querier().SelectContext(ctx, &paths, q, classID, c.Tenant); err != nil {
		return fmt.Errorf("music-on-hold files of a deleted class: %w", err)
	}
	if _, err := s.Store.Querier().ExecContext(ctx, "DELETE FROM moh_files WHERE moh_id = ? AND tenant_id IN (SELECT id FROM tenants WHERE tenant = ?)", classID, c.Tenant); err != nil {
		return fmt.Errorf("music-on-hold files of a deleted class: %w", err)
	}
	for _, p := range paths {
		if err := s.Lib.Remove(p); err != nil {
			return err
		}
	}
	dir, err := Dir(c.Tenant, "moh", name)
	if err != nil {
		return nil // a name no directory can have: no files either
	}
	root := filepath.Join(s.Lib.Root, dir)
	if err := removeNotAfter(root, c.At); err != nil {
		return fmt.Errorf("music-on-hold files of deleted class %s: %w", name, err)
	}
	_ = os.Remove(root) // only when empty
	return nil
}

// removeNotAfter removes the files below root last modified at or before
// at; a missing root or file is not an error.
func removeNotAfter(root string, at time.Time) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil && !info.ModTime().After(at) {
			err = os.Remove(p)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// mediaTables are package media's tables whose rows name library files;
// they have no foreign key to tenants, so a tenant's delete leaves them.
var mediaTables = []string{"moh_files", "recordings", "voicemail_imports"}

// dropTenant deletes the rows of tenants that no longer exist from the
// media tables, then the deleted tenant's directory: all of it when no
// tenant of that name exists, else (the name was taken again since) the
// files older than the delete, which the new tenant cannot have made.
func (s *Service) dropTenant(ctx context.Context, c changes.Change) error {
	tenant := c.Key
	dir, err := Dir(tenant)
	if err != nil {
		return nil
	}
	for _, table := range mediaTables {
		if _, err := s.Store.Querier().ExecContext(ctx, "DELETE FROM "+table+" WHERE tenant_id NOT IN (SELECT id FROM tenants)"); err != nil {
			return fmt.Errorf("media rows of deleted tenants: %s: %w", table, err)
		}
	}
	var n int
	if err := s.Store.Querier().GetContext(ctx, &n, "SELECT COUNT(*) FROM tenants WHERE tenant = ?", tenant); err != nil {
		return fmt.Errorf("media cleanup of tenant %s: %w", tenant, err)
	}
	root := filepath.Join(s.Lib.Root, dir)
	if n == 0 {
		if err := os.RemoveAll(root); err != nil {
			return fmt.Errorf("media cleanup of tenant %s: %w", tenant, err)
		}
		return nil
	}
	if err := removeNotAfter(root, c.At); err != nil {
		return fmt.Errorf("media cleanup of tenant %s: %w", tenant, err)
	}
	return nil
}

// OrphanAge is how old a file no row names must be before SweepOrphans
// removes it: an upload's file is placed a moment before its row is
// written, and a tenant clone copies files before its transaction commits.
const OrphanAge = time.Hour

// ownedDirs are the directories below a tenant's where media keeps only
// files its rows name (prompts are the tenant directory's own files).
var ownedDirs = []string{"moh", "recordings", "voicemail-imports"}

// SweepOrphans removes the files of media's own that no row names and that
// are older than OrphanAge: what a crash between placing a file and
// writing (or after deleting) its row left, and the temporary files of
// interrupted conversions. Other packages' directories below a tenant's
// (fax, phone recordings) and the import spool are left alone. It answers
// how many files it removed.
func (s *Service) SweepOrphans(ctx context.Context) (int, error) {
	named := map[string]bool{}
	var prompts []struct {
		Tenant   string `db:"tenant"`
		Filename string `db:"filename"`
	}
	if err := s.Store.Querier().SelectContext(ctx, &prompts, "SELECT t.tenant, v.filename FROM voice_prompts v JOIN tenants t ON t.id = v.tenant_id WHERE v.filename IS NOT NULL"); err != nil {
		return 0, fmt.Errorf("orphan sweep: prompts: %w", err)
	}
	for _, p := range prompts {
		named[filepath.Join(p.Tenant, p.Filename)] = true
	}
	var paths []string
	if err := s.Store.Querier().SelectContext(ctx, &paths, "SELECT path FROM moh_files UNION ALL SELECT path FROM recordings UNION ALL SELECT path FROM voicemail_imports"); err != nil {
		return 0, fmt.Errorf("orphan sweep: files: %w", err)
	}
	for _, p := range paths {
		named[filepath.Clean(p)] = true
	}
	tenants, err := os.ReadDir(s.Lib.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("orphan sweep: %w", err)
	}
	cutoff := s.now().Add(-OrphanAge)
	removed := 0
	sweep := func(p string, d fs.DirEntry) error {
		rel, err := filepath.Rel(s.Lib.Root, p)
		if err != nil || named[rel] {
			return err
		}
		info, err := d.Info()
		if err != nil || info.ModTime().After(cutoff) {
			return nil // gone meanwhile, or maybe still on its way to a row
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("orphan sweep: %w", err)
		}
		removed++
		return nil
	}
	for _, t := range tenants {
		if !t.IsDir() || strings.HasPrefix(t.Name(), ".") {
			continue
		}
		dir := filepath.Join(s.Lib.Root, t.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				if err := sweep(filepath.Join(dir, e.Name()), e); err != nil {
					return removed, err
				}
			}
		}
		for _, owned := range ownedDirs {
			err := filepath.WalkDir(filepath.Join(dir, owned), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				return sweep(p, d)
			})
			if err != nil {
				return removed, err
			}
		}
	}
	return removed, nil
}
