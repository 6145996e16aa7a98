package calls

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
)

// Spool keeps batches of events durably while Redis cannot take them
// (the server's is a database table). The replica that holds a batch
// retries it from memory and releases it once applied; a batch left
// behind by a replica that died meanwhile is applied by ReplayHeld on
// another. Without a spool, held events live only in memory (and in the
// node's unsent event queue, which FreeSWITCH drops with the connection).
type Spool interface {
	Hold(ctx context.Context, events []byte) (id int64, err error)
	// HeldBefore returns up to limit batches held before t, oldest first.
	HeldBefore(ctx context.Context, t time.Time, limit int) ([]HeldBatch, error)
	Release(ctx context.Context, id int64) error
}

// HeldBatch is one batch a Spool keeps: the events as Hold was given them,
// and when they were held.
type HeldBatch struct {
	ID     int64
	Events []byte
	At     time.Time
}

// hold keeps batch in the spool; it answers the batch's id, 0 when there
// is no spool or it failed (the batch is then held in memory only).
func (t *Tracker) hold(ctx context.Context, batch []esl.Event, onErr func(error)) int64 {
	if t.opts.Spool == nil {
		return 0
	}
	raw, err := json.Marshal(batch)
	if err == nil {
		var id int64
		if id, err = t.opts.Spool.Hold(ctx, raw); err == nil {
			return id
		}
	}
	onErr(fmt.Errorf("keep %d held channel events durably: %w", len(batch), err))
	return 0
}

// release forgets a held batch once it is applied.
func (t *Tracker) release(ctx context.Context, id int64) {
	if id == 0 {
		return
	}
	if err := t.opts.Spool.Release(ctx, id); err != nil {
		// Applying it again later is a no-op: only a wasted replay.
		t.opts.Logger.Warn("release applied channel events", "held", id, "error", err)
	}
}

// ReplayHeld applies the spooled batches held for longer than olderThan
// (their replica died, or is still retrying: applying twice is a no-op)
// and releases them. A batch older than EndedTTL is dropped with a
// warning: the tombstones that make late events harmless are gone by
// then, and its calls would come back to life. It answers how many batches
// it applied; it stops at the first that Redis cannot be reached for, and
// releases a batch whose events it refuses (one without a Unique-ID).
func (t *Tracker) ReplayHeld(ctx context.Context, olderThan time.Duration) (int, error) {
	if t.opts.Spool == nil {
		return 0, nil
	}
	held, err := t.opts.Spool.HeldBefore(ctx, time.Now().Add(-olderThan), maxBatch)
	if err != nil {
		return 0, fmt.Errorf("read held channel events: %w", err)
	}
	applied := 0
	for _, h := range held {
		var events []esl.Event
		if err := json.Unmarshal(h.Events, &events); err != nil {
			t.opts.Logger.Error("held channel events unreadable: dropped", "held", h.ID, "error", err)
			t.release(ctx, h.ID)
			continue
		}
		if age := time.Since(h.At); age > t.opts.EndedTTL {
			t.opts.Logger.Error("held channel events too old to apply safely: dropped", "held", h.ID, "events", len(events), "age", age)
			t.release(ctx, h.ID)
			continue
		}
		if err := t.ApplyBatch(ctx, events); err != nil {
			if redisUnreachable(err) || ctx.Err() != nil {
				return applied, fmt.Errorf("apply held channel events %d: %w", h.ID, err)
			}
			// Refused, not unreachable: trying again gives the same answer,
			// and keeping the batch would stop every later one behind it.
			// The batch's other events are applied.
			t.opts.Logger.Error("held channel events partly refused: released", "held", h.ID, "events", len(events), "error", err)
		}
		t.release(ctx, h.ID)
		applied++
	}
	if applied > 0 {
		t.opts.Logger.Info("held channel events of another replica applied", "batches", applied)
	}
	return applied, nil
}
