package calls

import (
	"testing"
	"time"
)

func TestFailedCDRIsRetried(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		sink := &cdrSink{}
		now := fixedNow
		tr := NewTracker(b.rdb, Options{Prefix: b.prefix, OnEnd: sink.onEnd, Now: func() time.Time { return now }})
		a := newCallback("fs1", "acme", 1).a
		sink.fail.Store(true)
		for _, e := range []struct {
			name string
			seq  uint64
		}{{"CHANNEL_CREATE", 1}, {"CHANNEL_ANSWER", 2}, {"CHANNEL_HANGUP_COMPLETE", 3}} {
			if err := tr.Apply(ctx, a.ev(e.name, e.seq)); err != nil {
				t.Fatal(err)
			}
		}
		if n, _ := tr.PendingCDRs(ctx); n != 1 {
			t.Fatalf("pending = %d, want 1", n)
		}
		// A duplicate hangup queues nothing more.
		if err := tr.Apply(ctx, a.ev("CHANNEL_HANGUP_COMPLETE", 3)); err != nil {
			t.Fatal(err)
		}
		sink.fail.Store(false)
		if n, err := tr.RetryPendingCDRs(ctx); err != nil || n != 0 {
			t.Fatalf("early retry delivered %d, %v; want 0 (too recent)", n, err)
		}
		now = now.Add(2 * time.Minute)
		sink.fail.Store(true)
		if n, err := tr.RetryPendingCDRs(ctx); err == nil || n != 0 {
			t.Fatalf("retry with store down = %d, %v; want an error", n, err)
		}
		sink.fail.Store(false)
		if n, err := tr.RetryPendingCDRs(ctx); err != nil || n != 1 {
			t.Fatalf("retry delivered %d, %v; want 1", n, err)
		}
		if n, _ := tr.PendingCDRs(ctx); n != 0 {
			t.Errorf("pending after retry = %d", n)
		}
		cdrs := sink.all()
		if len(cdrs) != 1 || cdrs[0].UUID != a.uuid || cdrs[0].ChannelID != "SIP/1001-acme-00000001" {
			t.Errorf("CDRs = %+v", cdrs)
		}
		if n, _ := tr.RetryPendingCDRs(ctx); n != 0 {
			t.Errorf("second retry delivered %d", n)
		}
	})
}

func TestCDRDurationsFallBackToTimes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		sink := &cdrSink{}
		tr := newTracker(t, b, sink)
		a := newCallback("fs1", "", 1).a
		a.tenant, a.context = "", "acme" // tenant from the context
		ans := a.created + 5_000_000
		end := a.created + 65_000_000
		for _, e := range []struct {
			name string
			seq  uint64
		}{{"CHANNEL_CREATE", 1}, {"CHANNEL_HANGUP_COMPLETE", 3}} {
			// No variable_duration/billsec: computed from the channel times.
			if err := tr.Apply(ctx, a.ev(e.name, e.seq, "Caller-Channel-Answered-Time", itoa(ans), "Caller-Channel-Hangup-Time", itoa(end))); err != nil {
				t.Fatal(err)
			}
		}
		cdrs := sink.all()
		if len(cdrs) != 1 || cdrs[0].DurationSeconds != 65 || cdrs[0].Billsec != 60 || cdrs[0].Tenant != "acme" {
			t.Errorf("CDRs = %+v", cdrs)
		}
	})
}

// TestPendingCDRsAdoptedAcrossPrefixes: a CDR queued under the key prefix
// of an earlier release is delivered by a tracker with the new prefix once
// it adopts the old list, and only once.
func TestPendingCDRsAdoptedAcrossPrefixes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		sink := &cdrSink{}
		now := fixedNow
		clock := func() time.Time { return now }
		old := NewTracker(b.rdb, Options{Prefix: b.prefix, OnEnd: sink.onEnd, Now: clock})
		a := newCallback("fs1", "acme", 1).a
		sink.fail.Store(true)
		for i, name := range []string{"CHANNEL_CREATE", "CHANNEL_ANSWER", "CHANNEL_HANGUP_COMPLETE"} {
			if err := old.Apply(ctx, a.ev(name, uint64(i+1))); err != nil {
				t.Fatal(err)
			}
		}
		sink.fail.Store(false)

		// Same hash tag, as the release's prefixes have ({calls}).
		upgraded := NewTracker(b.rdb, Options{Prefix: b.prefix + "installation:", OnEnd: sink.onEnd, Now: clock})
		if n, _ := upgraded.PendingCDRs(ctx); n != 0 {
			t.Fatalf("the new list holds %d before adoption", n)
		}
		if n, err := upgraded.AdoptPendingCDRs(ctx, b.prefix); err != nil || n != 1 {
			t.Fatalf("adopted %d, %v; want 1", n, err)
		}
		if n, err := upgraded.AdoptPendingCDRs(ctx, b.prefix); err != nil || n != 0 {
			t.Fatalf("second adoption moved %d, %v", n, err)
		}
		now = now.Add(2 * time.Minute)
		if n, err := upgraded.RetryPendingCDRs(ctx); err != nil || n != 1 {
			t.Fatalf("retry delivered %d, %v; want 1", n, err)
		}
		if n, _ := old.RetryPendingCDRs(ctx); n != 0 {
			t.Fatalf("the old list still delivered %d", n)
		}
		if cdrs := sink.all(); len(cdrs) != 1 || cdrs[0].UUID != a.uuid {
			t.Fatalf("CDRs = %+v", cdrs)
		}
	})
}
