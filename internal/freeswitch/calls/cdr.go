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

// envelope is the first line of what the apply script queues in the
// pending list; the second line is the channel's public JSON. Event is set
// for lifecycle events (call.started, call.answered); without it the
// envelope is a CDR.
type envelope struct {
	Event       string `json:"event,omitempty"`
	HangupCause string `json:"hangup_cause"`
	EndedAt     string `json:"ended_at"`
	Duration    int    `json:"duration"`
	Billsec     int    `json:"billsec"`
	// N is the item's place in its channel's order (1, 2, ...); 0 for
	// items queued before items were numbered.
	N        int64   `json:"n"`
	QueuedAt float64 `json:"queued_at"`
}

// Lifecycle event types handed to Options.OnCallEvent.
const (
	EventStarted  = "call.started"
	EventAnswered = "call.answered"
)

// CallEvent is a lifecycle event of one channel: its type and the channel
// as it stood when the event was queued.
type CallEvent struct {
	Type    string
	Channel Channel
}

// queued is one decoded pending-list item: a lifecycle event or a CDR,
// with its place in the channel's order and its raw list entry.
type queued struct {
	event *CallEvent
	cdr   CDR
	n     int64
	raw   string
}

// member names the item's channel.
func (q queued) member() string {
	if q.event != nil {
		return member(q.event.Channel.Node, q.event.Channel.UUID)
	}
	return member(q.cdr.Node, q.cdr.UUID)
}

// decodeEnvelope reads a queued item. A CDR's durations missing from the
// event (-1) are computed from the channel's times.
func decodeEnvelope(raw string) (queued, error) {
	meta, pub, _ := strings.Cut(raw, "\n")
	var env envelope
	if err := json.Unmarshal([]byte(meta), &env); err != nil {
		return queued{}, fmt.Errorf("decode cdr envelope: %w", err)
	}
	var ch Channel
	if err := json.Unmarshal([]byte(pub), &ch); err != nil {
		return queued{}, fmt.Errorf("decode cdr channel: %w", err)
	}
	if env.Event != "" {
		return queued{event: &CallEvent{Type: env.Event, Channel: ch}, n: env.N, raw: raw}, nil
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
			return queued{}, fmt.Errorf("decode cdr ended_at: %w", err)
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
	return queued{cdr: cdr, n: env.N, raw: raw}, nil
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
	if t.opts.OnEnd == nil && t.opts.OnCallEvent == nil {
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
	var due []string
	for _, raw := range items {
		meta, _, _ := strings.Cut(raw, "\n")
		var env envelope
		if err := json.Unmarshal([]byte(meta), &env); err == nil && env.QueuedAt > cutoff {
			continue
		}
		due = append(due, raw)
	}
	// In list order per channel; a channel whose item fails keeps the rest
	// of its items queued, other channels go on.
	delivered := 0
	var errs []error
	for _, group := range t.byChannel(ctx, due) {
		n, err := t.deliverChannel(ctx, group, false)
		delivered += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return delivered, errors.Join(errs...)
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

// AdoptPendingCDRs moves the CDRs and call events that a tracker with key
// prefix from left queued (a release that kept its keys elsewhere) to the
// end of this tracker's list, where RetryPendingCDRs delivers them, so an
// upgrade loses none. The two lists share the {calls} hash tag, so each move
// is one atomic LMOVE even on a Redis Cluster. It answers how many moved.
func (t *Tracker) AdoptPendingCDRs(ctx context.Context, from string) (int, error) {
	if !hasHashTag(from) {
		from += "{calls}:"
	}
	if from == t.prefix {
		return 0, nil
	}
	moved := 0
	for {
		err := t.rdb.LMove(ctx, from+"cdr:pending", t.prefix+"cdr:pending", "LEFT", "RIGHT").Err()
		if errors.Is(err, redis.Nil) {
			return moved, nil
		}
		if err != nil {
			return moved, fmt.Errorf("adopt pending cdrs from %q: %w", from, err)
		}
		moved++
	}
}
