package fsxml_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// randomDID returns an E.164 number unlikely to clash across test runs
// sharing a database.
func randomDID() string { return fmt.Sprintf("+2787%07d", rand.IntN(10000000)) }

// callBody is capture 011 (a real INVITE being routed) rewritten for a
// context, dialled number and caller.
func callBody(t *testing.T, context, dest, caller string, extra ...string) []byte {
	t.Helper()
	kv := []string{
		"Caller-Context", context, "Hunt-Context", context, "variable_user_context", context,
		"Caller-Destination-Number", dest, "Hunt-Destination-Number", dest,
		"Caller-Caller-ID-Number", caller, "Hunt-Caller-ID-Number", caller,
	}
	return fakefs.FormWith(capture(t, "011"), append(kv, extra...)...)
}

func TestPublicDIDDestinations(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		did := randomDID()
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": did, "tenant": tenant}).Expect(t, 201)
		s.Do(t, "POST", base+"/routing_conditions/", s.Key, map[string]any{
			"name": "always", "number": "700", "kind": "manual", "override": "force_match",
			"match_destination":   map[string]any{"type": "extension", "target": "1000"},
			"nomatch_destination": map[string]any{"type": "hangup", "target": ""},
		}).Expect(t, 201)
		route := s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{
			"name": "main", "did": did, "destination": map[string]any{"type": "extension", "target": "1000"},
		}).Expect(t, 201).Map(t)
		routePath := fmt.Sprintf("%s/inbound_routes/%v", base, route["id"])
		digits := strings.TrimPrefix(did, "+")
		for _, tc := range []struct {
			name   string
			dest   map[string]any
			action string
		}{
			{"extension", map[string]any{"type": "extension", "target": "1000"}, "transfer 1000 XML " + tenant},
			{"voicemail", map[string]any{"type": "voicemail", "target": "1000"}, "voicemail default sip.test 1000-" + tenant},
			{"routing condition", map[string]any{"type": "routing_condition", "target": "700"}, "transfer 700 XML " + tenant},
			{"external", map[string]any{"type": "external", "target": "+27215550000"}, "transfer +27215550000 XML " + tenant},
			{"hangup", map[string]any{"type": "hangup", "target": "USER_BUSY"}, "hangup USER_BUSY"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s.Do(t, "PUT", routePath, s.Key, map[string]any{"destination": tc.dest}).Expect(t, 200)
				// FreeSWITCH sends the number as the carrier did: without '+' here.
				// The first fetch after the change renders; the second is
				// served from the cache and must say the same.
				fetchXML(t, s, callBody(t, "public", digits, "0825550001"))
				doc := fetchXML(t, s, callBody(t, "public", digits, "0825550001"))
				acts := doc.actions()
				if tr := s.Do(t, "GET", "/api/routing/trace?did="+digits+"&from=0825550001", s.Key, nil); len(acts) == 0 {
					t.Logf("trace %s\n%s", tr.Body, doc.raw)
				}
				if !slices.Contains(acts, tc.action) {
					t.Errorf("actions %q lack %q", acts, tc.action)
				}
				if !slices.Contains(acts, "set sb_tenant="+tenant) {
					t.Errorf("actions %q do not tag the tenant", acts)
				}
				if doc.all("context")[0].attr("name") != "public" {
					t.Errorf("context %s", doc.raw)
				}
			})
		}
		t.Run("unknown DID", func(t *testing.T) {
			if doc := fetchXML(t, s, callBody(t, "public", "27870000000", "0825550001")); !doc.notFound() {
				t.Errorf("want not found, got %s", doc.raw)
			}
		})
		t.Run("unknown context", func(t *testing.T) {
			if doc := fetchXML(t, s, callBody(t, "nosuchtenant", "1000", "1000")); !doc.notFound() {
				t.Errorf("want not found, got %s", doc.raw)
			}
		})
	})
}

