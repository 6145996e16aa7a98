package calls

import (
	"context"
	"errors"
	"hash/fnv"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/platform/redistest"
)

// replayFixture builds n callback calls of 10 events each, interleaved the
// way one FreeSWITCH node emits them (window calls in progress at once, one
// global Event-Sequence). Every 10th call is still up at the end; the others
// hang up. It returns the events and the expected live states.
func replayFixture(n, window int) ([]esl.Event, map[string]string) {
	type gen struct {
		c     callback
		live  bool
		next  int
		total int
	}
	build := func(g *gen, seq uint64) esl.Event {
		a, b := g.c.a, g.c.b
		bridge := []string{"Bridge-A-Unique-ID", a.uuid, "Bridge-B-Unique-ID", b.uuid}
		hup := []string{"Hangup-Cause", "NORMAL_CLEARING", "variable_duration", "30", "variable_billsec", "25"}
		switch g.next {
		case 0:
			return a.ev("CHANNEL_CREATE", seq)
		case 1:
			return a.ev("CHANNEL_PROGRESS", seq)
		case 2:
			return a.ev("CHANNEL_ANSWER", seq)
		case 3:
			return b.ev("CHANNEL_CREATE", seq, "Other-Leg-Unique-ID", a.uuid)
		case 4:
			return b.ev("CHANNEL_ANSWER", seq)
		case 5:
			return a.ev("CHANNEL_BRIDGE", seq, bridge...)
		case 6:
			return a.ev("RECORD_START", seq, "Record-File-Path", "/rec/"+a.uuid+".wav")
		}
		if g.live {
			return [...]esl.Event{
				b.ev("CHANNEL_HOLD", seq), b.ev("CHANNEL_UNHOLD", seq), a.ev("RECORD_STOP", seq, "Record-File-Path", "/rec/"+a.uuid+".wav"),
			}[g.next-7]
		}
		return [...]esl.Event{
			a.ev("CHANNEL_UNBRIDGE", seq, bridge...), b.ev("CHANNEL_HANGUP_COMPLETE", seq, hup...), a.ev("CHANNEL_HANGUP_COMPLETE", seq, hup...),
		}[g.next-7]
	}
	var out []esl.Event
	want := map[string]string{}
	var active []*gen
	started := 0
	seq := uint64(1000)
	for started < n || len(active) > 0 {
		for len(active) < window && started < n {
			tenant := "t" + strconv.Itoa(started%7)
			g := &gen{c: newCallback("fs"+strconv.Itoa(started%2+1), tenant, started), live: started%10 == 0, total: 10}
			if g.live {
				want[g.c.a.uuid], want[g.c.b.uuid] = StateBridged, StateBridged
			}
			active = append(active, g)
			started++
		}
		kept := active[:0]
		for _, g := range active {
			seq++
			out = append(out, build(g, seq))
			g.next++
			if g.next < g.total {
				kept = append(kept, g)
			}
		}
		active = kept
	}
	return out, want
}

// checkReplay verifies the state after replaying replayFixture.
func checkReplay(tb testing.TB, tr *Tracker, want map[string]string, cdrs int64, wantCDRs int) {
	tb.Helper()
	ctx := tb.Context()
	chs, total, err := tr.List(ctx, "", 0, 0)
	if err != nil {
		tb.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range chs {
		got[c.UUID] = c.State
	}
	if total != len(want) || !maps.Equal(got, want) {
		tb.Fatalf("live: %d channels (total %d), want %d; equal=%v", len(got), total, len(want), maps.Equal(got, want))
	}
	sum := 0
	for i := range 7 {
		_, n, err := tr.List(ctx, "t"+strconv.Itoa(i), 1, 0)
		if err != nil {
			tb.Fatal(err)
		}
		sum += n
	}
	if sum != len(want) {
		tb.Errorf("per-tenant live totals %d, want %d", sum, len(want))
	}
	if int(cdrs) != wantCDRs {
		tb.Errorf("CDRs delivered %d, want %d", cdrs, wantCDRs)
	}
	if n, _ := tr.PendingCDRs(ctx); n != 0 {
		tb.Errorf("pending CDRs %d", n)
	}
}

func TestReplayInterleaved(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		const calls = 300
		evs, want := replayFixture(calls, 50)
		if len(evs) != calls*10 {
			t.Fatalf("fixture has %d events", len(evs))
		}
		var cdrs atomic.Int64
		tr := NewTracker(b.rdb, Options{Prefix: b.prefix, Workers: 8, Now: func() time.Time { return fixedNow },
			OnEnd: func(context.Context, CDR) error { cdrs.Add(1); return nil }})
		if err := Replay(t.Context(), tr, evs); err != nil {
			t.Fatal(err)
		}
		checkReplay(t, tr, want, cdrs.Load(), 2*(calls-calls/10))
	})
}

