package messaging

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/backoff"
)

// claimed is an outbox row this replica holds a lease on, with its message.
type claimed struct {
	Message
	Token string `db:"lease_owner"`
}

// Run drains the outbox until ctx ends. Every replica runs it; leases
// make each message go out from one of them. On shutdown, sends in flight
// finish and are recorded; claimed messages not yet started are released.
func (s *Service) Run(ctx context.Context) {
	defer s.sends.Wait()
	s.loop.Run(ctx, s.step)
}

// step claims and sends one batch; more is due while batches come full
// or not (an empty claim waits for a wake-up or the poll).
func (s *Service) step(ctx context.Context) (bool, error) {
	n, err := s.drainOnce(ctx, s.sem, &s.sends)
	return n > 0, err
}

// DrainOnce claims and sends one batch, waiting for its sends; it reports
// how many messages it claimed (tests and benchmarks drive it directly).
func (s *Service) DrainOnce(ctx context.Context) (int, error) {
	sem := make(chan struct{}, s.cfg.Concurrency)
	var wg sync.WaitGroup
	n, err := s.drainOnce(ctx, sem, &wg)
	wg.Wait()
	return n, err
}

func (s *Service) drainOnce(ctx context.Context, sem chan struct{}, wg *sync.WaitGroup) (int, error) {
	batch, err := s.claim(ctx)
	if err != nil || len(batch) == 0 {
		return 0, err
	}
	outcomes := make([]outcome, len(batch))
	var batchWG sync.WaitGroup
	for i := range batch {
		c := batch[i]
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			outcomes[i] = outcome{c: c, release: true, at: time.Now()}
			continue
		}
		wg.Add(1)
		batchWG.Add(1)
		go func() {
			defer func() { <-sem; wg.Done(); batchWG.Done() }()
			// A send that started finishes and is recorded even during
			// shutdown: abandoning it would send it again later.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Lease/2)
			defer cancel()
			outcomes[i] = s.deliver(sctx, c)
		}()
	}
	// The batch's outcomes commit together (one transaction instead of one
	// per message), and the next claim waits for them, so a replica never
	// holds more leases than it is working on.
	batchWG.Wait()
	s.record(context.WithoutCancel(ctx), outcomes)
	return len(batch), nil
}

