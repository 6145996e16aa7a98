package models

import (
	"context"
	"errors"
)

// A dry run is a write that runs every check of the real one (validation,
// references, unique keys, tenant limits, hooks) inside its transaction,
// then rolls the transaction back: the answer says whether the write
// would be accepted, and with what, but nothing is stored or announced.
// The configuration manager's forms check each field this way as it is
// left, so a form is checked by the rules of the API and by nothing else.

type dryRunKey struct{}

// WithDryRun marks the writes made with ctx as dry runs.
func WithDryRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, dryRunKey{}, true)
}

// IsDryRun reports whether writes made with ctx are dry runs.
func IsDryRun(ctx context.Context) bool {
	v, _ := ctx.Value(dryRunKey{}).(bool)
	return v
}

// errDryRun rolls a dry run's transaction back once every check passed.
var errDryRun = errors.New("dry run: rolled back")
