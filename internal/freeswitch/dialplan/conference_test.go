package dialplan

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

func conferenceRequest(t testing.TB, kv ...string) xmlcurl.Request {
	t.Helper()
	return xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "003"), append([]string{"key_value", "conference.conf", "Event-Name", "COMMAND"}, kv...)...))
}

func TestConferenceConfGolden(t *testing.T) {
	snap := loadSnap(t)
	for _, tt := range []struct {
		name string
		req  xmlcurl.Request
	}{
		{"conference_profile_pins", conferenceRequest(t, "conference_name", "acme_91", "profile_name", "acme_91")},
		{"conference_profile_open", conferenceRequest(t, "conference_name", "acme_92", "profile_name", "acme_92")},
		{"conference_module_load", conferenceRequest(t)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := ConferenceConf(testOpts, tt.req, snap)
			wellFormed(t, doc)
			if xmldoc.IsNotFound(doc) {
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
	for name, req := range map[string]xmlcurl.Request{
		"other tenant":  conferenceRequest(t, "profile_name", "other_91"),
		"disabled room": conferenceRequest(t, "profile_name", "acme_93"),
		"unknown room":  conferenceRequest(t, "profile_name", "acme_99"),
		"malformed":     conferenceRequest(t, "profile_name", "acme_9x"),
		"no id":         conferenceRequest(t, "profile_name", "acme"),
		"controls":      conferenceRequest(t, "Action", "request-controls", "Controls", "default", "Conf-Profile", "acme_91"),
	} {
		if doc := ConferenceConf(testOpts, req, snap); !xmldoc.IsNotFound(doc) {
			t.Errorf("%s: want not found, got\n%s", name, doc)
		}
	}
	disabled := loadSnap(t)
	disabled.Tenant.Enabled = false
	if doc := ConferenceConf(testOpts, conferenceRequest(t, "profile_name", "acme_91"), disabled); !xmldoc.IsNotFound(doc) {
		t.Errorf("disabled tenant: want not found, got\n%s", doc)
	}
}

// moderatedRoom91 makes room 91 (PIN 4321, moderator PIN 98765) end when a
// moderator leaves, record, and play class 5 (jazz) to a lone member.
func moderatedRoom91(s *TenantSnapshot) {
	r := &s.ConferenceRooms[0]
	r.EndWhenModeratorLeaves, r.Record, r.MOHClassID = true, true, 5
}

// TestConferenceModeratedGolden: a room that ends when its moderator
// leaves asks the PIN in the dialplan (only the room's PINs pass) and
// transfers to conference-pin-900, where the moderator PIN joins with
// moderator|endconf, the member PIN as a member, and anything else is
// refused (mod_conference checks the PIN again through supplied_pin);
// its profile records into the tenant's recordings and plays the room's
// class while a member is alone.
func TestConferenceModeratedGolden(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	for _, tt := range []struct{ name, number string }{
		{"tenant_conference_moderated", "900"},
		{"tenant_conference_pin_check", "conference-pin-900"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			snap := loadSnap(t)
			moderatedRoom91(snap)
			doc, tr := TenantContext(testOpts, callRequest(t, "acme", tt.number), snap, now)
			renderCase(t, tt.name, doc, tr)
		})
	}
	snap := loadSnap(t)
	moderatedRoom91(snap)
	doc := ConferenceConf(testOpts, conferenceRequest(t, "profile_name", "acme_91"), snap)
	wellFormed(t, doc)
	golden(t, "conference_profile_moderated.xml", doc)
	tree := decodeTree(t, doc)
	if got := tree.find("param", "name", "auto-record", "value"); len(got) != 1 || got[0] != "/var/lib/switchboard/media/acme/recordings/conference-91-${uuid}.wav" {
		t.Fatalf("auto-record %q", got)
	}
	if got := tree.find("param", "name", "moh-sound", "value"); len(got) != 1 || got[0] != "local_stream://acme_jazz" {
		t.Fatalf("moh-sound %q", got)
	}

	// Without a member PIN mod_conference admits only the moderator PIN,
	// and so does the prompt; nobody joins as a member.
	noPIN := loadSnap(t)
	moderatedRoom91(noPIN)
	noPIN.ConferenceRooms[0].PIN = ""
	if doc, _ := TenantContext(testOpts, callRequest(t, "acme", "900"), noPIN, now); !strings.Contains(string(doc), "sb_conf_pin ^98765&#36; 5000") {
		t.Errorf("the prompt of a room without a member PIN:\n%s", doc)
	}
	if doc, _ := TenantContext(testOpts, callRequest(t, "acme", "conference-pin-900"), noPIN, now); strings.Count(string(doc), `application="conference"`) != 1 || !strings.Contains(string(doc), "CALL_REJECTED") {
		t.Errorf("a room without a member PIN lets members in:\n%s", doc)
	}

	// The PIN check exists only for a moderated room with a moderator PIN.
	for name, edit := range map[string]func(s *TenantSnapshot){
		"not moderated":    func(s *TenantSnapshot) {},
		"no moderator PIN": func(s *TenantSnapshot) { moderatedRoom91(s); s.ConferenceRooms[0].ModeratorPIN = "" },
		"room disabled":    func(s *TenantSnapshot) { moderatedRoom91(s); s.ConferenceRooms[0].Enabled = false },
	} {
		s := loadSnap(t)
		edit(s)
		if doc, _ := TenantContext(testOpts, callRequest(t, "acme", "conference-pin-900"), s, now); !xmldoc.IsNotFound(doc) {
			t.Errorf("%s: conference-pin-900 rendered:\n%s", name, doc)
		}
		if doc, _ := TenantContext(testOpts, callRequest(t, "acme", "900"), s, now); s.ConferenceRooms[0].Enabled && strings.Contains(string(doc), "play_and_get_digits") {
			t.Errorf("%s: the room asks the PIN itself:\n%s", name, doc)
		}
	}

	// Without a class of its own a room plays the tenant's, else the
	// platform's; without a node media directory it records under
	// FreeSWITCH's recordings_dir.
	s := loadSnap(t)
	s.ConferenceRooms[1].Record = true
	opts := testOpts
	opts.MediaDir = ""
	open := decodeTree(t, ConferenceConf(opts, conferenceRequest(t, "profile_name", "acme_92"), s))
	if got := open.find("param", "name", "moh-sound", "value"); len(got) != 1 || got[0] != DefaultMOH {
		t.Fatalf("platform moh-sound %q", got)
	}
	if got := open.find("param", "name", "auto-record", "value"); len(got) != 1 || got[0] != "${recordings_dir}/acme/conference-92-${uuid}.wav" {
		t.Fatalf("auto-record without media dir %q", got)
	}
	s.Tenant.MOHClassID = 5
	if got := decodeTree(t, ConferenceConf(opts, conferenceRequest(t, "profile_name", "acme_92"), s)).find("param", "name", "moh-sound", "value"); len(got) != 1 || got[0] != "local_stream://acme_jazz" {
		t.Fatalf("tenant moh-sound %q", got)
	}
}
