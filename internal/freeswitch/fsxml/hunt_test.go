package fsxml_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestHuntGroupReachesFreeSWITCH: a hunt group created over the API is
// served in the tenant context (a call to its number bridges its members
// with their own timeouts), an edit shows on the next fetch, an inbound
// route can send a DID to it, and the routing trace names it.
func TestHuntGroupReachesFreeSWITCH(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
		group := s.Do(t, "POST", base+"/hunt_groups/", s.Key, map[string]any{
			"name": "sales", "number": "610", "strategy": "sequential",
			"members": []any{
				map[string]any{"type": "extension", "target": "1000", "timeout_seconds": 15},
				map[string]any{"type": "extension", "target": "1001", "delay_seconds": 5},
			},
			"timeout_destination": map[string]any{"type": "voicemail", "target": "1000"},
		}).Expect(t, 201).Map(t)
		domain := "@sip.test"
		wantBridge := "bridge [leg_timeout=15]user/1000-" + tenant + domain + "|[leg_timeout=20,leg_delay_start=5]user/1001-" + tenant + domain
		acts := fetchXML(t, s, callBody(t, tenant, "610", "1000")).actions()
		if !slices.Contains(acts, wantBridge) || !slices.Contains(acts, "voicemail default sip.test 1000-"+tenant) {
			t.Fatalf("actions %q lack %q and the timeout voicemail", acts, wantBridge)
		}

		// Ring all after an edit: the next fetch says so.
		s.Do(t, "PUT", base+"/hunt_groups/"+fmt.Sprint(group["id"]), s.Key, map[string]any{"strategy": "simultaneous"}).Expect(t, 200)
		acts = fetchXML(t, s, callBody(t, tenant, "610", "1000")).actions()
		if want := strings.Replace(wantBridge, "|", ",", 1); !slices.Contains(acts, want) {
			t.Errorf("after the edit, actions %q lack %q", acts, want)
		}

		// A DID routed to the group transfers to its number, which the
		// tenant context serves.
		did := randomDID()
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": did, "tenant": tenant}).Expect(t, 201)
		s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{
			"name": "sales line", "did": did, "destination": map[string]any{"type": "hunt_group", "target": "610"},
		}).Expect(t, 201)
		acts = fetchXML(t, s, callBody(t, "public", strings.TrimPrefix(did, "+"), "0825550001")).actions()
		if !slices.Contains(acts, "transfer 610 XML "+tenant) {
			t.Errorf("public actions %q lack the transfer to the group", acts)
		}

		tr := s.Do(t, "GET", base+"/routing/trace?from=1000&to=610", s.Key, nil).Expect(t, 200).Map(t)
		trace, _ := tr["trace"].(map[string]any)
		if trace["match"] != "hunt_group" {
			t.Errorf("trace %v does not name the hunt group", tr)
		}

		// Disabled: no match.
		s.Do(t, "PUT", base+"/hunt_groups/"+fmt.Sprint(group["id"]), s.Key, map[string]any{"enabled": false}).Expect(t, 200)
		if doc := fetchXML(t, s, callBody(t, tenant, "610", "1000")); !doc.notFound() {
			t.Errorf("disabled group still served: %s", doc.raw)
		}
	})
}

