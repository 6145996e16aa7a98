package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/models"
)

// What the API routes call. Each takes a webhook the route already found
// in the caller's scope (models.Store.Get with the caller's owner).

// Deliveries lists a webhook's deliveries, newest first, with the total.
func (s *Service) Deliveries(ctx context.Context, kind string, hookID int64, p models.Page) ([]Delivery, int, error) {
	var total int
	if err := s.db.GetContext(ctx, &total, "SELECT COUNT(*) FROM webhook_deliveries WHERE hook_kind = ? AND hook_id = ?", kind, hookID); err != nil {
		return nil, 0, fmt.Errorf("webhooks: count deliveries: %w", err)
	}
	out := []Delivery{}
	if err := s.db.SelectContext(ctx, &out, "SELECT "+deliveryColumns+" FROM webhook_deliveries WHERE hook_kind = ? AND hook_id = ? ORDER BY id DESC LIMIT ? OFFSET ?", kind, hookID, p.Limit, p.Offset); err != nil {
		return nil, 0, fmt.Errorf("webhooks: list deliveries: %w", err)
	}
	for i := range out {
		if out[i].Status != StatusPending {
			out[i].NextAttemptAt = ""
		}
	}
	if err := s.withHistory(ctx, out); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// withHistory fills each delivery's attempts (the last historyShown, oldest
// first) with one query.
func (s *Service) withHistory(ctx context.Context, ds []Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	at := make(map[int64]*Delivery, len(ds))
	ids := make([]any, len(ds))
	for i := range ds {
		ds[i].History = []Attempt{}
		at[ds[i].ID] = &ds[i]
		ids[i] = ds[i].ID
	}
	var all []Attempt
	q := "SELECT delivery_id, attempt, attempted_at, status_code, latency_ms, error, response FROM webhook_attempts WHERE delivery_id IN (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + ") ORDER BY id"
	if err := s.db.SelectContext(ctx, &all, q, ids...); err != nil {
		return fmt.Errorf("webhooks: delivery attempts: %w", err)
	}
	for _, a := range all {
		d := at[a.DeliveryID]
		d.History = append(d.History, a)
		if len(d.History) > historyShown {
			d.History = d.History[1:]
		}
	}
	return nil
}

func (s *Service) delivery(ctx context.Context, kind string, hookID, id int64) (*Delivery, error) {
	var d Delivery
	err := s.db.GetContext(ctx, &d, "SELECT "+deliveryColumns+" FROM webhook_deliveries WHERE id = ? AND hook_kind = ? AND hook_id = ?", id, kind, hookID)
	if err != nil {
		return nil, fmt.Errorf("webhooks: delivery %d: %w", id, err)
	}
	if d.Status != StatusPending {
		d.NextAttemptAt = ""
	}
	one := []Delivery{d}
	if err := s.withHistory(ctx, one); err != nil {
		return nil, err
	}
	return &one[0], nil
}

// Replay sends a delivery again (same event id and body) with a fresh
// allowance of attempts; a delivery still pending is answered as it is.
func (s *Service) Replay(ctx context.Context, kind string, hookID int64, deliveryID string) (*Delivery, error) {
	id, err := strconv.ParseInt(deliveryID, 10, 64)
	if err != nil || id <= 0 {
		return nil, models.ErrNotFound
	}
	if _, err := s.delivery(ctx, kind, hookID, id); err != nil {
		return nil, err
	}
	now := stamp(time.Now())
	if _, err := s.db.ExecContext(ctx, "UPDATE webhook_deliveries SET status = ?, attempts = 0, next_attempt_at = ?, updated_at = ? WHERE id = ? AND status <> ?",
		StatusPending, now, now, id, StatusPending); err != nil {
		return nil, fmt.Errorf("webhooks: replay delivery %d: %w", id, err)
	}
	s.Wake()
	return s.delivery(ctx, kind, hookID, id)
}

// Test sends a webhook.test event to one webhook now, enabled or not, and
// answers the attempt (also kept in its delivery log). It does not count
// towards the webhook's failures.
func (s *Service) Test(ctx context.Context, kind, tenant string, hookID int64) (*Delivery, error) {
	s.hooks.forget()
	h, err := s.hooks.get(ctx, kind, tenant, hookID)
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, models.ErrNotFound
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	ev := &Event{ID: "evt_test_" + hex.EncodeToString(rnd[:]), Type: "webhook.test", Tenant: tenant,
		CreatedAt: time.Now().UTC().Format(time.RFC3339Nano), Data: []byte(fmt.Sprintf(`{"webhook_id":%d,"message":"test delivery"}`, hookID))}
	body, err := ev.body()
	if err != nil {
		return nil, err
	}
	// Inserted held, never pending: the worker only takes pending rows, so
	// this call is the one attempt (inserting it pending and holding it
	// after left a moment in which the worker sent it too).
	held := *h
	held.Enabled = false
	if err := s.insert(ctx, ev, body, []*Hook{&held}); err != nil {
		return nil, err
	}
	var d Delivery
	if err := s.db.GetContext(ctx, &d, "SELECT "+deliveryColumns+" FROM webhook_deliveries WHERE hook_kind = ? AND hook_id = ? AND event_id = ?", kind, hookID, ev.ID); err != nil {
		return nil, fmt.Errorf("webhooks: test delivery: %w", err)
	}
	r := s.send(ctx, h, &d)
	test := *h
	test.MaxAttempts = 1 // a failed test is final, never retried
	if err := s.record(context.WithoutCancel(ctx), &d, &test, r, false); err != nil {
		return nil, err
	}
	d.NextAttemptAt = ""
	return s.delivery(ctx, kind, hookID, d.ID)
}

// Enable turns a webhook on again: its failure count and disabled reason
// are cleared and its held deliveries become due.
func (s *Service) Enable(ctx context.Context, kind string, o models.Owner, hookID int64) error {
	where, args := "id = ?", []any{hookID}
	if kind == KindTenant {
		where += " AND tenant_id = ?"
		args = append(args, o.TenantID)
	}
	err := s.st.InTx(ctx, func(tx models.Querier) error {
		res, err := tx.ExecContext(ctx, "UPDATE "+kind+" SET enabled = 1, disabled_reason = NULL, consecutive_failures = 0, updated_at = ? WHERE "+where,
			append([]any{stamp(time.Now())}, args...)...)
		if err != nil {
			return fmt.Errorf("webhooks: enable %s: %w", hookLabel(kind, hookID), err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return models.ErrNotFound
		}
		return s.release(ctx, tx, kind, hookID)
	})
	if err != nil {
		return err
	}
	s.hooks.forget()
	s.Wake()
	return nil
}

// IsNotFound reports a missing webhook or delivery.
func IsNotFound(err error) bool { return errors.Is(err, models.ErrNotFound) }
