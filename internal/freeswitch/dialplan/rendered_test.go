package dialplan

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// TestRenderedDestinationTypesWork backs the promise the API relies on
// (models refuses every other type): each declared type renders, and a
// transfer lands on a number the tenant context serves.
func TestRenderedDestinationTypesWork(t *testing.T) {
	snap := loadSnap(t)
	now := at(t, "2026-11-23 10:00")
	targets := map[string]string{
		"extension": "1001", "voicemail": "1001", "external": "0821234567",
		"routing_condition": "700", "prompt_then_hangup": "1", "hangup": "",
		"hunt_group": "510", "conference": "900", "ivr": "600", "queue": "500",
		"special_mailbox": "800", "directory": "411", "special_endpoint": "950",
	}
	for _, typ := range RenderedDestinationTypes {
		target, ok := targets[typ]
		if !ok {
			t.Fatalf("no test target for rendered type %s: add one here", typ)
		}
		p := &planner{opts: testOpts, snap: snap, tenant: "acme", now: now, trace: &Trace{}}
		acts, ok := p.destination(Destination{Type: typ, Target: target})
		if !ok || len(acts) == 0 {
			t.Fatalf("%s: nothing rendered", typ)
		}
		for _, a := range acts {
			if a.app != "transfer" {
				continue
			}
			number, _, _ := strings.Cut(a.data, " ")
			doc, tr := TenantContext(testOpts, callRequest(t, "acme", number), snap, now)
			if xmldoc.IsNotFound(doc) || tr.Match == "" {
				t.Errorf("%s: transfer to %s is not served by the tenant context (%s)", typ, number, tr.Reason)
			}
		}
	}
}

// destinationTargets is a served target in the fixture for every type.
var destinationTargets = map[string]string{
	"extension": "1001", "voicemail": "1001", "external": "0821234567",
	"routing_condition": "700", "prompt_then_hangup": "31", "hangup": "USER_BUSY",
	"hunt_group": "510", "conference": "900", "ivr": "600", "queue": "500",
	"special_mailbox": "800", "directory": "411", "special_endpoint": "952",
}

