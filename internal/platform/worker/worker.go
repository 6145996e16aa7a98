// Package worker is the one loop every durable background queue runs (the
// fax, SMS and chat queues, webhook deliveries, import jobs, the outbox's
// subscribers): a drain step that claims and works what is due, run on a
// poll interval and at once on a wake-up (a write that queued work calls
// Wake), again at once while the step says there is more, with the shared
// jittered backoff (package backoff) after failed steps. Claiming and
// leasing the work stays with each queue: only the loop's mechanics live
// here.
package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/switchboard/switchboard/internal/platform/backoff"
)

// Step works what is due once. more says whether work may be left (the
// loop steps again at once); an error is logged and the next step waits
// for a backoff that grows while steps keep failing.
type Step func(ctx context.Context) (more bool, err error)

// Options tune a Loop; the zero value of each field has a default.
type Options struct {
	// Name starts the message of a failed step's log line.
	Name string
	// Poll is the longest wait between steps without a wake-up (default 1 s):
	// work queued by other replicas, or due later, is found this way. A
	// negative Poll never polls: only wake-ups and retries step.
	Poll time.Duration
	// Linger is how long a wake-up waits before the step, so that work
	// queued meanwhile joins the same step (default 0: at once).
	Linger time.Duration
	// RetryMin and RetryMax bound the backoff after failed steps (default
	// Poll, or 1 s without polling, and the larger of that and 30 s). A
	// wake-up cuts a backoff short.
	RetryMin, RetryMax time.Duration
	Logger             *slog.Logger
}

func (o *Options) defaults() {
	if o.Poll == 0 {
		o.Poll = time.Second
	}
	if o.RetryMin <= 0 {
		o.RetryMin = time.Second
		if o.Poll > 0 {
			o.RetryMin = o.Poll
		}
	}
	if o.RetryMax <= 0 {
		o.RetryMax = max(o.RetryMin, 30*time.Second)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Name == "" {
		o.Name = "worker"
	}
}

// Loop runs a Step; build it with New (where the writers that Wake it can
// reach it), start it with Run.
type Loop struct {
	opts Options
	wake chan struct{}
}

// New returns a loop tuned by opts.
func New(opts Options) *Loop {
	opts.defaults()
	return &Loop{opts: opts, wake: make(chan struct{}, 1)}
}

// Wake makes the loop step now (after Linger); it never blocks. A wake-up
// while the loop is not waiting (mid-step, or before Run) is kept: the
// loop steps once more right after.
func (l *Loop) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run runs step until ctx ends: at once, then whenever woken, Poll has passed
// since the last idle step (or a failed step's backoff), or at once again while a step reports more.
// It returns after the step in flight when ctx ends. A loop runs one Run
// at a time; it may be run again after Run returned (a lease held anew).
func (l *Loop) Run(ctx context.Context, step Step) {
	failures := 0
	for ctx.Err() == nil {
		more, err := step(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := l.opts.Poll
		switch {
		case err != nil:
			failures++
			wait = backoff.Delay(l.opts.RetryMin, l.opts.RetryMax, failures)
			l.opts.Logger.Warn(l.opts.Name, "error", err, "failures", failures, "retry_in", wait)
		case more:
			failures = 0
			continue
		default:
			failures = 0
		}
		l.idle(ctx, wait)
	}
}

// idle waits for ctx, a wake-up (then Linger) or d (forever when d < 0).
func (l *Loop) idle(ctx context.Context, d time.Duration) {
	var timeout <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
	case <-timeout:
	case <-l.wake:
		if l.opts.Linger > 0 {
			Sleep(ctx, l.opts.Linger)
		}
	}
}

// Sleep waits for d or ctx; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
