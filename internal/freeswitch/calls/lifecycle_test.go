package calls

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
)

// handOffs records what a tracker hands over, events and CDRs in one
// sequence, as "<type> <uuid>" (a CDR is "call.ended").
type handOffs struct {
	mu   sync.Mutex
	seen []string
	tens map[string]string // "<type> <uuid>" -> tenant
	fail atomic.Bool
}

func (h *handOffs) add(typ, uuid, tenant string) error {
	if h.fail.Load() {
		return errors.New("database down")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, typ+" "+uuid)
	if h.tens == nil {
		h.tens = map[string]string{}
	}
	h.tens[typ+" "+uuid] = tenant
	return nil
}

func (h *handOffs) options(prefix string, now func() time.Time) Options {
	return Options{Prefix: prefix, Now: now,
		OnCallEvent: func(_ context.Context, ev CallEvent) error {
			return h.add(ev.Type, ev.Channel.UUID, ev.Channel.Tenant)
		},
		OnEnd: func(_ context.Context, c CDR) error { return h.add("call.ended", c.UUID, c.Tenant) },
	}
}

// of lists what was handed over for one channel, in order.
func (h *handOffs) of(uuid string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, s := range h.seen {
		if len(s) > len(uuid) && s[len(s)-len(uuid):] == uuid {
			out = append(out, s[:len(s)-len(uuid)-1])
		}
	}
	return out
}

// TestLifecycleEventsOncePerChannelInOrder: two replicas apply the same
// call's events concurrently (as around a lease hand-over); each channel
// hands over call.started, call.answered and its CDR exactly once, in that
// order, with the tenant.
func TestLifecycleEventsOncePerChannelInOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		h := &handOffs{}
		now := func() time.Time { return fixedNow }
		r1, r2 := NewTracker(b.rdb, h.options(b.prefix, now)), NewTracker(b.rdb, h.options(b.prefix, now))
		call := newCallback("fs1", "acme", 7)
		evs := events(call.lifecycle(100, true))
		var wg sync.WaitGroup
		for _, tr := range []*Tracker{r1, r2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := Replay(t.Context(), tr, evs); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		want := []string{EventStarted, EventAnswered, "call.ended"}
		for _, l := range []leg{call.a, call.b} {
			if got := h.of(l.uuid); !slices.Equal(got, want) {
				t.Errorf("%s handed over %v, want %v", l.uuid, got, want)
			}
			if h.tens[EventStarted+" "+l.uuid] != "acme" {
				t.Errorf("%s started in tenant %q", l.uuid, h.tens[EventStarted+" "+l.uuid])
			}
		}
		if n, _ := r1.PendingCDRs(t.Context()); n != 0 {
			t.Errorf("%d items left pending", n)
		}
	})
}

// TestLifecycleEventsWaitForAFailedOne: while the database refuses, a
// channel's started event stays queued and its later events wait behind
// it; the retry hands all of them over in order, once.
func TestLifecycleEventsWaitForAFailedOne(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		h := &handOffs{}
		at := fixedNow
		tr := NewTracker(b.rdb, h.options(b.prefix, func() time.Time { return at }))
		a := newCallback("fs1", "acme", 3).a
		h.fail.Store(true)
		if err := tr.Apply(ctx, a.ev("CHANNEL_CREATE", 1)); err != nil {
			t.Fatal(err)
		}
		h.fail.Store(false)
		for i, name := range []string{"CHANNEL_ANSWER", "CHANNEL_HANGUP_COMPLETE"} {
			if err := tr.ApplyBatch(ctx, []esl.Event{a.ev(name, uint64(i+2))}); err != nil {
				t.Fatal(err)
			}
		}
		if got := h.of(a.uuid); len(got) != 0 {
			t.Fatalf("handed over %v while call.started was still queued", got)
		}
		if n, _ := tr.PendingCDRs(ctx); n != 3 {
			t.Fatalf("pending = %d, want 3", n)
		}
		at = at.Add(2 * time.Minute)
		if n, err := tr.RetryPendingCDRs(ctx); err != nil || n != 3 {
			t.Fatalf("retry delivered %d, %v; want 3", n, err)
		}
		if got, want := h.of(a.uuid), []string{EventStarted, EventAnswered, "call.ended"}; !slices.Equal(got, want) {
			t.Errorf("handed over %v, want %v", got, want)
		}
	})
}

// TestLifecycleStartedWaitsForTheTenant: an inbound DID call has no tenant
// until the public dialplan transfers it (the answer carries sb_tenant);
// call.started waits for it, so the tenant's webhooks see the call.
func TestLifecycleStartedWaitsForTheTenant(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		h := &handOffs{}
		tr := NewTracker(b.rdb, h.options(b.prefix, func() time.Time { return fixedNow }))
		l := newCallback("fs1", "", 4).a
		l.context, l.direction = "public", "inbound"
		if err := tr.Apply(ctx, l.ev("CHANNEL_CREATE", 1)); err != nil {
			t.Fatal(err)
		}
		if got := h.of(l.uuid); len(got) != 0 {
			t.Fatalf("a tenantless channel handed over %v", got)
		}
		if err := tr.Apply(ctx, l.ev("CHANNEL_ANSWER", 2, "variable_sb_tenant", "acme")); err != nil {
			t.Fatal(err)
		}
		if got, want := h.of(l.uuid), []string{EventStarted, EventAnswered}; !slices.Equal(got, want) {
			t.Fatalf("handed over %v, want %v", got, want)
		}
		if h.tens[EventStarted+" "+l.uuid] != "acme" {
			t.Errorf("started in tenant %q, want acme", h.tens[EventStarted+" "+l.uuid])
		}
	})
}
