package routes_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// TestSystemEventsLimitsReached: callbacks routed by the fake through
// Switchboard's own dialplan, whose limit_execute (trunk max_channels) and
// limit (tenant max_concurrent_calls) the fake counts as mod_hash does,
// firing limit::usage after each increment. The call that takes a trunk's
// last channel delivers one trunk.capacity_reached to a system webhook; a
// call below the maximum delivers nothing, and the trunk filling again
// within the minute delivers nothing more. A tenant's last concurrent call
// delivers one tenant.limit_reached. limit::usage of a realm that is no
// trunk or tenant of ours (or a trunk we do not know) is ignored.
func TestSystemEventsLimitsReached(t *testing.T) {
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			s, fs := startWithFake(t, be, nil)
			e := setupCallEnv(t, s, fs)
			waitEvents(t, fs, 1)
			w := watchSystem(t, s, e.tenant, "trunk.capacity_reached", "tenant.limit_reached")
			trunk := routedCallEnv(t, e, map[string]any{"max_channels": 2})
			ofTrunk := fieldIs("trunk", trunk)

			// Usage from realms that are none of ours, and a full trunk we
			// do not know: nothing.
			fs.FireLimitUsage("nobody_"+e.tenant, "outbound", 3, 0, 3)
			fs.FireLimitUsage("trunk", "not_a_trunk", 1, 0, 1)
			fs.FireLimitUsage(e.tenant, "inbound", 2, 0, 2)

			call := func() string {
				t.Helper()
				r := e.Do(t, "POST", "/api/telephony/call", e.user, map[string]any{"from": testMobile, "to": "1002"}).Expect(t, 202).Map(t)
				id, _ := r["uuid"].(string)
				e.waitChannel(t, id)
				return id
			}
			first := call()
			wait.Until(t, 5*time.Second, "the first call counted on the trunk", func() bool { return fs.LimitUsage("trunk", trunk) == 1 })
			second := call()
			wait.Until(t, 5*time.Second, "the trunk full", func() bool { return fs.LimitUsage("trunk", trunk) == 2 })
			ev := w.expect(t, "trunk.capacity_reached", ofTrunk)
			if ev.Data["max_channels"] != float64(2) || ev.Data["usage"] != float64(2) || ev.Data["node"] != fs.Addr() ||
				fmt.Sprint(ev.Data["tenants"]) != "["+e.tenant+"]" || ev.Data["trunk_id"] == nil || ev.Data["at"] == nil {
				t.Fatalf("trunk.capacity_reached data %v", ev.Data)
			}

			// A place frees and is taken again within the minute: quiet.
			if err := fs.Hangup(second, ""); err != nil {
				t.Fatal(err)
			}
			wait.Until(t, 5*time.Second, "a trunk channel freed", func() bool { return fs.LimitUsage("trunk", trunk) == 1 })
			third := call()
			wait.Until(t, 5*time.Second, "the trunk full again", func() bool { return fs.LimitUsage("trunk", trunk) == 2 })

			// The tenant's concurrent calls: the dialplan counts from the
			// change on; one call of a limit of one reaches it.
			for _, id := range []string{first, third} {
				if err := fs.Hangup(id, ""); err != nil {
					t.Fatal(err)
				}
			}
			wait.Until(t, 5*time.Second, "the calls ended", func() bool { return fs.LimitUsage("trunk", trunk) == 0 })
			s.Do(t, "PUT", "/api/tenants/"+e.tenant, s.Key, map[string]any{"max_concurrent_calls": 1}).Expect(t, 200)
			call()
			ev = w.expect(t, "tenant.limit_reached", fieldIs("tenant", e.tenant))
			if ev.Data["limit"] != "max_concurrent_calls" || ev.Data["value"] != float64(1) || ev.Data["node"] != fs.Addr() || ev.Data["at"] == nil {
				t.Fatalf("tenant.limit_reached data %v", ev.Data)
			}

			time.Sleep(500 * time.Millisecond)
			if n := w.count(t, "trunk.capacity_reached", ofTrunk); n != 1 {
				t.Fatalf("trunk.capacity_reached delivered %d times, want 1", n)
			}
			if n := w.count(t, "tenant.limit_reached", fieldIs("tenant", e.tenant)); n != 1 {
				t.Fatalf("tenant.limit_reached delivered %d times, want 1", n)
			}
			for _, ignored := range []struct{ typ, k, v string }{
				{"trunk.capacity_reached", "trunk", "not_a_trunk"},
				{"tenant.limit_reached", "tenant", "nobody_" + e.tenant},
			} {
				if n := w.count(t, ignored.typ, fieldIs(ignored.k, ignored.v)); n != 0 {
					t.Fatalf("%s for %s delivered %d times", ignored.typ, ignored.v, n)
				}
			}
			if n := len(w.sys.requests()); n != 2 {
				t.Fatalf("%d system deliveries, want the 2 above", n)
			}
			w.noneToTenants(t)
		})
	}
}
