package fsxml

import "context"

// Cache tiers a fetch can be answered from, for metrics.
const (
	TierMemory = "memory" // this replica's in-process copy
	TierRender = "render" // rendered from the in-memory model or the database (a miss)
	TierNone   = "none"   // answered not-found without a lookup
)

type tierKey struct{}

// WithTierRecorder returns a context in which Fetch writes the tier that
// answered into *tier.
func WithTierRecorder(ctx context.Context, tier *string) context.Context {
	return context.WithValue(ctx, tierKey{}, tier)
}

func setTier(ctx context.Context, tier string) {
	if p, ok := ctx.Value(tierKey{}).(*string); ok {
		*p = tier
	}
}
