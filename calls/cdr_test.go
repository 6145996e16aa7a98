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
