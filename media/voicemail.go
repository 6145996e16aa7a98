package media

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/switchboard/switchboard/changes"
	"github.com/switchboard/switchboard/models"
)

// VoicemailImport is the body of POST /api/tenants/<tenant>/imports/voicemail
// (resources.md §5.2).
type VoicemailImport struct {
	Mailbox        string `json:"mailbox"`
	Folder         string `json:"folder"`
	When           string `json:"when"`
	CallerIDName   string `json:"caller_id_name"`
	CallerIDNumber string `json:"caller_id_number"`
	Duration       *int64 `json:"duration"`
	AudioBase64    string `json:"audio_base64"`
	Read           bool   `json:"read"`
	ExternalID     string `json:"external_id"`
}

// VoicemailMessage is an imported voicemail message.
type VoicemailMessage struct {
	ID             int64     `db:"id" json:"id"`
	Tenant         string    `db:"tenant" json:"tenant"`
	ExternalID     string    `db:"external_id" json:"external_id"`
	Mailbox        string    `db:"mailbox" json:"mailbox"`
	Folder         string    `db:"folder" json:"folder"`
	When           time.Time `db:"-" json:"when"`
	CallerIDName   string    `db:"caller_id_name" json:"caller_id_name"`
	CallerIDNumber string    `db:"caller_id_number" json:"caller_id_number"`
	Duration       int64     `db:"duration" json:"duration"`
	Read           bool      `db:"is_read" json:"read"`
	SourceFormat   string    `db:"source_format" json:"source_format"`
	SizeBytes      int64     `db:"size_bytes" json:"size_bytes"`
	DurationMS     int64     `db:"duration_ms" json:"duration_ms"`
	Path           string    `db:"path" json:"-"`
	Digest         string    `db:"content_sha256" json:"-"`
	Received       string    `db:"received_at" json:"-"`
}

// VoicemailImported is the event type (and its data) that hands an
// imported message to FreeSWITCH (VoicemailDelivery).
const VoicemailImported = "voicemail.imported"

// VoicemailRate is the rate imported messages are stored at.
const VoicemailRate = 16000

const voicemailColumns = "v.id, t.tenant, v.external_id, v.mailbox, v.folder, v.received_at, v.caller_id_name, v.caller_id_number, v.duration, v.is_read, v.source_format, v.size_bytes, v.duration_ms, v.path, v.content_sha256"

// validateVoicemail checks an import and fills the defaults; it returns the
// message time (now when absent).
func (s *Service) validateVoicemail(ctx context.Context, o models.Owner, in *VoicemailImport) (time.Time, error) {
	ve := &models.ValidationError{}
	if in.AudioBase64 == "" {
		addField(ve, "audio_base64", "is required")
	}
	if !patExternalID.MatchString(in.ExternalID) {
		addField(ve, "external_id", "is required: 1-128 printable characters without spaces")
	}
	if in.Folder == "" {
		in.Folder = "inbox"
	}
	if !slices.Contains([]string{"inbox", "old", "saved"}, in.Folder) {
		addField(ve, "folder", "must be one of inbox, old, saved")
	}
	when := s.now().UTC().Truncate(time.Second)
	if in.When != "" {
		if t, err := parseWhen("when", in.When, s.now()); err != nil {
			addField(ve, "when", err.Fields["when"])
		} else {
			when = t
		}
	}
	if len(in.CallerIDName) > 64 || !utf8.ValidString(in.CallerIDName) {
		addField(ve, "caller_id_name", "must be at most 64 characters of UTF-8")
	}
	if in.CallerIDNumber != "" && !patParty.MatchString(in.CallerIDNumber) {
		addField(ve, "caller_id_number", "must be a dialable number (1-64 of A-Z a-z 0-9 + * # . _ -)")
	}
	if in.Duration != nil && *in.Duration < 0 {
		addField(ve, "duration", "must be whole seconds, 0 or more")
	}
	if err := orNil(ve); err != nil {
		return time.Time{}, err
	}
	ok, err := s.mailboxExists(ctx, o, in.Mailbox)
	if err != nil {
		return time.Time{}, err
	}
	if !ok {
		return time.Time{}, models.FieldError("mailbox", "must be an extension name or special-mailbox number of this tenant")
	}
	return when, nil
}

// mailboxExists reports whether box is one of the tenant's extensions or
// special mailboxes.
func (s *Service) mailboxExists(ctx context.Context, o models.Owner, box string) (bool, error) {
	if box == "" || len(box) > 16 {
		return false, nil
	}
	var n int
	err := s.Store.DB().GetContext(ctx, &n, `SELECT (SELECT COUNT(*) FROM extensions WHERE tenant_id = ? AND name = ?)
		+ (SELECT COUNT(*) FROM special_mailboxes WHERE tenant_id = ? AND number = ?)`, o.TenantID, box, o.TenantID, box)
	if err != nil {
		return false, fmt.Errorf("find mailbox: %w", s.Store.Dialect().Translate(err))
	}
	return n > 0, nil
}

