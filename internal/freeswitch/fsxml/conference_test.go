package fsxml_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// TestConferenceRoomReachesFreeSWITCH: a room created over the API is
// joined from the tenant context, mod_conference's conference.conf fetch
// for its profile gets the PINs (opened from their sealed form) and flags,
// an edit shows on the next fetch, and another tenant's name or the module
// load fetch reveal nothing.
func TestConferenceRoomReachesFreeSWITCH(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		room := s.Do(t, "POST", base+"/conference_rooms/", s.Key, map[string]any{
			"name": "board", "number": "920", "pin": "1234", "moderator_pin": "5678",
			"wait_for_moderator": true, "mute_on_join": true,
		}).Expect(t, 201).Map(t)
		name := fmt.Sprintf("%s_%v", tenant, room["id"])
		acts := fetchXML(t, s, callBody(t, tenant, "920", "1000")).actions()
		if want := "conference " + name + "@" + name + "+flags{mute}"; !slices.Contains(acts, want) {
			t.Fatalf("actions %q lack %q", acts, want)
		}
		conf := func(kv ...string) node {
			return fetchXML(t, s, fakefs.FormWith(capture(t, "003"), append([]string{"key_value", "conference.conf", "Event-Name", "COMMAND"}, kv...)...))
		}
		doc := conf("conference_name", name, "profile_name", name)
		if ps := doc.all("profile"); len(ps) != 1 || ps[0].attr("name") != name {
			t.Fatalf("profiles %s", doc.raw)
		}
		if doc.param("param", "pin") != "1234" || doc.param("param", "moderator-pin") != "5678" || doc.param("param", "conference-flags") != "wait-mod" {
			t.Errorf("profile params %s", doc.raw)
		}
		s.Do(t, "PUT", fmt.Sprintf("%s/conference_rooms/%v", base, room["id"]), s.Key, map[string]any{"pin": "4321"}).Expect(t, 200)
		if got := conf("profile_name", name).param("param", "pin"); got != "4321" {
			t.Errorf("after the edit the pin is %q", got)
		}
		other := s.Tenant(t, "conf")
		if doc := conf("profile_name", fmt.Sprintf("%s_%v", other, room["id"])); !doc.notFound() {
			t.Errorf("another tenant's profile name answered: %s", doc.raw)
		}
		if doc := conf(); len(doc.all("profile")) != 0 || doc.notFound() {
			t.Errorf("module load: want an empty profile list, got %s", doc.raw)
		}
		tr := s.Do(t, "GET", base+"/routing/trace?from=1000&to=920", s.Key, nil).Expect(t, 200).Map(t)
		if trace, _ := tr["trace"].(map[string]any); trace["match"] != "conference" {
			t.Errorf("trace %v does not name the conference", tr)
		}
	})
}
