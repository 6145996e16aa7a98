package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/changes/outbox"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// recorder is a subscriber that keeps what it was given for one tenant
// (other tests share the MySQL database and its outbox).
type recorder struct {
	name   string
	tenant string
	mu     sync.Mutex
	got    []changes.Change
	// fail, when set, decides whether a delivery fails.
	fail  func(c changes.Change, attempt int) error
	tries map[int64]int
	// after runs after a change was recorded (to kill the dispatcher).
	after func(n int)
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Handle(_ context.Context, c changes.Change) error {
	if c.Tenant != r.tenant {
		return nil
	}
	r.mu.Lock()
	if r.tries == nil {
		r.tries = map[int64]int{}
	}
	r.tries[c.ID]++
	attempt := r.tries[c.ID]
	r.mu.Unlock()
	if r.fail != nil {
		if err := r.fail(c, attempt); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.got = append(r.got, c)
	n := len(r.got)
	r.mu.Unlock()
	if r.after != nil {
		r.after(n)
	}
	return nil
}

func (r *recorder) changes() []changes.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]changes.Change(nil), r.got...)
}

// keys lists "op key" of the distinct changes seen, in first-seen order,
// and fails the test if they arrived out of id order.
func (r *recorder) keys(t *testing.T) []string {
	t.Helper()
	var out []string
	seen := map[int64]bool{}
	var last int64
	for _, c := range r.changes() {
		if seen[c.ID] {
			continue
		}
		if c.ID < last {
			t.Fatalf("%s: change %d after %d", r.name, c.ID, last)
		}
		seen[c.ID], last = true, c.ID
		out = append(out, string(c.Op)+" "+c.Resource+" "+c.Key)
	}
	return out
}

type env struct {
	st     *models.Store
	tenant string
	o      models.Owner
}

func newEnv(t *testing.T, st *models.Store) *env {
	t.Helper()
	ctx := context.Background()
	name := storetest.Name("ob")
	if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": name}); err != nil {
		t.Fatal(err)
	}
	o, err := st.Tenant(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return &env{st: st, tenant: name, o: o}
}

func (e *env) extension(t *testing.T, n int) string {
	t.Helper()
	name := fmt.Sprintf("%d", 2000+n)
	if _, err := e.st.Create(context.Background(), e.st.Registry().Resource("extensions"), e.o, map[string]any{"name": name, "first_name": "Ann"}); err != nil {
		t.Fatal(err)
	}
	return name
}

func start(t *testing.T, st *models.Store, opts outbox.Options, subs ...changes.Subscriber) (*outbox.Dispatcher, func()) {
	t.Helper()
	d, err := outbox.New(st, opts, subs...)
	if err != nil {
		t.Fatal(err)
	}
	st.OnCommit(func(context.Context, []changes.Change) { d.Wake() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	wait.Until(t, 10*time.Second, "dispatcher leads", d.Leading)
	// A new subscriber starts at the head it reads when its goroutine
	// starts: wait for that, so changes the test writes next reach it.
	for _, s := range subs {
		wait.Until(t, 10*time.Second, "subscriber "+s.Name()+" started", func() bool {
			var n int
			err := st.Querier().GetContext(context.Background(), &n, "SELECT COUNT(*) FROM outbox_progress WHERE subscriber LIKE ?", "%"+s.Name())
			return err == nil && n > 0
		})
	}
	return d, sync.OnceFunc(stop)
}

func fastOpts(lease string) outbox.Options {
	return outbox.Options{Lease: lease, LeaseTTL: 3 * time.Second, Poll: 50 * time.Millisecond, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond}
}

// TestWritesReachSubscribersInOrder: create, update and delete of an
// extension arrive as three changes in commit order, with the object as
// the API shows it before and after, and never its secrets.
func TestWritesReachSubscribersInOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newEnv(t, st)
		rec := &recorder{name: storetest.Name("sub"), tenant: e.tenant}
		start(t, st, fastOpts(storetest.Name("lease")), rec)
		ctx := context.Background()
		ext := st.Registry().Resource("extensions")
		if _, err := st.Create(ctx, ext, e.o, map[string]any{"name": "1000", "first_name": "Ann", "sip_secret": "first-secret-12345"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Update(ctx, ext, e.o, "1000", map[string]any{"first_name": "Bea", "sip_secret": "second-secret-1234"}); err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, ext, e.o, "1000"); err != nil {
			t.Fatal(err)
		}
		want := []string{"create extensions 1000", "update extensions 1000", "delete extensions 1000"}
		wait.Until(t, 5*time.Second, "three changes", func() bool { return len(rec.changes()) >= 3 })
		if got := rec.keys(t); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("changes %v, want %v", got, want)
		}
		chs := rec.changes()
		for _, c := range chs {
			for _, raw := range []json.RawMessage{c.Before, c.After} {
				var m map[string]any
				if raw != nil {
					if err := json.Unmarshal(raw, &m); err != nil {
						t.Fatal(err)
					}
				}
				for _, secret := range []string{"sip_secret", "voicemail_pin"} {
					if _, ok := m[secret]; ok {
						t.Fatalf("change %d carries %s: %s", c.ID, secret, raw)
					}
				}
			}
		}
		var before, after map[string]any
		_ = json.Unmarshal(chs[1].Before, &before)
		_ = json.Unmarshal(chs[1].After, &after)
		if before["first_name"] != "Ann" || after["first_name"] != "Bea" || after["sip_auth_id"] != "1000-"+e.tenant {
			t.Fatalf("update before %v after %v", before, after)
		}
		if chs[0].Before != nil || chs[2].After != nil || chs[2].Before == nil {
			t.Fatalf("create/delete images wrong: %+v %+v", chs[0], chs[2])
		}
	})
}