func TestTenantOutboundTwoTrunks(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		suffix := strings.ToLower(tenant)
		t1, t2 := "a_"+suffix, "b_"+suffix
		// The first trunk takes at most 5 calls and wants national caller
		// ids (national in the tenant's country); the second wants E.164
		// without the plus.
		s.Do(t, "PUT", "/api/tenants/"+tenant, s.Key, map[string]any{"country": "ZA"}).Expect(t, 200)
		s.Do(t, "POST", "/api/sip_trunks/", s.Key, map[string]any{"name": t1, "host": "carrier.example", "tenants": []string{tenant}, "max_channels": 5, "callerid_format": "national"}).Expect(t, 201)
		s.Do(t, "POST", "/api/sip_trunks/", s.Key, map[string]any{"name": t2, "host": "carrier.example", "tenants": []string{tenant}, "callerid_format": "e164_no_plus"}).Expect(t, 201)
		s.Do(t, "POST", "/api/tenants/"+tenant+"/outbound_routes/", s.Key, map[string]any{
			"name": "national", "priority": 10, "trunks": []string{t1, t2},
			"patterns": []map[string]any{{"match": "0XXXXXXXXX", "strip_digits": 1, "prepend": "+27"}},
		}).Expect(t, 201)
		doc := fetchXML(t, s, callBody(t, tenant, "0215550123", "1000", "variable_sb_ext", "1000", "variable_sb_tenant", tenant))
		var bridges []string
		for _, a := range doc.actions() {
			if strings.HasPrefix(a, "bridge ") || strings.HasPrefix(a, "limit_execute ") {
				bridges = append(bridges, a)
			}
		}
		want := []string{"limit_execute hash trunk " + t1 + " 5 bridge [origination_caller_id_number=0110000000]sofia/gateway/" + t1 + "/+27215550123",
			"bridge [origination_caller_id_number=27110000000]sofia/gateway/" + t2 + "/+27215550123"}
		if !slices.Equal(bridges, want) {
			t.Errorf("bridges %q, want %q\n%s", bridges, want, doc.raw)
		}
		// A local extension in the same context.
		if acts := fetchXML(t, s, callBody(t, tenant, "1000", "1000")).actions(); !slices.Contains(acts, "bridge user/1000-"+tenant+"@sip.test") {
			t.Errorf("local call actions %q", acts)
		}
	})
}

func TestSofiaConf(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		host := "fs" + strings.ReplaceAll(strings.ToLower(s.Tenant(t, "h")), "_", "-")
		trunk := "gw_" + strings.ReplaceAll(strings.TrimPrefix(host, "fs"), "-", "_")
		s.Do(t, "POST", "/api/servers/", s.Key, map[string]any{
			"name": host, "hostname": host, "esl_host": "10.0.0.5",
			"sip_profiles": []map[string]any{{"name": "internal", "sip_ip": "10.0.0.5", "sip_port": 5060}, {"name": "external", "sip_ip": "10.0.0.5", "sip_port": 5080}},
		}).Expect(t, 201)
		s.Do(t, "POST", "/api/sip_trunks/", s.Key, map[string]any{"name": trunk, "host": "sip.carrier.example", "servers": []string{host}}).Expect(t, 201)
		// 003 is the global read: both profiles, the trunk on external.
		doc := fetchXML(t, s, fakefs.FormWith(capture(t, "003"), "hostname", host))
		var gws, profiles []string
		for _, g := range doc.all("gateway") {
			gws = append(gws, g.attr("name"))
		}
		for _, p := range doc.all("profile") {
			profiles = append(profiles, p.attr("name"))
		}
		// (Other tests' trunks, meant for every node, may be listed too.)
		if !slices.Contains(gws, trunk) || !slices.Equal(profiles, []string{"internal", "external"}) {
			t.Errorf("003: gateways %q profiles %q\n%s", gws, profiles, doc.raw)
		}
		if got := doc.param("param", "sip-ip"); got != "10.0.0.5" {
			t.Errorf("003: sip-ip %q", got)
		}
		// 004 asks for one profile (profile=internal): no gateways there.
		doc = fetchXML(t, s, fakefs.FormWith(capture(t, "004"), "hostname", host))
		if ps := doc.all("profile"); len(ps) != 1 || ps[0].attr("name") != "internal" || len(doc.all("gateway")) != 0 {
			t.Errorf("004: want only the internal profile\n%s", doc.raw)
		}
		// Another node does not load a trunk pinned to this one.
		for _, g := range fetchXML(t, s, fakefs.FormWith(capture(t, "003"), "hostname", "elsewhere")).all("gateway") {
			if g.attr("name") == trunk {
				t.Errorf("trunk %s pinned to %s rendered for another node", trunk, host)
			}
		}
		// Another configuration file: not ours.
		body := capture(t, "003")
		if doc := fetchXML(t, s, fakefs.FormWith(body, "key_value", "acl.conf")); !doc.notFound() {
			t.Errorf("acl.conf: want not found, got %s", doc.raw)
		}
	})
}
