package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/switchboard/switchboard/changes"
	"github.com/switchboard/switchboard/models"
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
}

const deliveryColumns = "id, hook_kind, hook_id, tenant, event_id, event_type, body, status, attempts, next_attempt_at, last_attempt_at, last_status_code, last_latency_ms, last_error, last_response, created_at, updated_at"

func stamp(t time.Time) string { return models.FormatTime(t) }

// insert writes the delivery rows of one event (a row that exists, from an
// earlier delivery of the same change, is kept as it is).
func (s *Service) insert(ctx context.Context, ev *Event, body []byte, hooks []*Hook) error {
	if len(hooks) == 0 {
		return nil
	}
	now := stamp(time.Now())
	q := s.ignore + " INTO webhook_deliveries (hook_group, hook_kind, hook_id, tenant, event_id, event_type, body, status, next_attempt_at, created_at, updated_at) VALUES "
	args := make([]any, 0, len(hooks)*11)
	for i, h := range hooks {
		if i > 0 {
			q += ", "
		}
		q += "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		status := StatusPending
		if !h.Enabled {
			status = StatusHeld
		}
		args = append(args, s.opts.Group, h.Kind, h.ID, h.Tenant, ev.ID, ev.Type, string(body), status, now, now, now)
	}
	if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("webhooks: insert deliveries of %s: %w", ev.ID, s.st.TranslateErr(err))
	}
	return nil
}

// due reads up to limit pending deliveries whose time has come.
func (s *Service) due(ctx context.Context, limit int) ([]Delivery, error) {
	var out []Delivery
	err := s.db.SelectContext(ctx, &out, "SELECT "+deliveryColumns+" FROM webhook_deliveries WHERE hook_group = ? AND status = ? AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?",
		s.opts.Group, StatusPending, stamp(time.Now()), limit)
	if err != nil {
		return nil, fmt.Errorf("webhooks: due deliveries: %w", s.st.TranslateErr(err))
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
	now := time.Now()
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
	var disabled bool
	err := s.st.WithEvents(ctx, func(tx *sqlx.Tx) ([]changes.Change, error) {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_attempt_at = ?,
			last_status_code = ?, last_latency_ms = ?, last_error = ?, last_response = ?, updated_at = ? WHERE id = ?`,
			d.Status, d.Attempts, d.NextAttemptAt, d.LastAttemptAt, d.StatusCode, d.LatencyMS, d.Error, d.Response, d.UpdatedAt, d.ID); err != nil {
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
			if errors.Is(err, sql.ErrNoRows) {
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
		return fmt.Errorf("webhooks: record attempt of delivery %d: %w", d.ID, s.st.TranslateErr(err))
	}
	if disabled {
		s.hooks.forget()
		s.log.Warn("webhook auto-disabled", "webhook", hookLabel(h.Kind, h.ID), "tenant", h.Tenant)
	}
	return nil
}

// setStatus moves one delivery (held or dead without an attempt).
func (s *Service) setStatus(ctx context.Context, id int64, status, why string) error {
	_, err := s.db.ExecContext(ctx, "UPDATE webhook_deliveries SET status = ?, last_error = ?, updated_at = ? WHERE id = ?", status, cut(why, 512), stamp(time.Now()), id)
	if err != nil {
		return fmt.Errorf("webhooks: delivery %d: %w", id, s.st.TranslateErr(err))
	}
	return nil
}

// release makes a webhook's held deliveries due again (it was enabled).
func (s *Service) release(ctx context.Context, q sqlx.ExecerContext, kind string, id int64) error {
	now := stamp(time.Now())
	if _, err := q.ExecContext(ctx, "UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, updated_at = ? WHERE hook_kind = ? AND hook_id = ? AND status = ?",
		StatusPending, now, now, kind, id, StatusHeld); err != nil {
		return fmt.Errorf("webhooks: release deliveries of %s: %w", hookLabel(kind, id), s.st.TranslateErr(err))
	}
	return nil
}

// prune drops finished deliveries older than the retention.
func (s *Service) prune(ctx context.Context) (int64, error) {
	r, err := s.db.ExecContext(ctx, "DELETE FROM webhook_deliveries WHERE hook_group = ? AND status IN (?, ?) AND updated_at < ?",
		s.opts.Group, StatusSucceeded, StatusDead, stamp(time.Now().Add(-s.opts.Keep)))
	if err != nil {
		return 0, fmt.Errorf("webhooks: prune deliveries: %w", s.st.TranslateErr(err))
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