// TestFailedWriteRecordsNothing: a write that is refused leaves no change.
func TestFailedWriteRecordsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newEnv(t, st)
		ctx := context.Background()
		e.extension(t, 1)
		head, err := st.OutboxHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The same number again: 409, rolled back.
		if _, err := st.Create(ctx, st.Registry().Resource("extensions"), e.o, map[string]any{"name": "2001"}); err == nil {
			t.Fatal("duplicate extension accepted")
		}
		chs, err := st.OutboxAfter(ctx, head, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chs {
			if c.Tenant == e.tenant {
				t.Fatalf("refused write left change %+v", c)
			}
		}
	})
}

// TestDispatcherKilledMidBatchDeliversEverything: the dispatcher dies
// (its context ends) in the middle of a batch; a new one started later
// delivers every change, in order, none lost.
func TestDispatcherKilledMidBatchDeliversEverything(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newEnv(t, st)
		lease := storetest.Name("lease")
		name := storetest.Name("sub")
		killed, resume := make(chan struct{}), make(chan struct{})
		var once sync.Once
		first := &recorder{name: name, tenant: e.tenant}
		first.after = func(n int) {
			if n == 4 {
				// Hold the fourth delivery until the kill has landed, so
				// the kill is mid-batch however slow the machine is.
				once.Do(func() { close(killed) })
				select {
				case <-resume:
				case <-time.After(10 * time.Second):
				}
			}
		}
		_, stop := start(t, st, fastOpts(lease), first)
		// Commit 12 changes in one transaction-free burst while the
		// subscriber is slow, so they are read as one batch.
		for i := range 12 {
			e.extension(t, i)
		}
		<-killed
		go func() { time.Sleep(100 * time.Millisecond); close(resume) }()
		stop()
		got1 := len(first.keys(t))
		if got1 >= 12 {
			t.Fatalf("the first dispatcher delivered all %d before it was killed", got1)
		}
		second := &recorder{name: name, tenant: e.tenant}
		start(t, st, fastOpts(lease), second)
		wait.Until(t, 10*time.Second, "the rest delivered", func() bool {
			return got1+len(second.keys(t)) >= 12
		})
		all := append(first.keys(t), second.keys(t)...)
		seen := map[string]bool{}
		for _, k := range all {
			seen[k] = true
		}
		for i := range 12 {
			if k := fmt.Sprintf("create extensions %d", 2000+i); !seen[k] {
				t.Fatalf("%s never delivered (first %v, second %v)", k, first.keys(t), second.keys(t))
			}
		}
		// Redelivery starts after the last saved progress: only changes the
		// killed dispatcher had handled can be seen twice.
		first1 := map[string]bool{}
		for _, k := range first.keys(t) {
			first1[k] = true
		}
		dup := map[string]int{}
		for _, k := range all {
			if dup[k]++; dup[k] > 1 && !first1[k] {
				t.Fatalf("%s delivered twice though the first dispatcher never had it", k)
			}
		}
	})
}

