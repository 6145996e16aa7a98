package calls

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/platform/backoff"
	"github.com/switchboard/switchboard/internal/platform/worker"
)

// maxBatch bounds how many events one pipeline carries.
const maxBatch = 128

// ApplyBatch applies events in order with one pipelined round trip (plus one
// for the CDRs accepted by OnEnd). Events of one channel must appear in the
// order they should be applied; the result is the same as applying them one
// by one with Apply. The errors of single events are joined.
func (t *Tracker) ApplyBatch(ctx context.Context, events []esl.Event) error {
	now := t.opts.Now()
	patches := make([]patch, 0, len(events))
	var errs []error
	for _, e := range events {
		p, ok, err := t.patchFromEvent(e, now)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			patches = append(patches, p)
		}
	}
	errs = append(errs, t.runBatch(ctx, patches))
	return errors.Join(errs...)
}

// Consume applies the events received from in until it is closed or ctx
// ends, with Options.Workers goroutines. Events of one channel (node and
// Unique-ID) always go to the same worker, in the order received, so
// per-channel order is kept while channels proceed in parallel; each worker
// sends what has queued up as one pipelined batch. Errors are logged and
// consuming goes on: the state heals with later events and Resync.
func (t *Tracker) Consume(ctx context.Context, in <-chan esl.Event) {
	t.consume(ctx, in, func(err error) { t.opts.Logger.Warn("apply channel events", "error", err) })
}

// Replay applies a list of events as Consume does and returns the first
// error once all were attempted. Tests and benchmarks use it to feed
// recorded event streams.
func Replay(ctx context.Context, t *Tracker, events []esl.Event) error {
	in := make(chan esl.Event, 1024)
	go func() {
		defer close(in)
		for _, e := range events {
			select {
			case in <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	var (
		mu    sync.Mutex
		first error
	)
	t.consume(ctx, in, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	})
	return first
}

// consume runs the worker pool behind Consume and Replay.
func (t *Tracker) consume(ctx context.Context, in <-chan esl.Event, onErr func(error)) {
	n := t.opts.Workers
	queues := make([]chan esl.Event, n)
	var wg sync.WaitGroup
	for i := range queues {
		queues[i] = make(chan esl.Event, 4*maxBatch)
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.worker(ctx, queues[i], onErr)
		}()
	}
	defer func() {
		for _, q := range queues {
			close(q)
		}
		wg.Wait()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-in:
			if !ok {
				return
			}
			// A new Core-UUID ends the old process's channels before any
			// event of the new one is applied.
			if _, err := t.NoteCore(ctx, e.Node, e.Get("Core-UUID")); err != nil {
				onErr(err)
			}
			t.noteSeen(ctx, e.Node)
			queues[channelHash(e.Node, e.Get("Unique-ID"))%uint32(n)] <- e
		}
	}
}

// channelHash is FNV-1a (32 bit) over node then uuid, computed without the
// hash.Hash allocation and byte-slice copies of hash/fnv (it runs for every
// event).
func channelHash(node, uuid string) uint32 {
	const offset, prime = 2166136261, 16777619
	h := uint32(offset)
	for i := 0; i < len(node); i++ {
		h = (h ^ uint32(node[i])) * prime
	}
	for i := 0; i < len(uuid); i++ {
		h = (h ^ uint32(uuid[i])) * prime
	}
	return h
}

// worker applies what has queued up in q, up to maxBatch events at a time.
func (t *Tracker) worker(ctx context.Context, q <-chan esl.Event, onErr func(error)) {
	batch := make([]esl.Event, 0, maxBatch)
	for e := range q {
		batch = append(batch[:0], e)
	fill:
		for len(batch) < maxBatch {
			select {
			case e, ok := <-q:
				if !ok {
					break fill
				}
				batch = append(batch, e)
			default:
				break fill
			}
		}
		t.applyHolding(ctx, batch, onErr)
	}
}

