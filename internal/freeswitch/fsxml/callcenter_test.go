package fsxml_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// TestQueueReachesFreeSWITCH: a queue and an agent created over the API:
// the queue's number runs the callcenter application and then looks up the
// outcome; the queue's callcenter.conf fetch (CC-Queue) gets its
// parameters and an edit shows on the next fetch; the module-load fetch
// lists the queue, the agent and their tier; an inbound route may send
// callers to the queue; the routing trace names it.
func TestQueueReachesFreeSWITCH(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		moh := s.Do(t, "POST", base+"/music_on_hold/", s.Key, map[string]any{"name": "jazz"}).Expect(t, 201).Map(t)
		q := s.Do(t, "POST", base+"/queues/", s.Key, map[string]any{
			"name": "support", "number": "640", "strategy": "top-down", "max_wait_seconds": 90, "moh_class_id": moh["id"],
			"timeout_destination": map[string]any{"type": "voicemail", "target": "1000"},
		}).Expect(t, 201).Map(t)
		s.Do(t, "POST", base+"/agents/", s.Key, map[string]any{
			"name": "Ann", "agent_number": "31", "extension": "1000", "status": "available",
			"queues": []any{map[string]any{"queue_id": q["id"], "level": 2, "position": 5}},
		}).Expect(t, 201)
		queue := "640@" + tenant
		acts := fetchXML(t, s, callBody(t, tenant, "640", "1000")).actions()
		if i := slices.Index(acts, "callcenter "+queue); i < 0 || !slices.Contains(acts[i:], "transfer queue-after-640 XML "+tenant) {
			t.Fatalf("actions %q lack the queue and the lookup after it", acts)
		}
		after := fetchXML(t, s, callBody(t, tenant, "queue-after-640", "1000")).actions()
		if !slices.Contains(after, "voicemail default sip.test 1000-"+tenant) {
			t.Errorf("after the queue: %q, want the timeout voicemail", after)
		}
		params := func(body []byte) map[string]string {
			out := map[string]string{}
			for _, p := range fetchXML(t, s, body).all("param") {
				out[p.attr("name")] = p.attr("value")
			}
			return out
		}
		one := fakefs.FormWith(capture(t, "003"), "key_value", "callcenter.conf", "CC-Queue", queue)
		if got := params(one); got["strategy"] != "top-down" || got["max-wait-time"] != "90" || got["moh-sound"] != "local_stream://"+tenant+"_jazz" {
			t.Errorf("queue params %v", got)
		}
		s.Do(t, "PUT", fmt.Sprintf("%s/queues/%v", base, q["id"]), s.Key, map[string]any{"strategy": "ring-all"}).Expect(t, 200)
		if got := params(one); got["strategy"] != "ring-all" {
			t.Errorf("after the edit, strategy %q", got["strategy"])
		}
		load := fetchXML(t, s, fakefs.FormWith(capture(t, "003"), "key_value", "callcenter.conf"))
		var names, agents, tiers []string
		for _, e := range load.all("queue") {
			names = append(names, e.attr("name"))
		}
		for _, e := range load.all("agent") {
			agents = append(agents, e.attr("name")+" "+e.attr("contact")+" "+e.attr("status"))
		}
		for _, e := range load.all("tier") {
			tiers = append(tiers, e.attr("agent")+" "+e.attr("queue")+" "+e.attr("level")+" "+e.attr("position"))
		}
		if !slices.Contains(names, queue) || !slices.Contains(agents, "31@"+tenant+" user/1000-"+tenant+"@sip.test Available") ||
			!slices.Contains(tiers, "31@"+tenant+" "+queue+" 2 5") {
			t.Errorf("module load: queues %q agents %q tiers %q", names, agents, tiers)
		}
		s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{"name": "to queue", "enabled": false,
			"destination": map[string]any{"type": "queue", "target": "640"}}).Expect(t, 201)
		tr := s.Do(t, "GET", base+"/routing/trace?from=1000&to=640", s.Key, nil).Expect(t, 200).Map(t)
		if trace, _ := tr["trace"].(map[string]any); trace["match"] != "queue" {
			t.Errorf("trace %v does not name the queue", tr)
		}
	})
}
