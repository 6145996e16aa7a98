package webhooks

import (
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
)

// A webhook gets the events of its subscription from its creation on;
// call.created subscribers get call.started.
func TestWantsEventsFromCreationOnAndTheGuideAlias(t *testing.T) {
	created := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	h := &Hook{Kind: KindTenant, Enabled: true, Events: []string{"call.created", "call.ended"}, Created: created}
	ev := func(typ string, at time.Time) *Event {
		e, err := eventOf(changes.Change{ID: 1, Resource: typ, Op: changes.Event, Tenant: "acme", Key: "SIP/1001-acme-00000001", After: []byte(`{}`), At: at})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		typ  string
		at   time.Time
		want bool
	}{
		{"call.started", created.Add(time.Second), true},
		{"call.ended", created.Add(time.Second), true},
		{"call.answered", created.Add(time.Second), false},
		{"call.ended", created.Add(-time.Millisecond), false},
	} {
		if got := h.wants(ev(c.typ, c.at)); got != c.want {
			t.Errorf("%s at %s: wants %v, want %v", c.typ, c.at, got, c.want)
		}
	}
	if e := ev("call.started", created); e.subject != "SIP/1001-acme-00000001" {
		t.Errorf("call event subject %q", e.subject)
	}
}
