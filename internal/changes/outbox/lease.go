package outbox

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/switchboard/switchboard/internal/models"
)

// Lease is a named row of outbox_leases that replicas compete for: one
// holder at a time, renewed every third of its time against the database's
// clock. Work that must run on one replica only (dispatching changes,
// posting chat messages) runs while its lease is held.
type Lease struct {
	st           *models.Store
	name, holder string
	ttl          time.Duration
	log          *slog.Logger
	// validUntil (unix nanos, local clock) is when the lease as last
	// renewed may have run out.
	validUntil atomic.Int64
}

// NewLease returns the lease name as holder would hold it for ttl.
func NewLease(st *models.Store, name, holder string, ttl time.Duration, log *slog.Logger) *Lease {
	return &Lease{st: st, name: name, holder: holder, ttl: ttl, log: log}
}

// Valid reports whether the lease, as last renewed, cannot have passed to
// another replica yet: the holder does no leased work when it is not.
func (l *Lease) Valid() bool { return time.Now().UnixNano() < l.validUntil.Load() }

// Run competes for the lease until ctx ends. While it holds the lease it
// runs lead with a context that ends when the lease is lost (or ctx ends),
// and waits for lead to return before competing again. When ctx ends it
// releases the lease, so another replica takes over at once.
func (l *Lease) Run(ctx context.Context, lead func(ctx context.Context)) {
	renew := l.ttl / 3
	for {
		if l.take(ctx) {
			lctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); lead(lctx) }()
			for sleep(lctx, renew) && l.take(lctx) {
			}
			// Lost, or not renewable: stop before the lease could have
			// passed to another replica.
			cancel()
			<-done
		}
		if ctx.Err() != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			err := l.st.ReleaseOutboxLease(rctx, l.name, l.holder)
			cancel()
			if err != nil {
				l.log.Warn("lease: release", "lease", l.name, "error", err)
			}
			return
		}
		sleep(ctx, renew)
	}
}

// take takes or renews the lease; it reports whether this replica holds it.
func (l *Lease) take(ctx context.Context) bool {
	ok, err := l.st.TakeOutboxLease(ctx, l.name, l.holder, l.ttl)
	if err != nil && ctx.Err() == nil {
		l.log.Warn("lease: take", "lease", l.name, "error", err)
	}
	if ok {
		l.validUntil.Store(time.Now().Add(l.ttl * 2 / 3).UnixNano())
	}
	return ok
}
