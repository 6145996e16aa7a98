package fsxml_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// TestWritesVisibleOnOtherReplica: generations live in each replica's
// memory; a write made through one replica is seen by the very next fetch
// on another that had the old answers in memory (the writer's change
// notification reaches it before the API answers the write).
func TestWritesVisibleOnOtherReplica(t *testing.T) {
	for _, e := range apptest.Envs(t) {
		t.Run(e.Name, func(t *testing.T) { writesVisibleOnOtherReplica(t, e) })
	}
}

func writesVisibleOnOtherReplica(t *testing.T, e apptest.Env) {
	if e.RedisURL == "" {
		e.RedisURL = "redis://" + miniredis.RunT(t).Addr() + "/0"
	}
	// Two processes' worth: each has its own store, so b learns of a's
	// writes only through the notifications (or the outbox poll).
	a := apptest.Start(t, e, nil)
	b := apptest.Start(t, e, nil)
	tenant := seedExtension(t, a)
	base := "/api/tenants/" + tenant
	a.Do(t, "POST", base+"/extensions/", a.Key, map[string]any{"name": "1001"}).Expect(t, 201)
	a.Do(t, "POST", base+"/extensions/", a.Key, map[string]any{"name": "1002"}).Expect(t, 201)
	user := "1000-" + tenant
	directory := fakefs.FormWith(capture(t, "009"), "user", user, "domain", "sip.test", "key_value", "sip.test")
	condition := callBody(t, tenant, "700", "1001", "variable_sb_ext", "1001", "variable_sb_tenant", tenant)
	a.Do(t, "POST", base+"/routing_conditions/", a.Key, map[string]any{
		"name": "mode", "number": "700", "kind": "office_mode", "office_modes": []string{"day"},
		"match_destination":   map[string]any{"type": "extension", "target": "1000"},
		"nomatch_destination": map[string]any{"type": "extension", "target": "1001"},
	}).Expect(t, 201)
	// warm fetches until b answers from its memory: b holds the old answer
	// when the write comes. (One fetch was not always enough: seen once in
	// a loaded CI run, b's first fetch after the previous round rendered
	// again, which is allowed; serving an old answer is what is not.)
	warm := func(body []byte) {
		t.Helper()
		wait.Until(t, 5*time.Second, "the model to be served from memory", func() bool { return fromMemory(func() { fetchXML(t, b, body) }) })
	}
	wait.Until(t, 5*time.Second, "the model to be served from memory", func() bool { return fromMemory(func() { fetchXML(t, b, directory) }) }) // b trusts its memory
	for round := 0; round < 5; round++ {
		name := []string{"Bob", "Carol", "Dan", "Eve", "Fay"}[round]
		warm(directory)
		a.Do(t, "PUT", base+"/extensions/1000", a.Key, map[string]any{"callerid": name + " <1000>"}).Expect(t, 200)
		if got := fetchXML(t, b, directory).param("variable", "effective_caller_id_name"); got != name {
			t.Fatalf("round %d: the other replica served %q after the write, want %q", round, got, name)
		}
	}
	for round, mode := range []string{"night", "day", "night", "day"} {
		warm(condition)
		a.Do(t, "PUT", base+"/office_mode", a.Key, map[string]any{"mode": mode}).Expect(t, 200)
		doc := fetchXML(t, b, condition)
		want := map[string]string{"day": "transfer 1000 XML " + tenant, "night": "transfer 1001 XML " + tenant}[mode]
		if acts := doc.actions(); !slices.Contains(acts, want) {
			t.Fatalf("round %d (%s): the other replica's actions %q lack %q", round, mode, acts, want)
		}
	}
}

