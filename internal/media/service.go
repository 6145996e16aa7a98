package media

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/models"
)

// Service is the media side of the API: audio for voice prompts (a
// models.AudioSink), imported call recordings, music-on-hold files and bulk
// CDR imports, over the store's database and the media library.
type Service struct {
	Store *models.Store
	Lib   *Library
	Log   *slog.Logger
	// Now is the clock (tests may set it).
	Now func() time.Time

	run *runner // background import jobs (Start)
}

// PromptRate is the rate voice prompts are stored at (resources.md §2.22).
const PromptRate = 16000

var _ models.AudioSink = (*Service)(nil)

// StoreAudio converts a voice prompt upload into <tenant>/<file>.wav, where
// the renderer looks for prompts (<sounds dir>/<tenant>/<filename>).
func (s *Service) StoreAudio(ctx context.Context, tenant, resource, audioBase64 string) (models.AudioFile, error) {
	audio, err := DecodeBase64(audioBase64, s.Lib.MaxBytes)
	if err != nil {
		return models.AudioFile{}, err
	}
	dir, err := Dir(tenant)
	if err != nil {
		return models.AudioFile{}, err
	}
	st, err := s.Lib.Ingest(ctx, dir, audio, PromptRate, Bounds{MaxDuration: s.Lib.MaxPromptDuration, Admit: s.admitter(tenant)})
	if err != nil {
		return models.AudioFile{}, err
	}
	return models.AudioFile{Rel: st.Rel, Filename: st.Filename, Format: string(st.Source), DurationMS: st.DurationMS, SizeBytes: st.SizeBytes}, nil
}

// RemoveAudio deletes a file a refused write would have recorded.
func (s *Service) RemoveAudio(rel string) {
	if err := s.Lib.Remove(rel); err != nil {
		s.log().Warn("media: removing an unrecorded file failed", "path", rel, "error", err)
	}
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Refusals of imports with their API status (routes maps them).
var (
	// ErrConflict: the external_id exists with different content.
	ErrConflict = errors.New("external_id exists with different content")
)

// ConflictError names the fields that differ from the stored object.
type ConflictError struct {
	ExternalID string
	Fields     []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("external_id %q was imported before with a different %s", e.ExternalID, strings.Join(e.Fields, ", "))
}

// Unwrap makes errors.Is(err, ErrConflict) hold.
func (e *ConflictError) Unwrap() error { return ErrConflict }

var (
	patExternalID = regexp.MustCompile(`^[\x21-\x7E]{1,128}$`)
	patParty      = regexp.MustCompile(`^[A-Za-z0-9+*#._-]{1,64}$`)
)

// parseWhen reads an ISO 8601 time with a zone, normalised to UTC, refusing
// times more than five minutes ahead of now.
func parseWhen(field, v string, now time.Time) (time.Time, *models.ValidationError) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, models.FieldError(field, "must be an ISO 8601 time with Z or an offset")
	}
	if t.After(now.Add(5 * time.Minute)) {
		return time.Time{}, models.FieldError(field, "must not be more than 5 minutes in the future")
	}
	return t.UTC(), nil
}

// addField records one problem on a validation error (first wins).
func addField(ve *models.ValidationError, field, msg string) {
	if ve.Fields == nil {
		ve.Fields = map[string]string{}
	}
	if _, ok := ve.Fields[field]; !ok {
		ve.Fields[field] = msg
	}
}

// orNil returns ve when it holds problems.
func orNil(ve *models.ValidationError) error {
	if len(ve.Fields) == 0 {
		return nil
	}
	return ve
}

var _ models.AudioCopier = (*Service)(nil)

// CopyAudio copies a tenant's stored prompt file into another tenant's
// directory under the same (random) name, for tenant cloning; the copy
// appears under its final name only complete.
func (s *Service) CopyAudio(ctx context.Context, fromTenant, toTenant, filename string) (string, error) {
	if !safePart(filename) {
		return "", fmt.Errorf("media file name %q is not a safe name", filename)
	}
	from, err := Dir(fromTenant)
	if err != nil {
		return "", err
	}
	to, err := Dir(toTenant)
	if err != nil {
		return "", err
	}
	return s.Lib.Copy(ctx, filepath.Join(from, filename), filepath.Join(to, filename))
}
