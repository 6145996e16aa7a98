package calls

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/platform/faultproxy"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// Seen (issue 29): calls that ended during a 10 s Redis outage never got a
// CDR nor a call.ended event: the tracker logged "apply unbridge …:
// connection refused" and dropped the events, and the resync after Redis
// returned rebuilt only the calls still live. Events that cannot be applied
// are now held until Redis answers: every call that ended gets exactly one
// CDR.
func TestCallsEndingDuringRedisOutageGetTheirCDR(t *testing.T) {
	m := miniredis.RunT(t)
	url, proxy := faultproxy.URL(t, "redis://"+m.Addr()+"/0")
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opts.MaxRetries = -1 // fail at once: the tracker's own holding is under test
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	sink := &cdrSink{}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	tr := NewTracker(rdb, Options{Prefix: "sb:{calls}:", OnEnd: sink.onEnd, Now: func() time.Time { return fixedNow }, Logger: log})
	in := make(chan esl.Event, 64)
	done := make(chan struct{})
	go func() { defer close(done); tr.Consume(t.Context(), in) }()
	defer func() { close(in); <-done }()

	calls, next := threeLiveCalls(t, tr, in)

	proxy.Cut()
	hup := []string{"Hangup-Cause", "NORMAL_CLEARING", "variable_duration", "30", "variable_billsec", "25"}
	for _, c := range calls {
		in <- c.a.ev("CHANNEL_HANGUP_COMPLETE", next(), hup...)
	}
	// The hangups reach the tracker while Redis is away.
	wait.Until(t, 10*time.Second, "the tracker to meet the outage", func() bool { return strings.Contains(logs.String(), "apply channel events") })
	if n := len(sink.all()); n != 0 {
		t.Fatalf("%d CDRs delivered while Redis was unreachable", n)
	}
	proxy.Restore(t)
	restored := time.Now()
	wait.Until(t, 20*time.Second, "a CDR for each call that ended during the outage", func() bool { return len(sink.all()) >= len(calls) })
	recovery := time.Since(restored)
	seen := map[string]int{}
	for _, c := range sink.all() {
		seen[c.UUID]++
	}
	lost, duplicate := 0, 0
	for _, c := range calls {
		switch n := seen[c.a.uuid]; {
		case n == 0:
			lost++
		case n > 1:
			duplicate++
		}
		if seen[c.a.uuid] != 1 {
			t.Errorf("call %s: %d CDRs, want exactly 1", c.a.uuid, seen[c.a.uuid])
		}
	}
	t.Logf("chaos figures: calls ended during a Redis outage %d, CDRs %d, lost %d, duplicate %d, recovery %.2f s",
		len(calls), len(sink.all()), lost, duplicate, recovery.Seconds())
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// memSpool is a Spool in memory, shared by the trackers of a test as the
// database is shared by replicas.
type memSpool struct {
	mu   sync.Mutex
	next int64
	held map[int64]HeldBatch
}

func (s *memSpool) Hold(_ context.Context, events []byte) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	if s.held == nil {
		s.held = map[int64]HeldBatch{}
	}
	s.held[s.next] = HeldBatch{ID: s.next, Events: events, At: time.Now()}
	return s.next, nil
}

func (s *memSpool) HeldBefore(_ context.Context, t time.Time, limit int) ([]HeldBatch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []HeldBatch
	for _, h := range s.held {
		if h.At.Before(t) {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b HeldBatch) int { return int(a.ID - b.ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s *memSpool) Release(_ context.Context, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, id)
	return nil
}

func (s *memSpool) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held)
}