// TestNotificationsLostNeverServeStale: when Redis goes away, a replica
// can no longer hear of other replicas' writes; it must not answer from
// memory then, and when Redis is back it catches up from the outbox before
// it trusts its memory again.
func TestNotificationsLostNeverServeStale(t *testing.T) {
	for _, e := range apptest.Envs(t) {
		t.Run(e.Name, func(t *testing.T) {
			m := miniredis.RunT(t)
			e.RedisURL = "redis://" + m.Addr() + "/0"
			a := apptest.Start(t, e, nil)
			b := apptest.Start(t, e, nil) // its own store: it hears of a's writes only by notification or poll
			tenant := seedExtension(t, a)
			user := "1000-" + tenant
			directory := fakefs.FormWith(capture(t, "009"), "user", user, "domain", "sip.test", "key_value", "sip.test")
			name := func(s *apptest.Server) string {
				return fetchXML(t, s, directory).param("variable", "effective_caller_id_name")
			}
			// b answers from memory.
			wait.Until(t, 5*time.Second, "the model to be served from memory", func() bool { return fromMemory(func() { name(b) }) })

			m.Close() // Redis gone: connections dropped, notifications lost
			a.Do(t, "PUT", "/api/tenants/"+tenant+"/extensions/1000", a.Key, map[string]any{"callerid": "Zoe <1000>"}).Expect(t, 200)
			for i := 0; i < 5; i++ {
				if got := name(b); got != "Zoe" {
					t.Fatalf("fetch %d while Redis is down: the other replica served %q, want Zoe", i, got)
				}
			}
			if err := m.Restart(); err != nil {
				t.Fatal(err)
			}
			a.Do(t, "PUT", "/api/tenants/"+tenant+"/extensions/1000", a.Key, map[string]any{"callerid": "Yan <1000>"}).Expect(t, 200)
			deadline := time.Now().Add(2 * time.Second)
			for time.Now().Before(deadline) {
				if got := name(b); got != "Yan" {
					t.Fatalf("after Redis came back: the other replica served %q, want Yan", got)
				}
				time.Sleep(20 * time.Millisecond)
			}
			// And b trusts its memory again.
			wait.Until(t, 5*time.Second, "the model to be served from memory", func() bool { return fromMemory(func() { name(b) }) })
		})
	}
}

// fromMemory runs fetch twice and reports whether the second was answered
// from a replica's memory.
func fromMemory(fetch func()) bool {
	fetch()
	before := fsxml.ReadStats().DocHits
	fetch()
	return fsxml.ReadStats().DocHits > before
}

// TestDirectoryWriteReadsOneExtension: after a write to one extension the
// next fetch updates the tenant's model by reading that extension only
// (no rebuild of the tenant), and the answers are those of a full read:
// an update, a new extension, a deleted one; a rename reads the tenant again.
func TestDirectoryWriteReadsOneExtension(t *testing.T) {
	apptest.EachSerial(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		dir := func(ext string) node {
			user := ext + "-" + tenant
			return fetchXML(t, s, fakefs.FormWith(capture(t, "009"), "user", user, "domain", "sip.test", "key_value", "sip.test"))
		}
		wait.Until(t, 5*time.Second, "the model to be served from memory", func() bool { return fromMemory(func() { dir("1000") }) })
		// step runs a write and the fetch after it, and checks how the
		// model was brought up to date.
		step := func(what string, patched bool, write func(), check func()) {
			t.Helper()
			dir("1000") // the model is current
			before := fsxml.ReadStats()
			write()
			check()
			after := fsxml.ReadStats()
			gotPatch, gotBuild := after.TenantPatches-before.TenantPatches, after.TenantBuilds-before.TenantBuilds
			if after.Resets != before.Resets {
				// Every model was dropped meanwhile (the change stream was
				// interrupted, as Redis Cluster's pub/sub may be under
				// load): a rebuild is then right, and the answers were
				// checked above.
				t.Logf("%s: the change stream was interrupted (%d resets); %d patches, %d builds", what, after.Resets-before.Resets, gotPatch, gotBuild)
				return
			}
			if patched && (gotPatch != 1 || gotBuild != 0) || !patched && gotBuild != 1 {
				t.Errorf("%s: %d patches, %d builds of the model (want patched=%v)", what, gotPatch, gotBuild, patched)
			}
		}
		step("update", true, func() {
			s.Do(t, "PUT", base+"/extensions/1000", s.Key, map[string]any{"callerid": "Bob <1000>"}).Expect(t, 200)
		}, func() {
			if got := dir("1000").param("variable", "effective_caller_id_name"); got != "Bob" {
				t.Errorf("after an update: %q, want Bob", got)
			}
		})
		step("create", true, func() {
			s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1005", "callerid": "Cy <1005>"}).Expect(t, 201)
		}, func() {
			if got := dir("1005").param("variable", "effective_caller_id_name"); got != "Cy" {
				t.Errorf("a new extension: %q, want Cy", got)
			}
		})
		step("delete", true, func() {
			s.Do(t, "DELETE", base+"/extensions/1005", s.Key, nil).Expect(t, 204)
		}, func() {
			if doc := dir("1005"); !doc.notFound() {
				t.Errorf("a deleted extension is still in the directory:\n%s", doc.raw)
			}
		})
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1006"}).Expect(t, 201)
		step("rename", false, func() {
			s.Do(t, "PUT", base+"/extensions/1006", s.Key, map[string]any{"name": "1007"}).Expect(t, 200)
		}, func() {
			if doc := dir("1006"); !doc.notFound() {
				t.Errorf("the old name of a renamed extension is still in the directory:\n%s", doc.raw)
			}
			if doc := dir("1007"); doc.notFound() {
				t.Error("the new name of a renamed extension is not in the directory")
			}
		})
		step("another resource", false, func() {
			s.Do(t, "PUT", base+"/office_mode", s.Key, map[string]any{"mode": "night"}).Expect(t, 200)
		}, func() { dir("1000") })
	})
}

