package dialplan

import (
	"testing"

	"github.com/switchboard/switchboard/esl/fakefs"
)

func conferenceRequest(t testing.TB, kv ...string) Request {
	t.Helper()
	return ParseRequest(fakefs.FormWith(capture(t, "003"), append([]string{"key_value", "conference.conf", "Event-Name", "COMMAND"}, kv...)...))
}

func TestConferenceConfGolden(t *testing.T) {
	snap := loadSnap(t)
	for _, tt := range []struct {
		name string
		req  Request
	}{
		{"conference_profile_pins", conferenceRequest(t, "conference_name", "acme_91", "profile_name", "acme_91")},
		{"conference_profile_open", conferenceRequest(t, "conference_name", "acme_92", "profile_name", "acme_92")},
		{"conference_module_load", conferenceRequest(t)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := ConferenceConf(tt.req, snap)
			wellFormed(t, doc)
			if IsNotFound(doc) {
				t.Fatal("not found")
			}
			golden(t, tt.name+".xml", doc)
		})
	}
}

// TestConferenceConfRefuses: a profile of another tenant, of a disabled or
// unknown room, a malformed name, and the caller-controls fetch are not
// answered from here.
func TestConferenceConfRefuses(t *testing.T) {
	snap := loadSnap(t)
	for name, req := range map[string]Request{
		"other tenant":  conferenceRequest(t, "profile_name", "other_91"),
		"disabled room": conferenceRequest(t, "profile_name", "acme_93"),
		"unknown room":  conferenceRequest(t, "profile_name", "acme_99"),
		"malformed":     conferenceRequest(t, "profile_name", "acme_9x"),
		"no id":         conferenceRequest(t, "profile_name", "acme"),
		"controls":      conferenceRequest(t, "Action", "request-controls", "Controls", "default", "Conf-Profile", "acme_91"),
	} {
		if doc := ConferenceConf(req, snap); !IsNotFound(doc) {
			t.Errorf("%s: want not found, got\n%s", name, doc)
		}
	}
	disabled := loadSnap(t)
	disabled.Tenant.Enabled = false
	if doc := ConferenceConf(conferenceRequest(t, "profile_name", "acme_91"), disabled); !IsNotFound(doc) {
		t.Errorf("disabled tenant: want not found, got\n%s", doc)
	}
}

func TestSplitTenantObjectName(t *testing.T) {
	for in, want := range map[string]bool{"acme_91": true, "my_co_7": true, "acme_0": false, "_91": false, "acme_": false, "a-b_1": false} {
		if _, _, ok := SplitTenantObjectName(in); ok != want {
			t.Errorf("%s: ok %v", in, ok)
		}
	}
	if tenant, id, _ := SplitTenantObjectName("my_co_7"); tenant != "my_co" || id != 7 {
		t.Errorf("my_co_7: %s %d", tenant, id)
	}
}
