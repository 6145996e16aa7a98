package routes_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
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
		eventually(t, 5*time.Second, "gateway loaded after the create", loaded)
		if kills() != 0 {
			t.Errorf("killgw for a new trunk: %q", sent())
		}

		path := fmt.Sprintf("/api/sip_trunks/%v", tr["id"])
		e.Do(t, "PUT", path, e.Key, map[string]any{"host": "carrier2.example"}).Expect(t, 200)
		eventually(t, 5*time.Second, "killgw then rescan after the edit", func() bool {
			got := sent()
			k := slices.Index(got, "api sofia profile external killgw "+name)
			return k >= 0 && slices.Contains(got[k+1:], "api sofia profile external rescan")
		})
		eventually(t, 5*time.Second, "gateway re-added after the edit", loaded)

		e.Do(t, "PUT", path, e.Key, map[string]any{"enabled": false}).Expect(t, 200)
		eventually(t, 5*time.Second, "gateway gone once disabled", func() bool { return kills() == 2 && !loaded() })

		// Deleting a disabled trunk kills a gateway the node no longer
		// holds: mod_sofia's "-ERR no such gateway." counts as done.
		e.Do(t, "DELETE", path, e.Key, nil).Expect(t, 204)
		eventually(t, 5*time.Second, "killgw after the delete", func() bool { return kills() == 3 })
		if loaded() {
			t.Errorf("gateway still loaded: %q", e.fs.Gateways())
		}
	})
}
