// Package outbox delivers committed configuration changes to the
// subscribers registered in this process. The store writes each change to
// the outbox table in the same transaction as the change itself (package
// models); a Dispatcher reads the table and hands every change, at least
// once and in commit order, to every changes.Subscriber.
//
// One replica at a time dispatches: the Dispatcher holds a lease row in the
// database (renewed against the database's clock) and gives it up when it
// stops, so another replica takes over at once, or after the lease's time
// when the holder died. Each subscriber has its own progress row and its own
// goroutine: a failing subscriber is retried with capped exponential
// backoff on the change that failed, without holding back the others.
// After a commit the writer's process wakes its dispatcher at once; other
// replicas' changes are found by polling.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/backoff"
	"github.com/switchboard/switchboard/internal/platform/lease"
	"github.com/switchboard/switchboard/internal/platform/worker"
)

// Options tune a Dispatcher; the zero value is usable.
type Options struct {
	// Lease names the lease row the replicas compete for (default "outbox").
	Lease string
	// Group, when set, prefixes the lease and the subscribers' progress
	// names, for servers that share a database without being replicas of
	// one installation (tests).
	Group string
	// Holder identifies this replica (default a random id).
	Holder string
	// LeaseTTL is how long a lease lasts without renewal (default 15 s); it
	// is renewed every third of it.
	LeaseTTL time.Duration
	// Poll is how often the outbox is read without a wake-up (default 1 s).
	Poll time.Duration
	// Batch is how many changes are read at once (default 100).
	Batch int
	// RetryMin and RetryMax bound the backoff of a failing subscriber
	// (default 100 ms and 30 s).
	RetryMin, RetryMax time.Duration
	// SkipSave is how often, at most, a subscriber's progress is saved
	// while the changes it passes over are only events it does not take
	// (default 2 s); progress past anything it handled is saved at once.
	SkipSave time.Duration
	// Keep is how long delivered changes stay before they are pruned
	// (default 10 minutes); PruneEvery is how often pruning runs (1 minute).
	Keep, PruneEvery time.Duration
	Logger           *slog.Logger
}

