package fakefs

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// gatewayEventLines reads the next event frame and returns its header
// lines from Event-Subclass up to the standard block (they come first in a
// CUSTOM event), and the Event-Name.
func gatewayEventLines(t *testing.T, rc *rawClient) (lines []string, name string) {
	t.Helper()
	h, body := rc.frame()
	if h.Get("Content-Type") != "text/event-plain" {
		t.Fatalf("frame %v", h)
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "Event-Name: ") {
			return lines, strings.TrimPrefix(line, "Event-Name: ")
		}
		lines = append(lines, line)
	}
	t.Fatalf("no Event-Name in %q", body)
	return nil, ""
}

// TestSofiaGatewayEvents: the fake fires mod_sofia's gateway events with
// sofia_reg.c's headers, in switch_event_fire's order (the subclass and
// the module's headers, then the standard block): gateway_add when a
// rescan loads a gateway, gateway_state on each change a test makes
// (Register-Network-IP/Port when known, Phrase and Status only when a SIP
// answer caused it), and on killgw a DOWN state then gateway_delete;
// xmlstatus follows the state (with <retry> while failing) and a state
// mod_sofia does not have, or a gateway the fake does not hold, is refused.
func TestSofiaGatewayEvents(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<document type="freeswitch/xml"><section name="configuration"><configuration name="sofia.conf">` +
			`<profiles><profile name="external"><gateways><gateway name="carrier"><param name="proxy" value="sip.example"/>` +
			`<param name="retry-seconds" value="60"/></gateway></gateways></profile></profiles></configuration></section></document>`))
	}))
	defer srv.Close()
	s := startFake(t, Options{XMLCurlURL: srv.URL})
	ev := dialListener(t, s.Addr(), "CUSTOM sofia::gateway_state sofia::gateway_add sofia::gateway_delete")
	rc := dialAuthed(t, s.Addr())
	rc.api("sofia profile external rescan")
	expect := func(what string, want ...string) {
		t.Helper()
		lines, name := gatewayEventLines(t, ev)
		if name != "CUSTOM" || strings.Join(lines, "|") != strings.Join(want, "|") {
			t.Fatalf("%s: %s %q, want CUSTOM %q", what, name, lines, want)
		}
	}
	expect("load", "Event-Subclass: sofia%3A%3Agateway_add", "Gateway: carrier", "profile-name: external")

	if err := s.SetGatewayState("carrier", GatewayState{State: "REGED", Ping: "UP", Status: 200, Phrase: "OK", NetworkIP: "192.0.2.7", NetworkPort: 5060}); err != nil {
		t.Fatal(err)
	}
	expect("registered", "Event-Subclass: sofia%3A%3Agateway_state", "Gateway: carrier", "State: REGED", "Ping-Status: UP",
		"Register-Network-IP: 192.0.2.7", "Register-Network-Port: 5060", "Phrase: OK", "Status: 200")
	status := rc.api("sofia xmlstatus gateway carrier")
	if !strings.Contains(status, "<state>REGED</state>\n    <status>UP</status>\n") || strings.Contains(status, "<retry>") {
		t.Fatalf("registered status:\n%s", status)
	}

	if err := s.SetGatewayState("carrier", GatewayState{State: "FAIL_WAIT", Ping: "DOWN"}); err != nil {
		t.Fatal(err)
	}
	expect("failing", "Event-Subclass: sofia%3A%3Agateway_state", "Gateway: carrier", "State: FAIL_WAIT", "Ping-Status: DOWN",
		"Register-Network-IP: 192.0.2.7", "Register-Network-Port: 5060")
	status = rc.api("sofia xmlstatus gateway")
	if !strings.Contains(status, "<state>FAIL_WAIT</state>\n    <status>DOWN</status>\n    <uptime-usec>0</uptime-usec>\n") ||
		!regexp.MustCompile(`\n    <retry>(59|60)s</retry>\n  </gateway>\n</gateways>\n$`).MatchString(status) {
		t.Fatalf("failing status:\n%s", status)
	}

	for _, bad := range []struct {
		name string
		st   GatewayState
	}{{"nosuch", GatewayState{State: "REGED", Ping: "UP"}}, {"carrier", GatewayState{State: "REGISTERED", Ping: "UP"}}, {"carrier", GatewayState{State: "REGED"}}} {
		if err := s.SetGatewayState(bad.name, bad.st); err == nil {
			t.Errorf("SetGatewayState(%s, %+v) accepted", bad.name, bad.st)
		}
	}

	if got := rc.api("sofia profile external killgw carrier"); got != "+OK gateway marked for deletion.\n" {
		t.Fatalf("killgw: %q", got)
	}
	expect("killed", "Event-Subclass: sofia%3A%3Agateway_state", "Gateway: carrier", "State: DOWN", "Ping-Status: DOWN",
		"Register-Network-IP: 192.0.2.7", "Register-Network-Port: 5060")
	expect("removed", "Event-Subclass: sofia%3A%3Agateway_delete", "profile-name: external", "Gateway: carrier")
	if got := rc.api("sofia xmlstatus gateway carrier"); got != "Invalid Gateway!\n" {
		t.Fatalf("killed gateway: %q", got)
	}
}
