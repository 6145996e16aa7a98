package webhooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
)

// Delivery statuses.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusDead      = "dead" // out of attempts, or its webhook is gone
	StatusHeld      = "held" // its webhook is disabled; resumes when enabled
)

// Delivery is one event's delivery to one webhook, with its last attempt:
// what GET …/deliveries shows.
type Delivery struct {
	ID            int64   `db:"id" json:"id"`
	HookKind      string  `db:"hook_kind" json:"-"`
	HookID        int64   `db:"hook_id" json:"webhook_id"`
	Tenant        string  `db:"tenant" json:"-"`
	EventID       string  `db:"event_id" json:"event_id"`
	EventType     string  `db:"event_type" json:"event_type"`
	Body          string  `db:"body" json:"-"`
	Status        string  `db:"status" json:"status"`
	Attempts      int     `db:"attempts" json:"attempts"`
	NextAttemptAt string  `db:"next_attempt_at" json:"next_attempt_at,omitempty"`
	LastAttemptAt *string `db:"last_attempt_at" json:"last_attempt_at"`
	StatusCode    int     `db:"last_status_code" json:"response_status"`
	LatencyMS     int     `db:"last_latency_ms" json:"latency_ms"`
	Error         string  `db:"last_error" json:"error"`
	Response      string  `db:"last_response" json:"response_body"`
	CreatedAt     string  `db:"created_at" json:"created_at"`
	UpdatedAt     string  `db:"updated_at" json:"updated_at"`
	// Subject is what the event is about (a call's channel id): one
	// webhook's deliveries of one subject are sent one at a time, in order.
	Subject string `db:"subject" json:"-"`
	// History is the delivery's attempts, oldest first (the last
	// historyShown of them).
	History []Attempt `db:"-" json:"attempt_history"`
}

// Attempt is one attempt of a delivery, as the delivery log shows it.
type Attempt struct {
	DeliveryID int64  `db:"delivery_id" json:"-"`
	Attempt    int    `db:"attempt" json:"attempt"`
	At         string `db:"attempted_at" json:"at"`
	StatusCode int    `db:"status_code" json:"response_status"`
	LatencyMS  int    `db:"latency_ms" json:"latency_ms"`
	Error      string `db:"error" json:"error"`
	Response   string `db:"response" json:"response_body"`
}

// historyShown bounds the attempts listed per delivery.
const historyShown = 20

const deliveryColumns = "id, hook_kind, hook_id, tenant, event_id, event_type, body, status, attempts, next_attempt_at, last_attempt_at, last_status_code, last_latency_ms, last_error, last_response, created_at, updated_at, subject"

func stamp(t time.Time) string { return models.FormatTime(t) }

// row is one delivery row to insert: an event for one webhook.
type row struct {
	ev   *Event
	body []byte
	hook *Hook
}

// insert writes the delivery rows of one event (a row that exists, from an
// earlier delivery of the same change, is kept as it is).
func (s *Service) insert(ctx context.Context, ev *Event, body []byte, hooks []*Hook) error {
	rows := make([]row, len(hooks))
	for i, h := range hooks {
		rows[i] = row{ev: ev, body: body, hook: h}
	}
	return s.insertRows(ctx, rows)
}

// insertRowsChunk bounds the rows of one INSERT (12 placeholders each).
const insertRowsChunk = 500

// insertRows writes delivery rows with multi-row INSERTs that skip rows
// already there, in one transaction.
func (s *Service) insertRows(ctx context.Context, rows []row) error {
	if len(rows) == 0 {
		return nil
	}
	now := stamp(time.Now())
	return s.st.InTx(ctx, func(tx models.Querier) error {
		for start := 0; start < len(rows); start += insertRowsChunk {
			chunk := rows[start:min(start+insertRowsChunk, len(rows))]
			var q strings.Builder
			q.WriteString(s.ignore + " INTO webhook_deliveries (hook_group, hook_kind, hook_id, tenant, event_id, event_type, body, status, next_attempt_at, created_at, updated_at, subject) VALUES ")
			args := make([]any, 0, len(chunk)*12)
			for i, r := range chunk {
				if i > 0 {
					q.WriteString(", ")
				}
				q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
				status := StatusPending
				if !r.hook.Enabled {
					status = StatusHeld
				}
				args = append(args, s.opts.Group, r.hook.Kind, r.hook.ID, r.hook.Tenant, r.ev.ID, r.ev.Type, string(r.body), status, now, now, now, cut(r.ev.subject, 128))
			}
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return fmt.Errorf("webhooks: insert deliveries of %s: %w", chunk[0].ev.ID, err)
			}
		}
		return nil
	})
}

// due reads up to limit pending deliveries whose time has come.
func (s *Service) due(ctx context.Context, limit int) ([]Delivery, error) {
	var out []Delivery
	err := s.db.SelectContext(ctx, &out, "SELECT "+deliveryColumns+" FROM webhook_deliveries WHERE hook_group = ? AND status = ? AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?",
		s.opts.Group, StatusPending, stamp(time.Now()), limit)
	if err != nil {
		return nil, fmt.Errorf("webhooks: due deliveries: %w", err)
	}
	return out, nil
}

