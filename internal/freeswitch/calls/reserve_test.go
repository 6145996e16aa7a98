package calls

import (
	"errors"
	"strings"
	"testing"
)

func TestReserveIDIsTheIDEventsUse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		tr := newTracker(t, b, nil)
		ctx := t.Context()
		a := newCallback("fs1", "acme", 1).a
		a.name = "loopback/+27825550001-a"
		id, err := tr.ReserveID(ctx, "acme", "Local", "1001", a.node, a.uuid)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(id, "Local/1001-acme-") {
			t.Fatalf("reserved %q", id)
		}
		if _, err := tr.Get(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("before any event: %v", err)
		}
		// Another channel of the tenant created meanwhile gets its own id.
		other := newCallback("fs1", "acme", 2).a
		if err := tr.Apply(ctx, other.ev("CHANNEL_CREATE", 1)); err != nil {
			t.Fatal(err)
		}
		if err := tr.Apply(ctx, a.ev("CHANNEL_CREATE", 2)); err != nil {
			t.Fatal(err)
		}
		ch, err := tr.Get(ctx, id)
		if err != nil || ch.UUID != a.uuid {
			t.Fatalf("Get(%s) = %v, %v", id, ch, err)
		}
		oc, err := tr.ByUUID(ctx, "fs1", other.uuid)
		if err != nil || oc.ID == id {
			t.Fatalf("other channel id %q (reserved %q): %v", oc.ID, id, err)
		}
		// A duplicate create keeps the id.
		if err := tr.Apply(ctx, a.ev("CHANNEL_CREATE", 2)); err != nil {
			t.Fatal(err)
		}
		if again, _ := tr.ByUUID(ctx, "fs1", a.uuid); again.ID != id {
			t.Fatalf("id changed to %q", again.ID)
		}
	})
}

func TestReserveIDRefusesBadInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		tr := newTracker(t, b, nil)
		for _, tc := range []struct{ name, tenant, node, uuid string }{
			{"tenant with dash", "ac-me", "fs1", "u1"},
			{"no node", "acme", "", "u1"},
			{"no uuid", "acme", "fs1", ""},
		} {
			if _, err := tr.ReserveID(t.Context(), tc.tenant, "SIP", "1001", tc.node, tc.uuid); err == nil {
				t.Errorf("%s: no error", tc.name)
			}
		}
	})
}
