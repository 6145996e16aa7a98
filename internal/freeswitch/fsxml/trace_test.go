package fsxml_test

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

func TestRoutingTrace(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		did := randomDID()
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": did, "tenant": tenant}).Expect(t, 201)
		s.Do(t, "POST", base+"/schedules/", s.Key, map[string]any{
			"name": "office", "timezone": "Africa/Johannesburg",
			"open_periods": []map[string]any{{"days": []string{"mon", "tue", "wed", "thu", "fri"}, "start": "08:00", "end": "17:00"}},
		}).Expect(t, 201)
		sched := s.Do(t, "GET", base+"/schedules/?limit=1", s.Key, nil).Expect(t, 200)
		var scheds []map[string]any
		sched.JSON(t, &scheds)
		cond := s.Do(t, "POST", base+"/routing_conditions/", s.Key, map[string]any{
			"name": "hours", "kind": "schedule", "schedule_id": scheds[0]["id"],
			"match_destination":   map[string]any{"type": "extension", "target": "1000"},
			"nomatch_destination": map[string]any{"type": "voicemail", "target": "1000"},
		}).Expect(t, 201).Map(t)
		s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{
			"name": "main", "did": did, "routing_condition_id": cond["id"],
			"destination": map[string]any{"type": "extension", "target": "1000"},
		}).Expect(t, 201)

		type result struct {
			Context string         `json:"context"`
			Trace   map[string]any `json:"trace"`
			XML     string         `json:"xml"`
		}
		for _, tc := range []struct{ name, at, branch, action string }{
			{"open (Monday 10:00 SAST)", "2026-11-23T08:00:00Z", "match", `application="transfer" data="1000 XML ` + tenant + `"`},
			{"closed (Monday 20:00 SAST)", "2026-11-23T18:00:00Z", "nomatch", `application="voicemail" data="default sip.test 1000-` + tenant + `"`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var r result
				s.Do(t, "GET", "/api/routing/trace?did="+strings.TrimPrefix(did, "+")+"&from=0825550001&at="+tc.at, s.Key, nil).Expect(t, 200).JSON(t, &r)
				if r.Context != "public" || r.Trace["route_name"] != "main" || r.Trace["condition_name"] != "hours" || r.Trace["condition_branch"] != tc.branch {
					t.Errorf("trace %+v", r)
				}
				if r.Trace["schedule_id"] != scheds[0]["id"] {
					t.Errorf("schedule_id %v, want %v", r.Trace["schedule_id"], scheds[0]["id"])
				}
				if !strings.Contains(r.XML, tc.action) {
					t.Errorf("xml lacks %s:\n%s", tc.action, r.XML)
				}
			})
		}
		t.Run("tenant context", func(t *testing.T) {
			var r result
			s.Do(t, "GET", base+"/routing/trace?from=1000&to=1000", s.Key, nil).Expect(t, 200).JSON(t, &r)
			if r.Context != tenant || r.Trace["match"] != "extension" || !strings.Contains(r.XML, `data="user/1000-`+tenant+`@sip.test"`) {
				t.Errorf("trace %+v", r)
			}
			s.Do(t, "GET", base+"/routing/trace?from=1000&to=1000&at=yesterday", s.Key, nil).Expect(t, 400)
		})
		t.Run("scope", func(t *testing.T) {
			other := s.Tenant(t, "oth")
			key := s.KeyFor(t, map[string]any{"tenant": other, "permissions": []string{"config.read"}})
			if r := s.Do(t, "GET", base+"/routing/trace?from=1000&to=1000", key, nil).Expect(t, 403); r.Code(t) != "forbidden" {
				t.Errorf("code %q", r.Code(t))
			}
			s.Do(t, "GET", "/api/tenants/"+other+"/routing/trace?from=1000&to=1000", key, nil).Expect(t, 200)
			s.Do(t, "GET", "/api/routing/trace?did="+did, key, nil).Expect(t, 403)
			s.Do(t, "GET", "/api/routing/trace?did="+did, "", nil).Expect(t, 401)
		})
	})
}

// TestRoutingTraceParking: the park code, a slot after it, a slot BLF key's
// park+<slot> and the timeout's park-return-<ext> each trace to the tenant's
// own valet lot (another tenant's names its own), and the return reaches the
// extension, read for the render although the number only contains it.
func TestRoutingTraceParking(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		other := s.Tenant(t, "prk")
		type result struct {
			Trace map[string]any `json:"trace"`
			XML   string         `json:"xml"`
		}
		for _, tc := range []struct{ tenant, to, match, action string }{
			{tenant, "%2A70", "feature", `application="valet_park" data="` + tenant + `_lot@sip.test auto in 1 20"`},
			{tenant, "%2A705", "feature", `application="valet_park" data="` + tenant + `_lot@sip.test 5"`},
			{tenant, "park%2B20", "feature", `application="valet_park" data="` + tenant + `_lot@sip.test 20"`},
			{tenant, "park-return-1000", "park_return", `application="transfer" data="1000 XML ` + tenant + `"`},
			{other, "%2A705", "feature", `application="valet_park" data="` + other + `_lot@sip.test 5"`},
		} {
			var r result
			s.Do(t, "GET", "/api/tenants/"+tc.tenant+"/routing/trace?from=1000&to="+tc.to, s.Key, nil).Expect(t, 200).JSON(t, &r)
			if r.Trace["match"] != tc.match || !strings.Contains(r.XML, tc.action) {
				t.Errorf("%s to %s: trace %+v, xml lacks %s:\n%s", tc.tenant, tc.to, r.Trace, tc.action, r.XML)
			}
		}
		var r result
		s.Do(t, "GET", "/api/tenants/"+other+"/routing/trace?from=1000&to=park-return-1000", s.Key, nil).Expect(t, 200).JSON(t, &r)
		if r.Trace["match"] != "" || strings.Contains(r.XML, "transfer") {
			t.Errorf("another tenant returned a parked call to %s's extension: %+v\n%s", tenant, r.Trace, r.XML)
		}
	})
}
