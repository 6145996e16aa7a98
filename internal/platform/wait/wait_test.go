package wait

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	Until(t, 5*time.Second, "three increments", func() bool { return n.Load() == 3 })
}

// fatalRecorder records Fatalf instead of stopping the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = format
	panic(f)
}

func TestUntilFailsAfterTheDeadline(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	defer func() {
		if r := recover(); r != rec || rec.msg == "" {
			t.Fatalf("Until did not fail the test: %v", r)
		}
	}()
	Until(rec, 20*time.Millisecond, "never", func() bool { return false })
}
