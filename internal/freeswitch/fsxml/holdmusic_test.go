package fsxml_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// TestHoldMusicReachesFreeSWITCH: the tenant's and an extension's
// moh_class_id, set over the API, become the directory user's hold_music
// (the extension's class first) and the hold_music a DID's caller carries,
// each on the next fetch after the write.
func TestHoldMusicReachesFreeSWITCH(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		jazz := s.Do(t, "POST", base+"/music_on_hold/", s.Key, map[string]any{"name": "jazz"}).Expect(t, 201).Map(t)["id"]
		calm := s.Do(t, "POST", base+"/music_on_hold/", s.Key, map[string]any{"name": "calm"}).Expect(t, 201).Map(t)["id"]
		user := "1000-" + tenant
		holdMusic := func() string {
			return fetchXML(t, s, fakefs.FormWith(capture(t, "009"), "user", user, "domain", "sip.test", "key_value", "sip.test",
				"sip_auth_username", user, "sip_auth_realm", "sip.test")).param("variable", "hold_music")
		}
		if got := holdMusic(); got != "" {
			t.Fatalf("hold_music without a class: %q", got)
		}
		s.Do(t, "PUT", "/api/tenants/"+tenant, s.Key, map[string]any{"moh_class_id": jazz}).Expect(t, 200)
		if got := holdMusic(); got != "local_stream://"+tenant+"_jazz" {
			t.Fatalf("tenant's hold_music: %q", got)
		}
		s.Do(t, "PUT", base+"/extensions/1000", s.Key, map[string]any{"moh_class_id": calm}).Expect(t, 200)
		if got := holdMusic(); got != "local_stream://"+tenant+"_calm" {
			t.Fatalf("extension's hold_music: %q", got)
		}
		// The tenant's class is its own: another tenant's is refused, and
		// a class in use cannot be deleted.
		other := s.Tenant(t, "moh")
		foreign := s.Do(t, "POST", "/api/tenants/"+other+"/music_on_hold/", s.Key, map[string]any{"name": "x"}).Expect(t, 201).Map(t)["id"]
		s.Do(t, "PUT", "/api/tenants/"+tenant, s.Key, map[string]any{"moh_class_id": foreign}).Expect(t, 400)
		s.Do(t, "DELETE", fmt.Sprintf("%s/music_on_hold/%v", base, jazz), s.Key, nil).Expect(t, 409)

		// A DID's caller carries the tenant's class.
		did := randomDID()
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": did, "tenant": tenant}).Expect(t, 201)
		s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{
			"name": "main", "did": did, "destination": map[string]any{"type": "extension", "target": "1000"},
		}).Expect(t, 201)
		acts := fetchXML(t, s, callBody(t, "public", did, "0825550123")).actions()
		if want := "set hold_music=local_stream://" + tenant + "_jazz"; !slices.Contains(acts, want) {
			t.Fatalf("public actions %q lack %q", acts, want)
		}
	})
}

// TestModeratedConferenceReachesFreeSWITCH: a room that ends when its
// moderator leaves, records and has its own hold music, created over the
// API: its number asks the PIN and transfers to conference-pin-<number>,
// which joins the moderator PIN with moderator|endconf; its profile
// records into the tenant's recordings and plays the class.
func TestModeratedConferenceReachesFreeSWITCH(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		jazz := s.Do(t, "POST", base+"/music_on_hold/", s.Key, map[string]any{"name": "jazz"}).Expect(t, 201).Map(t)["id"]
		room := s.Do(t, "POST", base+"/conference_rooms/", s.Key, map[string]any{
			"name": "board", "number": "921", "pin": "1234", "moderator_pin": "5678",
			"end_when_moderator_leaves": true, "record": true, "moh_class_id": jazz,
		}).Expect(t, 201).Map(t)
		name := fmt.Sprintf("%s_%v", tenant, room["id"])
		acts := fetchXML(t, s, callBody(t, tenant, "921", "1000")).actions()
		if !slices.Contains(acts, "transfer conference-pin-921 XML "+tenant) || !strings.HasPrefix(acts[len(acts)-2], "play_and_get_digits ") {
			t.Fatalf("room actions %q", acts)
		}
		// The PIN prompt takes only the room's two PINs (three tries), so
		// mod_conference never asks again itself.
		pagd := strings.Fields(acts[len(acts)-2])
		pins := regexp.MustCompile(pagd[len(pagd)-2])
		for pin, ok := range map[string]bool{"1234": true, "5678": true, "9999": false, "12345": false, "": false} {
			if pins.MatchString(pin) != ok {
				t.Errorf("the PIN prompt's %s takes %q: %v", pins, pin, !ok)
			}
		}
		// Where each PIN leads, routed as mod_dialplan_xml does.
		check := fetchXML(t, s, callBody(t, tenant, "conference-pin-921", "1000"))
		for pin, want := range map[string][]string{
			"5678": {"set supplied_pin=${sb_conf_pin}", "conference " + name + "@" + name + "+flags{moderator|endconf}"},
			"1234": {"set supplied_pin=${sb_conf_pin}", "conference " + name + "@" + name},
			"9999": {"hangup CALL_REJECTED"},
			"":     {"hangup CALL_REJECTED"}, // the three tries failed
		} {
			apps, found, err := fakefs.Hunt(check.raw, tenant, map[string]string{"destination_number": "conference-pin-921"}, map[string]string{"sb_conf_pin": pin})
			if err != nil || !found || !slices.Equal(apps, want) {
				t.Errorf("PIN %q runs %q (found %v, %v), want %q\n%s", pin, apps, found, err, want, check.raw)
			}
		}
		doc := fetchXML(t, s, fakefs.FormWith(capture(t, "003"), "key_value", "conference.conf", "Event-Name", "COMMAND", "profile_name", name))
		if got := doc.param("param", "moh-sound"); got != "local_stream://"+tenant+"_jazz" {
			t.Errorf("moh-sound %q", got)
		}
		if got := doc.param("param", "auto-record"); !strings.HasSuffix(got, "/"+tenant+"/recordings/conference-"+fmt.Sprint(room["id"])+"-${uuid}.wav") || !strings.HasPrefix(got, s.Cfg.Media.NodeDir+"/") {
			t.Errorf("auto-record %q", got)
		}
	})
}
