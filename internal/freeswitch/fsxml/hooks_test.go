package fsxml_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// expectField asserts a 400 validation error naming field.
func expectField(t *testing.T, r *apptest.Response, field string) {
	t.Helper()
	r.Expect(t, 400)
	fields, _ := r.Map(t)["fields"].(map[string]any)
	if _, ok := fields[field]; !ok {
		t.Errorf("want an error on %s, got %s", field, r.Body)
	}
}

func TestRoutingValidation(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		other := s.Tenant(t, "oth")
		base := "/api/tenants/" + tenant
		ext := func(target string) map[string]any { return map[string]any{"type": "extension", "target": target} }
		did, otherDID := randomDID(), randomDID()
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": did, "tenant": tenant}).Expect(t, 201)
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": otherDID, "tenant": other}).Expect(t, 201)

		t.Run("inbound route", func(t *testing.T) {
			expectField(t, s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{"name": "a", "did": otherDID, "destination": ext("1000")}), "did")
			expectField(t, s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{"name": "b", "did": did, "destination": ext("1999")}), "destination")
			expectField(t, s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{"name": "c", "did": did, "destination": ext("1000"),
				"night_destination": map[string]any{"type": "routing_condition", "target": "777"}}), "night_destination")
			s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{"name": "d", "did": did, "destination": ext("1000")}).Expect(t, 201)
			expectField(t, s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{"name": "e", "did": did, "destination": ext("1000")}), "did")
			// A caller-specific route on the same DID is fine; so is a disabled duplicate.
			s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{"name": "f", "did": did, "caller_match": "+2782", "destination": ext("1000")}).Expect(t, 201)
			s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{"name": "g", "did": did, "enabled": false, "destination": ext("1000")}).Expect(t, 201)
		})
		t.Run("extension still referenced", func(t *testing.T) {
			r := s.Do(t, "DELETE", base+"/extensions/1000", s.Key, nil).Expect(t, 409)
			if body := string(r.Body); !strings.Contains(body, "inbound route d") {
				t.Errorf("409 should name the referrers: %s", body)
			}
			s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
			s.Do(t, "DELETE", base+"/extensions/1001", s.Key, nil).Expect(t, 204)
		})
		t.Run("routing condition", func(t *testing.T) {
			dests := map[string]any{"match_destination": ext("1000"), "nomatch_destination": map[string]any{"type": "hangup", "target": ""}}
			for kind, field := range map[string]string{"schedule": "schedule_id", "office_mode": "office_modes", "caller": "caller_prefixes"} {
				in := map[string]any{"name": "c-" + kind, "kind": kind}
				for k, v := range dests {
					in[k] = v
				}
				expectField(t, s.Do(t, "POST", base+"/routing_conditions/", s.Key, in), field)
			}
			expectField(t, s.Do(t, "POST", base+"/routing_conditions/", s.Key, map[string]any{"name": "x", "kind": "manual",
				"match_destination": ext("4242"), "nomatch_destination": ext("1000")}), "match_destination")
		})
		t.Run("outbound route", func(t *testing.T) {
			mine, theirs := "m_"+strings.ToLower(tenant), "t_"+strings.ToLower(tenant)
			s.Do(t, "POST", "/api/sip_trunks/", s.Key, map[string]any{"name": mine, "host": "carrier.example", "tenants": []string{tenant}}).Expect(t, 201)
			s.Do(t, "POST", "/api/sip_trunks/", s.Key, map[string]any{"name": theirs, "host": "carrier.example", "tenants": []string{other}}).Expect(t, 201)
			pats := []map[string]any{{"match": "0XXXXXXXXX"}}
			expectField(t, s.Do(t, "POST", base+"/outbound_routes/", s.Key, map[string]any{"name": "o1", "patterns": pats, "trunks": []string{theirs}}), "trunks")
			expectField(t, s.Do(t, "POST", base+"/outbound_routes/", s.Key, map[string]any{"name": "o2", "patterns": pats, "trunks": []string{"no_such_trunk"}}), "trunks")
			expectField(t, s.Do(t, "POST", base+"/outbound_routes/", s.Key, map[string]any{"name": "o3", "patterns": pats, "trunks": []string{mine}, "callerid_policy": "fixed"}), "callerid_fixed")
			s.Do(t, "POST", base+"/outbound_routes/", s.Key, map[string]any{"name": "o4", "patterns": pats, "trunks": []string{mine}}).Expect(t, 201)
		})
		t.Run("DID default route of another tenant", func(t *testing.T) {
			route := s.Do(t, "POST", "/api/tenants/"+other+"/inbound_routes/", s.Key, map[string]any{"name": "r", "did": otherDID, "destination": map[string]any{"type": "hangup", "target": ""}}).Expect(t, 201).Map(t)
			expectField(t, s.Do(t, "PUT", "/api/dids/"+fmt.Sprint(didID(t, s, did)), s.Key, map[string]any{"inbound_route_id": route["id"]}), "inbound_route_id")
			s.Do(t, "PUT", "/api/dids/"+fmt.Sprint(didID(t, s, otherDID)), s.Key, map[string]any{"inbound_route_id": route["id"]}).Expect(t, 200)
		})
		t.Run("one default emergency location", func(t *testing.T) {
			s.Do(t, "POST", base+"/emergency_locations/", s.Key, map[string]any{
				"name": "Branch", "address_line1": "2 Side St", "country": "ZA", "emergency_callerid": "+27115550888", "is_default": true,
			}).Expect(t, 201)
			var locs []map[string]any
			s.Do(t, "GET", base+"/emergency_locations/", s.Key, nil).Expect(t, 200).JSON(t, &locs)
			var defaults []any
			for _, l := range locs {
				if l["is_default"] == true {
					defaults = append(defaults, l["name"])
				}
			}
			if len(defaults) != 1 || defaults[0] != "Branch" {
				t.Errorf("defaults %v, want only Branch", defaults)
			}
		})
		t.Run("office mode until", func(t *testing.T) {
			expectField(t, s.Do(t, "PUT", base+"/office_mode", s.Key, map[string]any{"mode": "auto", "until": "2030-01-01T00:00:00Z"}), "until")
			s.Do(t, "PUT", base+"/office_mode", s.Key, map[string]any{"mode": "night", "until": "2030-01-01T00:00:00Z"}).Expect(t, 200)
			if got := s.Do(t, "PUT", base+"/office_mode", s.Key, map[string]any{"mode": "auto"}).Expect(t, 200).Map(t); got["until"] != nil {
				t.Errorf("back to auto keeps until %v", got["until"])
			}
		})
		t.Run("clone", func(t *testing.T) {
			s.Do(t, "PUT", base+"/office_mode", s.Key, map[string]any{"mode": "night", "until": "2030-01-01T00:00:00Z"}).Expect(t, 200)
			clone := strings.ToLower(tenant) + "c"
			s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": clone, "tenant_to_clone": tenant, "tenant_routes": "1", "tenant_schedules": "1"}).Expect(t, 201)
			var routes []map[string]any
			s.Do(t, "GET", "/api/tenants/"+clone+"/inbound_routes/", s.Key, nil).Expect(t, 200).JSON(t, &routes)
			if len(routes) == 0 {
				t.Fatal("no routes cloned")
			}
			for _, r := range routes {
				if r["enabled"] != false || r["did"] != nil {
					t.Errorf("cloned route %v: enabled %v did %v", r["name"], r["enabled"], r["did"])
				}
			}
			om := s.Do(t, "GET", "/api/tenants/"+clone+"/office_mode", s.Key, nil).Expect(t, 200).Map(t)
			if om["mode"] != "auto" || om["until"] != nil {
				t.Errorf("cloned office mode %v", om)
			}
		})
	})
}

// didID finds a DID's id by number.
func didID(t *testing.T, s *apptest.Server, number string) any {
	t.Helper()
	var dids []map[string]any
	s.Do(t, "GET", "/api/dids/?limit=1000", s.Key, nil).Expect(t, 200).JSON(t, &dids)
	for _, d := range dids {
		if d["number"] == number {
			return d["id"]
		}
	}
	t.Fatalf("DID %s not listed", number)
	return nil
}
