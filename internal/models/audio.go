package models

import (
	"context"
	"errors"
)

// AudioFile is an upload converted and placed in the media library, as an
// AudioSink reports it.
type AudioFile struct {
	// Rel is the file's path in the library, for removal on failure.
	Rel        string
	Filename   string
	Format     string
	DurationMS int64
	SizeBytes  int64
}

// AudioSink converts the audio_base64 input of a create (voice prompts)
// into a stored file before the row is written. Package media implements
// it; app wires it with SetAudioSink (models imports nothing of ours).
type AudioSink interface {
	StoreAudio(ctx context.Context, tenant, resource, audioBase64 string) (AudioFile, error)
	RemoveAudio(rel string)
}

// ErrNoAudioStore means audio arrived but no media library is configured.
var ErrNoAudioStore = errors.New("audio uploads are not configured on this server")

// SetAudioSink sets where create-time audio goes.
func (s *Store) SetAudioSink(a AudioSink) { s.audio = a }

// takeAudio converts rec's audio_base64, when the resource stores audio
// (has a read-only filename field), and fills the file fields. The returned
// undo removes the file when the write that should record it fails, so a
// row never names a missing file and no file outlives a refused write.
func (s *Store) takeAudio(ctx context.Context, res *Resource, o Owner, rec Record) (undo func(), err error) {
	b64, given := rec["audio_base64"].(string)
	f := res.Field("filename")
	if f == nil || !f.ReadOnly {
		return func() {}, nil
	}
	if given && b64 == "" {
		// An empty upload would make an object naming no file.
		return nil, FieldError("audio_base64", "must not be empty: send the audio, or leave the field out")
	}
	if b64 == "" {
		return func() {}, nil
	}
	if s.audio == nil {
		return nil, ErrNoAudioStore
	}
	file, err := s.audio.StoreAudio(ctx, o.Tenant, res.Name, b64)
	if err != nil {
		return nil, err
	}
	delete(rec, "audio_base64")
	rec["filename"], rec["format"], rec["duration_ms"], rec["size_bytes"] = file.Filename, file.Format, file.DurationMS, file.SizeBytes
	return func() { s.audio.RemoveAudio(file.Rel) }, nil
}
