package fsxml

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// Issue 28: a preloaded replica (every tenant's model read in batches, one
// query per table) answers every directory and dialplan fetch exactly as a
// replica that builds each model on first use, without building any
// itself; a large tenant (more extensions than a model holds) included;
// and a write after the preload is served on the next fetch.
func TestPreloadAnswersAsOnDemandBuilds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		var tenants []string
		users := func(names ...string) []map[string]any {
			var out []map[string]any
			for _, n := range names {
				out = append(out, map[string]any{"name": n, "sip_secret": "Secret-" + n + "-abcdef", "callerid": "User <" + n + ">"})
			}
			return out
		}
		for _, p := range []string{"prea", "preb", "prec"} {
			name := storetest.Name(p)
			tenants = append(tenants, name)
			seedTenant(t, st, name, users("1000", "1001")...)
		}
		large := storetest.Name("prelarge")
		tenants = append(tenants, large)
		o := seedTenant(t, st, large, users("1000", "1001", "1002")...)
		if _, err := st.Create(ctx, st.Registry().Resource("emergency_locations"), o, map[string]any{"name": "hq", "address_line1": "1 Main St", "country": "ZA", "emergency_callerid": "+27110000001"}); err != nil {
			t.Fatal(err)
		}

		rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		defer rdb.Close()
		onDemand := New(st, rdb, Config{Domain: "sip.test", modelExtensions: 2}, nil)
		defer onDemand.Close()
		var built atomic.Int64
		pre := New(st, rdb, Config{Domain: "sip.test", Preload: true, modelExtensions: 2,
			buildHook: func(context.Context, string) { built.Add(1) }}, nil)
		defer pre.Close()
		waitLive(t, onDemand, pre)
		wait.Until(t, 20*time.Second, "every tenant preloaded", func() bool {
			for _, tenant := range tenants {
				if _, ok := pre.models.tenants.peek(tenant); !ok {
					return false
				}
			}
			return true
		})

		dir, err := readCapture("009")
		if err != nil {
			t.Fatal(err)
		}
		call, err := readCapture("011")
		if err != nil {
			t.Fatal(err)
		}
		fetch := func(svc *Service, body []byte) string {
			t.Helper()
			doc, err := svc.Fetch(ctx, body)
			if err != nil {
				t.Fatal(err)
			}
			return string(doc)
		}
		for _, tenant := range tenants {
			for _, user := range []string{"1000", "1001", "1002", "1009"} {
				bodies := map[string][]byte{
					"directory": fakefs.FormWith(dir, "user", user+"-"+tenant, "domain", "sip.test", "key_value", "sip.test"),
					"dialplan": fakefs.FormWith(call, "Caller-Context", tenant, "Hunt-Context", tenant, "Caller-Destination-Number", user,
						"Hunt-Destination-Number", user, "Caller-Caller-ID-Number", "1000", "Hunt-Caller-ID-Number", "1000"),
				}
				for what, body := range bodies {
					want, got := fetch(onDemand, body), fetch(pre, body)
					if got != want {
						t.Errorf("%s %s@%s: the preloaded replica answers\n%s\nthe other\n%s", what, user, tenant, got, want)
					}
				}
			}
		}
		if n := built.Load(); n != 0 {
			t.Errorf("the preloaded replica read %d tenant models itself, want none", n)
		}

		if _, err := st.Update(ctx, st.Registry().Resource("extensions"), o, "1001", map[string]any{"callerid": "Bob <1001>"}); err != nil {
			t.Fatal(err)
		}
		if err := pre.pollHeads(ctx); err != nil {
			t.Fatal(err)
		}
		if doc := fetchUser(t, pre, "1001-"+large); !strings.Contains(doc, `name="effective_caller_id_name" value="Bob"`) {
			t.Errorf("the update after the preload is not served:\n%s", doc)
		}
	})
}

// Issue 28: a fetch that arrives while a preload has only read the tenant
// list (here: while it reads the platform model) waits for a batch of its
// tenant instead of reading the tenant's model itself. Before, the
// preload first counted every tenant's extensions and read the platform
// model, and the fetches of those first moments after a restart each
// built their model with some twenty queries, beside the preload's.
func TestFetchWaitsForPreloadFromItsStart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		tenant := storetest.Name("prestart")
		seedTenant(t, st, tenant, map[string]any{"name": "1000", "sip_secret": "Secret-1000-abcdef", "callerid": "Ann <1000>"})
		rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		defer rdb.Close()
		var built atomic.Int64
		var platform atomic.Bool
		release := make(chan struct{})
		defer close(release)
		svc := New(st, rdb, Config{Domain: "sip.test", Preload: true,
			buildHook: func(context.Context, string) { built.Add(1) },
			preloadHook: func(ctx context.Context) {
				platform.Store(true)
				select {
				case <-release:
				case <-ctx.Done():
				}
			}}, nil)
		defer svc.Close()
		wait.Until(t, 10*time.Second, "the preload reading the platform model", platform.Load)

		raw, err := readCapture("009")
		if err != nil {
			t.Fatal(err)
		}
		type answer struct {
			doc []byte
			err error
		}
		got := make(chan answer, 1)
		go func() {
			doc, err := svc.Fetch(ctx, fakefs.FormWith(raw, "user", "1000-"+tenant, "domain", "sip.test", "key_value", "sip.test"))
			got <- answer{doc, err}
		}()
		var a answer
		select {
		case a = <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("the fetch waits for the whole preload")
		}
		if a.err != nil {
			t.Fatal(a.err)
		}
		if !strings.Contains(string(a.doc), `<user id="1000-`+tenant+`"`) {
			t.Errorf("the fetch answers\n%s", a.doc)
		}
		if n := built.Load(); n != 0 {
			t.Errorf("the fetch read its tenant's model itself (%d builds), want it read by a preload batch", n)
		}
	})
}

// Issue 28: a query of a batch fetches wait for takes the next free
// preload slot before the background loop's queries, queued first or
// not, and one slot more than the background may hold.
func TestPreloadSlotsPutFetchesFirst(t *testing.T) {
	q := newPreloadSlots(4) // SQLite's pool: the background takes 2, fetches' batches one more
	take := func(urgent bool) chan func() {
		ch := make(chan func(), 1)
		go func() { ch <- q.acquire(urgent) }()
		return ch
	}
	waiting := func(urgent, rest int) func() bool {
		return func() bool {
			q.mu.Lock()
			defer q.mu.Unlock()
			return len(q.urgentWait) == urgent && len(q.restWait) == rest
		}
	}
	got := func(ch chan func(), what string) func() {
		t.Helper()
		select {
		case release := <-ch:
			return release
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no slot", what)
			return nil
		}
	}
	bg1, bg2 := got(take(false), "background 1"), got(take(false), "background 2")
	bg3 := take(false)
	wait.Until(t, 10*time.Second, "the third background query waiting", waiting(0, 1))
	u1 := got(take(true), "a fetch's query, beside two of the background")
	u2 := take(true)
	wait.Until(t, 10*time.Second, "a second fetch's query waiting", waiting(1, 1))

	bg1()
	got(u2, "the fetch's query queued after the background's")
	if len(bg3) != 0 {
		t.Fatal("the background query queued first took the slot a fetch waits for")
	}
	u1()
	got(bg3, "the background query, once no fetch waits")
	bg2()
}
