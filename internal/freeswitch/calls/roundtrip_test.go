package calls

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// rtCounter counts Redis round trips: one per command, one per pipeline.
type rtCounter struct{ n atomic.Int64 }

func (c *rtCounter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (c *rtCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *rtCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

func TestRoundTripsPerEvent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		counter := &rtCounter{}
		b.rdb.AddHook(counter)
		sink := &cdrSink{}
		tr := newTracker(t, b, sink)
		// Warm up: the first EVALSHA of each script may need an EVAL to
		// load it (apply, then the hand-off's claim and finish).
		warm := newCallback("fs1", "acme", 9).a
		for i, name := range []string{"CHANNEL_CREATE", "CHANNEL_HANGUP_COMPLETE"} {
			if err := tr.Apply(ctx, warm.ev(name, uint64(i+1))); err != nil {
				t.Fatal(err)
			}
		}
		steps := newCallback("fs1", "acme", 1).lifecycle(100, true)
		for i, s := range steps {
			before := counter.n.Load()
			if err := tr.Apply(ctx, s.e); err != nil {
				t.Fatal(err)
			}
			want := int64(1)
			if s.e.Name() == "CHANNEL_HANGUP_COMPLETE" {
				// EVALSHA; the hand-off claim (lock and progress); then,
				// once OnEnd accepted the CDR, progress, LREM and unlock.
				want = 3
			}
			if got := counter.n.Load() - before; got != want {
				t.Errorf("step %d %s: %d round trips, want %d", i, s.e.Name(), got, want)
			}
		}
	})
}
