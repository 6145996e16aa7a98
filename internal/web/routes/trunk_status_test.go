package routes_test

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/platform/racecheck"
	"github.com/switchboard/switchboard/internal/platform/wait"
	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// gatewayState is one node's entry of GET /api/sip_trunks/{id}/status.
type gatewayState struct {
	Gateway    string    `json:"gateway"`
	Node       string    `json:"node"`
	Profile    string    `json:"profile"`
	Condition  string    `json:"condition"`
	State      string    `json:"state"`
	PingStatus string    `json:"ping_status"`
	SIPStatus  int       `json:"sip_status"`
	SIPPhrase  string    `json:"sip_phrase"`
	RegisterIP string    `json:"register_ip"`
	Since      time.Time `json:"since"`
}

// trunkState reads the trunk's live state on node (the fake of this test:
// other tests' nodes load every trunk too and report it under their own
// names); ok is false while the node reports nothing.
func trunkState(t *testing.T, s *apptest.Server, path, node string) (gatewayState, bool) {
	t.Helper()
	var out struct {
		Name     string         `json:"name"`
		Gateways []gatewayState `json:"gateways"`
	}
	s.Do(t, "GET", path, s.Key, nil).Expect(t, 200).JSON(t, &out)
	for _, g := range out.Gateways {
		if g.Node == node {
			return g, true
		}
	}
	return gatewayState{}, false
}

// waitTrunkState waits until the node reports the trunk in condition
// (and, when set, the sofia state).
func waitTrunkState(t *testing.T, s *apptest.Server, path, node, condition, state string) gatewayState {
	t.Helper()
	var got gatewayState
	wait.Until(t, 60*time.Second, "the trunk "+condition+" "+state+" on "+node, func() bool {
		g, ok := trunkState(t, s, path, node)
		got = g
		return ok && g.Condition == condition && (state == "" || g.State == state)
	})
	return got
}

// TestTrunkLiveGatewayState: a trunk's gateway state on a node follows
// what the node says over the event socket (the fake, over TCP, as
// mod_sofia fires it): loaded (gateway_add, then the state read with
// "sofia xmlstatus gateway <name>"), registered, failed with the SIP
// answer; unknown while the node's event connection is down; read again
// with "sofia xmlstatus gateway" when it is back (the node registered
// meanwhile); gone once the trunk is disabled (killgw: DOWN, then
// gateway_delete). The API is as for reading trunks: a tenant key is
// refused, an unknown trunk is 404.
func TestTrunkLiveGatewayState(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		e.fs.SetXMLCurlURL(e.URL + "/fs/xml")
		node := e.fs.Addr()
		name := "ls_" + strings.ToLower(e.tenant)
		tr := e.Do(t, "POST", "/api/sip_trunks/", e.Key, map[string]any{"name": name, "host": "carrier.example", "register": true, "username": "acme", "password": "s3cret-pass"}).Expect(t, 201).Map(t)
		path := fmt.Sprintf("/api/sip_trunks/%v/status", tr["id"])

		loaded := waitTrunkState(t, e.Server, path, node, "registering", "UNREGED")
		if loaded.Profile != "external" || loaded.PingStatus != "DOWN" || loaded.Gateway != name {
			t.Errorf("loaded gateway %+v", loaded)
		}
		if !slices.Contains(e.fs.Commands(), "api sofia xmlstatus gateway "+name) {
			t.Errorf("the added gateway's state was not asked for: %q", e.fs.Commands())
		}

		mustState := func(st fakefs.GatewayState) {
			t.Helper()
			if err := e.fs.SetGatewayState(name, st); err != nil {
				t.Fatal(err)
			}
		}
		mustState(fakefs.GatewayState{State: "TRYING", Ping: "DOWN"})
		mustState(fakefs.GatewayState{State: "REGISTER", Ping: "UP", Status: 200, Phrase: "OK", NetworkIP: "192.0.2.9", NetworkPort: 5060})
		mustState(fakefs.GatewayState{State: "REGED", Ping: "UP"})
		reg := waitTrunkState(t, e.Server, path, node, "registered", "REGED")
		if reg.RegisterIP != "192.0.2.9" || reg.PingStatus != "UP" {
			t.Errorf("registered gateway %+v", reg)
		}

		mustState(fakefs.GatewayState{State: "FAILED", Ping: "UP", Status: 403, Phrase: "Forbidden"})
		failed := waitTrunkState(t, e.Server, path, node, "failed", "FAILED")
		if failed.SIPStatus != 403 || failed.SIPPhrase != "Forbidden" || failed.Since.Before(reg.Since) {
			t.Errorf("failed gateway %+v (registered since %v)", failed, reg.Since)
		}
		// Still failing: the condition holds since the first failure.
		mustState(fakefs.GatewayState{State: "FAIL_WAIT", Ping: "DOWN"})
		wait.Until(t, 60*time.Second, "FAIL_WAIT applied", func() bool {
			g, _ := trunkState(t, e.Server, path, node)
			return g.State == "FAIL_WAIT" && g.Condition == "failed" && g.Since.Equal(failed.Since) && g.SIPStatus == 403
		})

		e.Do(t, "GET", path, e.tenantKey, nil).Expect(t, 403)
		e.Do(t, "GET", "/api/sip_trunks/999999999/status", e.Key, nil).Expect(t, 404)

		if !racecheck.Enabled {
			// The node's event socket goes away; the gateway registers
			// while nobody listens; the socket comes back.
			if err := e.fs.Close(); err != nil {
				t.Fatal(err)
			}
			gone := waitTrunkState(t, e.Server, path, node, "unknown", "FAIL_WAIT")
			if gone.Since.Before(failed.Since) {
				t.Errorf("unknown since %v, before the failure %v", gone.Since, failed.Since)
			}
			before := len(e.fs.Commands())
			mustState(fakefs.GatewayState{State: "REGED", Ping: "UP"})
			if err := e.fs.Restart(); err != nil {
				t.Fatal(err)
			}
			waitTrunkState(t, e.Server, path, node, "registered", "REGED")
			if !slices.Contains(e.fs.Commands()[before:], "api sofia xmlstatus gateway") {
				t.Errorf("the reconnect did not ask for the gateways: %q", e.fs.Commands()[before:])
			}
		}

		// Disabled: the node kills the gateway (DOWN, then removed).
		sent := len(e.fs.Commands())
		t.Cleanup(func() {
			if t.Failed() {
				g, held := trunkState(t, e.Server, path, node)
				t.Logf("after the disable the node got %q; live state %+v (held: %t)", e.fs.Commands()[sent:], g, held)
			}
		})
		e.Do(t, "PUT", fmt.Sprintf("/api/sip_trunks/%v", tr["id"]), e.Key, map[string]any{"enabled": false}).Expect(t, 200)
		wait.Until(t, 60*time.Second, "the killed gateway gone from the live state", func() bool {
			_, ok := trunkState(t, e.Server, path, node)
			return !ok
		})
	})
}

