// Package changes defines what a configuration change looks like once it is
// committed, and what a subscriber to changes implements. The store records
// every write in a transactional outbox; a dispatcher (one replica at a time)
// delivers each Change at least once, in order per tenant, to every
// Subscriber. Behaviour that follows a write (XML cache generations,
// FreeSWITCH cache flushes, chat rooms, webhooks, messaging) is a Subscriber
// instead of a call wired into the write path.
package changes

import (
	"context"
	"encoding/json"
	"time"
)

// Op is the kind of write.
type Op string

// The write kinds.
const (
	Create Op = "create"
	Update Op = "update"
	Delete Op = "delete"
	// Event is not a configuration write but something that happened (a
	// call ended, a message arrived) recorded in the same outbox, so it is
	// delivered with the same guarantees. Resource is then the event type
	// ("call.ended") and After its data. Only subscribers that implement
	// EventSubscriber are handed events.
	Event Op = "event"
)

// Change is one committed write of one object.
type Change struct {
	// ID is the outbox sequence number: increasing in commit order per
	// tenant, so a subscriber can skip what it has already applied.
	ID int64 `json:"id"`
	// Resource is the registry name ("extensions", "tenants", ...).
	Resource string `json:"resource"`
	Op       Op     `json:"op"`
	// Tenant is the tenant name; "" for platform-wide resources.
	Tenant string `json:"tenant,omitempty"`
	// Key is the object's key within its resource and tenant (its name or id).
	Key string `json:"key"`
	// Before and After are the object as the API shows it (secrets never
	// included), nil on create and delete respectively.
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
	At     time.Time       `json:"at"`
}

// Subscriber acts on changes. Handle must be idempotent: delivery is at
// least once. A returned error makes the dispatcher retry that change for
// this subscriber later (with backoff) without holding back the others.
type Subscriber interface {
	// Name identifies the subscriber in the dispatcher's progress records
	// and metrics; it must stay stable across releases.
	Name() string
	Handle(ctx context.Context, c Change) error
}

// EventSubscriber is a Subscriber that also wants Event changes; the
// dispatcher skips events for every other subscriber.
type EventSubscriber interface {
	Subscriber
	WantsEvents() bool
}

// Func adapts a function to Subscriber.
type Func struct {
	ID string
	Fn func(ctx context.Context, c Change) error
}

// Name returns the subscriber's stable name.
func (f Func) Name() string { return f.ID }

// Handle calls the function.
func (f Func) Handle(ctx context.Context, c Change) error { return f.Fn(ctx, c) }

// BatchSubscriber is a Subscriber that can take a dispatcher's batch of
// changes at once (for example to write them with one transaction).
// HandleBatch must be idempotent as Handle is; when it fails, the
// dispatcher hands the same changes over one by one with Handle, so one
// bad change is retried on its own.
type BatchSubscriber interface {
	Subscriber
	HandleBatch(ctx context.Context, cs []Change) error
}
