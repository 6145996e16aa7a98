package media

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/switchboard/switchboard/internal/models"
)

// MOHFileImport is the body of POST …/music_on_hold/<id>/files (§5.3).
type MOHFileImport struct {
	FilenameHint string `json:"filename_hint"`
	AudioBase64  string `json:"audio_base64"`
	ExternalID   string `json:"external_id"`
}

// MOHFile is one file of a music-on-hold class.
type MOHFile struct {
	ID         int64  `db:"id" json:"id"`
	ClassID    int64  `db:"moh_id" json:"class_id"`
	ExternalID string `db:"external_id" json:"external_id"`
	Filename   string `db:"filename" json:"filename"`
	StoredAudio
}

const mohFileColumns = "id, moh_id, external_id, filename, source_format, duration_ms, size_bytes, path, content_sha256"

// ImportMOHFile adds a file to a class, converted to the class's rate in
// <tenant>/moh/<class>/, idempotent by external_id like recordings. The
// class's files field is then rewritten through the store, whose change
// event makes the nodes reload the stream.
func (s *Service) ImportMOHFile(ctx context.Context, o models.Owner, classID int64, in MOHFileImport) (MOHFile, bool, error) {
	ve := &models.ValidationError{}
	if in.AudioBase64 == "" {
		addField(ve, "audio_base64", "is required")
	}
	if !patExternalID.MatchString(in.ExternalID) {
		addField(ve, "external_id", "is required: 1-128 printable characters without spaces")
	}
	if len(in.FilenameHint) > 255 {
		addField(ve, "filename_hint", "must be at most 255 characters (it is never used as a file name)")
	}
	if err := orNil(ve); err != nil {
		return MOHFile{}, false, err
	}
	res := s.Store.Registry().Resource("music_on_hold")
	class, err := s.Store.Get(ctx, res, o, strconv.FormatInt(classID, 10))
	if err != nil {
		return MOHFile{}, false, err
	}
	audio, err := s.decodeAudio(in.AudioBase64)
	if err != nil {
		return MOHFile{}, false, err
	}
	name, _ := class["name"].(string)
	rate, _ := class["rate"].(int64)
	if rate == 0 {
		rate = 8000
	}
	dir, err := Dir(o.Tenant, "moh", name)
	if err != nil {
		return MOHFile{}, false, err
	}
	want := MOHFile{ClassID: classID, ExternalID: in.ExternalID, StoredAudio: StoredAudio{Digest: Digest(audio)}}
	f, created, err := importOnce(ctx, s, audioImport[MOHFile]{
		what: "music-on-hold file", tenant: o.Tenant, audio: audio, dir: dir, rate: int(rate),
		find: func(ctx context.Context) (MOHFile, error) { return s.mohFile(ctx, o, in.ExternalID) },
		same: func(old MOHFile) error { return sameMOHFile(old, want) },
		insert: func(ctx context.Context, file Stored) error {
			_, err := s.Store.Querier().ExecContext(ctx, `INSERT INTO moh_files (tenant_id, moh_id, external_id, filename, path, source_format, duration_ms, size_bytes, content_sha256, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, o.TenantID, classID, in.ExternalID, file.Filename, file.Rel, string(file.Source), file.DurationMS, file.SizeBytes, file.Digest, models.FormatTime(s.now()))
			return err
		},
	})
	if err != nil || !created {
		return f, created, err
	}
	return f, true, s.syncMOHFiles(ctx, o, classID)
}

// syncMOHFiles rewrites the class's files field from moh_files.
func (s *Service) syncMOHFiles(ctx context.Context, o models.Owner, classID int64) error {
	var files []MOHFile
	if err := s.Store.Querier().SelectContext(ctx, &files, "SELECT "+mohFileColumns+" FROM moh_files WHERE tenant_id = ? AND moh_id = ? ORDER BY id", o.TenantID, classID); err != nil {
		return fmt.Errorf("list music-on-hold files: %w", err)
	}
	list := make([]any, len(files))
	for i, f := range files {
		list[i] = map[string]any{"filename": f.Filename, "duration_ms": f.DurationMS}
	}
	return s.Store.SetDerived(ctx, s.Store.Registry().Resource("music_on_hold"), o, classID, "files", list)
}

func sameMOHFile(old, want MOHFile) error {
	var d fieldDiff
	d.add("class", old.ClassID != want.ClassID)
	d.add("audio", old.Digest != want.Digest)
	return d.conflict(want.ExternalID)
}

func (s *Service) mohFile(ctx context.Context, o models.Owner, externalID string) (MOHFile, error) {
	return getOne[MOHFile](ctx, s, "music-on-hold file", "SELECT "+mohFileColumns+" FROM moh_files WHERE tenant_id = ? AND external_id = ?", o.TenantID, externalID)
}

var _ models.OwnedFileCopier = (*Service)(nil)

// CopyOwnedFiles copies a music-on-hold class's files for tenant cloning:
// each file into the new tenant's <tenant>/moh/<class>/ under its name,
// and its moh_files row (same external_id, pointing at the copy) in the
// clone's transaction, so the copied class's local_stream directory plays
// what the original's does. Other resources own no such files.
func (s *Service) CopyOwnedFiles(ctx context.Context, tx models.Querier, resource string, from, to models.Owner, fromID, toID int64, rec models.Record) (names, rels []string, err error) {
	if resource != "music_on_hold" {
		return nil, nil, nil
	}
	class, _ := rec["name"].(string)
	dir, err := Dir(to.Tenant, "moh", class)
	if err != nil {
		return nil, nil, err
	}
	var files []MOHFile
	if err := tx.SelectContext(ctx, &files, "SELECT "+mohFileColumns+" FROM moh_files WHERE tenant_id = ? AND moh_id = ? ORDER BY id", from.TenantID, fromID); err != nil {
		return nil, nil, fmt.Errorf("list music-on-hold files: %w", err)
	}
	for _, f := range files {
		if !safePart(f.Filename) {
			return names, rels, fmt.Errorf("music-on-hold file name %q is not a safe name", f.Filename)
		}
		rel, err := s.Lib.Copy(ctx, f.Path, filepath.Join(dir, f.Filename))
		if err != nil {
			return names, rels, err
		}
		rels = append(rels, rel)
		if _, err := tx.ExecContext(ctx, `INSERT INTO moh_files (tenant_id, moh_id, external_id, filename, path, source_format, duration_ms, size_bytes, content_sha256, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, to.TenantID, toID, f.ExternalID, f.Filename, rel, f.SourceFormat, f.DurationMS, f.SizeBytes, f.Digest, models.FormatTime(s.now())); err != nil {
			return names, rels, fmt.Errorf("copy music-on-hold file %s: %w", f.Filename, err)
		}
		names = append(names, f.Filename)
	}
	return names, rels, nil
}
