package media

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/switchboard/switchboard/internal/models"
)

// RecordingImport is the body of POST /api/tenants/<tenant>/recordedcalls
// (resources.md §5.1; duration in seconds).
type RecordingImport struct {
	AudioBase64 string `json:"audio_base64"`
	When        string `json:"when"`
	Type        string `json:"type"`
	Src         string `json:"src"`
	Dst         string `json:"dst"`
	Duration    *int64 `json:"duration"`
	ExternalID  string `json:"external_id"`
	Extension   string `json:"extension"`
	Direction   string `json:"direction"`
}

// Recording is an indexed, imported call recording.
type Recording struct {
	ID         int64     `db:"id" json:"id"`
	Tenant     string    `db:"tenant" json:"tenant"`
	ExternalID string    `db:"external_id" json:"external_id"`
	When       time.Time `db:"-" json:"when"`
	Type       string    `db:"type" json:"type"`
	Src        string    `db:"src" json:"src"`
	Dst        string    `db:"dst" json:"dst"`
	Extension  string    `db:"extension" json:"extension"`
	Direction  string    `db:"direction" json:"direction"`
	Duration   int64     `db:"duration" json:"duration"`
	StoredAudio
	Started string `db:"started_at" json:"-"`
}

const recordingColumns = "r.id, t.tenant, r.external_id, r.started_at, r.type, r.src, r.dst, r.extension, r.direction, r.duration, r.source_format, r.size_bytes, r.duration_ms, r.path, r.content_sha256"

// RecordingRate is the rate imported recordings are stored at.
const RecordingRate = 16000

// validate checks an import and fills the defaults; when is the parsed time.
func (s *Service) validateRecording(ctx context.Context, o models.Owner, in *RecordingImport) (time.Time, error) {
	ve := &models.ValidationError{}
	if in.AudioBase64 == "" {
		addField(ve, "audio_base64", "is required")
	}
	var when time.Time
	if in.When == "" {
		addField(ve, "when", "is required")
	} else if t, err := parseWhen("when", in.When, s.now()); err != nil {
		addField(ve, "when", err.Fields["when"])
	} else {
		when = t
	}
	switch in.Type {
	case "extension":
	case "":
		addField(ve, "type", "is required")
	case "queue", "conference", "trunk":
		addField(ve, "type", "is reserved and not accepted yet; use extension")
	default:
		addField(ve, "type", "must be extension")
	}
	for field, v := range map[string]string{"src": in.Src, "dst": in.Dst} {
		if !patParty.MatchString(v) {
			addField(ve, field, "is required: a dialable number or extension name (1-64 of A-Z a-z 0-9 + * # . _ -)")
		}
	}
	if in.Duration == nil || *in.Duration < 0 {
		addField(ve, "duration", "is required: whole seconds, 0 or more")
	}
	if !patExternalID.MatchString(in.ExternalID) {
		addField(ve, "external_id", "is required: 1-128 printable characters without spaces")
	}
	if in.Extension != "" && !patParty.MatchString(in.Extension) {
		addField(ve, "extension", "must be an extension name")
	}
	if in.Direction != "" && !slices.Contains([]string{"inbound", "outbound", "internal"}, in.Direction) {
		addField(ve, "direction", "must be one of inbound, outbound, internal")
	}
	if err := orNil(ve); err != nil {
		return time.Time{}, err
	}
	if in.Extension == "" {
		ext, err := s.ownerExtension(ctx, o, in.Src, in.Dst)
		if err != nil {
			return time.Time{}, err
		}
		in.Extension = ext
	}
	return when, nil
}

// ownerExtension is whichever of src and dst is an extension of the tenant
// (src first), or "".
func (s *Service) ownerExtension(ctx context.Context, o models.Owner, src, dst string) (string, error) {
	var names []string
	err := s.Store.Querier().SelectContext(ctx, &names, "SELECT name FROM extensions WHERE tenant_id = ? AND name IN (?, ?)", o.TenantID, src, dst)
	if err != nil {
		return "", fmt.Errorf("find recording owner: %w", err)
	}
	for _, n := range []string{src, dst} {
		if slices.Contains(names, n) {
			return n, nil
		}
	}
	return "", nil
}