func (o *Options) defaults() {
	if o.Lease == "" {
		o.Lease = "outbox"
	}
	if o.Group != "" {
		o.Lease = o.Group + ":" + o.Lease
	}
	if o.Holder == "" {
		o.Holder = fmt.Sprintf("replica-%d-%d", time.Now().UnixNano(), randInt())
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 15 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	if o.RetryMin <= 0 {
		o.RetryMin = 100 * time.Millisecond
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 30 * time.Second
	}
	if o.SkipSave <= 0 {
		o.SkipSave = 2 * time.Second
	}
	if o.Keep <= 0 {
		o.Keep = 10 * time.Minute
	}
	if o.PruneEvery <= 0 {
		o.PruneEvery = time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Dispatcher delivers outbox changes to subscribers while it holds the lease.
type Dispatcher struct {
	st   *models.Store
	opts Options
	subs []changes.Subscriber
	// loops has each subscriber's delivery loop, woken on Wake.
	loops   []*worker.Loop
	leading atomic.Bool
	// lease is held while delivering; no change is handed over once it
	// may have run out.
	lease *lease.Holder
}

// New builds a dispatcher for subs; Run starts it. Subscriber names must be
// unique: they key the progress rows.
func New(st *models.Store, opts Options, subs ...changes.Subscriber) (*Dispatcher, error) {
	opts.defaults()
	seen := map[string]bool{}
	d := &Dispatcher{st: st, opts: opts, subs: subs, lease: lease.NewHolder(NewLease(st, opts.Lease, opts.Holder, opts.LeaseTTL), lease.Options{Logger: opts.Logger})}
	for _, s := range subs {
		if s.Name() == "" || len(opts.progressName(s)) > 64 || seen[s.Name()] {
			return nil, fmt.Errorf("outbox: subscriber name %q is empty, too long or used twice", s.Name())
		}
		seen[s.Name()] = true
		d.loops = append(d.loops, worker.New(worker.Options{Name: "outbox", Poll: opts.Poll, Logger: opts.Logger.With("subscriber", s.Name())}))
	}
	return d, nil
}

// progressName keys a subscriber's progress row.
func (o *Options) progressName(s changes.Subscriber) string {
	if o.Group != "" {
		return o.Group + ":" + s.Name()
	}
	return s.Name()
}

// Wake tells the dispatcher that changes were committed; it never blocks.
// The store's commit hook calls it, so delivery starts right after commit
// when this replica holds the lease.
func (d *Dispatcher) Wake() {
	for _, l := range d.loops {
		l.Wake()
	}
}

// Leading reports whether this dispatcher holds the lease now.
func (d *Dispatcher) Leading() bool { return d.leading.Load() }

// Depth is the number of committed changes the slowest subscriber has not
// handled yet: what /readyz and the outbox depth gauge show.
func (d *Dispatcher) Depth(ctx context.Context) (int64, error) {
	return d.st.OutboxDepth(ctx, d.names())
}

func (d *Dispatcher) names() []string {
	names := make([]string, len(d.subs))
	for i, s := range d.subs {
		names[i] = d.opts.progressName(s)
	}
	return names
}

// Run competes for the lease until ctx ends; while it holds the lease it
// delivers changes. When ctx ends it releases the lease and returns nil.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.lease.Run(ctx, d.lead)
	return nil
}

// lead delivers while the lease holds (until ctx ends): one goroutine per
// subscriber and one pruning; it returns after every one stopped.
func (d *Dispatcher) lead(ctx context.Context) {
	log := d.opts.Logger
	log.Info("outbox: dispatching on this replica", "holder", d.opts.Holder)
	defer log.Info("outbox: no longer dispatching on this replica", "holder", d.opts.Holder)
	d.leading.Store(true)
	defer d.leading.Store(false)
	var wg sync.WaitGroup
	for i, sub := range d.subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.deliver(ctx, sub, d.loops[i])
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.prune(ctx)
	}()
	wg.Wait()
}

// deliver feeds one subscriber in order, retrying a failed change with
// backoff, until ctx ends: each step of its loop hands over one batch of
// the changes after its progress.
func (d *Dispatcher) deliver(ctx context.Context, sub changes.Subscriber, loop *worker.Loop) {
	log := d.opts.Logger.With("subscriber", sub.Name())
	name := d.opts.progressName(sub)
	var (
		loaded      bool
		last, saved int64
		savedAt     time.Time
	)
	save := func() bool {
		if last == saved {
			return true
		}
		if !d.save(ctx, log, name, last) {
			return false
		}
		saved, savedAt = last, time.Now()
		return true
	}
	loop.Run(ctx, func(ctx context.Context) (bool, error) {
		if !loaded {
			var err error
			if last, err = d.st.OutboxProgress(ctx, name); err != nil {
				return false, fmt.Errorf("read progress: %w", err)
			}
			loaded, saved, savedAt = true, last, time.Now()
		}
		// Progress past skipped events, left unsaved below, is saved
		// once SkipSave has passed (also while idle).
		if time.Since(savedAt) >= d.opts.SkipSave && !save() {
			return false, ctx.Err()
		}
		batch, err := d.st.OutboxAfter(ctx, last, d.opts.Batch)
		if err != nil {
			return false, fmt.Errorf("read changes: %w", err)
		}
		if len(batch) == 0 {
			return false, nil
		}
		// Progress is saved per batch (and before a failing change is
		// retried), so a crash redelivers at most the unsaved part. A
		// batch that held nothing for this subscriber (events it does not
		// take: chat messages, call events) is saved at most every
		// SkipSave: its redelivery after a crash hands over nothing, and a
		// commit per batch per subscriber was a dozen fsyncs for every
		// few chat messages posted.
		handed := false
		if d.handleBatch(ctx, log, sub, batch) {
			last = batch[len(batch)-1].ID
			handed = true
		}
		for _, c := range batch {
			if c.ID <= last {
				continue // handed over with the batch
			}
			if c.Op == changes.Event && !wantsEvents(sub) {
				last = c.ID
				continue
			}
			if !d.handle(ctx, log, name, sub, c, save) {
				return false, ctx.Err()
			}
			last = c.ID
			handed = true
		}
		if (handed || time.Since(savedAt) >= d.opts.SkipSave) && !save() {
			return false, ctx.Err()
		}
		return true, nil
	})
}

// handleBatch hands a BatchSubscriber the changes of a batch it takes in
// one call. It reports whether that succeeded; if not (or sub takes no
// batches) the caller hands them over one by one, with retries.
func (d *Dispatcher) handleBatch(ctx context.Context, log *slog.Logger, sub changes.Subscriber, batch []changes.Change) bool {
	bs, ok := sub.(changes.BatchSubscriber)
	if !ok || len(batch) < 2 || !d.lease.Valid() {
		return false
	}
	cs := make([]changes.Change, 0, len(batch))
	for _, c := range batch {
		if c.Op != changes.Event || wantsEvents(sub) {
			cs = append(cs, c)
		}
	}
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return bs.HandleBatch(ctx, cs)
	}()
	if err != nil && ctx.Err() == nil {
		log.Warn("outbox: batch failed; handing its changes over one by one", "from", batch[0].ID, "to", batch[len(batch)-1].ID, "error", err)
	}
	return err == nil && ctx.Err() == nil
}

