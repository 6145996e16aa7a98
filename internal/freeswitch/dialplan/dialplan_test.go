package dialplan

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// callRequest turns the SIP call capture into a call in context to number.
func callRequest(t testing.TB, context, number string, kv ...string) xmlcurl.Request {
	t.Helper()
	base := []string{"Hunt-Context", context, "Caller-Context", context,
		"Hunt-Destination-Number", number, "Caller-Destination-Number", number}
	return xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "011"), append(base, kv...)...))
}

func publicFor(snap *TenantSnapshot, number string) *PublicSnapshot {
	return &PublicSnapshot{DID: DID{ID: 1, Number: number, Tenant: "acme", Enabled: true}, Tenant: snap}
}

func renderCase(t *testing.T, name string, doc []byte, tr Trace) {
	t.Helper()
	wellFormed(t, doc)
	if xmldoc.IsNotFound(doc) {
		t.Fatalf("got not found, trace %+v", tr)
	}
	golden(t, name+".xml", doc)
	goldenTrace(t, name+".trace.json", tr)
}

func TestPublicGolden(t *testing.T) {
	weekday := at(t, "2026-11-23 10:00") // Monday, open
	night := at(t, "2026-11-23 20:00")
	xmas := at(t, "2026-12-25 10:00")
	tests := []struct {
		name   string
		did    string
		caller string
		now    time.Time
		edit   func(s *TenantSnapshot)
	}{
		{"public_condition_match", "+27115550100", "", weekday, nil},
		{"public_condition_nomatch", "+27115550100", "", night, nil},
		{"public_condition_holiday", "+27115550100", "", xmas, nil},
		{"public_condition_override", "27115550100", "", at(t, "2026-11-23 13:59"), func(s *TenantSnapshot) { s.InboundRoutes[0].RoutingConditionID = 22 }},
		{"public_condition_override_expired", "27115550100", "", at(t, "2026-11-23 14:00"), func(s *TenantSnapshot) { s.InboundRoutes[0].RoutingConditionID = 22 }},
		{"public_condition_disabled", "+27115550100", "", weekday, func(s *TenantSnapshot) { s.RoutingConditions[0].Enabled = false }},
		{"public_office_day", "+27115550200", "", weekday, nil},
		{"public_office_night", "+27115550200", "", night, nil},
		{"public_office_holiday", "+27115550200", "", xmas, nil},
		{"public_office_forced_night", "+27115550200", "", weekday, func(s *TenantSnapshot) { s.OfficeMode.Mode = "night" }},
		{"public_caller_match", "+27115550200", "+27825551234", weekday, nil},
		{"public_tenant_disabled", "+27115550100", "", weekday, func(s *TenantSnapshot) { s.Tenant.Enabled = false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := loadSnap(t)
			if tt.edit != nil {
				tt.edit(snap)
			}
			req := callRequest(t, "public", tt.did, "Caller-Caller-ID-Number", tt.caller, "Hunt-Caller-ID-Number", tt.caller)
			doc, tr := Public(testOpts, req, publicFor(snap, tt.did), tt.now)
			renderCase(t, tt.name, doc, tr)
		})
	}
}

func TestPublicDestinationTypes(t *testing.T) {
	for _, d := range []Destination{
		{"extension", "1001"}, {"voicemail", "1001"}, {"special_mailbox", "800"}, {"queue", "500"},
		{"hunt_group", "510"}, {"ivr", "600"}, {"conference", "900"}, {"routing_condition", "700"},
		{"special_endpoint", "950"}, {"directory", "411"}, {"external", "0825550123"},
		{"prompt_then_hangup", "31"}, {"hangup", "USER_BUSY"},
	} {
		t.Run(d.Type, func(t *testing.T) {
			snap := loadSnap(t)
			snap.InboundRoutes[0].RoutingConditionID = 0
			snap.InboundRoutes[0].Destination = d
			doc, tr := Public(testOpts, callRequest(t, "public", "+27115550100"), publicFor(snap, "+27115550100"), at(t, "2026-11-23 10:00"))
			renderCase(t, "public_dest_"+d.Type, doc, tr)
		})
	}
}

