package media

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
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
	StoredAudio
	Received string `db:"received_at" json:"-"`
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
	err := s.Store.Querier().GetContext(ctx, &n, `SELECT (SELECT COUNT(*) FROM extensions WHERE tenant_id = ? AND name = ?)
		+ (SELECT COUNT(*) FROM special_mailboxes WHERE tenant_id = ? AND number = ?)`, o.TenantID, box, o.TenantID, box)
	if err != nil {
		return false, fmt.Errorf("find mailbox: %w", err)
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
	audio, err := s.decodeAudio(in.AudioBase64)
	if err != nil {
		return VoicemailMessage{}, false, err
	}
	dir, err := Dir(o.Tenant, "voicemail-imports")
	if err != nil {
		return VoicemailMessage{}, false, err
	}
	want := VoicemailMessage{ExternalID: in.ExternalID, Mailbox: in.Mailbox, Folder: in.Folder, When: when,
		CallerIDName: in.CallerIDName, CallerIDNumber: in.CallerIDNumber, Read: in.Read, StoredAudio: StoredAudio{Digest: Digest(audio)}}
	if in.Duration != nil {
		want.Duration = *in.Duration
	}
	return importOnce(ctx, s, audioImport[VoicemailMessage]{
		what: "voicemail message", tenant: o.Tenant, audio: audio, dir: dir, rate: VoicemailRate,
		find: func(ctx context.Context) (VoicemailMessage, error) {
			return s.voicemailByExternalID(ctx, o, in.ExternalID)
		},
		same: func(old VoicemailMessage) error { return sameVoicemail(old, want, in.Duration != nil) },
		insert: func(ctx context.Context, file Stored) error {
			if in.Duration == nil {
				want.Duration = (file.DurationMS + 500) / 1000
			}
			return s.Store.WithEvents(ctx, func(tx models.Querier) ([]changes.Change, error) {
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
		},
	})
}

// sameVoicemail is nil when want repeats old, else names what differs. A
// repeat that leaves duration out accepts the stored one.
func sameVoicemail(old, want VoicemailMessage, withDuration bool) error {
	var d fieldDiff
	d.add("mailbox", old.Mailbox != want.Mailbox)
	d.add("folder", old.Folder != want.Folder)
	d.add("when", !old.When.Equal(want.When))
	d.add("caller_id_name", old.CallerIDName != want.CallerIDName)
	d.add("caller_id_number", old.CallerIDNumber != want.CallerIDNumber)
	d.add("duration", withDuration && old.Duration != want.Duration)
	d.add("read", old.Read != want.Read)
	d.add("audio", old.Digest != want.Digest)
	return d.conflict(want.ExternalID)
}

func (s *Service) voicemailByExternalID(ctx context.Context, o models.Owner, externalID string) (VoicemailMessage, error) {
	v, err := getOne[VoicemailMessage](ctx, s, "voicemail message", "SELECT "+voicemailColumns+" FROM voicemail_imports v JOIN tenants t ON t.id = v.tenant_id WHERE v.tenant_id = ? AND v.external_id = ?", o.TenantID, externalID)
	if err != nil {
		return VoicemailMessage{}, err
	}
	v.When = parseTime(v.Received)
	return v, nil
}
