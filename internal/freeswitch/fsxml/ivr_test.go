package fsxml_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// TestIVRMenuReachesFreeSWITCH: a menu created over the API is run from
// the tenant context with its exit destination after it, the ivr
// application's ivr.conf fetch gets its options as menu-exec-app entries,
// an edit shows on the next fetch, and the routing trace names it.
func TestIVRMenuReachesFreeSWITCH(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		prompt := s.Do(t, "POST", base+"/voice_prompts/", s.Key, map[string]any{"name": "hello"}).Expect(t, 201).Map(t)
		menu := s.Do(t, "POST", base+"/ivr_menus/", s.Key, map[string]any{
			"name": "main", "number": "630", "greeting_long_prompt_id": prompt["id"],
			"options":          []any{map[string]any{"digits": "1", "destination": map[string]any{"type": "extension", "target": "1000"}}},
			"exit_destination": map[string]any{"type": "voicemail", "target": "1000"},
		}).Expect(t, 201).Map(t)
		name := fmt.Sprintf("%s_%v", tenant, menu["id"])
		acts := fetchXML(t, s, callBody(t, tenant, "630", "1000")).actions()
		if i := slices.Index(acts, "ivr "+name); i < 0 || !slices.Contains(acts[i:], "voicemail default sip.test 1000-"+tenant) {
			t.Fatalf("actions %q lack the menu and then the exit voicemail", acts)
		}
		entries := func() []string {
			doc := fetchXML(t, s, fakefs.FormWith(capture(t, "003"), "key_value", "ivr.conf", "Menu-Name", name))
			var out []string
			for _, e := range doc.all("entry") {
				out = append(out, e.attr("digits")+" "+e.attr("action")+" "+e.attr("param"))
			}
			return out
		}
		if got, want := entries(), []string{"1 menu-exec-app transfer 1000 XML " + tenant}; !slices.Equal(got, want) {
			t.Errorf("entries %q, want %q", got, want)
		}
		s.Do(t, "PUT", fmt.Sprintf("%s/ivr_menus/%v", base, menu["id"]), s.Key, map[string]any{
			"options": []any{map[string]any{"digits": "2", "destination": map[string]any{"type": "hangup", "target": "USER_BUSY"}}},
		}).Expect(t, 200)
		if got, want := entries(), []string{"2 menu-exec-app hangup USER_BUSY"}; !slices.Equal(got, want) {
			t.Errorf("after the edit, entries %q, want %q", got, want)
		}
		tr := s.Do(t, "GET", base+"/routing/trace?from=1000&to=630", s.Key, nil).Expect(t, 200).Map(t)
		if trace, _ := tr["trace"].(map[string]any); trace["match"] != "ivr" {
			t.Errorf("trace %v does not name the menu", tr)
		}
	})
}
