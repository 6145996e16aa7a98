package fsxml_test

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// TestSpecialEndpointTraces: special endpoints written through the API are
// served at their numbers in the tenant context (each kind as the field
// guide says), reached as a destination from an inbound route and a
// routing condition, and a sip_uri endpoint stops being served when the
// tenant withdraws its opt-in.
func TestSpecialEndpointTraces(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		s.Do(t, "PUT", "/api/tenants/"+tenant, s.Key, map[string]any{"allow_sip_uri_endpoints": true}).Expect(t, 200)
		for _, ep := range []map[string]any{
			{"name": "mobile", "number": "950", "kind": "external", "external_number": "0825550199", "callerid_policy": "tenant", "ring_seconds": 45},
			{"name": "bot", "number": "951", "kind": "sip_uri", "sip_uri": "sip:bot@voice.example.com"},
			{"name": "echo", "number": "952", "kind": "application", "application": "echo_test"},
			{"name": "clock", "number": "956", "kind": "application", "application": "speaking_clock"},
			{"name": "fax", "number": "957", "kind": "application", "application": "fax_to_email", "fax_email": "fax@example.com"},
			{"name": "off", "number": "958", "kind": "application", "application": "echo_test", "enabled": false},
		} {
			s.Do(t, "POST", base+"/special_endpoints/", s.Key, ep).Expect(t, 201)
		}
		type result struct {
			Trace map[string]any `json:"trace"`
			XML   string         `json:"xml"`
		}
		trace := func(to string) result {
			t.Helper()
			var r result
			s.Do(t, "GET", base+"/routing/trace?from=1000&to="+to, s.Key, nil).Expect(t, 200).JSON(t, &r)
			return r
		}
		for _, tc := range []struct{ number, want string }{
			{"950", `application="transfer" data="0825550199 XML ` + tenant + `"`},
			{"950", `data="call_timeout=45"`},
			{"951", `application="bridge" data="sofia/external/sip:bot@voice.example.com"`},
			{"952", `application="echo"`},
			{"956", `application="say"`},
			{"957", `application="rxfax"`},
		} {
			r := trace(tc.number)
			if r.Trace["match"] != "special_endpoint" || !strings.Contains(r.XML, tc.want) {
				t.Errorf("%s: want %s, trace %v\n%s", tc.number, tc.want, r.Trace, r.XML)
			}
		}
		if r := trace("958"); r.Trace["match"] != "" {
			t.Errorf("disabled endpoint served: %v", r.Trace)
		}

		// Reached as a destination: an inbound route and a routing condition.
		did := randomDID()
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": did, "tenant": tenant}).Expect(t, 201)
		s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{
			"name": "echo", "did": did, "destination": map[string]any{"type": "special_endpoint", "target": "952"},
		}).Expect(t, 201)
		var pub result
		s.Do(t, "GET", "/api/routing/trace?did="+strings.TrimPrefix(did, "+")+"&from=0825550001", s.Key, nil).Expect(t, 200).JSON(t, &pub)
		if !strings.Contains(pub.XML, `application="transfer" data="952 XML `+tenant+`"`) {
			t.Errorf("inbound route to the endpoint:\n%s", pub.XML)
		}
		s.Do(t, "POST", base+"/routing_conditions/", s.Key, map[string]any{
			"name": "always", "number": "960", "kind": "manual", "override": "force_match",
			"match_destination":   map[string]any{"type": "special_endpoint", "target": "956"},
			"nomatch_destination": map[string]any{"type": "hangup", "target": ""},
		}).Expect(t, 201)
		if r := trace("960"); !strings.Contains(r.XML, `application="transfer" data="956 XML `+tenant+`"`) {
			t.Errorf("routing condition to the endpoint: %v\n%s", r.Trace, r.XML)
		}

		// The tenant withdraws its opt-in: the SIP URI is no longer dialled.
		s.Do(t, "PUT", "/api/tenants/"+tenant, s.Key, map[string]any{"allow_sip_uri_endpoints": false}).Expect(t, 200)
		if r := trace("951"); strings.Contains(r.XML, "sofia/external") || r.Trace["match"] != "" {
			t.Errorf("sip_uri endpoint still bridged without the opt-in: %v\n%s", r.Trace, r.XML)
		}
	})
}