// result is one attempt's outcome.
type result struct {
	code     int
	latency  time.Duration
	err      string
	response string
}

func (r result) ok() bool { return r.err == "" && r.code >= 200 && r.code < 300 }

// record stores an attempt: the delivery's new state and the webhook's
// counters; the failure that reaches the limit disables the webhook (with
// a reason and a webhook.auto_disabled system event, in one transaction).
// counts is false for test sends, which leave the webhook's counters alone.
func (s *Service) record(ctx context.Context, d *Delivery, h *Hook, r result, counts bool) error {
	s.outcome(d, h, r, time.Now())
	var disabled bool
	err := s.st.WithEvents(ctx, func(tx models.Querier) ([]changes.Change, error) {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_attempt_at = ?,
			last_status_code = ?, last_latency_ms = ?, last_error = ?, last_response = ?, updated_at = ? WHERE id = ?`,
			d.Status, d.Attempts, d.NextAttemptAt, d.LastAttemptAt, d.StatusCode, d.LatencyMS, d.Error, d.Response, d.UpdatedAt, d.ID); err != nil {
			return nil, err
		}
		if err := insertAttempts(ctx, tx, []*Delivery{d}); err != nil {
			return nil, err
		}
		if !counts {
			return nil, nil
		}
		if r.ok() {
			_, err := tx.ExecContext(ctx, "UPDATE "+h.Kind+" SET consecutive_failures = 0, last_success_at = ? WHERE id = ?", d.UpdatedAt, h.ID)
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE "+h.Kind+" SET consecutive_failures = COALESCE(consecutive_failures, 0) + 1, last_failure_at = ? WHERE id = ?", d.UpdatedAt, h.ID); err != nil {
			return nil, err
		}
		var failures int
		if err := tx.GetContext(ctx, &failures, "SELECT consecutive_failures FROM "+h.Kind+" WHERE id = ?", h.ID); err != nil {
			if errors.Is(err, models.ErrNotFound) {
				return nil, nil
			}
			return nil, err
		}
		if failures < s.opts.DisableAfter {
			return nil, nil
		}
		reason := fmt.Sprintf("disabled after %d consecutive failed attempts; last: %s", failures, describe(r))
		res, err := tx.ExecContext(ctx, "UPDATE "+h.Kind+" SET enabled = 0, disabled_reason = ? WHERE id = ? AND enabled = 1", cut(reason, 255), h.ID)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, nil
		}
		disabled = true
		if _, err := tx.ExecContext(ctx, "UPDATE webhook_deliveries SET status = ?, updated_at = ? WHERE hook_kind = ? AND hook_id = ? AND status = ?", StatusHeld, d.UpdatedAt, h.Kind, h.ID, StatusPending); err != nil {
			return nil, err
		}
		if d.Status == StatusPending {
			d.Status = StatusHeld
		}
		ev, err := models.NewEvent("webhook.auto_disabled", "", hookLabel(h.Kind, h.ID), map[string]any{
			"webhook_type": h.Kind, "webhook_id": h.ID, "tenant": h.Tenant, "url": h.URL, "reason": reason,
		})
		return []changes.Change{ev}, err
	})
	if err != nil {
		return fmt.Errorf("webhooks: record attempt of delivery %d: %w", d.ID, err)
	}
	if disabled {
		s.hooks.forget()
		s.log.Warn("webhook auto-disabled", "webhook", hookLabel(h.Kind, h.ID), "tenant", h.Tenant)
	}
	return nil
}

// insertAttempts adds the latest attempt of each delivery to the history.
func insertAttempts(ctx context.Context, tx models.Querier, ds []*Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString("INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, error, response) VALUES ")
	args := make([]any, 0, len(ds)*7)
	for i, d := range ds {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?, ?)")
		args = append(args, d.ID, d.Attempts, *d.LastAttemptAt, d.StatusCode, d.LatencyMS, d.Error, d.Response)
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("webhooks: record attempts: %w", err)
	}
	return nil
}

// outcome applies an attempt's result to d (status, counters, backoff).
func (s *Service) outcome(d *Delivery, h *Hook, r result, now time.Time) {
	d.Attempts++
	d.LastAttemptAt = ptr(stamp(now))
	d.StatusCode, d.LatencyMS, d.Error, d.Response = r.code, int(r.latency.Milliseconds()), cut(r.err, 512), cut(r.response, 1024)
	switch {
	case r.ok():
		d.Status, d.NextAttemptAt = StatusSucceeded, ""
	case d.Attempts >= h.MaxAttempts:
		d.Status, d.NextAttemptAt = StatusDead, ""
	default:
		d.Status, d.NextAttemptAt = StatusPending, stamp(now.Add(s.backoff(d.Attempts)))
	}
	if d.NextAttemptAt == "" {
		d.NextAttemptAt = stamp(now)
	}
	d.UpdatedAt = stamp(now)
}

// success is a succeeded attempt waiting to be recorded with others.
type success struct {
	d *Delivery
	h *Hook
	r result
}

// recordSuccesses stores many succeeded attempts in one transaction: each
// delivery's state, its attempt, and per webhook the reset failure count.
// Failures take record, one at a time, for the auto-disable decision.
func (s *Service) recordSuccesses(ctx context.Context, batch []success) error {
	if len(batch) == 0 {
		return nil
	}
	now := time.Now()
	ds := make([]*Delivery, len(batch))
	lastOK := map[*Hook]string{}
	for i, b := range batch {
		s.outcome(b.d, b.h, b.r, now)
		ds[i] = b.d
		lastOK[b.h] = b.d.UpdatedAt
	}
	err := s.st.InTx(ctx, func(tx models.Querier) error {
		// One UPDATE for the batch: what differs per row comes from CASE
		// expressions keyed by id.
		var codes, lats, resps, in strings.Builder
		var codeArgs, latArgs, respArgs, ids []any
		for i, d := range ds {
			codes.WriteString(" WHEN ? THEN ?")
			lats.WriteString(" WHEN ? THEN ?")
			resps.WriteString(" WHEN ? THEN ?")
			codeArgs = append(codeArgs, d.ID, d.StatusCode)
			latArgs = append(latArgs, d.ID, d.LatencyMS)
			respArgs = append(respArgs, d.ID, d.Response)
			if i > 0 {
				in.WriteString(", ")
			}
			in.WriteString("?")
			ids = append(ids, d.ID)
		}
		at := *ds[0].LastAttemptAt
		args := append([]any{StatusSucceeded, at, at, ds[0].UpdatedAt}, codeArgs...)
		args = append(append(append(args, latArgs...), respArgs...), ids...)
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?, last_attempt_at = ?,
			last_error = '', updated_at = ?, last_status_code = CASE id`+codes.String()+` END, last_latency_ms = CASE id`+lats.String()+` END,
			last_response = CASE id`+resps.String()+` END WHERE id IN (`+in.String()+`)`, args...); err != nil {
			return err
		}
		if err := insertAttempts(ctx, tx, ds); err != nil {
			return err
		}
		for h, at := range lastOK {
			if _, err := tx.ExecContext(ctx, "UPDATE "+h.Kind+" SET consecutive_failures = 0, last_success_at = ? WHERE id = ?", at, h.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("webhooks: record %d succeeded attempts: %w", len(batch), err)
	}
	return nil
}

// setStatus moves one delivery (held or dead without an attempt).
func (s *Service) setStatus(ctx context.Context, id int64, status, why string) error {
	_, err := s.db.ExecContext(ctx, "UPDATE webhook_deliveries SET status = ?, last_error = ?, updated_at = ? WHERE id = ?", status, cut(why, 512), stamp(time.Now()), id)
	if err != nil {
		return fmt.Errorf("webhooks: delivery %d: %w", id, err)
	}
	return nil
}

// release makes a webhook's held deliveries due again (it was enabled).
func (s *Service) release(ctx context.Context, q models.Querier, kind string, id int64) error {
	now := stamp(time.Now())
	if _, err := q.ExecContext(ctx, "UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, updated_at = ? WHERE hook_kind = ? AND hook_id = ? AND status = ?",
		StatusPending, now, now, kind, id, StatusHeld); err != nil {
		return fmt.Errorf("webhooks: release deliveries of %s: %w", hookLabel(kind, id), err)
	}
	return nil
}

// prune drops finished deliveries older than the retention.
func (s *Service) prune(ctx context.Context) (int64, error) {
	r, err := s.db.ExecContext(ctx, "DELETE FROM webhook_deliveries WHERE hook_group = ? AND status IN (?, ?) AND updated_at < ?",
		s.opts.Group, StatusSucceeded, StatusDead, stamp(time.Now().Add(-s.opts.Keep)))
	if err != nil {
		return 0, fmt.Errorf("webhooks: prune deliveries: %w", err)
	}
	// Attempts go with the same retention (a delivery older than it is
	// finished or long held; its history is what it was).
	if _, err := s.db.ExecContext(ctx, "DELETE FROM webhook_attempts WHERE attempted_at < ?", stamp(time.Now().Add(-s.opts.Keep))); err != nil {
		return 0, fmt.Errorf("webhooks: prune attempts: %w", err)
	}
	return r.RowsAffected()
}

func describe(r result) string {
	if r.err != "" {
		return r.err
	}
	return fmt.Sprintf("HTTP %d", r.code)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !validStart(s[n]) {
		n--
	}
	return s[:n]
}

// validStart reports whether b can start a UTF-8 sequence (cut never
// splits a character).
func validStart(b byte) bool { return b&0xC0 != 0x80 }

func ptr[T any](v T) *T { return &v }
