package routes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/faultproxy"
)

// chaosFigures is what the fault suite counts; `make chaos` prints them.
type chaosFigures struct {
	Acknowledged int // configuration writes answered 2xx
	Refused      int // attempts answered 503 (retried with the same Idempotency-Key)
	Lost         int // acknowledged writes missing from the final state
	Duplicate    int // writes that produced more than one change event
	Fetches      int // /fs/xml directory fetches
	Stale        int // fetches answering a value older than one acknowledged before they were sent
	NotFound     int // "not found" answers (allowed only while the database is down)
	Errors       int // /fs/xml answers other than 200
	// Recovery is, per fault, the seconds from the restore to the first
	// acknowledged write.
	Recovery map[string]float64
}

// TestChaosOutagesLoseNothing is the fault suite of issue 29 on two
// replicas of one installation (one MySQL, one Redis, each behind a relay
// the test cuts): a client writes extensions alternately through either
// replica, retrying a refused write on the other with the same
// Idempotency-Key, while FreeSWITCH-style directory fetches go to both and
// are checked against every write acknowledged before they were sent.
// Redis goes away and comes back empty-handed, then the database goes
// away and comes back. Nothing acknowledged may be lost, applied twice or
// served stale; /fs/xml never answers an HTTP error; and writes are
// acknowledged again soon after each restore.
func TestChaosOutagesLoseNothing(t *testing.T) {
	t.Parallel()
	for _, e := range apptest.Envs(t) {
		if e.DB.Name != "mysql" {
			continue // an embedded SQLite file has no outage
		}
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			if e.RedisURL == "" {
				e.RedisURL = "redis://" + miniredis.RunT(t).Addr() + "/0"
			}
			var dbProxy, redisProxy *faultproxy.Proxy
			e.DB.URL, dbProxy = faultproxy.URL(t, e.DB.URL)
			e.RedisURL, redisProxy = faultproxy.URL(t, e.RedisURL)
			group := storetest.Name("chaos")
			a := apptest.StartReplica(t, e, nil, group)
			b := apptest.StartReplica(t, e, nil, group)
			f := runChaos(t, a, b, []chaosFault{
				{name: "redis", cut: redisProxy.Cut, restore: func() { redisProxy.Restore(t) }},
				{name: "database", cut: dbProxy.Cut, restore: func() { dbProxy.Restore(t) }, db: true},
			})
			js, _ := json.Marshal(f)
			t.Logf("chaos figures: %s", js)
			if f.Lost+f.Duplicate+f.Stale+f.Errors > 0 {
				t.Errorf("lost %d, duplicate %d, stale %d, /fs/xml errors %d; want none", f.Lost, f.Duplicate, f.Stale, f.Errors)
			}
			if f.Acknowledged < 10 || f.Fetches < 5*chaosMinSteps {
				t.Errorf("only %d writes acknowledged and %d fetches made: the run proves little", f.Acknowledged, f.Fetches)
			}
			for fault, s := range f.Recovery {
				if s < 0 || s > 15 {
					t.Errorf("after the %s outage writes were acknowledged again after %.1f s, want within 15 s", fault, s)
				}
			}
		})
	}
}

type chaosFault struct {
	name         string
	cut, restore func()
	db           bool // while cut, writes are refused and "not found" answers are allowed
}

// chaosSteady is how long each phase (before, during and after each fault)
// runs, and chaosMinSteps the fewest steps (a write and a fetch) it makes.
const (
	chaosSteady   = 2 * time.Second
	chaosMinSteps = 10
)

var chaosValue = regexp.MustCompile(`chaos-v(\d+)`)