// wantsEvents reports whether sub is handed Event changes.
func wantsEvents(sub changes.Subscriber) bool {
	es, ok := sub.(changes.EventSubscriber)
	return ok && es.WantsEvents()
}

// save records a subscriber's progress, retrying until it is stored or
// ctx ends.
func (d *Dispatcher) save(ctx context.Context, log *slog.Logger, name string, id int64) bool {
	for {
		err := d.st.SetOutboxProgress(ctx, name, id)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		log.Warn("outbox: save progress", "change", id, "error", err)
		if !worker.Sleep(ctx, d.opts.RetryMin) {
			return false
		}
	}
}

// handle delivers one change until the subscriber accepts it; before the
// first retry it saves the progress made so far (beforeRetry). It returns
// false when ctx ended first (the change is then delivered again by whoever
// dispatches next).
func (d *Dispatcher) handle(ctx context.Context, log *slog.Logger, name string, sub changes.Subscriber, c changes.Change, beforeRetry func() bool) bool {
	for attempt := 1; ; attempt++ {
		for !d.lease.Valid() {
			// The renewal is late: the lease may be someone else's now.
			if !worker.Sleep(ctx, d.opts.RetryMin) {
				return false
			}
		}
		err := safeHandle(ctx, sub, c)
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			return true
		}
		wait := backoff.Delay(d.opts.RetryMin, d.opts.RetryMax, attempt)
		log.Warn("outbox: subscriber failed; retrying", "change", c.ID, "resource", c.Resource, "tenant", c.Tenant, "attempt", attempt, "retry_in", wait, "error", err)
		if attempt == 1 && !beforeRetry() {
			return false
		}
		if nerr := d.st.NoteOutboxFailure(ctx, name, err); nerr != nil && ctx.Err() == nil {
			log.Warn("outbox: record failure", "error", nerr)
		}
		if !worker.Sleep(ctx, wait) {
			return false
		}
	}
}

// safeHandle turns a subscriber's panic into an error, so one bad
// subscriber cannot take the dispatcher down.
func safeHandle(ctx context.Context, sub changes.Subscriber, c changes.Change) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return sub.Handle(ctx, c)
}

func (d *Dispatcher) prune(ctx context.Context) {
	for worker.Sleep(ctx, d.opts.PruneEvery) {
		n, err := d.st.PruneOutbox(ctx, d.names(), d.opts.Keep)
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			d.opts.Logger.Warn("outbox: prune", "error", err)
		case n > 0:
			d.opts.Logger.Debug("outbox: pruned delivered changes", "rows", n)
		}
	}
}