// TestHuntGroupTurns: a round-robin group starts each call at the next
// member, counted in Redis (so a second replica continues the rotation,
// and the fetches are never answered from the document cache); the
// routing trace shows the next call's order without moving it. A random
// group rings the same members one at a time in orders that change
// between calls.
func TestHuntGroupTurns(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		for _, n := range []string{"1001", "1002"} {
			s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": n}).Expect(t, 201)
		}
		members := []any{}
		for _, n := range []string{"1000", "1001", "1002"} {
			members = append(members, map[string]any{"type": "extension", "target": n})
		}
		s.Do(t, "POST", base+"/hunt_groups/", s.Key, map[string]any{"name": "rr", "number": "620", "strategy": "round_robin", "members": members}).Expect(t, 201)
		s.Do(t, "POST", base+"/hunt_groups/", s.Key, map[string]any{"name": "rnd", "number": "621", "strategy": "random", "members": members}).Expect(t, 201)
		first := func(srv *apptest.Server, number string) string {
			t.Helper()
			for _, a := range fetchXML(t, srv, callBody(t, tenant, number, "1000")).actions() {
				if rest, ok := strings.CutPrefix(a, "bridge "); ok {
					if legs := strings.Split(rest, "|"); len(legs) == 3 {
						return strings.TrimSuffix(strings.SplitN(legs[0], "user/", 2)[1], "-"+tenant+"@sip.test")
					}
					t.Fatalf("bridge %q", rest)
				}
			}
			t.Fatalf("no bridge for %s", number)
			return ""
		}
		traceFirst := func() string {
			tr := s.Do(t, "GET", base+"/routing/trace?from=1000&to=620", s.Key, nil).Expect(t, 200).Map(t)
			xml, _ := tr["xml"].(string)
			i := strings.Index(xml, "user/")
			if i < 0 {
				t.Fatalf("trace %v", tr)
			}
			return xml[i+5 : i+9]
		}
		if got := traceFirst(); got != "1000" {
			t.Fatalf("trace before any call starts at %s", got)
		}
		replica := s.Replica(t)
		var got []string
		for i := 0; i < 5; i++ {
			srv := s
			if i%2 == 1 {
				srv = replica
			}
			got = append(got, first(srv, "620"))
		}
		if want := []string{"1000", "1001", "1002", "1000", "1001"}; !slices.Equal(got, want) {
			t.Fatalf("round-robin calls start at %q, want %q", got, want)
		}
		if a, b := traceFirst(), traceFirst(); a != "1002" || b != "1002" {
			t.Fatalf("trace shows %s then %s, want the next call's 1002 twice", a, b)
		}
		seen := map[string]bool{}
		for i := 0; i < 40 && len(seen) < 3; i++ {
			seen[first(s, "621")] = true
		}
		if len(seen) != 3 {
			t.Fatalf("random group: first members over 40 calls %v", seen)
		}
	})
}

// TestHuntTurnsKeepToTheirInstallation: two installations on one Redis,
// each with tenant "acme" and its round-robin group 1 (their databases
// number alike). Calls on one never move the other's turn.
func TestHuntTurnsKeepToTheirInstallation(t *testing.T) {
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr() + "/0"
	var servers []*apptest.Server
	for range 2 {
		s := apptest.Start(t, apptest.Env{Name: "sqlite", DB: storetest.SQLite(t), RedisURL: url}, nil)
		s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": "acme", "callerid": "+27110000000"}).Expect(t, 201)
		members := []any{}
		for _, n := range []string{"1000", "1001"} {
			s.Do(t, "POST", "/api/tenants/acme/extensions/", s.Key, map[string]any{"name": n}).Expect(t, 201)
			members = append(members, map[string]any{"type": "extension", "target": n})
		}
		g := s.Do(t, "POST", "/api/tenants/acme/hunt_groups/", s.Key, map[string]any{"name": "rr", "number": "620", "strategy": "round_robin", "members": members}).Expect(t, 201).Map(t)
		if fmt.Sprint(g["id"]) != "1" {
			t.Skipf("the group's id is %v: the installations do not number alike, so this cannot show a shared turn", g["id"])
		}
		servers = append(servers, s)
	}
	firstMember := func(s *apptest.Server) string {
		t.Helper()
		for _, a := range fetchXML(t, s, callBody(t, "acme", "620", "1000")).actions() {
			if rest, ok := strings.CutPrefix(a, "bridge "); ok {
				return strings.TrimSuffix(strings.SplitN(strings.Split(rest, "|")[0], "user/", 2)[1], "-acme@sip.test")
			}
		}
		t.Fatal("no bridge")
		return ""
	}
	a, b := servers[0], servers[1]
	if got := []string{firstMember(a), firstMember(a), firstMember(b), firstMember(a)}; !slices.Equal(got, []string{"1000", "1001", "1000", "1000"}) {
		t.Fatalf("calls start at %q on a, a, b, a; want 1000, 1001 on a, b's own first turn 1000, then a's third 1000", got)
	}
}