// runChaos drives the client and the fetches through every fault in turn,
// one request at a time (so every check knows exactly what was
// acknowledged before it), and counts.
func runChaos(t *testing.T, a, b *apptest.Server, faults []chaosFault) chaosFigures {
	ctx := context.Background()
	const users = 4
	tenant := a.Tenant(t, "chaos")
	base := "/api/tenants/" + tenant + "/extensions/"
	for i := range users {
		a.Do(t, "POST", base, a.Key, map[string]any{"name": strconv.Itoa(1001 + i), "callerid": fmt.Sprintf("chaos-v0 <%d>", 1001+i)}).Expect(t, 201)
	}
	head, err := a.Store.OutboxHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := chaosFigures{Recovery: map[string]float64{}}
	replicas := []*apptest.Server{a, b}
	acked := make([]int, users) // per user, the last acknowledged value
	type write struct {
		user, value int
		key         string
	}
	var (
		pending  *write
		next     = 1
		turn     int
		dbDown   bool
		restored = map[string]time.Time{}
	)
	// step makes one write attempt (a new write once the last one was
	// acknowledged) and one fetch.
	step := func() {
		turn++
		if pending == nil {
			pending = &write{user: next % users, value: next, key: fmt.Sprintf("chaos-%s-%d", tenant, next)}
			next++
		}
		s := replicas[turn%2]
		r := s.DoHeaders(t, "PUT", base+strconv.Itoa(1001+pending.user),
			map[string]string{"X-API-Key": s.Key, "Idempotency-Key": pending.key},
			map[string]any{"callerid": fmt.Sprintf("chaos-v%d <%d>", pending.value, 1001+pending.user)})
		switch {
		case r.Status == 200:
			f.Acknowledged++
			acked[pending.user] = pending.value
			pending = nil
			for fault, at := range restored {
				if _, done := f.Recovery[fault]; !done {
					f.Recovery[fault] = time.Since(at).Seconds()
				}
			}
		case r.Status == 503:
			f.Refused++
		default:
			t.Fatalf("write answered %d: %s", r.Status, r.Body)
		}

		user := rand.IntN(users)
		before := acked[user]
		name := strconv.Itoa(1001+user) + "-" + tenant
		body := fakefs.FormWith(xmlCapture(t, "009-directory-127.0.0.1.http"), "user", name,
			"domain", "sip.test", "key_value", "sip.test", "sip_auth_username", name, "sip_auth_realm", "sip.test")
		x := replicas[(turn+1)%2].DoHeaders(t, "POST", "/fs/xml", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body)
		f.Fetches++
		if x.Status != 200 {
			f.Errors++
			return
		}
		m := chaosValue.FindSubmatch(x.Body)
		if m == nil {
			if !strings.Contains(string(x.Body), `status="not found"`) {
				t.Fatalf("directory answer neither a user nor not found:\n%s", x.Body)
			}
			f.NotFound++
			if !dbDown {
				f.Stale++ // the user exists: not found is only for an outage
			}
			return
		}
		if got, _ := strconv.Atoi(string(m[1])); got < before {
			f.Stale++
			t.Logf("stale: user %d answered chaos-v%d after chaos-v%d was acknowledged", user, got, before)
		}
	}
	// Each phase lasts its time and at least chaosMinSteps steps: a loaded
	// machine (CI's -race pass) makes fewer requests in the same time.
	run := func(d time.Duration) {
		for n, end := 0, time.Now().Add(d); n < chaosMinSteps || time.Now().Before(end); n++ {
			step()
		}
	}

	run(chaosSteady)
	for _, fault := range faults {
		fault.cut()
		dbDown = fault.db
		run(chaosSteady)
		fault.restore()
		restored[fault.name] = time.Now()
		// Answers may stay "not found" until the replica reads the
		// database again; stale values are never allowed.
		run(chaosSteady)
		dbDown = false
		if _, ok := f.Recovery[fault.name]; !ok {
			f.Recovery[fault.name] = -1
		}
		delete(restored, fault.name)
	}
	// The client retries its last write until it is acknowledged.
	for end := time.Now().Add(15 * time.Second); pending != nil && time.Now().Before(end); {
		step()
	}
	if pending != nil {
		t.Fatalf("write %d never acknowledged after the faults", pending.value)
	}

	// Lost: every user shows its last acknowledged value.
	for i := range users {
		got := a.Do(t, "GET", base+strconv.Itoa(1001+i), a.Key, nil).Expect(t, 200).Map(t)["callerid"]
		if want := fmt.Sprintf("chaos-v%d <%d>", acked[i], 1001+i); got != want {
			f.Lost++
			t.Logf("lost: user %d shows %v, acknowledged %s", i, got, want)
		}
	}
	// Duplicate: one change event per write, however often it was retried.
	cs, err := a.Store.OutboxAfter(ctx, head, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, c := range cs {
		if c.Tenant != tenant || c.Resource != "extensions" || c.Op != changes.Update {
			continue
		}
		var after struct {
			CallerID string `json:"callerid"`
		}
		if err := json.Unmarshal(c.After, &after); err != nil {
			t.Fatal(err)
		}
		if seen[after.CallerID]++; seen[after.CallerID] == 2 {
			f.Duplicate++
			t.Logf("duplicate: %s applied twice", after.CallerID)
		}
	}
	return f
}
