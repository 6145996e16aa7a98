package dialplan

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

func callcenterRequest(t testing.TB, kv ...string) xmlcurl.Request {
	t.Helper()
	return xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "003"), append([]string{"key_value", "callcenter.conf"}, kv...)...))
}

// otherTenant is a second tenant with one queue and one agent, for the
// module-load render that spans tenants.
func otherTenant(t testing.TB) *TenantSnapshot {
	s := loadSnap(t)
	s.Tenant.Tenant = "beta_co"
	s.Queues = []Queue{{ID: 1, Name: "Help", Number: "500", Strategy: "top-down", Enabled: true}}
	s.Agents = []Agent{{ID: 1, AgentNumber: "201", Extension: "2001", Queues: []AgentTier{{QueueID: 1, Level: 3, Position: 4}}, Enabled: true}}
	return s
}

func TestCallcenterConfGolden(t *testing.T) {
	for _, tt := range []struct {
		name  string
		req   xmlcurl.Request
		snaps []*TenantSnapshot
	}{
		{"callcenter_queue", callcenterRequest(t, "CC-Queue", "500@acme"), []*TenantSnapshot{loadSnap(t)}},
		{"callcenter_queue_plain", callcenterRequest(t, "CC-Queue", "501@acme"), []*TenantSnapshot{loadSnap(t)}},
		{"callcenter_module_load", callcenterRequest(t), []*TenantSnapshot{loadSnap(t), otherTenant(t)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := CallcenterConf(testOpts, tt.req, tt.snaps)
			wellFormed(t, doc)
			if xmldoc.IsNotFound(doc) {
				t.Fatal("not found")
			}
			golden(t, tt.name+".xml", doc)
		})
	}
}

// TestCallcenterConfRefuses: a queue of another tenant, a disabled or
// unknown one, or a malformed name is not answered; a disabled tenant's
// queues, agents and tiers are left out at module load.
func TestCallcenterConfRefuses(t *testing.T) {
	for name, q := range map[string]string{"other tenant": "500@beta_co", "disabled": "502@acme", "unknown": "599@acme", "malformed": "500", "bad tenant": "500@ac-me", "not a number": "x5@acme"} {
		if doc := CallcenterConf(testOpts, callcenterRequest(t, "CC-Queue", q), []*TenantSnapshot{loadSnap(t)}); !xmldoc.IsNotFound(doc) {
			t.Errorf("%s: want not found, got\n%s", name, doc)
		}
	}
	off := otherTenant(t)
	off.Tenant.Enabled = false
	doc := string(CallcenterConf(testOpts, callcenterRequest(t), []*TenantSnapshot{off}))
	if strings.Contains(doc, "beta_co") {
		t.Errorf("disabled tenant rendered:\n%s", doc)
	}
}
