package outbox

import (
	"context"
	"time"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/lease"
)

// Lease is a named row of outbox_leases that replicas compete for: one
// holder at a time, its expiry kept against the database's clock (so
// replicas' clocks need not agree). Work that must run on one replica only
// (dispatching changes, posting chat messages) runs while a lease.Holder
// holds it.
type Lease struct {
	st           *models.Store
	name, holder string
	ttl          time.Duration
}

var _ lease.Lease = (*Lease)(nil)

// NewLease returns the lease name as holder would hold it for ttl.
func NewLease(st *models.Store, name, holder string, ttl time.Duration) *Lease {
	return &Lease{st: st, name: name, holder: holder, ttl: ttl}
}

// Acquire takes the lease if it is free or expired, or renews it if
// holder has it.
func (l *Lease) Acquire(ctx context.Context) (bool, error) {
	return l.st.TakeOutboxLease(ctx, l.name, l.holder, l.ttl)
}

// Renew is Acquire: the row is taken again only if it expired unheld, and
// a holder that must not overlap another stops at Holder.Valid first.
func (l *Lease) Renew(ctx context.Context) (bool, error) { return l.Acquire(ctx) }

// Release gives the lease up if holder has it.
func (l *Lease) Release(ctx context.Context) error {
	return l.st.ReleaseOutboxLease(ctx, l.name, l.holder)
}

// TTL is how long the lease lasts without renewal.
func (l *Lease) TTL() time.Duration { return l.ttl }

// Name is the lease row's name.
func (l *Lease) Name() string { return l.name }