// applyHolding applies a batch; while Redis cannot be reached it holds the
// batch and tries again (with backoff) until Redis answers or ctx ends, so
// a call that ends during a Redis outage still gets its CDR and its
// call.ended event once Redis is back. Applying an event twice is a no-op,
// so a batch partly applied before the connection broke is safe to send
// again. The worker's queue fills meanwhile, and the node's event
// connection waits behind it: FreeSWITCH queues what it has not sent.
// (Seen: calls that ended during a 10 s Redis outage never got a CDR.)
func (t *Tracker) applyHolding(ctx context.Context, batch []esl.Event, onErr func(error)) {
	var held int64 // the batch's id in the spool, once kept there
	for attempt := 1; ; attempt++ {
		err := t.ApplyBatch(ctx, batch)
		if err == nil {
			t.release(ctx, held)
			if attempt > 1 {
				t.opts.Logger.Info("channel events applied after Redis returned", "events", len(batch), "attempts", attempt)
			}
			return
		}
		if ctx.Err() != nil && (redisUnreachable(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			// Stopping with the batch not (or not surely) applied: the
			// replica is shutting down, and another one's ReplayHeld
			// applies what it spools (applying twice is a no-op). Seen:
			// a hangup whose first try was cut short by the shutdown was
			// neither applied nor held, and its call never got a CDR.
			held = t.holdOnStop(ctx, batch, held, onErr)
			onErr(fmt.Errorf("stopped before %d channel events were applied (spooled: %t): %w", len(batch), held != 0, err))
			return
		}
		if !redisUnreachable(err) {
			onErr(err)
			return
		}
		if attempt == 1 {
			held = t.hold(ctx, batch, onErr)
			onErr(fmt.Errorf("redis unreachable: holding %d channel events until it answers: %w", len(batch), err))
		}
		if !worker.Sleep(ctx, backoff.Delay(holdRetryMin, holdRetryMax, attempt)) {
			// A spooled batch stays for another replica's ReplayHeld.
			held = t.holdOnStop(ctx, batch, held, onErr)
			onErr(fmt.Errorf("stopped while Redis was unreachable: %d channel events not applied (spooled: %t)", len(batch), held != 0))
			return
		}
	}
}

// The waits between tries of a held batch.
const holdRetryMin, holdRetryMax = 50 * time.Millisecond, 2 * time.Second

// holdOnStop spools a batch that a stopping worker could not apply, unless
// it is spooled already (held); it answers the batch's spool id.
func (t *Tracker) holdOnStop(ctx context.Context, batch []esl.Event, held int64, onErr func(error)) int64 {
	if held != 0 {
		return held
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), spoolOnStopTimeout)
	defer cancel()
	return t.hold(hctx, batch, onErr)
}

// spoolOnStopTimeout bounds the spool write of a batch left unapplied by
// a shutdown, which has no context of its own left.
const spoolOnStopTimeout = 5 * time.Second

// redisUnreachable reports whether err says Redis could not be reached
// (rather than refusing a command): a refused, reset or timed-out
// connection, or a pool without a usable connection.
func redisUnreachable(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, redis.ErrPoolTimeout) ||
		redis.HasErrorPrefix(err, "LOADING") || redis.HasErrorPrefix(err, "CLUSTERDOWN") || redis.HasErrorPrefix(err, "TRYAGAIN")
}

// runBatch runs the apply script for many patches in one pipeline, loading
// the script first if Redis does not have it, and delivers queued CDRs.
func (t *Tracker) runBatch(ctx context.Context, patches []patch) error {
	if len(patches) == 0 {
		return nil
	}
	cmds, err := t.pipeEval(ctx, patches)
	envs, errs := collectReplies(patches, cmds)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		if err := t.script.Load(ctx, t.rdb).Err(); err != nil {
			return fmt.Errorf("load apply script: %w", err)
		}
		// Run the whole batch again: applying twice is a no-op, and the
		// CDRs queued by commands that did run are already in envs.
		cmds, err = t.pipeEval(ctx, patches)
		var more []string
		more, errs = collectReplies(patches, cmds)
		envs = append(envs, more...)
	}
	if len(envs) > 0 {
		t.deliver(ctx, envs)
	}
	if len(errs) == 0 && err != nil {
		errs = append(errs, err) // the pipeline failed as a whole
	}
	return errors.Join(errs...)
}

// collectReplies returns the envelopes (events and CDRs) queued by a pipeline's commands
// and the errors of the commands that failed.
func collectReplies(patches []patch, cmds []*redis.Cmd) (envs []string, errs []error) {
	for i, c := range cmds {
		res, err := c.Slice()
		if err != nil {
			errs = append(errs, fmt.Errorf("apply %s %s: %w", patches[i].Kind, patches[i].UUID, err))
			continue
		}
		if _, queued, err := scriptReply(res); err != nil {
			errs = append(errs, err)
		} else {
			envs = append(envs, queued...)
		}
	}
	return envs, errs
}

// pipeEval sends one EVALSHA per patch in a single pipeline.
func (t *Tracker) pipeEval(ctx context.Context, patches []patch) ([]*redis.Cmd, error) {
	pipe := t.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(patches))
	for i, p := range patches {
		cmds[i] = t.script.EvalSha(ctx, pipe, p.keys(), p.args()...)
	}
	_, err := pipe.Exec(ctx)
	return cmds, err
}
