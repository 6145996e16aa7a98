package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/calls"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// benchTracker drives channel events from a fake FreeSWITCH over TCP,
// through the real esl.Pool, into calls.Tracker on Redis, and checks that
// the live set is exactly the fake's channels afterwards.
func benchTracker(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("tracker", flag.ContinueOnError)
	total := fl.Int("events", 100000, "events to replay")
	redisURL := fl.String("redis", firstEnv("SWITCHBOARD_BENCH_REDIS_URL", "SWITCHBOARD_TEST_REDIS_URL"), "Redis URL (empty: in-process miniredis)")
	wireOnly := fl.Bool("wire-only", false, "count events without applying them (the fake + esl.Pool ceiling)")
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile of the end-to-end run to this file")
	if err := fl.Parse(args); err != nil {
		return err
	}
	rdb, closeRedis, err := benchRedis(ctx, *redisURL)
	if err != nil {
		return err
	}
	defer closeRedis()
	var trips atomic.Int64
	rdb.AddHook(countHook{&trips})
	prefix := fmt.Sprintf("bench%d:", rand.Uint32())
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tracker := calls.NewTracker(rdb, calls.Options{Prefix: prefix, Logger: quiet})

	fs := fakefs.New(fakefs.Options{Hostname: "bench1"})
	if err := fs.Start("127.0.0.1:0"); err != nil {
		return err
	}
	defer fs.Close()
	var received atomic.Int64
	var recorded []esl.Event
	events := make(chan esl.Event, 65536)
	nodes := []esl.NodeConfig{{Name: "bench1", Addr: fs.Addr(), Password: esl.DefaultPassword}}
	ready := make(chan struct{}, 1)
	pool := esl.NewPool(nodes, esl.PoolOptions{
		Logger: quiet,
		OnEvent: func(e esl.Event) {
			recorded = append(recorded, e) // one goroutine per node: no race
			received.Add(1)
			if !*wireOnly {
				events <- e
			}
		},
		OnConnect: func(context.Context, string) { ready <- struct{}{} },
	})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go pool.Run(runCtx)
	go tracker.Consume(runCtx, events)
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("pool never connected to the fake")
	}

	// Each call is CHANNEL_CREATE, CHANNEL_PROGRESS and CHANNEL_ANSWER, and
	// for two thirds CHANNEL_HANGUP_COMPLETE (the events the pool subscribes
	// to); a third stay up so the live set is non-trivial. Generation is
	// paced to stay at most lag events ahead of delivery: the fake drops
	// (and, in its current version, deadlocks on) a client whose socket
	// queue overflows.
	const lag = 4000
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile() // also stops it on early returns
	}
	start := time.Now()
	emitted := 0
	var live []string
	placed := 0
	for emitted < *total {
		for emitted-int(received.Load()) > lag {
			time.Sleep(50 * time.Microsecond)
		}
		placed++
		id, err := fs.CreateChannel(fakefs.ChannelSpec{CIDNum: fmt.Sprint(1000 + emitted%500), Dest: "5551234", Context: "bench", Answer: true,
			Vars: []fakefs.Header{{Name: "sb_tenant", Value: "bench"}}})
		if err != nil {
			return err
		}
		emitted += 3
		if rand.IntN(3) == 0 || emitted >= *total {
			live = append(live, id)
			continue
		}
		if err := fs.Hangup(id, "NORMAL_CLEARING"); err != nil {
			return err
		}
		emitted++
	}
	genDone := time.Since(start)
	if *wireOnly {
		for int(received.Load()) < emitted && time.Since(start) < time.Minute {
			time.Sleep(time.Millisecond)
		}
		el := time.Since(start)
		fmt.Printf("wire only: %d events from the fake through esl.Pool in %.2fs: %.0f events/s\n", received.Load(), el.Seconds(), float64(received.Load())/el.Seconds())
		return nil
	}
	want := len(fs.Channels())
	deadline := time.Now().Add(2 * time.Minute)
	var got int
	for {
		_, got, err = tracker.List(ctx, "", 1, 0)
		if err == nil && got == want && len(events) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("live set %d, want %d (events received %d of %d)", got, want, received.Load(), emitted)
		}
		time.Sleep(2 * time.Millisecond)
	}
	elapsed := time.Since(start)
	pprof.StopCPUProfile()
	// Exactly right: same members, not just the same count.
	list, _, err := tracker.List(ctx, "", 0, 0)
	if err != nil {
		return err
	}
	fsLive := map[string]bool{}
	for _, c := range fs.Channels() {
		fsLive[c.UUID] = true
	}
	for _, c := range list {
		if !fsLive[c.UUID] {
			return fmt.Errorf("tracker lists %s, which the fake does not have", c.UUID)
		}
	}
	n := received.Load()
	fmt.Printf("tracker: %d events (%d calls, %d left live) over TCP via esl.Pool into %s\n", n, placed, want, rdbName(*redisURL))
	fmt.Printf("  fake emitted them in %.2fs; all applied after %.2fs: %.0f events/s end to end\n", genDone.Seconds(), elapsed.Seconds(), float64(n)/elapsed.Seconds())
	fmt.Printf("  redis round trips: %d (%.3f per event)\n", trips.Load(), float64(trips.Load())/float64(n))
	fmt.Printf("  live set check: %d channels, exactly the fake's\n", len(list))
	cleanup(ctx, rdb, prefix)
	cancel()
	return replayRecorded(ctx, rdb, &trips, recorded, want, quiet)
}

