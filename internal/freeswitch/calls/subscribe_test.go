package calls

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/platform/redistest"
)

// next reads one change or fails after a deadline.
func next(t *testing.T, ch <-chan Change) Change {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("change stream closed")
		}
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no change within 5s")
	}
	return Change{}
}

func TestSubscribeTenantFiltered(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		tr := newTracker(t, b, nil)
		acme, stopAcme := tr.Subscribe(ctx, "acme")
		defer stopAcme()
		all, stopAll := tr.Subscribe(ctx, "")
		defer stopAll()

		a := newCallback("fs1", "acme", 1).a
		g := newCallback("fs1", "globex", 2).a
		apply := func(l leg, name string, seq uint64) {
			t.Helper()
			if err := tr.Apply(ctx, l.ev(name, seq)); err != nil {
				t.Fatal(err)
			}
		}
		apply(g, "CHANNEL_CREATE", 1)
		apply(a, "CHANNEL_CREATE", 2)
		apply(a, "CHANNEL_CREATE", 2) // duplicate: nothing published
		apply(a, "CHANNEL_ANSWER", 3)
		apply(a, "CHANNEL_PROGRESS", 4) // no change after answer: nothing published
		apply(a, "CHANNEL_HANGUP_COMPLETE", 5)

		want := []struct{ typ, uuid, state string }{
			{ChangeCreated, a.uuid, StateRinging},
			{ChangeUpdated, a.uuid, StateAnswered},
			{ChangeEnded, a.uuid, StateHangup},
		}
		for _, w := range want {
			c := next(t, acme)
			if c.Type != w.typ || c.Channel.UUID != w.uuid || c.Channel.State != w.state || c.Channel.Tenant != "acme" {
				t.Errorf("acme got %s %s %s, want %v", c.Type, c.Channel.UUID, c.Channel.State, w)
			}
		}
		if c := next(t, all); c.Channel.UUID != g.uuid || c.Type != ChangeCreated {
			t.Errorf("all: first = %s %s, want globex created", c.Type, c.Channel.UUID)
		}
		for _, w := range want {
			if c := next(t, all); c.Type != w.typ || c.Channel.UUID != w.uuid {
				t.Errorf("all got %s %s, want %v", c.Type, c.Channel.UUID, w)
			}
		}
		// A marker event proves nothing else was queued before it.
		apply(g, "CHANNEL_ANSWER", 6)
		if c := next(t, all); c.Channel.UUID != g.uuid || c.Type != ChangeUpdated {
			t.Errorf("all: marker = %s %s", c.Type, c.Channel.UUID)
		}
		stopAcme()
		if _, ok := <-acme; ok {
			t.Error("acme stream not closed after stop")
		}
	})
}

// dialCounter counts new Redis connections.
type dialCounter struct{ rtCounter }

func (c *dialCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c.n.Add(1)
		return next(ctx, network, addr)
	}
}

func (c *dialCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (c *dialCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestManyFollowersShareOneRedisReader: 20 open streams of one replica are
// served by one blocking reader, not one Redis connection each, and every
// one of them gets the change.
func TestManyFollowersShareOneRedisReader(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		rdb := redistest.Open(t, b.url)
		dials := &dialCounter{}
		rdb.AddHook(dials)
		tr := NewTracker(rdb, Options{Prefix: b.prefix, Now: func() time.Time { return fixedNow }})
		var streams []<-chan Change
		for range 20 {
			ch, stop := tr.Subscribe(ctx, "acme")
			defer stop()
			streams = append(streams, ch)
		}
		a := newCallback("fs1", "acme", 1).a
		if err := tr.Apply(ctx, a.ev("CHANNEL_CREATE", 1)); err != nil {
			t.Fatal(err)
		}
		for i, ch := range streams {
			if c := next(t, ch); c.Channel.UUID != a.uuid {
				t.Errorf("stream %d got %+v", i, c)
			}
		}
		if n := dials.n.Load(); n > 3 {
			t.Errorf("%d Redis connections for 20 streams", n)
		}
	})
}

// TestFollowResumesAfterLastID: a follower resuming after an id gets the
// changes after it (of its tenant only), then live ones, with ids.
func TestFollowResumesAfterLastID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		tr := newTracker(t, b, nil)
		first, stop := mustFollow(t, tr, "acme", "")
		a := newCallback("fs1", "acme", 1).a
		g := newCallback("fs1", "globex", 2).a
		if err := tr.Apply(ctx, a.ev("CHANNEL_CREATE", 1)); err != nil {
			t.Fatal(err)
		}
		got := <-first
		stop()
		for _, e := range []esl.Event{g.ev("CHANNEL_CREATE", 2), a.ev("CHANNEL_ANSWER", 3)} {
			if err := tr.Apply(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		resumed, _ := mustFollow(t, tr, "acme", got.ID)
		ev := <-resumed
		if ev.Change.Type != ChangeUpdated || ev.Change.Channel.State != StateAnswered || compareIDs(ev.ID, got.ID) <= 0 {
			t.Fatalf("resumed with %+v after %s", ev, got.ID)
		}
		if err := tr.Apply(ctx, a.ev("CHANNEL_HANGUP_COMPLETE", 4)); err != nil {
			t.Fatal(err)
		}
		if ev := <-resumed; ev.Change.Type != ChangeEnded {
			t.Errorf("live after resume %+v", ev)
		}
	})
}

func mustFollow(t *testing.T, tr *Tracker, tenant, last string) (<-chan StreamEvent, func()) {
	t.Helper()
	ch, stop, err := tr.Follow(t.Context(), tenant, last)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return ch, stop
}
