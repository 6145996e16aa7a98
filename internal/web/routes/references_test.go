package routes_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// refEnv is a tenant with extension 1000, a DID and a trunk.
type refEnv struct {
	*apptest.Server
	tenant, base string
	did, trunk   string
	didID        any
	trunkID      any
}

func newRefEnv(t *testing.T, s *apptest.Server) *refEnv {
	t.Helper()
	e := &refEnv{Server: s, tenant: s.Tenant(t, "refs")}
	e.base = "/api/tenants/" + e.tenant
	e.Do(t, "POST", e.base+"/extensions/", s.Key, map[string]any{"name": "1000", "first_name": "Ann"}).Expect(t, 201)
	e.did = fmt.Sprintf("+2711%07d", rand.IntN(10_000_000)) // other tests share the CI database
	e.didID = e.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": e.did, "tenant": e.tenant}).Expect(t, 201).Map(t)["id"]
	e.trunk = strings.ReplaceAll(storetest.Name("tr"), "-", "_")
	e.trunkID = e.Do(t, "POST", "/api/sip_trunks/", s.Key, map[string]any{"name": e.trunk, "host": "sip.example.net"}).Expect(t, 201).Map(t)["id"]
	return e
}

// conflict asserts a 409 whose message names every want.
func conflict(t *testing.T, r *apptest.Response, want ...string) {
	t.Helper()
	r.Expect(t, 409)
	msg, _ := r.Map(t)["error"].(string)
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Fatalf("409 %q does not name %q", msg, w)
		}
	}
}

// fieldError asserts a 400 whose fields name field with a message holding want.
func fieldError(t *testing.T, r *apptest.Response, field, want string) {
	t.Helper()
	r.Expect(t, 400)
	fields, _ := r.Map(t)["fields"].(map[string]any)
	if msg, _ := fields[field].(string); !strings.Contains(msg, want) {
		t.Fatalf("400 fields %v: want %s to mention %q", fields, field, want)
	}
}

// TestReferencedObjectsCannotBeDeleted: each object still used answers
// 409 naming its referrers, and is still there; once the referrer goes,
// the delete succeeds.
func TestReferencedObjectsCannotBeDeleted(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		e := newRefEnv(t, s)
		route := e.Do(t, "POST", e.base+"/inbound_routes/", s.Key, map[string]any{
			"name": "main", "did": e.did, "destination": map[string]any{"type": "extension", "target": "1000"},
		}).Expect(t, 201).Map(t)
		out := e.Do(t, "POST", e.base+"/outbound_routes/", s.Key, map[string]any{
			"name": "out", "patterns": []any{map[string]any{"match": "0XXXXXXXXX"}}, "trunks": []any{e.trunk},
		}).Expect(t, 201).Map(t)
		e.Do(t, "POST", e.base+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
		group := e.Do(t, "POST", e.base+"/hunt_groups/", s.Key, map[string]any{
			"name": "sales", "number": "600", "members": []any{map[string]any{"type": "extension", "target": "1001"}},
		}).Expect(t, 201).Map(t)
		queue := e.Do(t, "POST", e.base+"/queues/", s.Key, map[string]any{"name": "support", "number": "601"}).Expect(t, 201).Map(t)
		e.Do(t, "POST", e.base+"/agents/", s.Key, map[string]any{
			"name": "Agent", "agent_number": "11", "extension": "1000", "queues": []any{map[string]any{"queue_id": queue["id"]}},
		}).Expect(t, 201)

		// The DID used by the inbound route.
		conflict(t, e.Do(t, "DELETE", fmt.Sprintf("/api/dids/%v", e.didID), s.Key, nil), "inbound route main (did)")
		// The trunk used by the outbound route.
		conflict(t, e.Do(t, "DELETE", fmt.Sprintf("/api/sip_trunks/%v", e.trunkID), s.Key, nil), "outbound route out (trunks)")
		// The extension in the hunt group.
		conflict(t, e.Do(t, "DELETE", e.base+"/extensions/1001", s.Key, nil), "hunt group sales (members)")
		// The extension the route sends calls to (and the agent rings).
		conflict(t, e.Do(t, "DELETE", e.base+"/extensions/1000", s.Key, nil), "inbound route main (destination)", "agent Agent (extension)")
		// The queue an agent serves.
		conflict(t, e.Do(t, "DELETE", fmt.Sprintf("%s/queues/%v", e.base, queue["id"]), s.Key, nil), "agent Agent (queues)")
		for _, p := range []string{fmt.Sprintf("/api/dids/%v", e.didID), fmt.Sprintf("/api/sip_trunks/%v", e.trunkID), e.base + "/extensions/1001", fmt.Sprintf("%s/queues/%v", e.base, queue["id"])} {
			e.Do(t, "GET", p, s.Key, nil).Expect(t, 200)
		}

		// Referrers gone: the deletes go through.
		e.Do(t, "DELETE", fmt.Sprintf("%s/inbound_routes/%v", e.base, route["id"]), s.Key, nil).Expect(t, 204)
		e.Do(t, "DELETE", fmt.Sprintf("/api/dids/%v", e.didID), s.Key, nil).Expect(t, 204)
		e.Do(t, "DELETE", fmt.Sprintf("%s/outbound_routes/%v", e.base, out["id"]), s.Key, nil).Expect(t, 204)
		e.Do(t, "DELETE", fmt.Sprintf("/api/sip_trunks/%v", e.trunkID), s.Key, nil).Expect(t, 204)
		e.Do(t, "PUT", fmt.Sprintf("%s/hunt_groups/%v", e.base, group["id"]), s.Key, map[string]any{
			"members": []any{map[string]any{"type": "external", "target": "+27825550001"}},
		}).Expect(t, 200)
		e.Do(t, "DELETE", e.base+"/extensions/1001", s.Key, nil).Expect(t, 204)
	})
}

