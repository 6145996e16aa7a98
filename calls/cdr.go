package calls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// envelope is the first line of what the apply script queues in the pending
// CDR list; the second line is the ended channel's public JSON.
type envelope struct {
	HangupCause string  `json:"hangup_cause"`
	EndedAt     string  `json:"ended_at"`
	Duration    int     `json:"duration"`
	Billsec     int     `json:"billsec"`
	QueuedAt    float64 `json:"queued_at"`
}

// decodeEnvelope builds the CDR from a queued envelope. Durations missing
// from the event (-1) are computed from the channel's times.
func decodeEnvelope(raw string) (CDR, error) {
	meta, pub, _ := strings.Cut(raw, "\n")
	var env envelope
	if err := json.Unmarshal([]byte(meta), &env); err != nil {
		return CDR{}, fmt.Errorf("decode cdr envelope: %w", err)
	}
	var ch Channel
	if err := json.Unmarshal([]byte(pub), &ch); err != nil {
		return CDR{}, fmt.Errorf("decode cdr channel: %w", err)
	}
	cdr := CDR{
		ChannelID:      ch.ID,
		UUID:           ch.UUID,
		Node:           ch.Node,
		Tenant:         ch.Tenant,
		Direction:      ch.Direction,
		CallerIDName:   ch.CallerIDName,
		CallerIDNumber: ch.CallerIDNumber,
		Destination:    ch.Destination,
		Extension:      ch.Extension,
		StartedAt:      ch.StartedAt,
		AnsweredAt:     ch.AnsweredAt,
		HangupCause:    env.HangupCause,
		RecordingPath:  ch.RecordingPath,
	}
	if env.EndedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, env.EndedAt)
		if err != nil {
			return CDR{}, fmt.Errorf("decode cdr ended_at: %w", err)
		}
		cdr.EndedAt = t
	}
	cdr.DurationSeconds = env.Duration
	if cdr.DurationSeconds < 0 {
		cdr.DurationSeconds = seconds(cdr.StartedAt, cdr.EndedAt)
	}
	cdr.Billsec = env.Billsec
	if cdr.Billsec < 0 {
		cdr.Billsec = seconds(cdr.AnsweredAt, cdr.EndedAt)
	}
	return cdr, nil
}

// seconds is the whole seconds from a to b, 0 when either is unknown.
func seconds(a, b time.Time) int {
	if a.IsZero() || b.IsZero() || b.Before(a) {
		return 0
	}
	return int(math.Round(b.Sub(a).Seconds()))
}

// RetryPendingCDRs hands the queued CDRs older than Options.RetryAfter to
// OnEnd again (at most 1000 per call), removing each one it accepts. A lock
// makes one replica at a time do it; call it periodically. It returns how many were delivered and stops at the first
// OnEnd failure (the rest stay queued).
func (t *Tracker) RetryPendingCDRs(ctx context.Context) (int, error) {
	if t.opts.OnEnd == nil {
		return 0, nil
	}
	lockKey := t.prefix + "cdr:retrylock"
	token := uuid.NewString()
	ok, err := t.rdb.SetNX(ctx, lockKey, token, 5*time.Minute).Result()
	if err != nil {
		return 0, fmt.Errorf("retry cdrs: lock: %w", err)
	}
	if !ok {
		return 0, nil
	}
	defer t.unlock(context.WithoutCancel(ctx), lockKey, token)

	items, err := t.rdb.LRange(ctx, t.prefix+"cdr:pending", 0, 999).Result()
	if err != nil {
		return 0, fmt.Errorf("retry cdrs: list: %w", err)
	}
	cutoff := float64(t.opts.Now().Add(-t.opts.RetryAfter).Unix())
	delivered := 0
	for _, raw := range items {
		meta, _, _ := strings.Cut(raw, "\n")
		var env envelope
		if err := json.Unmarshal([]byte(meta), &env); err == nil && env.QueuedAt > cutoff {
			continue
		}
		cdr, err := decodeEnvelope(raw)
		if err != nil {
			// Unreadable: drop it rather than block the queue forever.
			t.opts.Logger.Error("drop unreadable cdr", "error", err, "cdr", raw)
			t.rdb.LRem(ctx, t.prefix+"cdr:pending", 1, raw)
			continue
		}
		if err := t.opts.OnEnd(ctx, cdr); err != nil {
			return delivered, fmt.Errorf("retry cdr %s: %w", cdr.UUID, err)
		}
		if err := t.rdb.LRem(ctx, t.prefix+"cdr:pending", 1, raw).Err(); err != nil {
			return delivered, fmt.Errorf("retry cdrs: remove: %w", err)
		}
		delivered++
	}
	return delivered, nil
}

var unlockScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

// unlock releases the retry lock if this call still holds it.
func (t *Tracker) unlock(ctx context.Context, key, token string) {
	if err := unlockScript.Run(ctx, t.rdb, []string{key}, token).Err(); err != nil && !errors.Is(err, redis.Nil) {
		t.opts.Logger.Warn("release cdr retry lock", "error", err)
	}
}

// PendingCDRs returns how many CDRs wait for delivery.
func (t *Tracker) PendingCDRs(ctx context.Context) (int64, error) {
	n, err := t.rdb.LLen(ctx, t.prefix+"cdr:pending").Result()
	if err != nil {
		return 0, fmt.Errorf("count pending cdrs: %w", err)
	}
	return n, nil
}
