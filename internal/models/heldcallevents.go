package models

import (
	"context"
	"fmt"
	"time"
)

// HeldCallEvents is one batch of live-call events kept while Redis could
// not take them (package calls encodes and decodes Events).
type HeldCallEvents struct {
	ID     int64     `db:"id"`
	Events []byte    `db:"events"`
	At     time.Time `db:"-"`
}

// HoldCallEvents keeps a batch of events durably and returns its id.
func (s *Store) HoldCallEvents(ctx context.Context, events []byte) (int64, error) {
	res, err := s.db.ExecContext(ctx, "INSERT INTO held_call_events (events, created_at) VALUES (?, ?)", string(events), FormatTime(time.Now()))
	if err != nil {
		return 0, fmt.Errorf("hold call events: %w", s.dialect.translate(err))
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("hold call events: %w", s.dialect.translate(err))
	}
	return id, nil
}

// HeldCallEventsBefore returns up to limit batches held before t, oldest
// first.
func (s *Store) HeldCallEventsBefore(ctx context.Context, t time.Time, limit int) ([]HeldCallEvents, error) {
	var rows []struct {
		ID     int64  `db:"id"`
		Events string `db:"events"`
		At     string `db:"created_at"`
	}
	if err := s.db.SelectContext(ctx, &rows, "SELECT id, events, created_at FROM held_call_events WHERE created_at < ? ORDER BY id LIMIT ?", FormatTime(t), limit); err != nil {
		return nil, fmt.Errorf("held call events: %w", s.dialect.translate(err))
	}
	out := make([]HeldCallEvents, len(rows))
	for i, r := range rows {
		at, _ := time.Parse(timeLayout, r.At)
		out[i] = HeldCallEvents{ID: r.ID, Events: []byte(r.Events), At: at}
	}
	return out, nil
}

// ReleaseCallEvents forgets a held batch once it is applied.
func (s *Store) ReleaseCallEvents(ctx context.Context, id int64) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM held_call_events WHERE id = ?", id); err != nil {
		return fmt.Errorf("release held call events: %w", s.dialect.translate(err))
	}
	return nil
}