// TestOnlyOneDispatcherDelivers: two replicas' dispatchers share the lease;
// one delivers everything, the other nothing, until the first stops and the
// second takes over.
func TestOnlyOneDispatcherDelivers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newEnv(t, st)
		lease := storetest.Name("lease")
		name := storetest.Name("sub")
		a := &recorder{name: name, tenant: e.tenant}
		b := &recorder{name: name, tenant: e.tenant}
		da, stopA := start(t, st, fastOpts(lease), a)
		db, err := outbox.New(st, fastOpts(lease), b)
		if err != nil {
			t.Fatal(err)
		}
		st.OnCommit(func(context.Context, []changes.Change) { db.Wake() })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = db.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		for i := range 5 {
			e.extension(t, i)
		}
		wait.Until(t, 5*time.Second, "five delivered", func() bool { return len(a.keys(t)) >= 5 })
		time.Sleep(200 * time.Millisecond)
		if !da.Leading() || db.Leading() || len(b.changes()) != 0 {
			t.Fatalf("a leading %v, b leading %v, b got %v", da.Leading(), db.Leading(), b.keys(t))
		}
		stopA() // releases the lease
		wait.Until(t, 10*time.Second, "b takes over", db.Leading)
		for i := 5; i < 8; i++ {
			e.extension(t, i)
		}
		wait.Until(t, 5*time.Second, "b delivers the rest", func() bool { return len(b.keys(t)) >= 3 })
		if got := b.keys(t); got[0] != "create extensions 2005" {
			t.Fatalf("b started with %v (a delivered %v)", got, a.keys(t))
		}
	})
}

// TestFailingSubscriberDoesNotHoldBackOthers: one subscriber fails a change
// a few times; the other gets every change meanwhile, and the failing one
// gets them all, in order, once it recovers.
func TestFailingSubscriberDoesNotHoldBackOthers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newEnv(t, st)
		var mu sync.Mutex
		healthy := false
		flaky := &recorder{name: storetest.Name("flaky"), tenant: e.tenant, fail: func(c changes.Change, attempt int) error {
			mu.Lock()
			defer mu.Unlock()
			if !healthy {
				return errors.New("downstream unavailable")
			}
			return nil
		}}
		steady := &recorder{name: storetest.Name("steady"), tenant: e.tenant}
		d, _ := start(t, st, fastOpts(storetest.Name("lease")), flaky, steady)
		for i := range 4 {
			e.extension(t, i)
		}
		wait.Until(t, 5*time.Second, "steady got all four", func() bool { return len(steady.keys(t)) >= 4 })
		if n := len(flaky.changes()); n != 0 {
			t.Fatalf("flaky recorded %d while failing", n)
		}
		depth, err := d.Depth(context.Background())
		if err != nil || depth < 4 {
			t.Fatalf("depth %d (%v), want at least 4 while a subscriber fails", depth, err)
		}
		mu.Lock()
		healthy = true
		mu.Unlock()
		wait.Until(t, 5*time.Second, "flaky recovered", func() bool { return len(flaky.keys(t)) >= 4 })
		if fmt.Sprint(flaky.keys(t)) != fmt.Sprint(steady.keys(t)) {
			t.Fatalf("flaky %v, steady %v", flaky.keys(t), steady.keys(t))
		}
	})
}

// TestDeliveredChangesArePruned: once every subscriber handled a change
// and it is older than Keep, its row goes.
func TestDeliveredChangesArePruned(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newEnv(t, st)
		rec := &recorder{name: storetest.Name("sub"), tenant: e.tenant}
		opts := fastOpts(storetest.Name("lease"))
		opts.Keep, opts.PruneEvery = time.Millisecond, 50*time.Millisecond
		start(t, st, opts, rec)
		e.extension(t, 1)
		wait.Until(t, 5*time.Second, "delivered", func() bool { return len(rec.changes()) == 1 })
		id := rec.changes()[0].ID
		wait.Until(t, 5*time.Second, "pruned", func() bool {
			var n int
			if err := st.Querier().GetContext(context.Background(), &n, "SELECT COUNT(*) FROM outbox WHERE id = ?", id); err != nil {
				t.Fatal(err)
			}
			return n == 0
		})
	})
}

// eventRecorder is a recorder that asks for events.
type eventRecorder struct{ *recorder }

func (eventRecorder) WantsEvents() bool { return true }

func TestEventsReachOnlySubscribersThatAskForThem(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newEnv(t, st)
		plain := &recorder{name: storetest.Name("plain"), tenant: e.tenant}
		evs := eventRecorder{&recorder{name: storetest.Name("events"), tenant: e.tenant}}
		start(t, st, fastOpts(storetest.Name("lease")), plain, evs)
		ev, err := models.NewEvent("call.ended", e.tenant, "ch1", map[string]any{"uuid": "u1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Emit(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		e.extension(t, 1)
		wait.Until(t, 5*time.Second, "both delivered", func() bool { return len(plain.changes()) == 1 && len(evs.changes()) == 2 })
		got := evs.changes()
		if got[0].Op != changes.Event || got[0].Resource != "call.ended" || string(got[0].After) != `{"uuid":"u1"}` || got[1].Resource != "extensions" {
			t.Fatalf("event subscriber got %+v", got)
		}
		if p := plain.changes(); p[0].Resource != "extensions" {
			t.Fatalf("plain subscriber got %+v", p)
		}
	})
}
