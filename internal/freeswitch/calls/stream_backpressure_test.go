package calls

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// addChanges appends n "created" changes of tenant to the change stream
// (channel uuids <prefix>0 … <prefix>n-1) and returns their stream ids.
func addChanges(t *testing.T, tr *Tracker, tenant, prefix string, n int) []string {
	t.Helper()
	ctx := t.Context()
	pipe := tr.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, n)
	for i := range n {
		msg, _ := json.Marshal(Change{Type: ChangeCreated, Channel: Channel{UUID: fmt.Sprintf("%s%d", prefix, i), Tenant: tenant}})
		cmds[i] = pipe.XAdd(ctx, &redis.XAddArgs{Stream: tr.streamKey(), Values: []any{"tenant", tenant, "msg", msg}})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i, c := range cmds {
		ids[i] = c.Val()
	}
	return ids
}

// followWithin calls Follow and fails if it does not answer (it used to
// block forever on a backlog larger than a subscriber's buffer).
func followWithin(t *testing.T, tr *Tracker, ctx context.Context, tenant, last string) <-chan StreamEvent {
	t.Helper()
	type res struct {
		ch  <-chan StreamEvent
		err error
	}
	got := make(chan res, 1)
	go func() {
		ch, stop, err := tr.Follow(ctx, tenant, last)
		if err == nil {
			t.Cleanup(stop)
		}
		got <- res{ch, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.ch
	case <-time.After(10 * time.Second):
		t.Fatalf("Follow(%q, %q) did not answer", tenant, last)
	}
	return nil
}

// expectEvents reads the events with the given uuids, in order.
func expectEvents(t *testing.T, who string, ch <-chan StreamEvent, prefix string, from, to int) string {
	t.Helper()
	var last string
	for i := from; i < to; i++ {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("%s: stream closed before event %d", who, i)
			}
			if want := fmt.Sprintf("%s%d", prefix, i); ev.Change.Channel.UUID != want {
				t.Fatalf("%s: event %d is %s, want %s", who, i, ev.Change.Channel.UUID, want)
			}
			last = ev.ID
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no event %d", who, i)
		}
	}
	return last
}

// TestResumeWithLargeBacklog: with more retained changes than a
// subscriber's buffer, a resume from 0-0 answers and replays them all,
// then continues live; another stream keeps receiving meanwhile.
func TestResumeWithLargeBacklog(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		tr := newTracker(t, b, nil)
		n := followBuffer + 500
		addChanges(t, tr, "acme", "old", n)
		other := followWithin(t, tr, ctx, "", "")
		resumed := followWithin(t, tr, ctx, "acme", "0-0")
		addChanges(t, tr, "acme", "new", 1)
		expectEvents(t, "other stream", other, "new", 0, 1)
		expectEvents(t, "resumed", resumed, "old", 0, n)
		expectEvents(t, "resumed", resumed, "new", 0, 1)
	})
}

// TestStuckStreamDoesNotStallOthers: a resumed stream whose reader never
// reads (its replay alone overflows its buffer) neither blocks new
// streams nor the delivery to the others; it is dropped.
func TestStuckStreamDoesNotStallOthers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		tr := newTracker(t, b, nil)
		addChanges(t, tr, "acme", "old", followBuffer+100)
		stuckCtx, cancelStuck := context.WithCancel(ctx)
		defer cancelStuck()
		followWithin(t, tr, stuckCtx, "acme", "0-0") // never read
		active := followWithin(t, tr, ctx, "acme", "")
		// Live changes in batches the active reader takes in turn: more
		// in all than the stuck stream can queue.
		for batch := range 3 {
			p := fmt.Sprintf("b%d-", batch)
			addChanges(t, tr, "acme", p, followBuffer/2)
			expectEvents(t, "active", active, p, 0, followBuffer/2)
		}
		late := followWithin(t, tr, ctx, "acme", "")
		addChanges(t, tr, "acme", "late", 1)
		expectEvents(t, "late stream", late, "late", 0, 1)
		expectEvents(t, "active", active, "late", 0, 1)
	})
}

// TestDroppedStreamResumes: a stream that falls behind by more than its
// buffer ends after the events queued for it; resuming from the last id
// it got delivers the rest, then live ones, with no gap or duplicate.
func TestDroppedStreamResumes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		tr := newTracker(t, b, nil)
		slow := followWithin(t, tr, ctx, "acme", "")
		active := followWithin(t, tr, ctx, "acme", "")
		const batch = followBuffer / 4
		n := followBuffer + batch
		for from := 0; from < n; from += batch {
			p := fmt.Sprintf("x%d-", from)
			addChanges(t, tr, "acme", p, batch)
			expectEvents(t, "active", active, p, 0, batch)
		}
		// The slow stream got the first followBuffer events, then ends.
		var got []StreamEvent
		for ev := range slow {
			got = append(got, ev)
		}
		if len(got) != followBuffer {
			t.Fatalf("dropped stream delivered %d events, want %d", len(got), followBuffer)
		}
		resumed := followWithin(t, tr, ctx, "acme", got[len(got)-1].ID)
		expectEvents(t, "resumed", resumed, fmt.Sprintf("x%d-", followBuffer), 0, batch)
		addChanges(t, tr, "acme", "live", 1)
		expectEvents(t, "resumed", resumed, "live", 0, 1)
	})
}