// TestForeignNotificationsNeverHideAWrite: a notification naming a change
// id this replica's database never gave out (another installation on the
// same Redis, or ids that arrive out of order) must not make the replica
// ignore its own later writes. Seen in CI: packages on one Redis but each
// on its own MySQL database, where a disabled trunk and a disabled DID
// still routed on the next fetch.
func TestForeignNotificationsNeverHideAWrite(t *testing.T) {
	for _, e := range apptest.Envs(t) {
		t.Run(e.Name, func(t *testing.T) {
			m := miniredis.RunT(t)
			e.RedisURL = "redis://" + m.Addr() + "/0"
			a := apptest.Start(t, e, nil)
			tenant := seedExtension(t, a)
			user := "1000-" + tenant
			directory := fakefs.FormWith(capture(t, "009"), "user", user, "domain", "sip.test", "key_value", "sip.test")
			name := func() string { return fetchXML(t, a, directory).param("variable", "effective_caller_id_name") }
			wait.Until(t, 5*time.Second, "the model to be served from memory", func() bool { return fromMemory(func() { name() }) })

			// Another installation's changes, with ids far above ours.
			rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
			defer rdb.Close()
			foreign := fmt.Sprintf(`{"from":"elsewhere","n":[{"s":"","id":%d},{"s":%q,"id":%d}]}`, int64(1)<<50, strings.ToLower(tenant), int64(1)<<50)
			channel, err := fsxml.ChannelFor(context.Background(), a.Store)
			if err != nil {
				t.Fatal(err)
			}
			if err := rdb.Publish(context.Background(), channel, foreign).Err(); err != nil {
				t.Fatal(err)
			}
			wait.Until(t, 5*time.Second, "the model to be served from memory", func() bool { return fromMemory(func() { name() }) })

			for _, who := range []string{"Ann", "Ben", "Cat"} {
				a.Do(t, "PUT", "/api/tenants/"+tenant+"/extensions/1000", a.Key, map[string]any{"callerid": who + " <1000>"}).Expect(t, 200)
				if got := name(); got != who {
					t.Fatalf("after the write the replica served %q, want %q", got, who)
				}
			}
		})
	}
}

// TestInstallationsOnOneRedisKeepToThemselves: replicas of one database
// share a change channel; another database (another installation) on the
// same Redis server has its own, so its writes never reach the first's
// memory (seen in CI: a write of another package's test server made a
// replica build a tenant's model again instead of patching it).
func TestInstallationsOnOneRedisKeepToThemselves(t *testing.T) {
	ctx := context.Background()
	m := miniredis.RunT(t)
	e := apptest.Env{Name: "sqlite", DB: storetest.SQLite(t), RedisURL: "redis://" + m.Addr() + "/0"}
	other := apptest.Env{Name: "sqlite", DB: storetest.SQLite(t), RedisURL: e.RedisURL}
	a1, a2, b := apptest.Start(t, e, nil), apptest.Start(t, e, nil), apptest.Start(t, other, nil)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	channel := func(s *apptest.Server) string {
		c, err := fsxml.ChannelFor(ctx, s.Store)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if channel(a1) != channel(a2) {
		t.Errorf("replicas of one database on channels %q and %q", channel(a1), channel(a2))
	}
	if channel(a1) == channel(b) {
		t.Errorf("two installations share the channel %q", channel(a1))
	}
	// What replicas actually subscribe to: one channel per installation.
	subs := map[string]int{}
	wait.Until(t, 5*time.Second, "the model to be served from memory", func() bool {
		subs = map[string]int{}
		for _, c := range []string{channel(a1), channel(b)} {
			n, err := rdb.PubSubNumSub(ctx, c).Result()
			if err != nil {
				t.Fatal(err)
			}
			subs[c] = int(n[c])
		}
		return subs[channel(a1)] == 2 && subs[channel(b)] == 1
	})
}
