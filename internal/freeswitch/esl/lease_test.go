package esl

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/platform/redistest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// redisBackend is a Redis to run lease tests on; expire makes keys with
// the given TTL lapse (miniredis fast-forwards, real Redis waits).
type redisBackend struct {
	name   string
	client redis.UniversalClient
	expire func(t *testing.T, ttl time.Duration)
}

// redisBackends returns miniredis always, plus the real Redis at
// SWITCHBOARD_TEST_REDIS_URL when set (one server, Sentinel or Cluster).
func redisBackends(t *testing.T) []redisBackend {
	t.Helper()
	mr := miniredis.RunT(t)
	mc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = mc.Close() })
	out := []redisBackend{{name: "miniredis", client: mc, expire: func(t *testing.T, ttl time.Duration) { mr.FastForward(ttl) }}}
	if rc := redistest.FromEnv(t); rc != nil {
		out = append(out, redisBackend{name: "redis", client: rc, expire: func(t *testing.T, ttl time.Duration) {
			time.Sleep(ttl + 50*time.Millisecond) // real Redis expires on its own clock
		}})
	}
	return out
}

func TestRedisLease(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			node := "fs-" + uuid.NewString()
			const ttl = 300 * time.Millisecond
			r1 := NewRedisLease(b.client, "", "replica-1", ttl)
			r2 := NewRedisLease(b.client, "", "replica-2", ttl)
			t.Cleanup(func() { b.client.Del(context.Background(), r1.Key(node)) })

			steps := []struct {
				name string
				do   func() (bool, error)
				want bool
			}{
				{"r1 acquires free lease", func() (bool, error) { return r1.Acquire(ctx, node) }, true},
				{"r2 cannot take it", func() (bool, error) { return r2.Acquire(ctx, node) }, false},
				{"r1 re-acquires its own", func() (bool, error) { return r1.Acquire(ctx, node) }, true},
				{"r1 renews", func() (bool, error) { return r1.Renew(ctx, node) }, true},
				{"r2 cannot renew", func() (bool, error) { return r2.Renew(ctx, node) }, false},
			}
			for _, s := range steps {
				got, err := s.do()
				if err != nil || got != s.want {
					t.Fatalf("%s: %v, %v; want %v", s.name, got, err, s.want)
				}
			}
			if v, _ := b.client.Get(ctx, r1.Key(node)).Result(); v != "replica-1" {
				t.Fatalf("key value %q", v)
			}
			if pttl, _ := b.client.PTTL(ctx, r1.Key(node)).Result(); pttl <= 0 || pttl > ttl {
				t.Fatalf("PTTL %s", pttl)
			}
			// r2 releasing must not drop r1's lease.
			if err := r2.Release(ctx, node); err != nil {
				t.Fatal(err)
			}
			if ok, _ := r2.Acquire(ctx, node); ok {
				t.Fatal("r2 took the lease after its own release")
			}
			// The holder dies: no renewals, the key expires, r2 takes over,
			// and the old holder can neither renew nor release it.
			b.expire(t, ttl)
			if ok, err := r2.Acquire(ctx, node); !ok || err != nil {
				t.Fatalf("r2 after expiry: %v %v", ok, err)
			}
			if ok, _ := r1.Renew(ctx, node); ok {
				t.Fatal("stale holder renewed")
			}
			if err := r1.Release(ctx, node); err != nil {
				t.Fatal(err)
			}
			if v, _ := b.client.Get(ctx, r1.Key(node)).Result(); v != "replica-2" {
				t.Fatalf("after stale release the key is %q", v)
			}
		})
	}
}

