package calls

import (
	"testing"
)

// TestNewCoreUUIDEndsTheOldProcessesChannels: a bridged call of a
// FreeSWITCH process, then the first event of a new process (its Core-UUID
// differs): both legs of the old call end at once, young as they are, with
// CDRs, and the new process's channel stays live.
func TestNewCoreUUIDEndsTheOldProcessesChannels(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		sink := &cdrSink{}
		tr := newTracker(t, b, sink)
		call := newCallback("fs1", "acme", 1)
		if err := Replay(ctx, tr, events(call.lifecycle(100, false))); err != nil {
			t.Fatal(err)
		}
		if got := liveStates(t, tr, "acme"); len(got) != 2 {
			t.Fatalf("before restart %v", got)
		}
		fresh := newCallback("fs1", "acme", 2).a
		ev := fresh.ev("CHANNEL_CREATE", 1, "Core-UUID", "0f0e2d6a-3c35-4d0b-8b0e-5f0c2b1d9e77")
		if err := Replay(ctx, tr, events([]step{{e: ev}})); err != nil {
			t.Fatal(err)
		}
		got := liveStates(t, tr, "acme")
		if len(got) != 1 || got[fresh.uuid] != StateRinging {
			t.Fatalf("after restart live %v", got)
		}
		cdrs := sink.all()
		if len(cdrs) != 2 {
			t.Fatalf("cdrs %+v", cdrs)
		}
		for _, c := range cdrs {
			if c.HangupCause != CauseNodeRestarted || c.Tenant != "acme" {
				t.Errorf("cdr %+v", c)
			}
		}
		// The same process again changes nothing.
		if changed, err := tr.NoteCore(ctx, "fs1", "0f0e2d6a-3c35-4d0b-8b0e-5f0c2b1d9e77"); changed || err != nil {
			t.Errorf("NoteCore same core: %v %v", changed, err)
		}
	})
}

// TestResyncCoreEndsYoungChannelsOfAnOldProcess: the listing after a
// restart is empty; channels younger than the resync grace are ended too
// when the Core-UUID changed (they cannot exist), not left as ghosts.
func TestResyncCoreEndsYoungChannelsOfAnOldProcess(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		sink := &cdrSink{}
		tr := newTracker(t, b, sink)
		call := newCallback("fs1", "acme", 1)
		// Started "now": well inside the resync grace.
		call.a.created, call.b.created = fixedNow.UnixMicro(), fixedNow.UnixMicro()
		if err := Replay(ctx, tr, events(call.lifecycle(100, false))); err != nil {
			t.Fatal(err)
		}
		if err := tr.ResyncCore(ctx, "fs1", "0f0e2d6a-3c35-4d0b-8b0e-5f0c2b1d9e77", "{\"row_count\": 0}\n"); err != nil {
			t.Fatal(err)
		}
		if got := liveStates(t, tr, "acme"); len(got) != 0 {
			t.Fatalf("ghost channels %v", got)
		}
		if n := len(sink.all()); n != 2 {
			t.Errorf("%d cdrs, want 2", n)
		}
	})
}