// TestBrowserTrunkLiveState: the trunk's page shows its gateway's state
// per node and follows it without a reload (registered, then failed with
// the SIP answer when the node says so); the trunk list shows it in a
// column; the servers page lists the connected node. No page has WCAG 2
// A/AA violations.
func TestBrowserTrunkLiveState(t *testing.T) {
	fs := startFake(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := apptest.Start(t, apptest.AnyEnv(t), map[string]string{"SWITCHBOARD_LISTEN": addr, "SWITCHBOARD_BASE_URL": "http://" + addr, "SWITCHBOARD_ESL_NODES": fs.Addr()})
	fs.SetXMLCurlURL(s.URL + "/fs/xml")
	waitEvents(t, fs, 1)
	node := fs.Addr()
	name := "lb_" + strings.ToLower(s.Tenant(t, "livegw"))
	tr := s.Do(t, "POST", "/api/sip_trunks/", s.Key, map[string]any{"name": name, "host": "carrier.example", "register": true}).Expect(t, 201).Map(t)
	api := fmt.Sprintf("/api/sip_trunks/%v/status", tr["id"])
	waitTrunkState(t, s, api, node, "registering", "")
	if err := fs.SetGatewayState(name, fakefs.GatewayState{State: "REGED", Ping: "UP"}); err != nil {
		t.Fatal(err)
	}
	waitTrunkState(t, s, api, node, "registered", "REGED")

	tab := browsertest.New(t).Tab(t)
	browserSignIn(tab, s, createAdmin(t, s, "platform_admin", nil))
	tab.Run(chromedp.Navigate(fmt.Sprintf("%s/manage/sip_trunks/%v", s.URL, tr["id"])))
	row := fmt.Sprintf(`(() => { const r = [...document.querySelectorAll('#live-gateway tbody tr')].find(r => r.querySelector('th').innerText === %q); return r ? r.innerText : '' })()`, node)
	tab.WaitJS(row + `.includes('registered')`)
	tab.Axe("a trunk's page with its live state", browsertest.BestPractice)

	// As mod_sofia reports a refused registration: FAILED with the SIP
	// answer, then FAIL_WAIT (waiting to retry) without one.
	for _, st := range []fakefs.GatewayState{{State: "FAILED", Ping: "UP", Status: 403, Phrase: "Forbidden"}, {State: "FAIL_WAIT", Ping: "DOWN"}} {
		if err := fs.SetGatewayState(name, st); err != nil {
			t.Fatal(err)
		}
	}
	tab.WaitJS(row + `.includes('failed') && ` + row + `.includes('403 Forbidden') && ` + row + `.includes('FAIL_WAIT')`)
	tab.WaitText("#live-note", "Live state updated")
	tab.Axe("a trunk's page after the live state changed", browsertest.BestPractice)

	tab.Run(chromedp.Navigate(s.URL + "/manage/sip_trunks/?q=" + name))
	tab.WaitText("#live-list", node+": failed since")
	tab.Axe("the trunk list with the live state column", browsertest.BestPractice)

	tab.Run(chromedp.Navigate(s.URL + "/manage/servers/"))
	nodeRow := fmt.Sprintf(`(() => { const r = [...document.querySelectorAll('#live-nodes tbody tr')].find(r => r.querySelector('th').innerText === %q); return r ? r.innerText : '' })()`, node)
	tab.WaitJS(nodeRow + `.includes('connected since') && !` + nodeRow + `.includes('not connected')`)
	tab.Axe("the servers page with the connected nodes", browsertest.BestPractice)
	tab.NoErrors()
}
