package fsxml

import "context"

// Cache tiers a fetch can be answered from, for metrics.
const (
	TierMemory = "memory" // this replica's in-process copy
	TierRender = "render" // rendered from the in-memory model or the database (a miss)
	TierNone   = "none"   // answered not-found without a lookup
)

// FetchRecord is what Fetch reports about one fetch, for metrics: the
// section asked for ("directory", "dialplan", "configuration" or "other")
// and the tier that answered ("" when the fetch failed).
type FetchRecord struct {
	Section, Tier string
}

type recordKey struct{}

// WithFetchRecorder returns a context in which Fetch fills *rec. The
// section comes from the form Fetch parses anyway, so the HTTP layer need
// not parse the body a second time.
func WithFetchRecorder(ctx context.Context, rec *FetchRecord) context.Context {
	return context.WithValue(ctx, recordKey{}, rec)
}

func recorder(ctx context.Context) *FetchRecord {
	rec, _ := ctx.Value(recordKey{}).(*FetchRecord)
	return rec
}

func (r *FetchRecord) setTier(tier string) {
	if r != nil {
		r.Tier = tier
	}
}

// setSection records a section name as one of a fixed set of constants:
// the request's own string aliases the body, and metric labels outlive it.
func (r *FetchRecord) setSection(section string) {
	if r == nil {
		return
	}
	switch section {
	case "directory":
		r.Section = "directory"
	case "dialplan":
		r.Section = "dialplan"
	case "configuration":
		r.Section = "configuration"
	default:
		r.Section = "other"
	}
}
