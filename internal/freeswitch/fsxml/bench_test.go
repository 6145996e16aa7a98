package fsxml

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// The Fetch benchmarks measure the server's own work per fetch (no HTTP):
// CPU and allocations of the cached and cold paths on SQLite, over
// benchTenants tenants of benchExts extensions each.
const benchTenants, benchExts = 20, 50

type fetchBench struct {
	svc     *Service
	tenants []string
	dir     []byte // capture 009 (sip_auth)
	call    []byte // capture 011 (an INVITE)
}

func newFetchBench(b *testing.B) *fetchBench {
	b.Helper()
	ctx := context.Background()
	st := storetest.Open(b, storetest.Backends(b)[0])
	fb := &fetchBench{}
	for i := 0; i < benchTenants; i++ {
		name := fmt.Sprintf("bench%02d", i)
		if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": name}); err != nil {
			b.Fatal(err)
		}
		o, err := st.Tenant(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < benchExts; j++ {
			if _, err := st.Create(ctx, st.Registry().Resource("extensions"), o, map[string]any{
				"name": fmt.Sprint(1000 + j), "sip_secret": fmt.Sprintf("Secret-%d-abcdef", j), "callerid": fmt.Sprintf("User %d <%d>", j, 1000+j),
			}); err != nil {
				b.Fatal(err)
			}
		}
		fb.tenants = append(fb.tenants, name)
	}
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(b).Addr()})
	b.Cleanup(func() { rdb.Close() })
	fb.svc = New(st, rdb, Config{Domain: "sip.test"}, nil)
	b.Cleanup(fb.svc.Close)
	for deadline := time.Now().Add(5 * time.Second); !fb.svc.note.live.Load(); {
		if time.Now().After(deadline) {
			b.Fatal("change notifications not live")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var err error
	if fb.dir, err = readCapture("009"); err != nil {
		b.Fatal(err)
	}
	if fb.call, err = readCapture("011"); err != nil {
		b.Fatal(err)
	}
	return fb
}

func (fb *fetchBench) directory(tenant string, ext int) []byte {
	user := fmt.Sprintf("%d-%s", 1000+ext, tenant)
	return fakefs.FormWith(fb.dir, "user", user, "domain", "sip.test", "key_value", "sip.test")
}

func (fb *fetchBench) local(tenant string, from, to int) []byte {
	f, d := fmt.Sprint(1000+from), fmt.Sprint(1000+to)
	return fakefs.FormWith(fb.call, "Caller-Context", tenant, "Hunt-Context", tenant, "variable_user_context", tenant,
		"Caller-Destination-Number", d, "Hunt-Destination-Number", d,
		"Caller-Caller-ID-Number", f, "Hunt-Caller-ID-Number", f, "variable_sb_ext", f, "variable_sb_tenant", tenant)
}

// run fetches bodies[i % len] b.N times.
func (fb *fetchBench) run(b *testing.B, bodies [][]byte, between func(i int)) {
	ctx := context.Background()
	for i := range bodies { // models in memory
		if _, err := fb.svc.Fetch(ctx, bodies[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if between != nil {
			between(i)
		}
		if _, err := fb.svc.Fetch(ctx, bodies[i%len(bodies)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFetchDirectoryCached(b *testing.B) {
	fb := newFetchBench(b)
	var bodies [][]byte
	for _, t := range fb.tenants {
		bodies = append(bodies, fb.directory(t, 1), fb.directory(t, 2))
	}
	fb.run(b, bodies, nil)
}

func BenchmarkFetchDialplanCached(b *testing.B) {
	fb := newFetchBench(b)
	var bodies [][]byte
	for _, t := range fb.tenants {
		bodies = append(bodies, fb.local(t, 1, 2), fb.local(t, 3, 4))
	}
	fb.run(b, bodies, nil)
}

// BenchmarkFetchDialplanRandom: calls between random extensions, every
// model in memory, no document cached (dropped before every fetch).
func BenchmarkFetchDialplanRandom(b *testing.B) {
	fb := newFetchBench(b)
	r := rand.New(rand.NewPCG(1, 2))
	var bodies [][]byte
	for range 2000 {
		from := r.IntN(benchExts)
		bodies = append(bodies, fb.local(fb.tenants[r.IntN(benchTenants)], from, (from+1+r.IntN(benchExts-1))%benchExts))
	}
	fb.run(b, bodies, func(int) { dropDocs(fb.svc.local) })
}

// BenchmarkFetchDirectoryFirst: every user's first fetch; each tenant's
// model is read on its first user's fetch (every benchExts fetches).
func BenchmarkFetchDirectoryFirst(b *testing.B) {
	fb := newFetchBench(b)
	var bodies [][]byte
	for e := range benchExts {
		for _, t := range fb.tenants {
			bodies = append(bodies, fb.directory(t, e))
		}
	}
	fb.run(b, bodies, func(i int) {
		if i%len(bodies) == 0 {
			fb.svc.gens.reset()
		}
		dropDocs(fb.svc.local)
	})
}

// dropDocs forgets every rendered document without allocating.
func dropDocs(l *localDocs) {
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		clear(sh.cur)
		clear(sh.old)
		sh.bytes = 0
		sh.mu.Unlock()
	}
}
