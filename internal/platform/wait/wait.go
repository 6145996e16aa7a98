// Package wait is the tests' one way to wait for something that happens
// asynchronously (an event applied, a delivery settled, a node connected):
// poll the condition, never sleep a fixed time and hope.
package wait

import (
	"testing"
	"time"
)

// Until polls cond every few milliseconds until it holds, and fails the
// test naming what was awaited if within passes first.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
