package media

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard/switchboard/internal/models"
)

// decodeAudio decodes an import's audio_base64 (a field error when it is
// not base64, a size error over the limit).
func (s *Service) decodeAudio(b64 string) ([]byte, error) {
	audio, err := DecodeBase64(b64, s.Lib.MaxBytes)
	if errors.Is(err, ErrBadBase64) {
		return nil, models.FieldError("audio_base64", "is not valid base64")
	}
	return audio, err
}

// StoredAudio is what an imported audio object keeps about its file:
// SourceFormat is what the upload was (the file itself is always a mono WAV
// at the object's rate).
type StoredAudio struct {
	SourceFormat string `db:"source_format" json:"source_format"`
	SizeBytes    int64  `db:"size_bytes" json:"size_bytes"`
	DurationMS   int64  `db:"duration_ms" json:"duration_ms"`
	Path         string `db:"path" json:"-"`
	Digest       string `db:"content_sha256" json:"-"`
}

// audioImport is one idempotent import of an audio object (a recording, a
// voicemail message, a music-on-hold file): what differs between them.
type audioImport[T any] struct {
	what   string // for errors: "recording"
	tenant string // whose storage quota the file counts against
	audio  []byte // decoded
	dir    string // the tenant's media directory for it
	rate   int
	// find reads the object of this external_id (models.ErrNotFound if none).
	find func(ctx context.Context) (T, error)
	// same is nil when old is a repeat of this import, else a *ConflictError.
	same func(old T) error
	// insert writes the row for the stored file; a unique-index conflict
	// means a concurrent import of the same external_id won.
	insert func(ctx context.Context, file Stored) error
}

// importOnce runs the protocol the imports share: a repeat answers the
// stored object (created false, or a conflict naming what differs); a new
// one is converted, stored and inserted; concurrent repeats meet at the
// unique index; the file is removed again when its row is not written.
func importOnce[T any](ctx context.Context, s *Service, in audioImport[T]) (T, bool, error) {
	var zero T
	if old, err := in.find(ctx); err == nil {
		return old, false, in.same(old)
	} else if !errors.Is(err, models.ErrNotFound) {
		return zero, false, err
	}
	file, err := s.Lib.Ingest(ctx, in.dir, in.audio, in.rate, Bounds{Admit: s.admitter(in.tenant)})
	if err != nil {
		return zero, false, err
	}
	if err := in.insert(ctx, file); err != nil {
		s.RemoveAudio(file.Rel)
		if errors.Is(err, models.ErrConflict) {
			old, gerr := in.find(ctx)
			if gerr != nil {
				return zero, false, gerr
			}
			return old, false, in.same(old)
		}
		return zero, false, fmt.Errorf("insert %s: %w", in.what, err)
	}
	got, err := in.find(ctx)
	return got, err == nil, err
}

// getOne reads one row into a T (what names it in errors);
// models.ErrNotFound when there is none.
func getOne[T any](ctx context.Context, s *Service, what, query string, args ...any) (T, error) {
	var v T
	err := s.Store.Querier().GetContext(ctx, &v, query, args...)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return v, fmt.Errorf("read %s: %w", what, err)
	}
	return v, err
}

// fieldDiff collects the names of the fields a repeat changes.
type fieldDiff []string

func (d *fieldDiff) add(name string, differ bool) {
	if differ {
		*d = append(*d, name)
	}
}

// conflict is nil when nothing differs, else the *ConflictError naming it.
func (d fieldDiff) conflict(externalID string) error {
	if len(d) == 0 {
		return nil
	}
	return &ConflictError{ExternalID: externalID, Fields: d}
}
