package calls

import (
	"testing"
	"time"
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
