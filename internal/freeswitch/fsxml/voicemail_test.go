package fsxml_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// configBody is a configuration fetch as mod_voicemail and mod_directory
// send it: the five basic fields only.
func configBody(t *testing.T, name string) []byte {
	return fakefs.FormWith(capture(t, "003"), "key_value", name)
}

// TestVoicemailReachesFreeSWITCH: voicemail.conf and the boxes' directory
// params come from /fs/xml; an unanswered call to an extension ends in its
// voicemail, *97 and *98 check boxes, a special mailbox is a box reachable
// by its number and as a destination, each proven by the routing trace.
func TestVoicemailReachesFreeSWITCH(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		s.Do(t, "PUT", base+"/extensions/1000", s.Key, map[string]any{"voicemail_pin": "7531", "email": "ann@example.com"}).Expect(t, 200)
		s.Do(t, "POST", base+"/special_mailboxes/", s.Key, map[string]any{
			"name": "After hours", "number": "820", "pin": "86420", "emails": []string{"support@example.com"},
		}).Expect(t, 201)

		conf := fetchXML(t, s, configBody(t, "voicemail.conf"))
		// voicemail.conf spans every tenant (other tests' mailboxes in a
		// shared database add their length profiles): default comes first.
		profiles := conf.all("profile")
		if len(profiles) == 0 || profiles[0].attr("name") != "default" || conf.param("param", "allow-empty-password-auth") != "false" {
			t.Fatalf("voicemail.conf %s", conf.raw)
		}

		for user, want := range map[string][2]string{"1000-" + tenant: {"7531", "/voicemail/1000"}, "820-" + tenant: {"86420", "/voicemail/820"}} {
			doc := fetchXML(t, s, fakefs.FormWith(capture(t, "009"), "user", user, "domain", "sip.test", "key_value", "sip.test"))
			if got := doc.param("param", "vm-password"); got != want[0] {
				t.Errorf("%s vm-password %q, want %q", user, got, want[0])
			}
			if dir := doc.param("param", "vm-storage-dir"); !strings.HasPrefix(dir, "/") || !strings.HasSuffix(dir, "/"+tenant+want[1]) {
				t.Errorf("%s vm-storage-dir %q", user, dir)
			}
			if doc.param("param", "vm-enabled") != "true" || doc.param("param", "vm-mailto") == "" {
				t.Errorf("%s vm params %s", user, doc.raw)
			}
		}

		type result struct {
			Trace map[string]any `json:"trace"`
			XML   string         `json:"xml"`
		}
		trace := func(to string) result {
			var r result
			s.Do(t, "GET", base+"/routing/trace?from=1000&to="+to, s.Key, nil).Expect(t, 200).JSON(t, &r)
			return r
		}
		box := func(b string) string {
			return `application="voicemail" data="default sip.test ` + b + "-" + tenant + `"`
		}
		// Unanswered (or busy, or unregistered): after the bridge, voicemail.
		r := trace("1000")
		bridge := strings.Index(r.XML, `application="bridge"`)
		if r.Trace["match"] != "extension" || bridge < 0 || strings.Index(r.XML, box("1000")) < bridge {
			t.Errorf("extension 1000: %+v\n%s", r.Trace, r.XML)
		}
		// A busy forward elsewhere splits the failover; no answer still
		// ends in voicemail.
		s.Do(t, "PUT", base+"/extensions/1000", s.Key, map[string]any{"forward_busy": map[string]any{"enabled": true, "destination": "820"}}).Expect(t, 200)
		if r := trace("fail-1000"); r.Trace["match"] != "extension_failover" || !strings.Contains(r.XML, box("1000")) || !strings.Contains(r.XML, `data="820 XML `+tenant+`"`) {
			t.Errorf("failover: %+v\n%s", r.Trace, r.XML)
		}
		if r := trace("820"); r.Trace["match"] != "special_mailbox" || !strings.Contains(r.XML, box("820")) {
			t.Errorf("mailbox 820: %+v\n%s", r.Trace, r.XML)
		}
		if r := trace("*97"); r.Trace["feature"] != "voicemail_own" || !strings.Contains(r.XML, `data="check default sip.test &#36;{sb_ext}-`+tenant+`"`) {
			t.Errorf("*97: %+v\n%s", r.Trace, r.XML)
		}
		if r := trace("*98"); r.Trace["feature"] != "voicemail_any" || !strings.Contains(r.XML, `application="play_and_get_digits"`) ||
			!strings.Contains(r.XML, `data="check default sip.test &#36;{sb_vm_box}-`+tenant+`"`) {
			t.Errorf("*98: %+v\n%s", r.Trace, r.XML)
		}

		// A special mailbox as a destination of an inbound route.
		did := randomDID()
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": did, "tenant": tenant}).Expect(t, 201)
		s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{
			"name": "after hours", "did": did, "destination": map[string]any{"type": "special_mailbox", "target": "820"},
		}).Expect(t, 201)
		var pub result
		s.Do(t, "GET", "/api/routing/trace?did="+strings.TrimPrefix(did, "+")+"&from=0825550001", s.Key, nil).Expect(t, 200).JSON(t, &pub)
		if !strings.Contains(pub.XML, `application="transfer" data="820 XML `+tenant+`"`) {
			t.Errorf("inbound to special mailbox: %+v\n%s", pub.Trace, pub.XML)
		}

		// The box's limits: its length picks a profile voicemail.conf
		// renders, its message count gates the recording.
		var mb []map[string]any
		s.Do(t, "GET", base+"/special_mailboxes/", s.Key, nil).Expect(t, 200).JSON(t, &mb)
		s.Do(t, "PUT", base+"/special_mailboxes/"+fmt.Sprint(mb[0]["id"]), s.Key, map[string]any{"max_messages": 5, "max_message_seconds": 90}).Expect(t, 200)
		conf = fetchXML(t, s, configBody(t, "voicemail.conf"))
		var names []string
		for _, p := range conf.all("profile") {
			names = append(names, p.attr("name"))
		}
		if !slices.Contains(names, "default") || !slices.Contains(names, "sb_len_90") {
			t.Errorf("profiles %v", names)
		}
		if r := trace("820"); !strings.Contains(r.XML, `data="sb_len_90 sip.test 820-`+tenant+`"`) ||
			!strings.Contains(r.XML, `{expr(&#36;{vm_boxcount(default/820-`+tenant+`@sip.test|new)}+&#36;{vm_boxcount(default/820-`+tenant+`@sip.test|saved)})} &gt;= 5 ? full : open)}`) {
			t.Errorf("limited mailbox 820: %s", r.XML)
		}
		// A mailbox that does not exist is refused as a destination.
		did2 := randomDID()
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": did2, "tenant": tenant}).Expect(t, 201)
		bad := s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{
			"name": "nowhere", "did": did2, "destination": map[string]any{"type": "special_mailbox", "target": "829"},
		}).Expect(t, 400)
		if !strings.Contains(string(bad.Body), `"destination"`) {
			t.Errorf("refusal %s", bad.Body)
		}
	})
}