// ImportRecording stores a recording once per external_id: a repeat with
// the same content answers the existing one (created false), different
// content a *ConflictError; concurrent repeats meet at the unique index.
func (s *Service) ImportRecording(ctx context.Context, o models.Owner, in RecordingImport) (Recording, bool, error) {
	when, err := s.validateRecording(ctx, o, &in)
	if err != nil {
		return Recording{}, false, err
	}
	audio, err := s.decodeAudio(in.AudioBase64)
	if err != nil {
		return Recording{}, false, err
	}
	dir, err := Dir(o.Tenant, "recordings")
	if err != nil {
		return Recording{}, false, err
	}
	want := Recording{ExternalID: in.ExternalID, When: when, Type: in.Type, Src: in.Src, Dst: in.Dst, Extension: in.Extension,
		Direction: in.Direction, Duration: *in.Duration, StoredAudio: StoredAudio{Digest: Digest(audio)}}
	return importOnce(ctx, s, audioImport[Recording]{
		what: "recording", tenant: o.Tenant, audio: audio, dir: dir, rate: RecordingRate,
		find: func(ctx context.Context) (Recording, error) { return s.recordingByExternalID(ctx, o, in.ExternalID) },
		same: func(old Recording) error { return sameRecording(old, want) },
		insert: func(ctx context.Context, file Stored) error {
			_, err := s.Store.Querier().ExecContext(ctx, `INSERT INTO recordings
		(tenant_id, external_id, started_at, type, src, dst, extension, direction, duration, path, source_format, size_bytes, duration_ms, content_sha256, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				o.TenantID, want.ExternalID, models.FormatTime(when), want.Type, want.Src, want.Dst, want.Extension, want.Direction, want.Duration,
				file.Rel, string(file.Source), file.SizeBytes, file.DurationMS, file.Digest, models.FormatTime(s.now()))
			return err
		},
	})
}

// sameRecording is nil when want repeats old, else names what differs.
func sameRecording(old, want Recording) error {
	var d fieldDiff
	d.add("when", !old.When.Equal(want.When))
	d.add("type", old.Type != want.Type)
	d.add("src", old.Src != want.Src)
	d.add("dst", old.Dst != want.Dst)
	d.add("duration", old.Duration != want.Duration)
	d.add("extension", old.Extension != want.Extension)
	d.add("direction", old.Direction != want.Direction)
	d.add("audio", old.Digest != want.Digest)
	return d.conflict(want.ExternalID)
}

func (s *Service) recordingByExternalID(ctx context.Context, o models.Owner, externalID string) (Recording, error) {
	return s.oneRecording(ctx, "r.tenant_id = ? AND r.external_id = ?", o.TenantID, externalID)
}

// RecordingByID reads one recording of a tenant.
func (s *Service) RecordingByID(ctx context.Context, o models.Owner, id int64) (Recording, error) {
	return s.oneRecording(ctx, "r.tenant_id = ? AND r.id = ?", o.TenantID, id)
}

func (s *Service) oneRecording(ctx context.Context, where string, args ...any) (Recording, error) {
	r, err := getOne[Recording](ctx, s, "recording", "SELECT "+recordingColumns+" FROM recordings r JOIN tenants t ON t.id = r.tenant_id WHERE "+where, args...)
	if err != nil {
		return Recording{}, err
	}
	r.When = parseTime(r.Started)
	return r, nil
}

// RecordingFilter selects recordings for the report. Tenant "" lists every
// tenant's (platform callers). Number matches src or dst.
type RecordingFilter struct {
	Tenant            string
	From, To          time.Time
	Extension, Number string
	Page              models.Page
}

// Recordings lists recordings newest first with the total matching f.
func (s *Service) Recordings(ctx context.Context, f RecordingFilter) ([]Recording, int, error) {
	where, args := "1 = 1", []any{}
	if f.Tenant != "" {
		where += " AND t.tenant = ?"
		args = append(args, f.Tenant)
	}
	if !f.From.IsZero() {
		where += " AND r.started_at >= ?"
		args = append(args, models.FormatTime(f.From))
	}
	if !f.To.IsZero() {
		where += " AND r.started_at < ?"
		args = append(args, models.FormatTime(f.To))
	}
	if f.Extension != "" {
		where += " AND r.extension = ?"
		args = append(args, f.Extension)
	}
	if f.Number != "" {
		where += " AND (r.src = ? OR r.dst = ?)"
		args = append(args, f.Number, f.Number)
	}
	from := " FROM recordings r JOIN tenants t ON t.id = r.tenant_id WHERE " + where
	var total int
	if err := s.Store.Querier().GetContext(ctx, &total, "SELECT COUNT(*)"+from, args...); err != nil {
		return nil, 0, fmt.Errorf("count recordings: %w", err)
	}
	list := []Recording{}
	q := "SELECT " + recordingColumns + from + " ORDER BY r.started_at DESC, r.id DESC LIMIT ? OFFSET ?"
	if err := s.Store.Querier().SelectContext(ctx, &list, q, append(args, f.Page.Limit, f.Page.Offset)...); err != nil {
		return nil, 0, fmt.Errorf("list recordings: %w", err)
	}
	for i := range list {
		list[i].When = parseTime(list[i].Started)
	}
	return list, total, nil
}

// parseTime reads a time written by models.FormatTime.
func parseTime(v string) time.Time {
	t, _ := time.Parse("2006-01-02T15:04:05.000000Z", v)
	return t
}