// TestEveryDestinationTypeReachableEverywhere: every destination type the
// API accepts, put in every place a destination can be (an inbound route,
// an IVR option and exit, a routing condition, a queue's timeout and exit,
// a hunt group's timeout), renders actions, and every transfer among them
// lands on a number the tenant context serves. Numbers reached by a
// forward (a dialled string, not a typed destination) are served too.
func TestEveryDestinationTypeReachableEverywhere(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	places := map[string]func(s *TenantSnapshot, d Destination) []byte{
		"inbound route": func(s *TenantSnapshot, d Destination) []byte {
			s.InboundRoutes[0].Destination, s.InboundRoutes[0].RoutingConditionID = d, 0
			doc, _ := Public(testOpts, callRequest(t, "public", "+27115550100"), publicFor(s, "+27115550100"), now)
			return doc
		},
		"IVR option": func(s *TenantSnapshot, d Destination) []byte {
			s.IVRMenus[0].Options = []IVROption{{Digits: "1", Destination: d}}
			return IVRConf(testOpts, ivrRequest(t, "acme_94"), s, now)
		},
		"IVR exit": func(s *TenantSnapshot, d Destination) []byte {
			s.IVRMenus[0].ExitDestination = &d
			doc, _ := TenantContext(testOpts, callRequest(t, "acme", "600"), s, now)
			return doc
		},
		"routing condition": func(s *TenantSnapshot, d Destination) []byte {
			s.RoutingConditions[0].MatchDestination, s.RoutingConditions[0].NomatchDestination = d, d
			doc, _ := TenantContext(testOpts, callRequest(t, "acme", "700"), s, now)
			return doc
		},
		"queue timeout": func(s *TenantSnapshot, d Destination) []byte {
			s.Queues[1].TimeoutDestination = &d
			doc, _ := TenantContext(testOpts, callRequest(t, "acme", "queue-after-501"), s, now)
			return doc
		},
		"queue exit": func(s *TenantSnapshot, d Destination) []byte {
			s.Queues[0].ExitDestination = &d
			doc, _ := TenantContext(testOpts, callRequest(t, "acme", "queue-after-500"), s, now)
			return doc
		},
		"hunt group timeout": func(s *TenantSnapshot, d Destination) []byte {
			s.HuntGroups[0].TimeoutDestination = &d
			doc, _ := TenantContext(testOpts, callRequest(t, "acme", "510"), s, now)
			return doc
		},
	}
	for _, typ := range RenderedDestinationTypes {
		target, ok := destinationTargets[typ]
		if !ok {
			t.Fatalf("no target for rendered type %s: add one", typ)
		}
		for place, render := range places {
			s := loadSnap(t)
			doc := render(s, Destination{Type: typ, Target: target})
			if xmldoc.IsNotFound(doc) {
				t.Errorf("%s in %s: not found", typ, place)
				continue
			}
			tree := decodeTree(t, doc)
			transfers := tree.find("action", "application", "transfer", "data")
			for _, param := range tree.find("entry", "", "", "param") {
				if after, ok := strings.CutPrefix(param, "transfer "); ok {
					transfers = append(transfers, after)
				}
			}
			if len(tree.find("action", "", "", "application"))+len(tree.find("entry", "", "", "param")) == 0 {
				t.Errorf("%s in %s: nothing rendered\n%s", typ, place, doc)
			}
			for _, tr := range transfers {
				number, _, _ := strings.Cut(tr, " ")
				if d, trace := TenantContext(testOpts, callRequest(t, "acme", number), loadSnap(t), now); xmldoc.IsNotFound(d) {
					t.Errorf("%s in %s: transfer to %s is not served (%s)", typ, place, number, trace.Reason)
				}
			}
		}
	}
	for _, number := range []string{"1001", "700", "510", "900", "600", "500", "800", "411", "0821234567"} {
		s := loadSnap(t)
		x := s.extension("1002")
		x.ForwardAll = Forward{Enabled: true, Destination: number}
		doc, _ := TenantContext(testOpts, callRequest(t, "acme", "1002"), s, now)
		for _, tr := range decodeTree(t, doc).find("action", "application", "transfer", "data") {
			n, _, _ := strings.Cut(tr, " ")
			if d, trace := TenantContext(testOpts, callRequest(t, "acme", n), loadSnap(t), now); xmldoc.IsNotFound(d) {
				t.Errorf("forward to %s: %s not served (%s)", number, n, trace.Reason)
			}
		}
	}
}

// TestForwardLoopGuard: two extensions forwarding to each other do not
// bounce a call for ever: the second forward sees the first in the call's
// sb_forward_chain and ends at the forwarder's voicemail (or hangs up);
// a long chain stops too.
func TestForwardLoopGuard(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	s := loadSnap(t)
	s.extension("1001").ForwardAll = Forward{Enabled: true, Destination: "1002"}
	s.extension("1002").ForwardAll = Forward{Enabled: true, Destination: "1001"}
	actions := func(number string, kv ...string) (transfers, all []string) {
		doc, _ := TenantContext(testOpts, callRequest(t, "acme", number, kv...), s, now)
		tree := decodeTree(t, doc)
		return tree.find("action", "application", "transfer", "data"), tree.find("action", "", "", "data")
	}
	tr, all := actions("1001")
	if len(tr) != 1 || tr[0] != "1002 XML acme" || !slices.Contains(all, "sb_forward_chain=1001") {
		t.Fatalf("first forward: transfers %q actions %q", tr, all)
	}
	tr, all = actions("1002", "variable_sb_forward_chain", "1001")
	if len(tr) != 0 || !slices.Contains(all, "NORMAL_CLEARING") {
		t.Fatalf("the forward back to 1001 was rendered: transfers %q actions %q", tr, all)
	}
	s.extension("1002").VoicemailEnabled = true
	if _, all = actions("1002", "variable_sb_forward_chain", "1001"); !slices.Contains(all, "default sb.example 1002-acme") {
		t.Fatalf("loop with voicemail: %q", all)
	}
	if tr, _ = actions("1002", "variable_sb_forward_chain", "1003-1004-1005-1006-1007"); len(tr) != 0 {
		t.Fatalf("a chain of five forwards forwarded again: %q", tr)
	}
	if tr, _ = actions("1002", "variable_sb_forward_chain", "${evil}"); len(tr) != 1 {
		t.Fatalf("a malformed chain is ignored, the forward still works: %q", tr)
	}
}
