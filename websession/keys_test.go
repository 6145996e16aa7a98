package websession

import (
	"testing"

	"github.com/switchboard/switchboard/internal/redistest"
)

// TestKeysShareOneSlot: a session record and its administrator's index
// change in one MULTI, which Redis Cluster takes only within one slot.
func TestKeysShareOneSlot(t *testing.T) {
	redistest.SameSlot(t, recordKey("a-session-id"), recordKey("another"), adminKey(1), adminKey(42))
}
