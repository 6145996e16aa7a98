package worker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/wait"
)

// run starts l and returns a stop that cancels it and waits for Run.
func run(t *testing.T, l *Loop, step Step) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx, step) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after ctx ended")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestWakeStepsAtOnce(t *testing.T) {
	var steps atomic.Int32
	// An hour's poll: only the first step and wake-ups can step.
	step := Step(func(context.Context) (bool, error) { steps.Add(1); return false, nil })
	l := New(Options{Poll: time.Hour})
	run(t, l, step)
	wait.Until(t, 5*time.Second, "the first step", func() bool { return steps.Load() == 1 })
	for want := int32(2); want <= 4; want++ {
		l.Wake()
		wait.Until(t, 5*time.Second, "a step after a wake-up", func() bool { return steps.Load() >= want })
	}
}

func TestWakeBeforeRunIsKept(t *testing.T) {
	var steps atomic.Int32
	step := Step(func(context.Context) (bool, error) { steps.Add(1); return false, nil })
	l := New(Options{Poll: time.Hour})
	l.Wake()
	run(t, l, step)
	// The first step, then one for the kept wake-up.
	wait.Until(t, 5*time.Second, "two steps", func() bool { return steps.Load() == 2 })
}

func TestMoreStepsAgainAtOnce(t *testing.T) {
	var steps atomic.Int32
	step := Step(func(context.Context) (bool, error) { return steps.Add(1) < 5, nil })
	l := New(Options{Poll: time.Hour})
	run(t, l, step)
	wait.Until(t, 5*time.Second, "five steps without a wake-up", func() bool { return steps.Load() == 5 })
}

func TestPollSteps(t *testing.T) {
	var steps atomic.Int32
	step := Step(func(context.Context) (bool, error) { steps.Add(1); return false, nil })
	l := New(Options{Poll: 10 * time.Millisecond})
	run(t, l, step)
	wait.Until(t, 5*time.Second, "steps on the poll interval", func() bool { return steps.Load() >= 3 })
}

func TestNegativePollOnlyWakes(t *testing.T) {
	var steps atomic.Int32
	stepped := make(chan struct{}, 10)
	step := Step(func(context.Context) (bool, error) { steps.Add(1); stepped <- struct{}{}; return false, nil })
	l := New(Options{Poll: -1})
	stop := run(t, l, step)
	<-stepped
	l.Wake()
	<-stepped
	stop()
	if n := steps.Load(); n != 2 {
		t.Fatalf("%d steps, want 2 (the first and the wake-up's)", n)
	}
}

func TestErrorsBackOff(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	step := Step(func(context.Context) (bool, error) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		return true, errors.New("down") // more is ignored after a failure
	})
	l := New(Options{Poll: time.Hour, RetryMin: 20 * time.Millisecond, RetryMax: 80 * time.Millisecond})
	run(t, l, step)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(at) }
	wait.Until(t, 10*time.Second, "five failed steps", func() bool { return count() >= 5 })
	mu.Lock()
	defer mu.Unlock()
	// Retry n waits at least half of min(20ms·2^(n-1), 80ms).
	for i, min := range []time.Duration{10, 20, 40, 40} {
		if gap := at[i+1].Sub(at[i]); gap < min*time.Millisecond {
			t.Errorf("retry %d came %v after the failure, before its backoff (%v at least)", i+1, gap, min*time.Millisecond)
		}
	}
}

func TestSuccessResetsBackoff(t *testing.T) {
	var steps atomic.Int32
	var lastOK atomic.Int64
	step := Step(func(context.Context) (bool, error) {
		n := steps.Add(1)
		if n%2 == 0 {
			lastOK.Store(int64(n))
			return false, nil
		}
		return false, errors.New("flaky")
	})
	l := New(Options{Poll: 5 * time.Millisecond, RetryMin: 5 * time.Millisecond, RetryMax: time.Hour})
	run(t, l, step)
	// Were failures not forgotten after a success, the tenth failure would
	// wait hours.
	wait.Until(t, 10*time.Second, "twenty alternating steps", func() bool { return steps.Load() >= 20 })
}

func TestCancelStopsAfterTheStepInFlight(t *testing.T) {
	// Buffered: the step's send must not depend on the test already
	// waiting for it (unbuffered, a step that ran first dropped its signal
	// and both waited for ever: seen hanging in make test's -race pass).
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var finished atomic.Bool
	step := Step(func(ctx context.Context) (bool, error) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		finished.Store(true)
		return true, nil
	})
	l := New(Options{Poll: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx, step) }()
	<-entered
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned with a step in flight")
	default:
	}
	close(release)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after ctx ended")
	}
	if !finished.Load() {
		t.Fatal("the step in flight did not finish")
	}
}

func TestLingerGathersWakeUps(t *testing.T) {
	var steps atomic.Int32
	step := Step(func(context.Context) (bool, error) { steps.Add(1); return false, nil })
	l := New(Options{Poll: time.Hour, Linger: 200 * time.Millisecond})
	run(t, l, step)
	wait.Until(t, 5*time.Second, "the first step", func() bool { return steps.Load() == 1 })
	l.Wake()
	// Woken while lingering: the wake-up is kept and taken by the same
	// linger's step or the next one, never lost.
	l.Wake()
	wait.Until(t, 5*time.Second, "the wake-ups' step", func() bool { return steps.Load() >= 2 })
}
