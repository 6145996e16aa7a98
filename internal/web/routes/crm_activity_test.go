package routes_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// A call from a contact's number, simulated on the fake FreeSWITCH, ends
// up on the contact's timeline linked to its CDR; a call from an unknown
// number does not.
func TestCallFromContactCreatesActivity(t *testing.T) {
	// Alone: every live server turns every ended call into activities (each test server is its own installation over the shared database), and the test counts them exactly.
	eachCallEnvAlone(t, func(t *testing.T, e *callEnv) {
		base := "/api/tenants/" + e.tenant
		ct := e.Do(t, "POST", base+"/contacts/", e.Key, map[string]any{"first_name": "Thandi", "last_name": "Nkosi",
			"phones": []map[string]any{{"label": "mobile", "number": "+27215550123"}}}).Expect(t, 201).Map(t)
		other := e.Do(t, "POST", base+"/contacts/", e.Key, map[string]any{"company_name": "Elsewhere",
			"phones": []map[string]any{{"label": "work", "number": "+27215550999"}}}).Expect(t, 201).Map(t)
		call := func(from string) string {
			uuid, err := e.fs.CreateChannel(fakefs.ChannelSpec{CIDNum: from, Dest: "1001", Context: e.tenant, Answer: true,
				Vars: []fakefs.Header{{Name: "sb_tenant", Value: e.tenant}}})
			if err != nil {
				t.Fatal(err)
			}
			e.waitChannel(t, uuid)
			time.Sleep(50 * time.Millisecond)
			if err := e.fs.Hangup(uuid, "NORMAL_CLEARING"); err != nil {
				t.Fatal(err)
			}
			return uuid
		}
		known := call("+27215550123")
		call("+27215550777") // nobody's number
		var cdrs []map[string]any
		wait.Until(t, 10*time.Second, "two cdrs", func() bool {
			e.Do(t, "GET", "/api/reports/cdrs", e.tenantKey, nil).Expect(t, 200).JSON(t, &cdrs)
			return len(cdrs) == 2
		})
		var cdrID string
		for _, c := range cdrs {
			if c["uuid"] == known {
				cdrID = fmt.Sprint(c["id"])
			}
		}
		var acts []map[string]any
		wait.Until(t, 10*time.Second, "the call activity", func() bool {
			e.Do(t, "GET", base+"/activities/", e.tenantKey, nil).Expect(t, 200).JSON(t, &acts)
			return len(acts) >= 1
		})
		time.Sleep(300 * time.Millisecond) // anything more would show now
		e.Do(t, "GET", base+"/activities/", e.tenantKey, nil).Expect(t, 200).JSON(t, &acts)
		if len(acts) != 1 {
			t.Fatalf("activities %v, want exactly the known caller's", acts)
		}
		a := acts[0]
		rel, _ := a["related"].(map[string]any)
		if a["kind"] != "call" || a["direction"] != "inbound" || a["cdr_id"] != cdrID || rel["type"] != "contact" || rel["id"] != ct["id"] || rel["id"] == other["id"] {
			t.Fatalf("activity %v (contact %v, cdr %s)", a, ct["id"], cdrID)
		}
		if a["subject"] != "Call from +27215550123" {
			t.Errorf("subject %v", a["subject"])
		}
	})
}