// Issue 29: the events of calls that end during a Redis outage were held
// only in the memory of the replica reading the node: when it died before
// Redis returned they were lost (FreeSWITCH drops its unsent events with
// the connection), and so were the CDRs. Held events are now spooled
// durably, and another replica applies what a dead one left.
func TestHeldEventsOfADeadReplicaGetTheirCDR(t *testing.T) {
	m := miniredis.RunT(t)
	url, proxy := faultproxy.URL(t, "redis://"+m.Addr()+"/0")
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opts.MaxRetries = -1
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	spool := &memSpool{}
	var logs syncBuffer
	newTracker := func(sink *cdrSink) *Tracker {
		return NewTracker(rdb, Options{Prefix: "sb:{calls}:", OnEnd: sink.onEnd, Now: func() time.Time { return fixedNow },
			Logger: slog.New(slog.NewTextHandler(&logs, nil)), Spool: spool})
	}
	deadSink, sink := &cdrSink{}, &cdrSink{}
	dead := newTracker(deadSink)
	ctx, die := context.WithCancel(t.Context())
	in := make(chan esl.Event, 64)
	done := make(chan struct{})
	go func() { defer close(done); dead.Consume(ctx, in) }()

	calls, next := threeLiveCalls(t, dead, in)

	proxy.Cut()
	hup := []string{"Hangup-Cause", "NORMAL_CLEARING", "variable_duration", "30", "variable_billsec", "25"}
	for _, c := range calls {
		in <- c.a.ev("CHANNEL_HANGUP_COMPLETE", next(), hup...)
	}
	wait.Until(t, 10*time.Second, "the hangups held in the spool", func() bool { return spool.len() > 0 })
	die() // the replica dies with Redis still away
	<-done

	proxy.Restore(t)
	survivor := newTracker(sink)
	wait.Until(t, 10*time.Second, "the dead replica's held events applied", func() bool {
		_, err := survivor.ReplayHeld(t.Context(), 0)
		return err == nil && spool.len() == 0
	})
	seen := map[string]int{}
	for _, c := range sink.all() {
		seen[c.UUID]++
	}
	for _, c := range calls {
		if seen[c.a.uuid] != 1 {
			t.Errorf("call %s: %d CDRs, want exactly 1", c.a.uuid, seen[c.a.uuid])
		}
	}
	if t.Failed() {
		pending, _ := rdb.LRange(t.Context(), "sb:{calls}:cdr:pending", 0, -1).Result()
		t.Logf("pending: %q\nlogs:\n%s", pending, logs.String())
	}
	if n := len(deadSink.all()); n != 0 {
		t.Errorf("the dead replica delivered %d CDRs", n)
	}
	// Replaying again delivers nothing more.
	if n, err := survivor.ReplayHeld(t.Context(), 0); err != nil || n != 0 {
		t.Errorf("second replay: %d, %v", n, err)
	}
	if n := len(sink.all()); n != len(calls) {
		t.Errorf("%d CDRs after a second replay, want %d", n, len(calls))
	}
}

// A spooled batch with an event the tracker refuses (no Unique-ID) is
// applied as far as it can be and released: kept, it would stop every
// batch held after it, and their calls would never get a CDR.
func TestHeldBatchWithARefusedEventDoesNotBlockTheSpool(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	spool := &memSpool{}
	sink := &cdrSink{}
	tr := NewTracker(rdb, Options{Prefix: "sb:{calls}:", OnEnd: sink.onEnd, Now: func() time.Time { return fixedNow }, Spool: spool})
	first, second := newCallback("fs1", "acme", 1), newCallback("fs1", "acme", 2)
	for _, c := range []callback{first, second} {
		for i, name := range []string{"CHANNEL_CREATE", "CHANNEL_ANSWER"} {
			if err := tr.Apply(t.Context(), c.a.ev(name, uint64(i+1))); err != nil {
				t.Fatal(err)
			}
		}
	}
	bad := first.a.ev("CHANNEL_ANSWER", 3)
	delete(bad.Headers, textproto.CanonicalMIMEHeaderKey("Unique-ID"))
	hup := []string{"Hangup-Cause", "NORMAL_CLEARING"}
	for _, batch := range [][]esl.Event{
		{bad, first.a.ev("CHANNEL_HANGUP_COMPLETE", 4, hup...)},
		{second.a.ev("CHANNEL_HANGUP_COMPLETE", 4, hup...)},
	} {
		raw, err := json.Marshal(batch)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := spool.Hold(t.Context(), raw); err != nil {
			t.Fatal(err)
		}
	}
	n, err := tr.ReplayHeld(t.Context(), 0)
	if err != nil || n != 2 {
		t.Fatalf("replay: %d batches, %v; want 2, nil", n, err)
	}
	if spool.len() != 0 {
		t.Errorf("%d batches still held", spool.len())
	}
	got := map[string]bool{}
	for _, c := range sink.all() {
		got[c.UUID] = true
	}
	if !got[first.a.uuid] || !got[second.a.uuid] || len(sink.all()) != 2 {
		t.Errorf("CDRs %v, want one for each of the two calls", sink.all())
	}
}

// threeLiveCalls feeds three answered calls to a consuming tracker and
// waits until it lists them; next numbers the events that follow.
func threeLiveCalls(t *testing.T, tr *Tracker, in chan<- esl.Event) ([]callback, func() uint64) {
	t.Helper()
	calls := []callback{newCallback("fs1", "acme", 1), newCallback("fs1", "acme", 2), newCallback("fs1", "acme", 3)}
	seq := uint64(0)
	next := func() uint64 { seq++; return seq }
	for _, c := range calls {
		in <- c.a.ev("CHANNEL_CREATE", next())
		in <- c.a.ev("CHANNEL_ANSWER", next())
	}
	wait.Until(t, 10*time.Second, "the three calls live", func() bool {
		_, n, err := tr.List(t.Context(), "", 10, 0)
		return err == nil && n == len(calls)
	})
	return calls, next
}
