package models

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/switchboard/switchboard/internal/changes"
)

// Events (calls, messages, chat) share the outbox with configuration
// changes: written in the transaction of what they report, delivered at
// least once by the one dispatching replica, in commit order. Only
// subscribers that ask for events (changes.EventSubscriber) see them.

// NewEvent builds an event of type typ about key in tenant ("" for the
// platform) carrying data as its JSON payload.
func NewEvent(typ, tenant, key string, data any) (changes.Change, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return changes.Change{}, fmt.Errorf("event %s: encode: %w", typ, err)
	}
	return changes.Change{Resource: typ, Op: changes.Event, Tenant: tenant, Key: key, After: b, At: time.Now().UTC()}, nil
}

// WithEvents runs fn in a transaction (retried as Store.InTx) and appends
// the events it returns to the outbox before committing, so they exist
// exactly when fn's writes do.
func (s *Store) WithEvents(ctx context.Context, fn func(q Querier) ([]changes.Change, error)) error {
	return s.withEvents(ctx, func(tx *sqlx.Tx) ([]changes.Change, error) { return fn(s.txQuerier(tx)) })
}

// withEvents is WithEvents on the raw transaction, for the store's own writes.
func (s *Store) withEvents(ctx context.Context, fn func(tx *sqlx.Tx) ([]changes.Change, error)) error {
	var recorded []changes.Change
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		evs, err := fn(tx)
		if err != nil {
			return err
		}
		recorded, err = s.appendOutbox(ctx, tx, evs)
		return err
	})
	if err == nil && len(recorded) > 0 {
		s.committed(ctx, recorded)
	}
	return err
}

// Emit records events on their own (no other write goes with them).
func (s *Store) Emit(ctx context.Context, evs ...changes.Change) error {
	return s.withEvents(ctx, func(*sqlx.Tx) ([]changes.Change, error) { return evs, nil })
}