func TestPublicNotFound(t *testing.T) {
	snap := loadSnap(t)
	now := at(t, "2026-11-23 10:00")
	disabledDID := publicFor(snap, "+27115550100")
	disabledDID.DID.Enabled = false
	badDest := loadSnap(t)
	badDest.InboundRoutes[0].RoutingConditionID = 0
	badDest.InboundRoutes[0].Destination = Destination{Type: "extension", Target: "1001 XML evil"}
	tests := []struct {
		name string
		req  xmlcurl.Request
		pub  *PublicSnapshot
	}{
		{"no DID", callRequest(t, "public", "+27115550999"), nil},
		{"disabled DID", callRequest(t, "public", "+27115550100"), disabledDID},
		{"DID for another number", callRequest(t, "public", "+27115550999"), publicFor(snap, "+27115550100")},
		{"DID without route", callRequest(t, "public", "+27115550300"), publicFor(snap, "+27115550300")},
		{"invalid destination target", callRequest(t, "public", "+27115550100"), publicFor(badDest, "+27115550100")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, tr := Public(testOpts, tt.req, tt.pub, now)
			if !xmldoc.IsNotFound(doc) || tr.Reason == "" {
				t.Fatalf("want not found with a reason, got %q\n%s", tr.Reason, doc)
			}
		})
	}
}

func TestTenantGolden(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	tests := []struct {
		name   string
		number string
		kv     []string
		edit   func(s *TenantSnapshot)
	}{
		{"tenant_ext_voicemail", "1001", nil, nil},
		{"tenant_ext_forwards", "1002", nil, nil},
		{"tenant_ext_failover", "fail-1002", nil, nil},
		{"tenant_ext_dnd", "1003", nil, nil},
		{"tenant_ext_forward_all", "1004", nil, nil},
		{"tenant_ext_no_voicemail", "1005", nil, nil},
		{"tenant_special_mailbox", "800", nil, nil},
		{"tenant_condition_number", "700", nil, nil},
		{"tenant_hunt_simultaneous", "510", []string{"Caller-Caller-ID-Name", "Eve ${system(id)}"}, nil},
		{"tenant_hunt_sequential", "511", nil, nil},
		{"tenant_conference_pin", "900", nil, nil},
		{"tenant_conference_open", "901", nil, nil},
		{"tenant_ivr", "600", nil, nil},
		{"tenant_queue", "500", []string{"Caller-Caller-ID-Name", "Eve ${system(id)}"}, nil},
		{"tenant_queue_plain", "501", nil, nil},
		{"tenant_queue_after_exit", "queue-after-500", nil, nil},
		{"tenant_queue_after_timeout", "queue-after-501", nil, nil},
		{"tenant_prompt_then_hangup", "prompt-31", nil, nil},
		{"tenant_hunt_round_robin", "512", nil, nil},
		{"tenant_hunt_round_robin_turn", "512", nil, func(s *TenantSnapshot) { *s = *s.WithHuntTurn(83, 7) }},
		{"tenant_hunt_random", "510", nil, func(s *TenantSnapshot) {
			s.HuntGroups[0].Strategy = "random"
			*s = *s.WithHuntTurn(81, 7)
		}},
		{"tenant_hunt_enterprise", "512", nil, func(s *TenantSnapshot) { s.HuntGroups[2].Strategy = "enterprise" }},
		{"tenant_company_directory", "411", nil, nil},
		{"tenant_endpoint_external", "950", nil, nil},
		{"tenant_endpoint_sip_uri", "951", nil, nil},
		{"tenant_endpoint_echo_test", "952", nil, nil},
		{"tenant_endpoint_moh_test", "953", nil, nil},
		{"tenant_endpoint_voicemail_main", "954", nil, nil},
		{"tenant_endpoint_company_directory", "955", nil, nil},
		{"tenant_endpoint_speaking_clock", "956", nil, nil},
		{"tenant_endpoint_fax_to_email", "957", nil, nil},
		{"tenant_feature_group_pickup", "*8", []string{"variable_sb_ext", "1002", "variable_sb_tenant", "acme"}, nil},
		{"tenant_feature_group_pickup_picker", "*8", []string{"variable_sb_ext", "1004", "variable_sb_tenant", "acme"}, nil},
		{"tenant_feature_group_pickup_no_group", "*8", []string{"variable_sb_ext", "1003", "variable_sb_tenant", "acme"}, nil},
		{"tenant_feature_directed_pickup_no_call", "**1001", []string{"variable_sb_ext", "1002", "variable_sb_tenant", "acme"}, nil},
		{"tenant_feature_voicemail_own", "*97", nil, nil},
		{"tenant_feature_voicemail_any", "*98", nil, nil},
		{"tenant_feature_voicemail_direct", "*991001", nil, nil},
		{"tenant_feature_dnd_toggle", "*78", nil, nil},
		{"tenant_feature_forward_all_on", "*720825550123", nil, nil},
		{"tenant_feature_forward_all_off", "*73", nil, nil},
		{"tenant_feature_office_mode_pin", "*30", nil, nil},
		{"tenant_feature_echo_test", "*9196", nil, nil},
		{"tenant_feature_office_mode_day", "*31", nil, withFeature("office_mode_day", "*31", false)},
		{"tenant_feature_office_mode_night", "*32", nil, withFeature("office_mode_night", "*32", true)},
		{"tenant_feature_agent_login_logout", "*22", nil, withFeature("agent_login_logout", "*22", false)},
		{"tenant_feature_agent_login_logout_pin", "*22", nil, withFeature("agent_login_logout", "*22", true)},
		{"tenant_feature_agent_pause_toggle", "*23", nil, withFeature("agent_pause_toggle", "*23", false)},
		{"tenant_feature_record_prompt", "*732", nil, withFeature("record_prompt", "*732", false)},
		{"tenant_feature_record_prompt_pin", "*732", nil, withFeature("record_prompt", "*732", true)},
		{"tenant_feature_park", "*70", nil, enablePark},
		{"tenant_feature_park_slot", "*705", nil, enablePark},
		{"tenant_feature_park_presence_key", "park+20", nil, enablePark},
		{"tenant_park_return", "park-return-1002", nil, nil},
		{"tenant_feature_moh_test", "*9664", nil, withFeature("moh_test", "*9664", false)},
		{"tenant_emergency_from_extension", "10111", []string{"variable_sb_ext", "1001", "variable_sb_tenant", "acme"}, nil},
		{"tenant_emergency_no_extension", "112", nil, nil},
		{"tenant_outbound_national", "0825550123", []string{"variable_sb_ext", "1001", "variable_sb_tenant", "acme"}, nil},
		{"tenant_outbound_international", "0044201234567", nil, nil},
		{"tenant_outbound_no_limit", "0825550123", nil, func(s *TenantSnapshot) { s.Tenant.MaxConcurrentCalls = 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := loadSnap(t)
			if tt.edit != nil {
				tt.edit(snap)
			}
			doc, tr := TenantContext(testOpts, callRequest(t, "acme", tt.number, tt.kv...), snap, now)
			renderCase(t, tt.name, doc, tr)
			// A prepared snapshot (indexes, compiled patterns), as the
			// loader shares between renders, answers exactly the same.
			prepared := loadSnap(t)
			if tt.edit != nil {
				tt.edit(prepared)
			}
			prepared.Prepare()
			doc2, tr2 := TenantContext(testOpts, callRequest(t, "acme", tt.number, tt.kv...), prepared.Bind(prepared.Trunks, nil), now)
			if !bytes.Equal(doc, doc2) || !reflect.DeepEqual(tr, tr2) {
				t.Errorf("prepared snapshot renders differently:\n%s\n%+v\nwant\n%s\n%+v", doc2, tr2, doc, tr)
			}
		})
	}
}