// replayRecorded feeds the recorded stream through Tracker.Consume alone
// (no socket, no fake sharing the CPUs) into a fresh key prefix.
func replayRecorded(ctx context.Context, rdb *redis.Client, trips *atomic.Int64, recorded []esl.Event, want int, log *slog.Logger) error {
	prefix := fmt.Sprintf("bench%d:", rand.Uint32())
	defer cleanup(ctx, rdb, prefix)
	tracker := calls.NewTracker(rdb, calls.Options{Prefix: prefix, Logger: log})
	in := make(chan esl.Event, len(recorded))
	for _, e := range recorded {
		in <- e
	}
	trips.Store(0)
	start := time.Now()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go tracker.Consume(cctx, in)
	for {
		_, got, err := tracker.List(ctx, "", 1, 0)
		if err == nil && got == want && len(in) == 0 {
			break
		}
		if time.Since(start) > time.Minute {
			return fmt.Errorf("replay: live set %d, want %d", got, want)
		}
		time.Sleep(time.Millisecond)
	}
	el := time.Since(start)
	fmt.Printf("tracker.Consume alone, same %d events replayed: %.2fs, %.0f events/s, %.3f redis round trips per event, live set %d (count matches)\n",
		len(recorded), el.Seconds(), float64(len(recorded))/el.Seconds(), float64(trips.Load())/float64(len(recorded)), want)
	return nil
}

func rdbName(url string) string {
	if url == "" {
		return "in-process miniredis"
	}
	return "Redis " + url
}

// benchRedis connects to url, or starts a miniredis when it is empty.
func benchRedis(ctx context.Context, url string) (*redis.Client, func(), error) {
	closeFn := func() {}
	if url == "" {
		b, err := openBackend(ctx)
		if err != nil {
			return nil, nil, err
		}
		return b.rdb.(*redis.Client), b.close, nil
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, nil, err
	}
	opts.PoolSize = 64
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		return nil, nil, fmt.Errorf("redis: %w", err)
	}
	return rdb, func() { rdb.Close(); closeFn() }, nil
}

// cleanup removes the run's keys.
func cleanup(ctx context.Context, rdb *redis.Client, prefix string) {
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
		if len(keys) == 1000 {
			rdb.Del(ctx, keys...)
			keys = keys[:0]
		}
	}
	if len(keys) > 0 {
		rdb.Del(ctx, keys...)
	}
}

// countHook counts Redis round trips: one per command or pipeline sent.
type countHook struct{ n *atomic.Int64 }

func (h countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}
