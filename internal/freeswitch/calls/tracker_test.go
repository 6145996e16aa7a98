package calls

import (
	"errors"
	"maps"
	"testing"
	"time"
)

func TestLifecycleCallbackCall(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		sink := &cdrSink{}
		tr := newTracker(t, b, sink)
		ctx := t.Context()
		call := newCallback("fs1", "acme", 1)
		for i, s := range call.lifecycle(100, true) {
			if err := tr.Apply(ctx, s.e); err != nil {
				t.Fatalf("step %d %s: %v", i, s.e.Name(), err)
			}
			if got := liveStates(t, tr, "acme"); !maps.Equal(got, s.live) {
				t.Fatalf("step %d %s: live = %v, want %v", i, s.e.Name(), got, s.live)
			}
			if got := liveStates(t, tr, ""); !maps.Equal(got, s.live) {
				t.Fatalf("step %d %s: platform live = %v, want %v", i, s.e.Name(), got, s.live)
			}
			if got := liveStates(t, tr, "globex"); len(got) != 0 {
				t.Fatalf("step %d: other tenant sees %v", i, got)
			}
		}
		cdrs := sink.all()
		if len(cdrs) != 2 {
			t.Fatalf("got %d CDRs, want 2: %+v", len(cdrs), cdrs)
		}
		byUUID := map[string]CDR{}
		for _, c := range cdrs {
			byUUID[c.UUID] = c
		}
		a := byUUID[call.a.uuid]
		if a.ChannelID != "SIP/1001-acme-00000001" || a.Tenant != "acme" || a.Node != "fs1" ||
			a.HangupCause != "NORMAL_CLEARING" || a.DurationSeconds != 60 || a.Billsec != 57 ||
			a.RecordingPath != "/var/lib/sb/rec/acme/call.wav" || a.Extension != "1001" ||
			a.Destination != "447700900123" || a.Direction != "outbound" {
			t.Errorf("A CDR = %+v", a)
		}
		if want := time.UnixMicro(call.a.created + 3000).UTC(); !a.AnsweredAt.Equal(want) {
			t.Errorf("A answered_at = %v, want %v", a.AnsweredAt, want)
		}
		if want := time.UnixMicro(call.a.created + 60_000_000).UTC(); !a.EndedAt.Equal(want) {
			t.Errorf("A ended_at = %v, want %v", a.EndedAt, want)
		}
		if bc := byUUID[call.b.uuid]; bc.ChannelID != "SIP/442079876543-acme-00000002" {
			t.Errorf("B CDR = %+v", bc)
		}
		if n, err := tr.PendingCDRs(ctx); err != nil || n != 0 {
			t.Errorf("pending CDRs = %d, %v; want 0", n, err)
		}
		// The ended channel stays readable as a tombstone.
		ch, err := tr.Get(ctx, "SIP/1001-acme-00000001")
		if err != nil || ch.State != StateHangup || ch.UUID != call.a.uuid {
			t.Errorf("Get after end = %+v, %v", ch, err)
		}
		if n := b.rdb.SCard(ctx, b.prefix+"live:node:fs1").Val(); n != 0 {
			t.Errorf("node set has %d members after the call", n)
		}
	})
}

func TestBridgedChannelRecord(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		tr := newTracker(t, b, nil)
		ctx := t.Context()
		call := newCallback("fs1", "acme", 1)
		steps := call.lifecycle(100, false)
		for _, s := range steps[:8] { // up to RECORD_START
			if err := tr.Apply(ctx, s.e); err != nil {
				t.Fatal(err)
			}
		}
		a, err := tr.Get(ctx, "SIP/1001-acme-00000001")
		if err != nil {
			t.Fatal(err)
		}
		bch, err := tr.ByUUID(ctx, "fs1", call.b.uuid)
		if err != nil {
			t.Fatal(err)
		}
		if a.BridgedTo != bch.ID || bch.BridgedTo != a.ID || a.PeerUUID != bch.UUID || bch.PeerUUID != a.UUID {
			t.Errorf("bridge links: A %q/%q, B %q/%q", a.BridgedTo, a.PeerUUID, bch.BridgedTo, bch.PeerUUID)
		}
		if !a.Recording || a.RecordingPath != "/var/lib/sb/rec/acme/call.wav" || bch.Recording {
			t.Errorf("recording: A %v %q, B %v", a.Recording, a.RecordingPath, bch.Recording)
		}
		if a.State != StateBridged || a.BridgedAt.IsZero() || a.AnsweredAt.IsZero() || a.LastSeq != 108 {
			t.Errorf("A = %+v", a)
		}
		if a.CallerIDNumber != "+442071234567" || a.CallerIDName != "ACME" || a.Context != "default" || a.CallUUID != call.a.uuid {
			t.Errorf("A caller info = %+v", a)
		}
		if _, err := tr.Get(ctx, "SIP/1001-acme-000000ff"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get unknown id: %v, want ErrNotFound", err)
		}
		if _, err := tr.ByUUID(ctx, "fs2", call.a.uuid); !errors.Is(err, ErrNotFound) {
			t.Errorf("ByUUID on another node: %v, want ErrNotFound", err)
		}
	})
}

func TestDuplicatesAreNoOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		sink := &cdrSink{}
		tr := newTracker(t, b, sink)
		ctx := t.Context()
		steps := newCallback("fs1", "acme", 1).lifecycle(100, true)
		for i, s := range steps {
			if err := tr.Apply(ctx, s.e); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, b.rdb, b.prefix)
			// Every event seen so far, again.
			for _, old := range steps[:i+1] {
				if err := tr.Apply(ctx, old.e); err != nil {
					t.Fatal(err)
				}
			}
			if after := snapshot(t, b.rdb, b.prefix); !maps.Equal(before, after) {
				t.Fatalf("after step %d, replaying earlier events changed Redis:\nbefore %v\nafter  %v", i, before, after)
			}
		}
		if n := len(sink.all()); n != 2 {
			t.Errorf("got %d CDRs, want 2", n)
		}
	})
}

func TestAnswerAfterHangupDoesNotResurrect(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		sink := &cdrSink{}
		tr := newTracker(t, b, sink)
		ctx := t.Context()
		call := newCallback("fs1", "acme", 1)
		steps := call.lifecycle(100, true)
		hupA := steps[len(steps)-1].e
		apply := func(i int) {
			t.Helper()
			if err := tr.Apply(ctx, steps[i].e); err != nil {
				t.Fatal(err)
			}
		}
		apply(0)
		if err := tr.Apply(ctx, hupA); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, b.rdb, b.prefix)
		apply(2) // ANSWER arrives late
		apply(6) // BRIDGE arrives late: must not resurrect A nor bring B in via A
		if after := snapshot(t, b.rdb, b.prefix); !maps.Equal(before, after) {
			t.Errorf("late events changed Redis:\nbefore %v\nafter  %v", before, after)
		}
		if ttl := b.rdb.TTL(ctx, b.prefix+"ch:fs1:"+call.a.uuid).Val(); ttl <= 0 || ttl > 10*time.Minute {
			t.Errorf("tombstone TTL = %v, want (0, 10m]", ttl)
		}
		if got := liveStates(t, tr, ""); len(got) != 0 {
			t.Errorf("live after late events = %v, want none", got)
		}
		ch, err := tr.ByUUID(ctx, "fs1", call.a.uuid)
		if err != nil || ch.State != StateHangup {
			t.Errorf("A = %+v, %v; want hangup", ch, err)
		}
		// A channel whose first event is its hangup still gets one CDR and
		// never becomes live.
		if err := tr.Apply(ctx, steps[len(steps)-2].e); err != nil {
			t.Fatal(err)
		}
		apply(3)
		apply(5)
		if got := liveStates(t, tr, ""); len(got) != 0 {
			t.Errorf("live = %v, want none", got)
		}
		if n := len(sink.all()); n != 2 {
			t.Errorf("got %d CDRs, want 2", n)
		}
	})
}

func TestProgressAfterAnswerDoesNotDowngrade(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		tr := newTracker(t, b, nil)
		ctx := t.Context()
		a := newCallback("fs1", "acme", 1).a
		for _, e := range []struct {
			name string
			seq  uint64
		}{{"CHANNEL_CREATE", 1}, {"CHANNEL_ANSWER", 3}, {"CHANNEL_PROGRESS_MEDIA", 2}, {"CHANNEL_PROGRESS", 4}} {
			if err := tr.Apply(ctx, a.ev(e.name, e.seq)); err != nil {
				t.Fatal(err)
			}
		}
		ch, err := tr.ByUUID(ctx, "fs1", a.uuid)
		if err != nil || ch.State != StateAnswered || ch.LastSeq != 4 {
			t.Errorf("channel = %+v, %v; want answered, last_seq 4", ch, err)
		}
	})
}

func TestLateEventAfterTombstoneExpiry(t *testing.T) {
	b := backends(t)[0]
	sink := &cdrSink{}
	tr := newTracker(t, b, sink)
	ctx := t.Context()
	steps := newCallback("fs1", "acme", 1).lifecycle(100, true)
	for _, i := range []int{0, 2, len(steps) - 1} {
		if err := tr.Apply(ctx, steps[i].e); err != nil {
			t.Fatal(err)
		}
	}
	b.mini.FastForward(11 * time.Minute)
	if _, err := tr.Get(ctx, "SIP/1001-acme-00000001"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after tombstone expiry: %v, want ErrNotFound", err)
	}
	// The CDR guard outlives the tombstone: a very late duplicate hangup
	// or answer neither repeats the CDR nor revives the channel.
	for _, i := range []int{2, len(steps) - 1} {
		if err := tr.Apply(ctx, steps[i].e); err != nil {
			t.Fatal(err)
		}
		if got := liveStates(t, tr, ""); len(got) != 0 {
			t.Errorf("after late %s live = %v, want none", steps[i].e.Name(), got)
		}
	}
	if n := len(sink.all()); n != 1 {
		t.Errorf("got %d CDRs, want 1", n)
	}
}