// enablePark enables the fixture's park code (*70, disabled there).
func enablePark(s *TenantSnapshot) { s.FeatureExtensions[8].Enabled = true }

// withFeature adds an enabled feature code to the snapshot (the fixture
// holds part of the default set).
func withFeature(feature, code string, pin bool) func(s *TenantSnapshot) {
	return func(s *TenantSnapshot) {
		s.FeatureExtensions = append(s.FeatureExtensions, FeatureExtension{ID: 990, Feature: feature, Code: code, PINRequired: pin, Enabled: true})
	}
}

func TestTenantNotFound(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	noTrunks := loadSnap(t)
	noTrunks.Trunks = nil
	disabled := loadSnap(t)
	disabled.Tenant.Enabled = false
	noSIPURI := loadSnap(t)
	noSIPURI.Tenant.AllowSIPURIEndpoints = false
	parkOn := loadSnap(t)
	enablePark(parkOn)
	tests := []struct {
		name    string
		context string
		number  string
		snap    *TenantSnapshot
	}{
		{"other context", "other", "1001", loadSnap(t)},
		{"capture context default", "default", "2000", loadSnap(t)},
		{"disabled tenant", "acme", "1001", disabled},
		{"disabled extension", "acme", "1009", loadSnap(t)},
		{"unknown number", "acme", "12", loadSnap(t)},
		{"disabled hunt group", "acme", "513", loadSnap(t)},
		{"disabled conference room", "acme", "902", loadSnap(t)},
		{"disabled IVR menu", "acme", "601", loadSnap(t)},
		{"disabled queue", "acme", "502", loadSnap(t)},
		{"after of a disabled queue", "acme", "queue-after-502", loadSnap(t)},
		{"after of an unknown queue", "acme", "queue-after-599", loadSnap(t)},
		{"unknown prompt", "acme", "prompt-99", loadSnap(t)},
		{"malformed prompt", "acme", "prompt-3x", loadSnap(t)},
		{"hunt group with no usable member", "acme", "514", loadSnap(t)},
		{"disabled feature", "acme", "*70", loadSnap(t)},
		{"park slot while parking is disabled", "acme", "*705", loadSnap(t)},
		{"park key while parking is disabled", "acme", "park+5", loadSnap(t)},
		{"park slot past the lot", "acme", "*7021", parkOn},
		{"park slot zero", "acme", "*700", parkOn},
		{"park slot with a leading zero", "acme", "*7005", parkOn},
		{"park key past the lot", "acme", "park+21", parkOn},
		{"park key without a slot", "acme", "park+", parkOn},
		{"park key not a number", "acme", "park+5@evil", parkOn},
		{"park return to unknown extension", "acme", "park-return-1999", loadSnap(t)},
		{"park return to disabled extension", "acme", "park-return-1009", loadSnap(t)},
		{"park return without extension", "acme", "park-return-", loadSnap(t)},
		{"voicemail_direct to unknown box", "acme", "*991999", loadSnap(t)},
		{"forward_all_on without number", "acme", "*72", loadSnap(t)},
		{"disabled special endpoint", "acme", "958", loadSnap(t)},
		{"sip_uri endpoint without the tenant's opt-in", "acme", "951", noSIPURI},
		{"directed pickup without a number", "acme", "**", loadSnap(t)},
		{"outbound without trunks", "acme", "0825550123", noTrunks},
		{"emergency without trunks", "acme", "112", noTrunks},
		{"not dialable", "acme", "1001@evil", loadSnap(t)},
		{"failover of unknown extension", "acme", "fail-1999", loadSnap(t)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, tr := TenantContext(testOpts, callRequest(t, tt.context, tt.number), tt.snap, now)
			if !xmldoc.IsNotFound(doc) {
				t.Fatalf("want not found, got trace %+v\n%s", tr, doc)
			}
		})
	}
}

