package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/switchboard/switchboard/changes"
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
		return s.dropMOHClass(ctx, c.Tenant, before.ID, before.Name)
	case "tenants":
		return s.dropTenant(ctx, c)
	}
	return nil
}

// dropMOHClass deletes a deleted class's moh_files rows, then its files.
func (s *Service) dropMOHClass(ctx context.Context, tenant string, classID int64, name string) error {
	var paths []string
	q := "SELECT path FROM moh_files WHERE moh_id = ? AND tenant_id IN (SELECT id FROM tenants WHERE tenant = ?)"
	if err := s.Store.DB().SelectContext(ctx, &paths, q, classID, tenant); err != nil {
		return fmt.Errorf("music-on-hold files of a deleted class: %w", s.Store.Dialect().Translate(err))
	}
	if _, err := s.Store.DB().ExecContext(ctx, "DELETE FROM moh_files WHERE moh_id = ? AND tenant_id IN (SELECT id FROM tenants WHERE tenant = ?)", classID, tenant); err != nil {
		return fmt.Errorf("music-on-hold files of a deleted class: %w", s.Store.Dialect().Translate(err))
	}
	for _, p := range paths {
		if err := s.Lib.Remove(p); err != nil {
			return err
		}
	}
	if dir, err := Dir(tenant, "moh", name); err == nil {
		_ = os.Remove(filepath.Join(s.Lib.Root, dir)) // only when empty
	}
	return nil
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
		if _, err := s.Store.DB().ExecContext(ctx, "DELETE FROM "+table+" WHERE tenant_id NOT IN (SELECT id FROM tenants)"); err != nil {
			return fmt.Errorf("media rows of deleted tenants: %s: %w", table, s.Store.Dialect().Translate(err))
		}
	}
	var n int
	if err := s.Store.DB().GetContext(ctx, &n, "SELECT COUNT(*) FROM tenants WHERE tenant = ?", tenant); err != nil {
		return fmt.Errorf("media cleanup of tenant %s: %w", tenant, s.Store.Dialect().Translate(err))
	}
	root := filepath.Join(s.Lib.Root, dir)
	if n == 0 {
		if err := os.RemoveAll(root); err != nil {
			return fmt.Errorf("media cleanup of tenant %s: %w", tenant, err)
		}
		return nil
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil && !info.ModTime().After(c.At) {
			err = os.Remove(p)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("media cleanup of tenant %s: %w", tenant, err)
	}
	return nil
}
