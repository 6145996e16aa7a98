// Package backoff is the one retry delay every background loop uses:
// exponential, capped, and jittered so that work that failed together
// (a provider outage, a node restart) does not retry together.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Delay is the wait before retry attempt n (1 is the first retry):
// base·2^(n-1), at most max, with "equal jitter": half of it fixed, the
// other half drawn uniformly, so a retry never comes sooner than half the
// nominal delay. Attempts below 1 count as 1; base <= 0 gives 0.
func Delay(base, max time.Duration, attempt int) time.Duration {
	if base <= 0 {
		return 0
	}
	if max < base {
		max = base
	}
	d := base
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	return d/2 + rand.N(d/2+1)
}