func TestDialplanInjection(t *testing.T) {
	snap := loadSnap(t)
	const evilRoute = `<action application="system" data="rm -rf /"/>`
	const evilName = `Eve "<x>" & $${default_password} ${system(id)}`
	snap.OutboundRoutes[0].Name = evilRoute
	snap.Tenant.OutboundCallerIDName = evilName
	snap.InboundRoutes[0].Name = evilRoute
	snap.InboundRoutes[0].CallerIDNamePrefix = evilName
	snap.InboundRoutes[0].RoutingConditionID = 0
	now := at(t, "2026-11-23 10:00")

	doc, tr := TenantContext(testOpts, callRequest(t, "acme", "0825550123"), snap, now)
	renderCase(t, "injection_outbound", doc, tr)
	checkInjected(t, doc, evilRoute)

	req := callRequest(t, "public", "+27115550100", "Caller-Caller-ID-Name", "${uuid_kill(all)} Mallory")
	doc, tr = Public(testOpts, req, publicFor(snap, "+27115550100"), now)
	renderCase(t, "injection_public", doc, tr)
	checkInjected(t, doc, evilRoute)
}

// checkInjected asserts that the route name came through as one intact
// attribute value, that no application but ours appears, and that no
// run-time expanded value carries "${" from user data.
func checkInjected(t *testing.T, doc []byte, routeName string) {
	t.Helper()
	if strings.Contains(string(doc), "$") {
		t.Fatal("raw '$' in document")
	}
	tree := decodeTree(t, doc)
	if got := tree.find("extension", "", "", "name"); len(got) != 1 || got[0] != routeName {
		t.Fatalf("extension names = %q, want the route name intact", got)
	}
	for _, app := range tree.find("action", "", "", "application") {
		if app == "system" {
			t.Fatal("user text became an application")
		}
	}
	for _, data := range tree.find("action", "application", "set", "data") {
		if strings.HasPrefix(data, "effective_caller_id_name=") && (strings.Contains(data, "${") || strings.Contains(data, "$$")) {
			t.Fatalf("expandable caller name: %q", data)
		}
	}
}

