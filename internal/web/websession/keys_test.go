package websession

import (
	"testing"

	"github.com/switchboard/switchboard/internal/platform/redistest"
)

// TestKeysShareOneSlot: a session record and its administrator's index
// change in one MULTI, which Redis Cluster takes only within one slot.
func TestKeysShareOneSlot(t *testing.T) {
	s := New(nil, "sb:0f1e2d3c4b5a69788796a5b4c3d2e1f0:", 0, 0)
	redistest.SameSlot(t, s.recordKey("a-session-id"), s.recordKey("another"), s.adminKey(1), s.adminKey(42))
}