// TestMissingReferencesRefused: a hunt group with member 9999 and an IVR
// option to 4444 (neither exists) answer 400 naming the field and the
// missing target, and nothing is created.
func TestMissingReferencesRefused(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		e := newRefEnv(t, s)
		fieldError(t, e.Do(t, "POST", e.base+"/hunt_groups/", s.Key, map[string]any{
			"name": "sales", "number": "600", "members": []any{
				map[string]any{"type": "external", "target": "+27825550001"},
				map[string]any{"type": "extension", "target": "9999"},
			},
		}), "members", "members[1].target: extension 9999 does not exist")
		prompt := e.Do(t, "POST", e.base+"/voice_prompts/", s.Key, map[string]any{"name": "hello"}).Expect(t, 201).Map(t)
		fieldError(t, e.Do(t, "POST", e.base+"/ivr_menus/", s.Key, map[string]any{
			"name": "main", "number": "700", "greeting_long_prompt_id": prompt["id"],
			"options": []any{map[string]any{"digits": "1", "destination": map[string]any{"type": "extension", "target": "4444"}}},
		}), "options", "options[0].destination: extension 4444 does not exist")
		fieldError(t, e.Do(t, "POST", e.base+"/outbound_routes/", s.Key, map[string]any{
			"name": "out", "patterns": []any{map[string]any{"match": "0XXXXXXXXX"}}, "trunks": []any{"no_such_trunk"},
		}), "trunks", "SIP trunk no_such_trunk does not exist")
		fieldError(t, e.Do(t, "POST", e.base+"/pickup_groups/", s.Key, map[string]any{"name": "floor", "members": []any{"1000", "1234"}}),
			"members", "members[1]: extension 1234 does not exist")
		for _, p := range []string{"/hunt_groups/", "/ivr_menus/", "/outbound_routes/", "/pickup_groups/"} {
			if n := e.Do(t, "GET", e.base+p, s.Key, nil).Expect(t, 200).Header.Get("X-Total-Count"); n != "0" {
				t.Errorf("%s: %s objects after refused creates", p, n)
			}
		}
	})
}