// ImportVoicemail stores a message once per external_id (a repeat with the
// same content answers the existing one with created false; other content
// is a *ConflictError; concurrent repeats meet at the unique index). The
// row and its voicemail.imported event commit together, so the message
// reaches FreeSWITCH (VoicemailDelivery) exactly when it exists; the file
// is removed again when the row is not written.
func (s *Service) ImportVoicemail(ctx context.Context, o models.Owner, in VoicemailImport) (VoicemailMessage, bool, error) {
	when, err := s.validateVoicemail(ctx, o, &in)
	if err != nil {
		return VoicemailMessage{}, false, err
	}
	audio, err := DecodeBase64(in.AudioBase64, s.Lib.MaxBytes)
	if errors.Is(err, ErrBadBase64) {
		return VoicemailMessage{}, false, models.FieldError("audio_base64", "is not valid base64")
	} else if err != nil {
		return VoicemailMessage{}, false, err
	}
	want := VoicemailMessage{ExternalID: in.ExternalID, Mailbox: in.Mailbox, Folder: in.Folder, When: when,
		CallerIDName: in.CallerIDName, CallerIDNumber: in.CallerIDNumber, Read: in.Read, Digest: Digest(audio)}
	if in.Duration != nil {
		want.Duration = *in.Duration
	}
	if old, err := s.voicemailByExternalID(ctx, o, in.ExternalID); err == nil {
		return old, false, sameVoicemail(old, want, in.Duration != nil)
	} else if !errors.Is(err, models.ErrNotFound) {
		return VoicemailMessage{}, false, err
	}
	dir, err := Dir(o.Tenant, "voicemail-imports")
	if err != nil {
		return VoicemailMessage{}, false, err
	}
	file, err := s.Lib.Ingest(ctx, dir, audio, VoicemailRate)
	if err != nil {
		return VoicemailMessage{}, false, err
	}
	if in.Duration == nil {
		want.Duration = (file.DurationMS + 500) / 1000
	}
	err = s.Store.WithEvents(ctx, func(tx *sqlx.Tx) ([]changes.Change, error) {
		res, err := tx.ExecContext(ctx, `INSERT INTO voicemail_imports
			(tenant_id, external_id, mailbox, folder, received_at, caller_id_name, caller_id_number, duration, is_read, path, source_format, size_bytes, duration_ms, content_sha256, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			o.TenantID, want.ExternalID, want.Mailbox, want.Folder, models.FormatTime(when), want.CallerIDName, want.CallerIDNumber,
			want.Duration, want.Read, file.Rel, string(file.Source), file.SizeBytes, file.DurationMS, file.Digest, models.FormatTime(s.now()))
		if err != nil {
			return nil, err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, err
		}
		ev, err := models.NewEvent(VoicemailImported, o.Tenant, fmt.Sprint(id), VoicemailDeliveryData{
			ID: id, Mailbox: want.Mailbox, Path: file.Rel, CallerIDName: want.CallerIDName, CallerIDNumber: want.CallerIDNumber,
			Read: want.Read || want.Folder != "inbox", ExternalID: want.ExternalID,
		})
		return []changes.Change{ev}, err
	})
	if err != nil {
		s.RemoveAudio(file.Rel)
		if err = s.Store.Dialect().Translate(err); errors.Is(err, models.ErrConflict) {
			// A concurrent import of the same external_id won the index.
			old, gerr := s.voicemailByExternalID(ctx, o, in.ExternalID)
			if gerr != nil {
				return VoicemailMessage{}, false, gerr
			}
			return old, false, sameVoicemail(old, want, in.Duration != nil)
		}
		return VoicemailMessage{}, false, fmt.Errorf("insert voicemail message: %w", err)
	}
	msg, err := s.voicemailByExternalID(ctx, o, in.ExternalID)
	return msg, err == nil, err
}

// sameVoicemail is nil when want repeats old, else names what differs. A
// repeat that leaves duration out accepts the stored one.
func sameVoicemail(old, want VoicemailMessage, withDuration bool) error {
	var diff []string
	add := func(name string, differ bool) {
		if differ {
			diff = append(diff, name)
		}
	}
	add("mailbox", old.Mailbox != want.Mailbox)
	add("folder", old.Folder != want.Folder)
	add("when", !old.When.Equal(want.When))
	add("caller_id_name", old.CallerIDName != want.CallerIDName)
	add("caller_id_number", old.CallerIDNumber != want.CallerIDNumber)
	add("duration", withDuration && old.Duration != want.Duration)
	add("read", old.Read != want.Read)
	add("audio", old.Digest != want.Digest)
	if len(diff) > 0 {
		return &ConflictError{ExternalID: want.ExternalID, Fields: diff}
	}
	return nil
}

func (s *Service) voicemailByExternalID(ctx context.Context, o models.Owner, externalID string) (VoicemailMessage, error) {
	var v VoicemailMessage
	err := s.Store.DB().GetContext(ctx, &v, "SELECT "+voicemailColumns+" FROM voicemail_imports v JOIN tenants t ON t.id = v.tenant_id WHERE v.tenant_id = ? AND v.external_id = ?", o.TenantID, externalID)
	if errors.Is(err, sql.ErrNoRows) {
		return VoicemailMessage{}, models.ErrNotFound
	}
	if err != nil {
		return VoicemailMessage{}, fmt.Errorf("read voicemail message: %w", s.Store.Dialect().Translate(err))
	}
	v.When = parseTime(v.Received)
	return v, nil
}
