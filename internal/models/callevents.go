package models

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/switchboard/switchboard/internal/changes"
)

// CallLifecycle is the data of call.started and call.answered: the channel
// as the live-call tracker knew it when the event happened. Its fields
// carry the same names as a CDR's, so one webhook filter fits all three
// call events.
type CallLifecycle struct {
	ChannelID      string     `json:"channel_id"`
	UUID           string     `json:"uuid"`
	Node           string     `json:"node"`
	CallUUID       string     `json:"call_uuid"`
	Tenant         string     `json:"tenant"`
	Direction      string     `json:"direction"`
	State          string     `json:"state"`
	CallerIDName   string     `json:"caller_id_name"`
	CallerIDNumber string     `json:"caller_id_number"`
	Destination    string     `json:"destination"`
	Extension      string     `json:"extension"`
	StartedAt      time.Time  `json:"started_at"`
	AnsweredAt     *time.Time `json:"answered_at"`
}

// InsertCallEvent records a call lifecycle event (typ call.started or
// call.answered) in the outbox once per channel: a second hand-off of the
// same (node, uuid, typ), as a retried hand-off after a crash produces, is
// ignored and reports no error (call_events' primary key, written in the
// same transaction).
func (s *Store) InsertCallEvent(ctx context.Context, typ string, c CallLifecycle) error {
	err := s.withEvents(ctx, func(tx *sqlx.Tx) ([]changes.Change, error) {
		r, err := tx.ExecContext(ctx, s.dialect.insertIgnore()+" INTO call_events (node, uuid, event, created_at) VALUES (?, ?, ?, ?)",
			c.Node, c.UUID, typ, now())
		if err != nil {
			return nil, err
		}
		if n, err := r.RowsAffected(); err != nil || n == 0 {
			return nil, err // recorded before
		}
		ev, err := NewEvent(typ, c.Tenant, c.ChannelID, c)
		return []changes.Change{ev}, err
	})
	if err != nil {
		return fmt.Errorf("record %s of %s/%s: %w", typ, c.Node, c.UUID, s.dialect.translate(err))
	}
	return nil
}

// PruneCallEvents forgets lifecycle records older than keep: a repeated
// hand-off only happens within minutes (the tracker's retry), so a day is
// ample.
func (s *Store) PruneCallEvents(ctx context.Context, keep time.Duration) (int64, error) {
	r, err := s.db.ExecContext(ctx, "DELETE FROM call_events WHERE created_at < ?", FormatTime(time.Now().Add(-keep)))
	if err != nil {
		return 0, fmt.Errorf("prune call events: %w", s.dialect.translate(err))
	}
	return r.RowsAffected()
}
