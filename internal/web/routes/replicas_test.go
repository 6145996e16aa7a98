package routes_test

import (
	"crypto/md5"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// TestTwoReplicasShareTheWork runs two replicas on one database and one
// Redis, both pointed at one FreeSWITCH node: the node's events are
// consumed by one replica only, one replica dispatches the outbox, and a
// FreeSWITCH fetch is answered by either with the other's latest write.
func TestTwoReplicasShareTheWork(t *testing.T) {
	t.Parallel()
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			if be.RedisURL == "" {
				be.RedisURL = "redis://" + miniredis.RunT(t).Addr() + "/0"
			}
			fs := startFake(t)
			env := map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr()}
			group := storetest.Name("replicas")
			a := apptest.StartReplica(t, be, env, group)
			b := apptest.StartReplica(t, be, env, group)

			// Events: exactly one event subscription on the node, one lease holder.
			waitEvents(t, fs, 1)
			held := 0
			for _, s := range []*apptest.Server{a, b} {
				held += int(value(scrape(t, s.URL+"/metrics", s.Key), "switchboard_esl_node_events_held", nil))
			}
			if held != 1 {
				t.Fatalf("%d replicas hold the node's event lease, want 1", held)
			}
			// A call is seen once and listed by both replicas.
			tenant := a.Tenant(t, "repl")
			uuid, err := fs.CreateChannel(fakefs.ChannelSpec{CIDNum: "1001", Dest: "1002", Context: tenant,
				Vars: []fakefs.Header{{Name: "sb_tenant", Value: tenant}}})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []*apptest.Server{a, b} {
				wait.Until(t, 10*time.Second, "the channel on both replicas", func() bool {
					return strings.Contains(string(s.Do(t, "GET", "/api/telephony/channels?tenant="+tenant, s.Key, nil).Body), uuid)
				})
			}
			// Only the lease holder's tracker took the call's events.
			var took []float64
			for _, s := range []*apptest.Server{a, b} {
				took = append(took, max(0, value(scrape(t, s.URL+"/metrics", s.Key), "switchboard_calls_tracker_lag_seconds", nil)))
			}
			if (took[0] > 0) == (took[1] > 0) {
				t.Errorf("events taken by the trackers of A and B: %v; want one replica only", took)
			}

			// The outbox: one dispatcher for the group.
			wait.Until(t, 10*time.Second, "an outbox dispatcher", func() bool {
				return dispatching(t, a)+dispatching(t, b) >= 1
			})
			if n := dispatching(t, a) + dispatching(t, b); n != 1 {
				t.Errorf("%d replicas dispatch the outbox, want 1", n)
			}

			// XML: written on A, fetched from B, changed on B, fetched from A.
			a.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", a.Key, map[string]any{"name": "1001", "first_name": "Eve"}).Expect(t, 201)
			fetch := func(s *apptest.Server) string {
				body := fakefs.FormWith(xmlCapture(t, "009-directory-127.0.0.1.http"), "user", "1001-"+tenant,
					"domain", "sip.test", "key_value", "sip.test", "sip_auth_username", "1001-"+tenant, "sip_auth_realm", "sip.test")
				return string(s.DoHeaders(t, "POST", "/fs/xml", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body).Expect(t, 200).Body)
			}
			if doc := fetch(b); !strings.Contains(doc, `id="1001-`+tenant+`"`) || !strings.Contains(doc, "Eve") {
				t.Fatalf("replica B does not serve the user replica A created:\n%s", doc)
			}
			// A new SIP secret set on B is the one A serves (a1-hash = MD5 of user:domain:secret).
			const secret = "a-new-secret-for-1001"
			b.Do(t, "PUT", "/api/tenants/"+tenant+"/extensions/1001", b.Key, map[string]any{"sip_secret": secret}).Expect(t, 200)
			a1 := fmt.Sprintf("%x", md5.Sum([]byte("1001-"+tenant+":sip.test:"+secret)))
			if doc := fetch(a); !strings.Contains(doc, `name="a1-hash" value="`+a1+`"`) {
				t.Fatalf("replica A serves a stale password after replica B's change (want a1-hash %s):\n%s", a1, doc)
			}
		})
	}
}

// dispatching is 1 when the server's log says it dispatches the outbox now.
func dispatching(t *testing.T, s *apptest.Server) int {
	state := 0
	for _, l := range s.Logs.Lines(t) {
		switch l["msg"] {
		case "outbox: dispatching on this replica":
			state = 1
		case "outbox: no longer dispatching on this replica":
			state = 0
		}
	}
	return state
}
