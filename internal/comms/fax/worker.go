package fax

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/backoff"
)

// Run sends queued faxes until ctx ends; without SMTP it does nothing (the
// faxes wait, queued, for a relay to be configured).
func (s *Service) Run(ctx context.Context) {
	if !s.DeliveryEnabled() {
		return
	}
	s.loop.Run(ctx, s.step)
}

// step drains the queue (DrainOnce itself goes on while faxes are due).
func (s *Service) step(ctx context.Context) (bool, error) {
	_, err := s.DrainOnce(ctx)
	return false, err
}

// DrainOnce claims the due faxes one at a time and attempts each once; it
// reports how many it attempted.
func (s *Service) DrainOnce(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		f, token, err := s.claim(ctx)
		if err != nil || token == "" {
			return n, err
		}
		n++
		// An attempt that started is finished and recorded even during
		// shutdown: abandoning it would send the fax twice.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Lease/2)
		err = s.send(sctx, f)
		rerr := s.record(sctx, f, token, err)
		cancel()
		if rerr != nil {
			return n, rerr
		}
	}
	return n, nil
}

// claim leases the oldest due fax: a row is taken only when its lease is
// free or expired (a worker that died holding it), so one replica sends
// it; the lease token comes back ("" when nothing is due).
func (s *Service) claim(ctx context.Context) (Fax, string, error) {
	now := time.Now()
	nowS := models.FormatTime(now)
	var ids []int64
	if err := s.db.SelectContext(ctx, &ids, s.db.Rebind(`SELECT id FROM fax_deliveries WHERE status = ? AND next_attempt_at <= ? AND lease_until < ? ORDER BY next_attempt_at, id LIMIT 5`), StatusQueued, nowS, nowS); err != nil {
		return Fax{}, "", fmt.Errorf("due faxes: %w", err)
	}
	token := s.cfg.Replica + "-" + randomToken()
	for _, id := range ids {
		res, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE fax_deliveries SET lease_owner = ?, lease_until = ? WHERE id = ? AND status = ? AND lease_until < ?`),
			token, models.FormatTime(now.Add(s.cfg.Lease)), id, StatusQueued, nowS)
		if err != nil {
			return Fax{}, "", fmt.Errorf("lease fax: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			var f Fax
			err := s.db.GetContext(ctx, &f, s.db.Rebind(`SELECT id, tenant_id, endpoint_id, call_uuid, email, file, size_bytes, pages, status, attempts, last_error, created_at, sent_at
				FROM fax_deliveries WHERE id = ?`), id)
			if err != nil {
				return Fax{}, "", fmt.Errorf("leased fax: %w", err)
			}
			return f, token, nil
		}
	}
	return Fax{}, "", nil
}

// send e-mails one fax.
func (s *Service) send(ctx context.Context, f Fax) error {
	b, err := os.ReadFile(filepath.Join(s.cfg.Dir, filepath.FromSlash(f.File)))
	if err != nil {
		return &PermanentError{Err: fmt.Errorf("read stored fax: %w", err)}
	}
	return s.cfg.SMTP.Send(ctx, Message{
		To:       f.Email,
		Subject:  fmt.Sprintf("Fax received (%d page%s)", f.Pages, plural(f.Pages)),
		Text:     fmt.Sprintf("A fax of %d page%s was received at %s (call %s).\nThe fax is attached as a TIFF file.\n", f.Pages, plural(f.Pages), f.CreatedAt, f.CallUUID),
		Filename: "fax-" + f.CreatedAt[:10] + "-" + itoa(f.ID) + ".tif",
		TIFF:     b,
	})
}

// record ends an attempt: sent, failed for good, or queued again after a
// backoff that doubles per attempt. Only the lease holder may record.
func (s *Service) record(ctx context.Context, f Fax, token string, sendErr error) error {
	now := time.Now()
	attempts := f.Attempts + 1
	status, next, msg, sentAt := StatusQueued, now, "", ""
	var perm *PermanentError
	switch {
	case sendErr == nil:
		status, sentAt = StatusSent, models.FormatTime(now)
		s.log.Info("fax e-mailed", "fax_id", f.ID, "call_uuid", f.CallUUID, "attempts", attempts)
	case errors.As(sendErr, &perm) || attempts >= s.cfg.MaxAttempts:
		status, msg = StatusFailed, truncate(sendErr.Error(), 255)
		s.log.Error("fax e-mail failed for good", "fax_id", f.ID, "call_uuid", f.CallUUID, "attempts", attempts, "error", sendErr)
	default:
		msg = truncate(sendErr.Error(), 255)
		next = now.Add(backoff.Delay(s.cfg.BackoffBase, s.cfg.BackoffMax, attempts))
		s.log.Warn("fax e-mail failed; retrying", "fax_id", f.ID, "call_uuid", f.CallUUID, "attempts", attempts, "retry_at", next, "error", sendErr)
	}
	_, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE fax_deliveries SET status = ?, attempts = ?, last_error = ?, next_attempt_at = ?, sent_at = ?, lease_owner = '', lease_until = ''
		WHERE id = ? AND lease_owner = ?`),
		status, attempts, msg, models.FormatTime(next), sentAt, f.ID, token)
	if err != nil {
		return fmt.Errorf("record fax delivery: %w", err)
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
