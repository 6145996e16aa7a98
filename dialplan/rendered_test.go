package dialplan

import (
	"strings"
	"testing"
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
			if IsNotFound(doc) || tr.Match == "" {
				t.Errorf("%s: transfer to %s is not served by the tenant context (%s)", typ, number, tr.Reason)
			}
		}
	}
}
