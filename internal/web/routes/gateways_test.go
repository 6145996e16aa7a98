package routes_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/racecheck"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// TestSIPTrunkChangesReachFreeSWITCH: a running node loads a new trunk's
// gateway (sofia profile external rescan re-reads sofia.conf), and a
// changed, disabled or deleted trunk's gateway is killed first (killgw),
// since a rescan leaves a gateway the profile holds untouched.
func TestSIPTrunkChangesReachFreeSWITCH(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		e.fs.SetXMLCurlURL(e.URL + "/fs/xml")
		name := "gw_" + strings.ToLower(e.tenant)
		loaded := func() bool { return slices.Contains(e.fs.Gateways(), "external::"+name) }
		// The commands about this trunk (other tests' trunks, platform
		// resources too, reach this node as well).
		sent := func() []string {
			var out []string
			for _, line := range e.fs.Commands() {
				if line == "api sofia profile external rescan" || line == "api sofia profile external killgw "+name {
					out = append(out, line)
				}
			}
			return out
		}
		kills := func() int {
			n := 0
			for _, line := range sent() {
				if strings.HasSuffix(line, " killgw "+name) {
					n++
				}
			}
			return n
		}

		tr := e.Do(t, "POST", "/api/sip_trunks/", e.Key, map[string]any{"name": name, "host": "carrier.example"}).Expect(t, 201).Map(t)
		wait.Until(t, 5*time.Second, "gateway loaded after the create", loaded)
		if kills() != 0 {
			t.Errorf("killgw for a new trunk: %q", sent())
		}

		path := fmt.Sprintf("/api/sip_trunks/%v", tr["id"])
		e.Do(t, "PUT", path, e.Key, map[string]any{"host": "carrier2.example"}).Expect(t, 200)
		wait.Until(t, 5*time.Second, "killgw then rescan after the edit", func() bool {
			got := sent()
			k := slices.Index(got, "api sofia profile external killgw "+name)
			return k >= 0 && slices.Contains(got[k+1:], "api sofia profile external rescan")
		})
		wait.Until(t, 5*time.Second, "gateway re-added after the edit", loaded)

		e.Do(t, "PUT", path, e.Key, map[string]any{"enabled": false}).Expect(t, 200)
		wait.Until(t, 5*time.Second, "gateway gone once disabled", func() bool { return kills() == 2 && !loaded() })

		// Deleting a disabled trunk kills a gateway the node no longer
		// holds: mod_sofia's "-ERR no such gateway." counts as done.
		e.Do(t, "DELETE", path, e.Key, nil).Expect(t, 204)
		wait.Until(t, 5*time.Second, "killgw after the delete", func() bool { return kills() == 3 })
		if loaded() {
			t.Errorf("gateway still loaded: %q", e.fs.Gateways())
		}
	})
}

// TestSIPTrunkResyncAfterReconnect: trunks created, changed and deleted
// while the node's event socket is down reach it when it is back (the
// resync reads "sofia xmlstatus gateway" and compares with the node's
// sofia.conf through the fingerprints of what the node was given): the
// deleted trunk's gateway is killed, the changed one killed and re-added,
// the new one added, and the unchanged one never killed.
func TestSIPTrunkResyncAfterReconnect(t *testing.T) {
	if racecheck.Enabled {
		// The node's connections are dropped while the pool may be
		// authenticating them; eslgo v1.5.2's own close then races its
		// unlocked auth goroutine (seen in CI). `make test` runs this test
		// again without -race.
		t.Skip("skipped under -race: eslgo closing a connection mid-authentication races inside eslgo")
	}
	// Alone: every server resyncs every trunk on its node at connect, and
	// the waits below count this server's resyncs.
	eachCallEnvAlone(t, func(t *testing.T, e *callEnv) {
		e.fs.SetXMLCurlURL(e.URL + "/fs/xml")
		suffix := strings.ToLower(e.tenant)
		keep, edit, gone, fresh := "rk_"+suffix, "re_"+suffix, "rd_"+suffix, "rn_"+suffix
		resyncs := func() int {
			n := 0
			for _, l := range e.Logs.Lines(t) {
				if (l["msg"] == "gateways resynced" || l["msg"] == "gateways resync") && l["node"] == e.fs.Addr() {
					n++
				}
			}
			return n
		}
		wait.Until(t, 60*time.Second, "the gateways resync at connect", func() bool { return resyncs() >= 1 })
		ours := func() []string {
			var out []string
			for _, g := range e.fs.Gateways() {
				if strings.HasSuffix(g, "_"+suffix) {
					out = append(out, strings.TrimPrefix(g, "external::"))
				}
			}
			return out
		}
		ids := map[string]any{}
		for _, name := range []string{keep, edit, gone} {
			ids[name] = e.Do(t, "POST", "/api/sip_trunks/", e.Key, map[string]any{"name": name, "host": "carrier.example"}).Expect(t, 201).Map(t)["id"]
		}
		wait.Until(t, 60*time.Second, "the three gateways loaded", func() bool { return len(ours()) == 3 })

		// The node goes away; trunks change; the node comes back.
		if err := e.fs.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // the pool sees its connections closed
		before := len(e.fs.Commands())
		e.Do(t, "POST", "/api/sip_trunks/", e.Key, map[string]any{"name": fresh, "host": "carrier.example"}).Expect(t, 201)
		e.Do(t, "PUT", fmt.Sprintf("/api/sip_trunks/%v", ids[edit]), e.Key, map[string]any{"host": "carrier2.example"}).Expect(t, 200)
		e.Do(t, "DELETE", fmt.Sprintf("/api/sip_trunks/%v", ids[gone]), e.Key, nil).Expect(t, 204)
		time.Sleep(500 * time.Millisecond) // the changes are delivered (to no node)
		// Sorted by name: rd_, re_, rk_.
		if got := ours(); !slices.Equal(got, []string{gone, edit, keep}) {
			t.Fatalf("a node that was away changed its gateways: %q", got)
		}
		if err := e.fs.Restart(); err != nil {
			t.Fatal(err)
		}
		wait.Until(t, 60*time.Second, "the gateways resync after the reconnect", func() bool { return resyncs() >= 2 })
		defer func() {
			if t.Failed() {
				t.Logf("node holds %q; commands since the disconnect %q", e.fs.Gateways(), e.fs.Commands()[before:])
			}
		}()
		if got := ours(); !slices.Equal(got, []string{edit, keep, fresh}) {
			t.Errorf("gateways after the resync %q, want %q", got, []string{edit, keep, fresh})
		}
		if p, _ := e.fs.GatewayProxy(edit); p != "sip:carrier2.example" {
			t.Errorf("changed gateway's proxy %q, want sip:carrier2.example", p)
		}
		after := e.fs.Commands()[before:]
		for _, want := range []string{"api sofia xmlstatus gateway", "api sofia profile external killgw " + edit,
			"api sofia profile external killgw " + gone, "api sofia profile external rescan"} {
			if !slices.Contains(after, want) {
				t.Errorf("the resync did not send %q", want)
			}
		}
		for _, line := range e.fs.Commands() {
			if line == "api sofia profile external killgw "+keep {
				t.Errorf("the unchanged gateway was killed: %q", line)
			}
		}
	})
}