// claim leases up to Batch due outbox rows to a fresh token.
func (s *Service) claim(ctx context.Context) ([]claimed, error) {
	now := time.Now()
	nowS := stamp(now)
	var ids []int64
	if err := s.db.x.SelectContext(ctx, &ids, s.db.q(`SELECT message_id FROM messaging_outbox WHERE out_group = ? AND next_attempt_at <= ? AND lease_until < ? ORDER BY next_attempt_at, message_id LIMIT ?`), s.cfg.Group, nowS, nowS, s.cfg.Batch); err != nil {
		return nil, fmt.Errorf("outbox due rows: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	token := s.cfg.Replica + "-" + randomHex(8)
	query, args, err := s.db.x.In(`UPDATE messaging_outbox SET lease_owner = ?, lease_until = ? WHERE message_id IN (?) AND lease_until < ?`, token, stamp(now.Add(s.cfg.Lease)), ids, nowS)
	if err != nil {
		return nil, err
	}
	if _, err := s.db.x.ExecContext(ctx, query, args...); err != nil {
		return nil, fmt.Errorf("outbox claim: %w", err)
	}
	var out []claimed
	q := strings.Replace(messageSelect, "SELECT ", "SELECT o.lease_owner, ", 1) + " JOIN messaging_outbox o ON o.message_id = m.id WHERE o.lease_owner = ?"
	if err := s.db.x.SelectContext(ctx, &out, s.db.q(q), token); err != nil {
		return nil, fmt.Errorf("outbox claimed rows: %w", err)
	}
	for i := range out {
		out[i].decode()
	}
	return out, nil
}

// outcome is what became of one claimed message.
type outcome struct {
	c          claimed
	providerID string     // accepted by the provider
	err        *SendError // failed (final) or, with retry, to try again
	retry      bool
	release    bool      // handed back without an attempt (rate limit, shutdown)
	inbound    bool      // a received message handed to its destination (done or final)
	at         time.Time // when a retried or released message is due again
}

// deliver sends one claimed message and says what became of it.
func (s *Service) deliver(ctx context.Context, c claimed) outcome {
	if c.Direction == "inbound" {
		return s.deliverInbound(ctx, c)
	}
	ch, err := s.channels.get(ctx, c.ChannelID)
	if err != nil || !ch.Enabled {
		reason := "the messaging channel was deleted"
		if err == nil {
			reason = "the messaging channel is disabled"
		} else if !isNotFound(err) {
			return s.retryOutcome(c, &SendError{Transient: true, Code: "channel_lookup", Message: "the messaging channel could not be read", Detail: err.Error()})
		}
		return outcome{c: c, err: &SendError{Code: "channel_unavailable", Message: reason}}
	}
	prov := s.cfg.Providers.For(ch.Provider)
	if prov == nil {
		return outcome{c: c, err: &SendError{Code: "provider_not_supported", Message: "no adapter for provider " + ch.Provider}}
	}
	if ok, wait := s.allow(ctx, ch); !ok {
		return outcome{c: c, release: true, at: time.Now().Add(wait)}
	}
	out := Outbound{MessageID: c.ID, Channel: ch, To: c.To, Body: c.Body, Encoding: c.Encoding, CallbackURL: s.callbackURL(ch)}
	if c.TemplateID != "" {
		t, ok := ch.template(c.TemplateID)
		if !ok {
			return outcome{c: c, err: &SendError{Code: "template_removed", Message: "template " + c.TemplateID + " no longer exists on the channel"}}
		}
		out.Template, out.Variables = &t, c.Variables
	}
	sent, err := prov.Send(ctx, out)
	if err != nil {
		se := asSendError(err)
		if se.Transient && c.Attempts+1 < s.cfg.MaxAttempts {
			return s.retryOutcome(c, se)
		}
		return outcome{c: c, err: se}
	}
	return outcome{c: c, providerID: sent.ProviderID}
}

// retryOutcome schedules another attempt with exponential backoff (or the
// provider's Retry-After when longer).
func (s *Service) retryOutcome(c claimed, se *SendError) outcome {
	delay := backoff.Delay(s.cfg.BackoffBase, s.cfg.BackoffMax, c.Attempts+1)
	if se.RetryAfter > delay {
		delay = se.RetryAfter
	}
	return outcome{c: c, err: se, retry: true, at: time.Now().Add(delay)}
}

// allow takes a send slot from the channel's rate (rate_per_second,
// across every replica, counted in Redis per second). When the second is
// full it says how long until the next one.
func (s *Service) allow(ctx context.Context, ch *Channel) (bool, time.Duration) {
	now := time.Now()
	sec := now.Unix()
	key := s.cfg.KeyPrefix + "msg:rate:" + strconv.FormatInt(ch.ID, 10) + ":" + strconv.FormatInt(sec, 10)
	pipe := s.rdb.TxPipeline()
	incr := pipe.Incr(ctx, key)
	pipe.Expire(ctx, key, 2*time.Second)
	if _, err := pipe.Exec(ctx); err != nil {
		// Without Redis the limit cannot be shared; wait rather than exceed it.
		s.log.Warn("messaging rate limit unavailable", "error", err)
		return false, time.Second
	}
	if incr.Val() <= int64(ch.RatePerSecond) {
		return true, 0
	}
	return false, time.Unix(sec+1, 0).Sub(now)
}

// record writes a batch's outcomes in one transaction: acceptances and
// final failures update their message and leave the outbox; retries and
// releases get a new due time. Statuses only move forward, so a delivery
// report that beat this write stays. Should the write fail, the leases
// expire and the messages are sent again: recording is retried first.
func (s *Service) record(ctx context.Context, outcomes []outcome) {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = s.db.inTx(ctx, func(tx models.Querier) error { return s.recordTx(ctx, tx, outcomes) }); err == nil {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	if err != nil {
		s.log.Error("messaging outcomes not recorded; their leases will expire and they are sent again", "messages", len(outcomes), "error", err)
		return
	}
	for _, o := range outcomes {
		switch {
		case o.inbound && o.err != nil:
			s.log.Warn("received message not delivered to its destination", "message", o.c.ID, "code", o.err.Code, "error", o.err.Message, "detail", o.err.Detail)
		case o.retry:
			s.log.Info("message send failed; retrying", "message", o.c.ID, "attempt", o.c.Attempts+1, "at", o.at, "code", o.err.Code, "detail", o.err.Detail)
		case o.err != nil:
			s.log.Info("message failed", "message", o.c.ID, "code", o.err.Code, "error", o.err.Message, "detail", o.err.Detail)
		}
	}
}

func (s *Service) recordTx(ctx context.Context, tx models.Querier, outcomes []outcome) error {
	now := stamp(time.Now())
	var done []int64
	token := ""
	for _, o := range outcomes {
		if o.c.ID == 0 {
			continue
		}
		token = o.c.Token
		var err error
		switch {
		case o.inbound:
			// A received message stays "received"; the outcome of its
			// delivery shows in error_code / error_message.
			code, msg := "", ""
			if o.err != nil {
				code, msg = truncate(o.err.Code, 64), truncate(o.err.Message, 500)
			}
			_, err = tx.ExecContext(ctx, s.db.q(`UPDATE messages SET attempts = attempts + 1, error_code = ?, error_message = ?, updated_at = ? WHERE id = ?`), code, msg, now, o.c.ID)
			done = append(done, o.c.ID)
		case o.release:
			_, err = tx.ExecContext(ctx, s.db.q(`UPDATE messaging_outbox SET lease_owner = '', lease_until = '', next_attempt_at = ? WHERE message_id = ? AND lease_owner = ?`), stamp(o.at), o.c.ID, o.c.Token)
		case o.retry:
			if _, err = tx.ExecContext(ctx, s.db.q(`UPDATE messages SET attempts = attempts + 1, error_code = ?, error_message = ?, updated_at = ? WHERE id = ?`),
				truncate(o.err.Code, 64), truncate(o.err.Message, 500), now, o.c.ID); err == nil {
				_, err = tx.ExecContext(ctx, s.db.q(`UPDATE messaging_outbox SET lease_owner = '', lease_until = '', next_attempt_at = ? WHERE message_id = ? AND lease_owner = ?`), stamp(o.at), o.c.ID, o.c.Token)
			}
		case o.err != nil:
			_, err = tx.ExecContext(ctx, s.db.q(`UPDATE messages SET attempts = attempts + 1, error_code = ?, error_message = ?, updated_at = ?,
				status = CASE WHEN status_rank < 2 THEN 'failed' ELSE status END,
				status_rank = CASE WHEN status_rank < 2 THEN 2 ELSE status_rank END WHERE id = ?`), truncate(o.err.Code, 64), truncate(o.err.Message, 500), now, o.c.ID)
			done = append(done, o.c.ID)
		default:
			_, err = tx.ExecContext(ctx, s.db.q(`UPDATE messages SET provider_message_id = ?, attempts = attempts + 1, error_code = '', error_message = '', updated_at = ?,
				sent_at = COALESCE(sent_at, ?),
				status = CASE WHEN status_rank < 1 THEN 'sent' ELSE status END,
				status_rank = CASE WHEN status_rank < 1 THEN 1 ELSE status_rank END WHERE id = ?`), truncate(o.providerID, 128), now, now, o.c.ID)
			done = append(done, o.c.ID)
		}
		if err != nil {
			return fmt.Errorf("record message %d: %w", o.c.ID, err)
		}
	}
	if len(done) == 0 {
		return nil
	}
	query, args, err := tx.In(`DELETE FROM messaging_outbox WHERE message_id IN (?) AND lease_owner = ?`, done, token)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, query, args...)
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
