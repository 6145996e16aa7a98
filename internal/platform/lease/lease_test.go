package lease

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/wait"
)

// fake is a Lease in memory: whoever holds it, and what its calls answer.
type fake struct {
	mu       sync.Mutex
	holder   string // "" free, "me" this holder, anything else another
	renewErr error
	renews   int
	releases int
}

func (f *fake) Acquire(context.Context) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.holder == "" {
		f.holder = "me"
	}
	return f.holder == "me", nil
}

func (f *fake) Renew(context.Context) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renews++
	if f.renewErr != nil {
		return false, f.renewErr
	}
	return f.holder == "me", nil
}

func (f *fake) Release(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases++
	if f.holder == "me" {
		f.holder = ""
	}
	return nil
}

func (f *fake) TTL() time.Duration { return 300 * time.Millisecond }
func (f *fake) Name() string       { return "fake" }

func (f *fake) set(holder string, renewErr error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holder, f.renewErr = holder, renewErr
}

func (f *fake) get() (holder string, renews, releases int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.holder, f.renews, f.releases
}

// leader records whether its work runs and how often it started.
type leader struct {
	running atomic.Bool
	starts  atomic.Int32
}

func (l *leader) lead(ctx context.Context) {
	l.starts.Add(1)
	l.running.Store(true)
	<-ctx.Done()
	l.running.Store(false)
}

func TestHeldRenewedAndReleasedOnStop(t *testing.T) {
	f := &fake{}
	h := NewHolder(f, Options{Renew: 10 * time.Millisecond})
	var ld leader
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx, ld.lead) }()
	wait.Until(t, 5*time.Second, "the work to run", ld.running.Load)
	if !h.Valid() {
		t.Fatal("not valid while held")
	}
	wait.Until(t, 5*time.Second, "renewals", func() bool { _, r, _ := f.get(); return r >= 3 })
	cancel()
	<-done
	if ld.running.Load() {
		t.Fatal("work still running after Run returned")
	}
	if holder, _, rel := f.get(); holder != "" || rel == 0 {
		t.Fatalf("after stop: holder %q, %d releases; want released", holder, rel)
	}
	if h.Valid() {
		t.Fatal("valid after release")
	}
}

func TestNotHeldRunsNothing(t *testing.T) {
	f := &fake{holder: "other"}
	h := NewHolder(f, Options{Renew: 10 * time.Millisecond})
	held, err := h.Term(context.Background(), func(context.Context) { t.Error("work ran without the lease") })
	if held || err != nil {
		t.Fatalf("Term = %v, %v; want false, nil", held, err)
	}
}

func TestLostStopsTheWorkAndRetakes(t *testing.T) {
	f := &fake{}
	h := NewHolder(f, Options{Renew: 10 * time.Millisecond})
	var ld leader
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.Run(ctx, ld.lead)
	wait.Until(t, 5*time.Second, "the work to run", ld.running.Load)
	f.set("other", nil) // another replica took it over
	wait.Until(t, 5*time.Second, "the work to stop and the lease to count as invalid", func() bool { return !ld.running.Load() && !h.Valid() })
	f.set("", nil) // free again
	wait.Until(t, 5*time.Second, "the work to run again", func() bool { return ld.running.Load() && ld.starts.Load() == 2 })
}

func TestTermReportsLost(t *testing.T) {
	f := &fake{}
	h := NewHolder(f, Options{Renew: 10 * time.Millisecond})
	var ld leader
	res := make(chan error, 1)
	go func() {
		_, err := h.Term(context.Background(), ld.lead)
		res <- err
	}()
	wait.Until(t, 5*time.Second, "the work to run", ld.running.Load)
	f.set("other", nil)
	select {
	case err := <-res:
		if !errors.Is(err, ErrLost) {
			t.Fatalf("Term = %v, want ErrLost", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Term did not return after the lease was lost")
	}
}

func TestFailedRenewalsWithinGraceKeepTheLease(t *testing.T) {
	f := &fake{}
	h := NewHolder(f, Options{Renew: 10 * time.Millisecond, Grace: time.Hour})
	var ld leader
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := make(chan error, 1)
	go func() {
		_, err := h.Term(ctx, ld.lead)
		res <- err
	}()
	wait.Until(t, 5*time.Second, "the work to run", ld.running.Load)
	f.set("me", errors.New("redis down"))
	_, before, _ := f.get()
	wait.Until(t, 5*time.Second, "failed renewals", func() bool { _, r, _ := f.get(); return r >= before+3 })
	if !ld.running.Load() {
		t.Fatal("work stopped on failed renewals within the grace")
	}
	cancel()
	if err := <-res; err != nil {
		t.Fatalf("Term = %v after ctx ended, want nil", err)
	}
}

func TestFailedRenewalWithoutGraceLosesTheLease(t *testing.T) {
	f := &fake{}
	h := NewHolder(f, Options{Renew: 10 * time.Millisecond})
	var ld leader
	res := make(chan error, 1)
	go func() {
		_, err := h.Term(context.Background(), ld.lead)
		res <- err
	}()
	wait.Until(t, 5*time.Second, "the work to run", ld.running.Load)
	f.set("me", errors.New("database down"))
	select {
	case err := <-res:
		if !errors.Is(err, ErrLost) || ld.running.Load() {
			t.Fatalf("Term = %v (work running %v), want ErrLost and stopped", err, ld.running.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Term did not return after a failed renewal")
	}
}

func TestWorkEndingReleases(t *testing.T) {
	f := &fake{}
	h := NewHolder(f, Options{Renew: time.Hour})
	held, err := h.Term(context.Background(), func(context.Context) {})
	if !held || err != nil {
		t.Fatalf("Term = %v, %v; want true, nil", held, err)
	}
	if holder, _, rel := f.get(); holder != "" || rel != 1 {
		t.Fatalf("holder %q, %d releases; want released once", holder, rel)
	}
}