// applyEach applies events with one Apply (one round trip) per event, from
// workers goroutines keyed by channel, to compare with Replay's pipelining.
func applyEach(ctx context.Context, tr *Tracker, evs []esl.Event, workers int) error {
	qs := make([]chan esl.Event, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range qs {
		qs[i] = make(chan esl.Event, 64)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range qs[i] {
				if err := tr.Apply(ctx, e); err != nil && errs[i] == nil {
					errs[i] = err
				}
			}
		}()
	}
	for _, e := range evs {
		h := fnv.New32a()
		h.Write([]byte(e.Node + e.Get("Unique-ID")))
		qs[h.Sum32()%uint32(workers)] <- e
	}
	for _, q := range qs {
		close(q)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// BenchmarkTrackerReplay replays 100,000 events (10,000 calls x 10 events,
// interleaved, over two nodes and seven tenants) into the real Redis named
// by SWITCHBOARD_TEST_REDIS_URL and checks the live set and the CDRs
// afterwards. "pipelined" is Replay (batches per worker); "per-event" is one
// Apply per event from 64 goroutines.
func BenchmarkTrackerReplay(b *testing.B) {
	rdb := redistest.FromEnv(b)
	if rdb == nil {
		b.Skip("SWITCHBOARD_TEST_REDIS_URL not set")
	}
	if c, ok := rdb.(*redis.Client); ok {
		c.Options().PoolSize = 64
	}
	counter := &rtCounter{}
	rdb.AddHook(counter)
	const calls = 10_000
	evs, want := replayFixture(calls, 500)
	modes := []struct {
		name string
		run  func(ctx context.Context, tr *Tracker) error
	}{
		{"pipelined", func(ctx context.Context, tr *Tracker) error { return Replay(ctx, tr, evs) }},
		{"per-event", func(ctx context.Context, tr *Tracker) error { return applyEach(ctx, tr, evs, 64) }},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			var elapsed time.Duration
			var trips int64
			for range b.N {
				b.StopTimer()
				prefix := testPrefix(b, rdb)
				var cdrs atomic.Int64
				tr := NewTracker(rdb, Options{Prefix: prefix, Workers: 64, Now: func() time.Time { return fixedNow },
					OnEnd: func(context.Context, CDR) error { cdrs.Add(1); return nil }})
				if err := tr.script.Load(b.Context(), rdb).Err(); err != nil {
					b.Fatal(err)
				}
				before := counter.n.Load()
				b.StartTimer()
				start := time.Now()
				if err := m.run(b.Context(), tr); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				b.StopTimer()
				trips += counter.n.Load() - before
				checkReplay(b, tr, want, cdrs.Load(), 2*(calls-calls/10))
			}
			b.ReportMetric(float64(trips)/float64(b.N*len(evs)), "roundtrips/event")
			b.ReportMetric(float64(b.N*len(evs))/elapsed.Seconds(), "events/s")
		})
	}
}

func TestChannelHashIsFNV1a(t *testing.T) {
	for _, c := range [][2]string{{"", ""}, {"fs1", "5c2a8f0e-8b1d-4c7e-9f3a-2b6d1e0a9c47"}, {"node-b", "x"}} {
		h := fnv.New32a()
		h.Write([]byte(c[0]))
		h.Write([]byte(c[1]))
		if got, want := channelHash(c[0], c[1]), h.Sum32(); got != want {
			t.Errorf("channelHash(%q, %q) = %d, want %d", c[0], c[1], got, want)
		}
	}
}