func TestDispatch(t *testing.T) {
	snap := loadSnap(t)
	now := at(t, "2026-11-23 10:00")
	doc, tr := Dialplan(testOpts, callRequest(t, "public", "+27115550100"), publicFor(snap, "+27115550100"), nil, now)
	if xmldoc.IsNotFound(doc) || tr.Match != "did" {
		t.Fatalf("public dispatch: %+v", tr)
	}
	doc, tr = Dialplan(testOpts, callRequest(t, "acme", "1001"), nil, snap, now)
	if xmldoc.IsNotFound(doc) || tr.Match != "extension" {
		t.Fatalf("tenant dispatch: %+v", tr)
	}
	self := loadSnap(t)
	self.Extensions[3].ForwardAll.Destination = "1004"
	if _, tr := TenantContext(testOpts, callRequest(t, "acme", "1004"), self, now); tr.Reason == "forward_all" {
		t.Fatal("forward to itself was rendered")
	}
}

// TestHuntTurns: a round-robin group's first member moves one on with
// each call's turn and wraps; a random group's order is a permutation of
// its dialable members that differs between calls (every member comes
// first for some turn); both renders are never cached (LiveDependent).
func TestHuntTurns(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	snap := loadSnap(t)
	bridge := func(s *TenantSnapshot, number string) ([]string, Trace) {
		t.Helper()
		doc, tr := TenantContext(testOpts, callRequest(t, "acme", number), s, now)
		got := decodeTree(t, doc).find("action", "application", "bridge", "data")
		if len(got) != 1 || !tr.LiveDependent {
			t.Fatalf("bridge %q, trace %+v", got, tr)
		}
		return strings.Split(got[0], "|"), tr
	}
	id, strategy, ok := HuntTurnGroup(snap, "512")
	if !ok || id != 83 || strategy != "round_robin" {
		t.Fatalf("HuntTurnGroup(512) = %d %q %v", id, strategy, ok)
	}
	for _, n := range []string{"510", "511", "513", "1001"} {
		if _, _, ok := HuntTurnGroup(snap, n); ok {
			t.Errorf("%s takes no turn", n)
		}
	}
	snap.HuntGroups[2].Members = append(snap.HuntGroups[2].Members, HuntMember{Type: "extension", Target: "1009"}, HuntMember{Type: "extension", Target: "1002"})
	member := []string{"1001", "1005", "1002"} // 1009 is disabled: left out
	for turn := uint64(0); turn < 7; turn++ {
		legs, _ := bridge(snap.WithHuntTurn(83, turn), "512")
		if len(legs) != 3 {
			t.Fatalf("turn %d: legs %q", turn, legs)
		}
		for i, leg := range legs {
			if want := member[(int(turn)+i)%3]; !strings.Contains(leg, "user/"+want+"-acme@") {
				t.Fatalf("turn %d: leg %d is %q, want %s", turn, i, leg, want)
			}
		}
	}
	snap.HuntGroups[0].Strategy = "random"
	firsts := map[string]bool{}
	orders := map[string]bool{}
	for turn := uint64(0); turn < 64; turn++ {
		legs, tr := bridge(snap.WithHuntTurn(81, turn), "510")
		if !strings.Contains(tr.Reason, "random") {
			t.Fatalf("trace %+v", tr)
		}
		sorted := slices.Sorted(slices.Values(legs))
		if want := []string{
			"[leg_timeout=20,leg_delay_start=5]user/1002-acme@sb.example",
			"[leg_timeout=25]user/1001-acme@sb.example",
			"[leg_timeout=30,leg_delay_start=10,group_confirm_key=1,group_confirm_file=ivr/ivr-accept_reject_voicemail.wav]loopback/0825550123/acme",
		}; !slices.Equal(sorted, want) {
			t.Fatalf("turn %d: legs %q", turn, legs)
		}
		firsts[legs[0]] = true
		orders[strings.Join(legs, "|")] = true
	}
	if len(firsts) != 3 || len(orders) < 5 {
		t.Fatalf("64 calls: %d first members, %d orders", len(firsts), len(orders))
	}
	// A turn for another group changes nothing here.
	a, _ := bridge(snap.WithHuntTurn(99, 5), "510")
	b, _ := bridge(snap, "510")
	if !slices.Equal(a, b) {
		t.Fatalf("another group's turn: %q vs %q", a, b)
	}
}
