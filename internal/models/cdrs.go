package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/switchboard/switchboard/internal/changes"
)

// CDR is the call detail record of one ended FreeSWITCH channel. Tenant is
// a name, not a reference: records outlive tenants, and a channel may
// belong to none ("").
type CDR struct {
	ID              int64      `db:"id" json:"id"`
	Tenant          string     `db:"tenant" json:"tenant"`
	ChannelID       string     `db:"channel_id" json:"channel_id"`
	UUID            string     `db:"uuid" json:"uuid"`
	Node            string     `db:"node" json:"node"`
	Direction       string     `db:"direction" json:"direction"`
	CallerIDName    string     `db:"caller_id_name" json:"caller_id_name"`
	CallerIDNumber  string     `db:"caller_id_number" json:"caller_id_number"`
	Destination     string     `db:"destination" json:"destination"`
	Extension       string     `db:"extension" json:"extension"`
	StartedAt       time.Time  `db:"-" json:"started_at"`
	AnsweredAt      *time.Time `db:"-" json:"answered_at"`
	EndedAt         time.Time  `db:"-" json:"ended_at"`
	DurationSeconds int        `db:"duration_seconds" json:"duration_seconds"`
	Billsec         int        `db:"billsec" json:"billsec"`
	HangupCause     string     `db:"hangup_cause" json:"hangup_cause"`
	RecordingPath   string     `db:"recording_path" json:"recording_path"`
	// Imported marks CDRs from a migration import (node ImportedNode).
	Imported bool `db:"-" json:"imported"`
}

// ImportedNode is the node column of imported CDRs (package media).
const ImportedNode = "import"

// CDRFilter selects CDRs: Tenant "" with AllTenants lists every tenant's
// records (platform callers); From and To bound started_at (zero = open).
type CDRFilter struct {
	Tenant     string
	AllTenants bool
	From, To   time.Time
	// Direction and Extension match exactly; Number is the caller's or
	// the dialled number.
	Direction, Extension, Number string
	Page                         Page
}

// cdrRow is how a CDR sits in the table: times as sortable UTC text.
type cdrRow struct {
	CDR
	Started  string         `db:"started_at"`
	Answered sql.NullString `db:"answered_at"`
	Ended    string         `db:"ended_at"`
}

const cdrColumns = "id, tenant, channel_id, uuid, node, direction, caller_id_name, caller_id_number, destination, extension, started_at, answered_at, ended_at, duration_seconds, billsec, hangup_cause, recording_path"

// InsertCDR stores a CDR once: a second delivery of the same (node, uuid),
// as a retried OnEnd produces, is ignored and reports no error. The first
// one also records a call.ended event (the CDR as its data) in the same
// transaction, so webhooks and CRM activities see every ended call once
// it is stored.
func (s *Store) InsertCDR(ctx context.Context, c CDR) error {
	started := c.StartedAt
	if started.IsZero() {
		started = c.EndedAt
	}
	var answered sql.NullString
	if c.AnsweredAt != nil && !c.AnsweredAt.IsZero() {
		answered = sql.NullString{String: FormatTime(*c.AnsweredAt), Valid: true}
	}
	err := s.withEvents(ctx, func(tx *sqlx.Tx) ([]changes.Change, error) {
		r, err := tx.ExecContext(ctx, s.dialect.insertIgnore()+` INTO cdrs
		(tenant, channel_id, uuid, node, direction, caller_id_name, caller_id_number, destination, extension,
		 started_at, answered_at, ended_at, duration_seconds, billsec, hangup_cause, recording_path, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.Tenant, c.ChannelID, c.UUID, c.Node, c.Direction, c.CallerIDName, c.CallerIDNumber, c.Destination, c.Extension,
			FormatTime(started), answered, FormatTime(c.EndedAt), c.DurationSeconds, c.Billsec, c.HangupCause, c.RecordingPath, now())
		if err != nil {
			return nil, err
		}
		if n, err := r.RowsAffected(); err != nil || n == 0 {
			return nil, err // already stored: its event was recorded then
		}
		if c.ID, err = r.LastInsertId(); err != nil {
			return nil, err
		}
		c.StartedAt = started
		ev, err := NewEvent("call.ended", c.Tenant, c.ChannelID, c)
		return []changes.Change{ev}, err
	})
	if err != nil {
		return fmt.Errorf("insert cdr %s/%s: %w", c.Node, c.UUID, s.dialect.translate(err))
	}
	return nil
}

// CDRs lists CDRs newest first with the total matching f.
func (s *Store) CDRs(ctx context.Context, f CDRFilter) ([]CDR, int, error) {
	where, args := "1 = 1", []any{}
	if !f.AllTenants || f.Tenant != "" {
		where += " AND tenant = ?"
		args = append(args, f.Tenant)
	}
	if !f.From.IsZero() {
		where += " AND started_at >= ?"
		args = append(args, FormatTime(f.From))
	}
	if !f.To.IsZero() {
		where += " AND started_at < ?"
		args = append(args, FormatTime(f.To))
	}
	if f.Direction != "" {
		where += " AND direction = ?"
		args = append(args, f.Direction)
	}
	if f.Extension != "" {
		where += " AND extension = ?"
		args = append(args, f.Extension)
	}
	if f.Number != "" {
		where += " AND (caller_id_number = ? OR destination = ?)"
		args = append(args, f.Number, f.Number)
	}
	var total int
	if err := s.db.GetContext(ctx, &total, "SELECT COUNT(*) FROM cdrs WHERE "+where, args...); err != nil {
		return nil, 0, fmt.Errorf("count cdrs: %w", s.dialect.translate(err))
	}
	limit := f.Page.Limit
	if limit <= 0 {
		limit = 50
	}
	var rows []cdrRow
	q := "SELECT " + cdrColumns + " FROM cdrs WHERE " + where + " ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?"
	if err := s.db.SelectContext(ctx, &rows, q, append(args, limit, f.Page.Offset)...); err != nil {
		return nil, 0, fmt.Errorf("list cdrs: %w", s.dialect.translate(err))
	}
	out := make([]CDR, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.cdr())
	}
	return out, total, nil
}

// CDRByID is one CDR of tenant (ErrNotFound when it has none with id:
// another tenant's record is not found either).
func (s *Store) CDRByID(ctx context.Context, tenant string, id int64) (CDR, error) {
	var r cdrRow
	err := s.db.GetContext(ctx, &r, "SELECT "+cdrColumns+" FROM cdrs WHERE tenant = ? AND id = ?", tenant, id)
	if errors.Is(err, sql.ErrNoRows) {
		return CDR{}, ErrNotFound
	}
	if err != nil {
		return CDR{}, fmt.Errorf("get cdr %d: %w", id, s.dialect.translate(err))
	}
	return r.cdr(), nil
}

// cdr reads the stored times back into the record.
func (r cdrRow) cdr() CDR {
	c := r.CDR
	c.Imported = c.Node == ImportedNode
	c.StartedAt = parseStored(r.Started)
	c.EndedAt = parseStored(r.Ended)
	if r.Answered.Valid {
		t := parseStored(r.Answered.String)
		c.AnsweredAt = &t
	}
	return c
}

// parseStored reads a timestamp written by FormatTime.
func parseStored(v string) time.Time {
	t, _ := time.Parse(timeLayout, v)
	return t
}
