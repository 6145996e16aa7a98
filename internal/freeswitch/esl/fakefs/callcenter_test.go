package fakefs

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// TestCallcenterConfig: the fake's mod_callcenter answers each command as
// mod_callcenter.c does, in the order it checks, and loads a queue only
// when the callcenter.conf fetch (with CC-Queue) lists it.
func TestCallcenterConfig(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	xmlcurl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		mu.Lock()
		asked = append(asked, form.Get("key_value")+" "+form.Get("CC-Queue"))
		mu.Unlock()
		if form.Get("CC-Queue") != "500@acme" {
			_, _ = io.WriteString(w, `<document type="freeswitch/xml"><section name="result"><result status="not found"/></section></document>`)
			return
		}
		_, _ = io.WriteString(w, `<document type="freeswitch/xml"><section name="configuration"><configuration name="callcenter.conf"><queues>`+
			`<queue name="500@acme"><param name="strategy" value="top-down"/></queue></queues></configuration></section></document>`)
	}))
	defer xmlcurl.Close()
	s := startFake(t, Options{XMLCurlURL: xmlcurl.URL})
	rc := dialAuthed(t, s.Addr())
	for _, tt := range []struct{ cmd, want string }{
		{"callcenter_config", "-USAGE: callcenter_config <target> <args>\n"},
		{"callcenter_config agent", "-ERR Invalid!\n"},
		{"callcenter_config queue load 501@acme", "-ERR Invalid Queue not found!\n"},
		{"callcenter_config queue load 500@acme", "+OK\n"},
		{"callcenter_config agent add 201@acme", "-ERR Invalid!\n"},
		{"callcenter_config agent add 201@acme robot", "-ERR Agent type invalid!\n"},
		{"callcenter_config agent add 201@acme callback", "+OK\n"},
		{"callcenter_config agent add 201@acme callback", "-ERR Agent already exist!\n"},
		{"callcenter_config agent set status 201@acme 'On Break'", "+OK\n"},
		{"callcenter_config agent set status 201@acme Sleeping", "-ERR Invalid Agent Status!\n"},
		{"callcenter_config agent set colour 201@acme red", "-ERR Invalid Agent Update KEY!\n"},
		{"callcenter_config agent set status 999@acme Available", "-ERR Agent not found!\n"},
		{"callcenter_config agent set contact 201@acme user/1001-acme@sip.test", "+OK\n"},
		{"callcenter_config agent set wrap_up_time 201@acme 15", "+OK\n"},
		{"callcenter_config agent get status 201@acme", "On Break"},
		{"callcenter_config tier add 501@acme 201@acme 1 1", "-ERR Queue not found!\n"},
		{"callcenter_config tier add 500@acme 999@acme 1 1", "-ERR Agent not found!\n"},
		{"callcenter_config tier add 500@acme 201@acme 2 3", "+OK\n"},
		{"callcenter_config tier add 500@acme 201@acme 2 3", "-ERR Tier already exist!\n"},
		{"callcenter_config tier set level 500@acme 201@acme 4", "+OK\n"},
		{"callcenter_config tier set level 501@acme 201@acme 4", "-ERR Unknown Error!\n"},
		// Lists as the module prints them: a header (for agents and tiers
		// only above rows), "|"-separated rows, "+OK".
		{"callcenter_config queue list", "name|strategy|moh_sound|time_base_score|tier_rules_apply|tier_rule_wait_second|tier_rule_wait_multiply_level|tier_rule_no_agent_no_wait|discard_abandoned_after|abandoned_resume_allowed|max_wait_time|max_wait_time_with_no_agent|max_wait_time_with_no_agent_time_reached|record_template|calls_answered|calls_abandoned|ring_progressively_delay|skip_agents_with_external_calls|agent_no_answer_status\n500@acme|top-down|||||||||||||||||\n+OK\n"},
		{"callcenter_config agent list", "name|instance_id|uuid|type|contact|status|state|max_no_answer|wrap_up_time|reject_delay_time|busy_delay_time|no_answer_delay_time|last_bridge_start|last_bridge_end|last_offered_call|last_status_change|no_answer_count|calls_answered|talk_time|ready_time|external_calls_count\n201@acme|single_box||callback|user/1001-acme@sip.test|On Break|Waiting|0|15|0|0|0|0|0|0|0|0|0|0|0|0\n+OK\n"},
		{"callcenter_config tier list", "queue|agent|state|level|position\n500@acme|201@acme|Ready|4|3\n+OK\n"},
		{"callcenter_config queue list agents 500@acme", "-ERR fakefs: callcenter_config queue list not modelled\n"},
	} {
		if got := rc.api(tt.cmd); got != tt.want {
			t.Errorf("api %s = %q, want %q", tt.cmd, got, tt.want)
		}
	}
	if q, ok := s.CallcenterQueue("500@acme"); !ok || q["strategy"] != "top-down" {
		t.Errorf("queue 500@acme: %v %v", q, ok)
	}
	a, ok := s.CallcenterAgent("201@acme")
	if !ok || a.Status != "On Break" || a.Contact != "user/1001-acme@sip.test" || a.Settings["wrap_up_time"] != "15" {
		t.Errorf("agent %+v", a)
	}
	if tiers := s.CallcenterTiers(); len(tiers) != 1 || tiers[0] != (CCTier{Queue: "500@acme", Agent: "201@acme", Level: 4, Position: 3}) {
		t.Errorf("tiers %+v", tiers)
	}
	if got := rc.api("callcenter_config agent del 201@acme"); got != "+OK\n" {
		t.Errorf("agent del: %q", got)
	}
	if _, ok := s.CallcenterAgent("201@acme"); ok || len(s.CallcenterTiers()) != 0 {
		t.Error("agent del left the agent or its tier")
	}
	if got := rc.api("callcenter_config queue unload 500@acme"); got != "+OK\n" {
		t.Errorf("unload: %q", got)
	}
	if _, ok := s.CallcenterQueue("500@acme"); ok {
		t.Error("queue still loaded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) < 2 || asked[0] != "callcenter.conf 501@acme" || asked[1] != "callcenter.conf 500@acme" {
		t.Errorf("fetches %q", asked)
	}
}