// TestRenamingAReferencedKeyIsRefused: renaming extension 1000 to 1009
// while an inbound route sends calls to it answers 409 naming the route;
// the extension keeps its number and the route still reaches it. Renaming
// an extension nobody refers to works.
func TestRenamingAReferencedKeyIsRefused(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		e := newRefEnv(t, s)
		route := e.Do(t, "POST", e.base+"/inbound_routes/", s.Key, map[string]any{
			"name": "main", "did": e.did, "destination": map[string]any{"type": "extension", "target": "1000"},
		}).Expect(t, 201).Map(t)
		conflict(t, e.Do(t, "PUT", e.base+"/extensions/1000", s.Key, map[string]any{"name": "1009"}), "cannot change name", "inbound route main (destination)")
		e.Do(t, "GET", e.base+"/extensions/1000", s.Key, nil).Expect(t, 200)
		e.Do(t, "GET", e.base+"/extensions/1009", s.Key, nil).Expect(t, 404)
		got := e.Do(t, "GET", fmt.Sprintf("%s/inbound_routes/%v", e.base, route["id"]), s.Key, nil).Expect(t, 200).Map(t)
		if d := got["destination"].(map[string]any); d["target"] != "1000" {
			t.Fatalf("route destination %v", d)
		}
		// Another field of the referenced extension changes freely, and an
		// unreferenced extension can be renamed.
		e.Do(t, "PUT", e.base+"/extensions/1000", s.Key, map[string]any{"first_name": "Bea"}).Expect(t, 200)
		e.Do(t, "POST", e.base+"/extensions/", s.Key, map[string]any{"name": "1002"}).Expect(t, 201)
		e.Do(t, "PUT", e.base+"/extensions/1002", s.Key, map[string]any{"name": "1003"}).Expect(t, 200)
		// Moving the route away frees the old number.
		e.Do(t, "PUT", fmt.Sprintf("%s/inbound_routes/%v", e.base, route["id"]), s.Key, map[string]any{"destination": map[string]any{"type": "extension", "target": "1003"}}).Expect(t, 200)
		e.Do(t, "PUT", e.base+"/extensions/1000", s.Key, map[string]any{"name": "1009"}).Expect(t, 200)
	})
}

// TestEveryRenderedDestinationAccepted: every destination type is now
// rendered, special endpoints included, so each is accepted at the top
// level and nested (an IVR option), as long as its target exists in the
// tenant; a special_endpoint destination naming another kind of number is
// refused, and an endpoint still referenced cannot be deleted.
func TestEveryRenderedDestinationAccepted(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		e := newRefEnv(t, s)
		e.Do(t, "POST", e.base+"/queues/", s.Key, map[string]any{"name": "support", "number": "601"}).Expect(t, 201)
		fieldError(t, e.Do(t, "POST", e.base+"/inbound_routes/", s.Key, map[string]any{
			"name": "r-endpoint", "enabled": false, "destination": map[string]any{"type": "special_endpoint", "target": "601"},
		}), "destination", "")
		ep := e.Do(t, "POST", e.base+"/special_endpoints/", s.Key, map[string]any{"name": "echo", "number": "620",
			"kind": "application", "application": "echo_test"}).Expect(t, 201).Map(t)
		prompt := e.Do(t, "POST", e.base+"/voice_prompts/", s.Key, map[string]any{"name": "hello"}).Expect(t, 201).Map(t)
		e.Do(t, "POST", e.base+"/ivr_menus/", s.Key, map[string]any{
			"name": "endpoints", "number": "701", "greeting_long_prompt_id": prompt["id"],
			"options": []any{map[string]any{"digits": "1", "destination": map[string]any{"type": "special_endpoint", "target": "620"}}},
		}).Expect(t, 201)
		e.Do(t, "POST", e.base+"/hunt_groups/", s.Key, map[string]any{"name": "sales", "number": "610",
			"members": []any{map[string]any{"type": "extension", "target": "1000"}}}).Expect(t, 201)
		e.Do(t, "POST", e.base+"/conference_rooms/", s.Key, map[string]any{"name": "board", "number": "611"}).Expect(t, 201)
		e.Do(t, "POST", e.base+"/ivr_menus/", s.Key, map[string]any{
			"name": "main", "number": "700", "greeting_long_prompt_id": prompt["id"],
			"options": []any{map[string]any{"digits": "1", "destination": map[string]any{"type": "hunt_group", "target": "610"}}},
		}).Expect(t, 201)
		e.Do(t, "POST", e.base+"/special_mailboxes/", s.Key, map[string]any{"name": "after hours", "number": "612"}).Expect(t, 201)
		e.Do(t, "PUT", e.base+"/company_directory_settings", s.Key, map[string]any{"number": "613"}).Expect(t, 200)
		for _, d := range []map[string]any{{"type": "special_endpoint", "target": "620"}, {"type": "special_mailbox", "target": "612"}, {"type": "directory", "target": "613"}, {"type": "extension", "target": "1000"}, {"type": "external", "target": "+27825550002"}, {"type": "hangup", "target": ""}, {"type": "hunt_group", "target": "610"}, {"type": "conference", "target": "611"}, {"type": "ivr", "target": "700"}, {"type": "queue", "target": "601"}} {
			e.Do(t, "POST", e.base+"/inbound_routes/", s.Key, map[string]any{"name": "ok-" + d["type"].(string), "enabled": false, "destination": d}).Expect(t, 201)
		}
		e.Do(t, "DELETE", fmt.Sprintf("%s/special_endpoints/%v", e.base, ep["id"]), s.Key, nil).Expect(t, 409)
	})
}