func TestOnlyOneReplicaConsumesEvents(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			fs := startFake(t, fakefs.Options{})
			node := NodeConfig{Name: "fs-" + uuid.NewString(), Addr: fs.Addr(), Password: "ClueCon"}
			const ttl = 300 * time.Millisecond
			var sinks [2]sink
			var pools [2]*Pool
			var stops [2]func()
			for i := range pools {
				opts := fastOptions()
				opts.OnEvent = sinks[i].add
				opts.EventLease = NewRedisLease(b.client, "", "replica-"+uuid.NewString(), ttl)
				pools[i], stops[i] = startPool(t, []NodeConfig{node}, opts)
			}
			t.Cleanup(func() { b.client.Del(context.Background(), "sb:esl:lease:"+node.Name) })
			holder := -1
			wait.Until(t, 3*time.Second, "one holder", func() bool {
				h0, h1 := pools[0].Nodes()[0].EventsHeld, pools[1].Nodes()[0].EventsHeld
				switch {
				case h0 && !h1:
					holder = 0
				case h1 && !h0:
					holder = 1
				default:
					return false
				}
				return pools[0].Nodes()[0].Up && pools[1].Nodes()[0].Up
			})
			other := 1 - holder
			// Over several renewal periods, still exactly one subscriber.
			for deadline := time.Now().Add(3 * ttl); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if n := fullSubscribers(fs); n != 1 {
					t.Fatalf("%d event subscribers on the node", n)
				}
				if pools[other].Nodes()[0].EventsHeld {
					t.Fatal("both replicas hold events")
				}
			}

			// The non-holder's own bgapi result still reaches it, once; channel
			// events reach only the holder.
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			job, err := pools[other].bgapi(ctx, node.Name, "originate sofia/gateway/gw1/4477 &park()")
			if err != nil {
				t.Fatal(err)
			}
			isJob := func(e Event) bool { return e.Name() == "BACKGROUND_JOB" && e.Get("Job-UUID") == job }
			isAnswer := func(e Event) bool { return e.Name() == "CHANNEL_ANSWER" }
			wait.Until(t, 3*time.Second, "job result at the caller", func() bool { return sinks[other].count(isJob) == 1 })
			wait.Until(t, 3*time.Second, "answer at the holder", func() bool { return sinks[holder].count(isAnswer) == 1 })
			if n := sinks[other].count(isAnswer); n != 0 {
				t.Errorf("non-holder got %d channel events", n)
			}

			// The holder stops: the other replica takes over.
			stops[holder]()
			wait.Until(t, 5*time.Second, "takeover", func() bool {
				return pools[other].Nodes()[0].EventsHeld && fullSubscribers(fs) == 1
			})
		})
	}
}

func TestTakeoverAfterHolderCrash(t *testing.T) {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	fs := startFake(t, fakefs.Options{})
	const ttl = 300 * time.Millisecond
	// A replica that died without releasing still owns the key.
	if err := client.Set(t.Context(), "sb:esl:lease:fs1", "dead-replica", ttl).Err(); err != nil {
		t.Fatal(err)
	}
	var connects counter
	opts := fastOptions()
	opts.OnConnect = connects.inc
	opts.EventLease = NewRedisLease(client, "", "replica-b", ttl)
	p, _ := startPool(t, []NodeConfig{nodeFor(fs)}, opts)
	wait.Until(t, 3*time.Second, "command connection", func() bool { return p.Nodes()[0].Up })
	if p.Nodes()[0].EventsHeld || fullSubscribers(fs) != 0 || connects.get() != 0 {
		t.Fatal("events consumed while another replica holds the lease")
	}
	mr.FastForward(ttl)
	wait.Until(t, 3*time.Second, "takeover", func() bool {
		return p.Nodes()[0].EventsHeld && fullSubscribers(fs) == 1 && connects.get() == 1
	})
	if v, _ := client.Get(t.Context(), "sb:esl:lease:fs1").Result(); v != "replica-b" {
		t.Errorf("lease holder %q", v)
	}
}

// TestLeasesOfTwoInstallationsOnOneRedis: installations sharing a Redis
// both name a node "fs1"; each takes its own node's lease.
func TestLeasesOfTwoInstallationsOnOneRedis(t *testing.T) {
	for _, b := range redisBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			node := "fs-" + uuid.NewString()
			a := NewRedisLease(b.client, "sb:"+uuid.NewString()+":", "replica-a", time.Minute)
			other := NewRedisLease(b.client, "sb:"+uuid.NewString()+":", "replica-b", time.Minute)
			t.Cleanup(func() { b.client.Del(context.Background(), a.Key(node), other.Key(node)) })
			for _, l := range []*RedisLease{a, other} {
				if ok, err := l.Acquire(t.Context(), node); err != nil || !ok {
					t.Fatalf("%s: acquire = %v, %v; want its own installation's lease", l.Replica(), ok, err)
				}
			}
		})
	}
}