// TestCompanyDirectoryReachesFreeSWITCH: the dial-by-name number runs
// mod_directory in the tenant's context on the tenant's own directory
// domain, whose answer lists the listed extensions by name; an extension
// that opts out disappears on the next fetch.
func TestCompanyDirectoryReachesFreeSWITCH(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		s.Do(t, "PUT", base+"/extensions/1000", s.Key, map[string]any{"last_name": "Zulu & <Co>"}).Expect(t, 200)
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001", "first_name": "Bea", "last_name": "Young"}).Expect(t, 201)
		s.Do(t, "PUT", base+"/company_directory_settings", s.Key, map[string]any{"number": "411", "search_by": "first_name", "min_search_digits": 4}).Expect(t, 200)

		conf := fetchXML(t, s, configBody(t, "directory.conf"))
		if len(conf.all("profile")) != 10 {
			t.Fatalf("directory.conf %s", conf.raw)
		}
		var r struct {
			Trace map[string]any `json:"trace"`
			XML   string         `json:"xml"`
		}
		s.Do(t, "GET", base+"/routing/trace?from=1000&to=411", s.Key, nil).Expect(t, 200).JSON(t, &r)
		acts := parse(t, []byte(r.XML)).actions()
		want := "directory min-digits-4 " + tenant + ".directory.invalid " + tenant
		if r.Trace["match"] != "directory" || !slices.Contains(acts, want) || !slices.Contains(acts, "set directory_search_order=first_name") {
			t.Fatalf("411: %+v %q", r.Trace, acts)
		}
		// The domain fetch mod_directory makes (no user, no domain field).
		names := func() []string {
			doc := fetchXML(t, s, fakefs.FormWith(capture(t, "013"), "key_value", tenant+".directory.invalid", "user", "", "domain", "", "key", ""))
			var out []string
			for _, u := range doc.all("user") {
				out = append(out, u.attr("number-alias")+"="+u.param("variable", "directory_full_name"))
			}
			return out
		}
		if got := names(); !slices.Equal(got, []string{"1000=Ann Zulu & <Co>", "1001=Bea Young"}) {
			t.Fatalf("names %q", got)
		}
		s.Do(t, "PUT", base+"/extensions/1000", s.Key, map[string]any{"directory_visible": false}).Expect(t, 200)
		if got := names(); !slices.Equal(got, []string{"1001=Bea Young"}) {
			t.Fatalf("after opting out: %q", got)
		}
		// A dial-by-name destination reaches the number.
		did := randomDID()
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": did, "tenant": tenant}).Expect(t, 201)
		s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{
			"name": "names", "did": did, "destination": map[string]any{"type": "directory", "target": "411"},
		}).Expect(t, 201)
		var pub struct {
			XML string `json:"xml"`
		}
		s.Do(t, "GET", "/api/routing/trace?did="+strings.TrimPrefix(did, "+")+"&from=0825550001", s.Key, nil).Expect(t, 200).JSON(t, &pub)
		if !strings.Contains(pub.XML, `data="411 XML `+tenant+`"`) {
			t.Errorf("inbound to the directory:\n%s", pub.XML)
		}
	})
}
