// Package lease is the one way work runs on one replica at a time: a
// Lease (a database row, a Redis key) taken with a time to live, and a
// Holder that runs the leader's work while it holds the lease, renews it,
// stops the work when the lease is lost and releases it when the work
// ends. Where the leases differ (whose clock counts, what a renewal may
// retake) is the implementations'; the holding is here.
package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// Lease is something one holder at a time holds, for TTL unless renewed.
type Lease interface {
	// Acquire takes the lease if it is free (or expired), or renews it if
	// this holder has it; it reports whether this holder has it now.
	Acquire(ctx context.Context) (bool, error)
	// Renew extends the lease by TTL if this holder has it; false means it
	// is lost.
	Renew(ctx context.Context) (bool, error)
	// Release gives the lease up if this holder has it, so another takes
	// over at once.
	Release(ctx context.Context) error
	// TTL is how long the lease lasts without renewal.
	TTL() time.Duration
	// Name names the lease in logs.
	Name() string
}

// ErrLost is why a Holder stopped the work: a renewal found the lease
// another's, or renewals failed for longer than the grace.
var ErrLost = errors.New("lease lost")

// Options tune a Holder.
type Options struct {
	// Renew is how often a held lease is renewed, and how long Run waits
	// between attempts to take it (default TTL/3).
	Renew time.Duration
	// Grace is how long after the last renewal that succeeded a renewal
	// may fail (an error, not a refusal) before the lease counts as lost
	// (default 0: at the first failure). Past TTL the lease may be
	// another's: work that must never overlap checks Valid instead.
	Grace time.Duration
	// ReleaseTimeout bounds the release after the work ends (default 2 s).
	ReleaseTimeout time.Duration
	Logger         *slog.Logger
}

// Holder holds one Lease while work runs.
type Holder struct {
	l    Lease
	opts Options
	// validUntil (unix nanos, local clock) is when the lease as last taken
	// or renewed may have run out; 0 while not held.
	validUntil atomic.Int64
}

// NewHolder returns a holder of l.
func NewHolder(l Lease, opts Options) *Holder {
	if opts.Renew <= 0 {
		opts.Renew = l.TTL() / 3
	}
	if opts.ReleaseTimeout <= 0 {
		opts.ReleaseTimeout = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Holder{l: l, opts: opts}
}

// Valid reports whether the lease, as last taken or renewed, cannot have
// passed to another holder yet: two thirds of its TTL from the start of
// that call. Work that must not overlap another holder's checks it before
// each item.
func (h *Holder) Valid() bool { return time.Now().UnixNano() < h.validUntil.Load() }

func (h *Holder) held(since time.Time) {
	h.validUntil.Store(since.Add(h.l.TTL() * 2 / 3).UnixNano())
}

// Term holds the lease once: it takes it (held false, and the error if
// any, when it cannot), runs lead with a context that ends when the lease
// is lost or ctx ends, renewing it every Renew meanwhile, and once lead
// returned releases it. err is ErrLost (wrapping a renewal's error, if
// any) when the lease was lost, nil when lead returned or ctx ended.
func (h *Holder) Term(ctx context.Context, lead func(ctx context.Context)) (held bool, err error) {
	start := time.Now()
	ok, err := h.l.Acquire(ctx)
	if err != nil || !ok {
		return false, err
	}
	h.held(start)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); lead(lctx) }()
	err = h.keep(lctx, done, start)
	// Lost, or not renewable: the work stops before the lease could have
	// passed to another holder.
	cancel()
	<-done
	h.validUntil.Store(0)
	h.release(ctx)
	return true, err
}

// keep renews the lease every Renew until ctx ends or done closes; it
// returns ErrLost when the lease is lost.
func (h *Holder) keep(ctx context.Context, done <-chan struct{}, last time.Time) error {
	t := time.NewTicker(h.opts.Renew)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-done:
			return nil
		case <-t.C:
		}
		start := time.Now()
		ok, err := h.l.Renew(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err == nil && ok:
			h.held(start)
			last = start
		case err == nil:
			return ErrLost
		case time.Since(last) >= h.opts.Grace:
			return fmt.Errorf("%w: %w", ErrLost, err)
		default:
			h.opts.Logger.Warn("lease: renewal failed; still held", "lease", h.l.Name(), "error", err)
		}
	}
}

func (h *Holder) release(ctx context.Context) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.opts.ReleaseTimeout)
	defer cancel()
	if err := h.l.Release(rctx); err != nil {
		h.opts.Logger.Warn("lease: release", "lease", h.l.Name(), "error", err)
	}
}

// Run competes for the lease until ctx ends, trying every Renew: while it
// holds the lease it runs lead (Term), and after lead stopped, it competes
// again. When ctx ends the lease is released, so another holder takes
// over at once.
func (h *Holder) Run(ctx context.Context, lead func(ctx context.Context)) {
	for {
		held, err := h.Term(ctx, lead)
		if ctx.Err() != nil {
			if !held {
				h.release(ctx) // a take that failed may have gone through
			}
			return
		}
		switch {
		case held && err != nil:
			h.opts.Logger.Warn("lease: lost", "lease", h.l.Name(), "error", err)
		case err != nil:
			h.opts.Logger.Warn("lease: take", "lease", h.l.Name(), "error", err)
		}
		t := time.NewTimer(h.opts.Renew)
		select {
		case <-ctx.Done():
			t.Stop()
			h.release(ctx)
			return
		case <-t.C:
		}
	}
}
