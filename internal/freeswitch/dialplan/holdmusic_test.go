package dialplan

import (
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
)

// holdMusicSnap gives acme a default class (5, jazz), a second class
// (7, calm) and extension 1001 its own class (calm).
func holdMusicSnap(t testing.TB) *TenantSnapshot {
	s := loadSnap(t)
	s.MusicOnHold = append(s.MusicOnHold, MusicOnHold{ID: 7, Name: "calm"})
	s.Tenant.MOHClassID = 5
	s.extension("1001").MOHClassID = 7
	return s
}

// TestHoldMusicGolden: a directory user's hold_music (what the other party
// hears while the user holds) is the extension's class, else the tenant's;
// a call to a DID carries the tenant's on the caller's channel; queues
// and rooms without a class play the tenant's; with no class anywhere
// nothing is set (FreeSWITCH plays local_stream://moh).
func TestHoldMusicGolden(t *testing.T) {
	snap := holdMusicSnap(t)
	for _, tt := range []struct{ name, user, want string }{
		{"dir_hold_music_extension", "1001-acme", "local_stream://acme_calm"},
		{"dir_hold_music_tenant", "1002-acme", "local_stream://acme_jazz"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := Directory(testOpts, dirRequest(t, "009", "user", tt.user), snap)
			wellFormed(t, doc)
			golden(t, tt.name+".xml", doc)
			if got := decodeTree(t, doc).find("variable", "name", "hold_music", "value"); len(got) != 1 || got[0] != tt.want {
				t.Fatalf("hold_music %q, want %s", got, tt.want)
			}
		})
	}
	t.Run("public_hold_music", func(t *testing.T) {
		doc, tr := Public(testOpts, callRequest(t, "public", "+27115550100"), publicFor(snap, "+27115550100"), at(t, "2026-11-23 10:00"))
		renderCase(t, "public_hold_music", doc, tr)
		if got := decodeTree(t, doc).find("action", "application", "set", "data"); !contains(got, "hold_music=local_stream://acme_jazz") {
			t.Fatalf("public sets %q", got)
		}
	})

	// A class whose name a stream cannot carry falls back to the tenant's.
	bad := holdMusicSnap(t)
	bad.extension("1001").MOHClassID = 6
	if got := bad.holdMusic(bad.extension("1001")); got != "local_stream://acme_jazz" {
		t.Fatalf("bad class: %q", got)
	}
	// Queues: their own class, else the tenant's.
	for _, q := range []struct {
		i    int
		want string
	}{{0, "local_stream://acme_jazz"}, {1, "local_stream://acme_jazz"}} {
		if got := queueParam(QueueParams(testOpts, snap, &snap.Queues[q.i]), "moh-sound"); got != q.want {
			t.Fatalf("queue %d moh-sound %q", q.i, got)
		}
	}
	// No class anywhere: no hold_music (FreeSWITCH's default), the
	// platform's stream for queues.
	plain := loadSnap(t)
	if got := decodeTree(t, Directory(testOpts, dirRequest(t, "009", "user", "1002-acme"), plain)).find("variable", "name", "hold_music", "value"); len(got) != 0 {
		t.Fatalf("hold_music without a class: %q", got)
	}
	if doc, _ := Public(testOpts, callRequest(t, "public", "+27115550100"), publicFor(plain, "+27115550100"), at(t, "2026-11-23 10:00")); strings.Contains(string(doc), "hold_music") {
		t.Fatalf("public sets hold_music without a class:\n%s", doc)
	}
	if got := queueParam(QueueParams(testOpts, plain, &plain.Queues[1]), "moh-sound"); got != DefaultMOH {
		t.Fatalf("queue without any class: %q", got)
	}
}

func queueParam(params [][2]string, name string) string {
	for _, p := range params {
		if p[0] == name {
			return p[1]
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestIVRDirectDialGolden: a menu allowing direct dialling gets one more
// entry, a regular expression of the tenant's enabled extension numbers
// (not a disabled one, not one an option binds), transferring to the
// number dialled; digit-len grows to the longest number. Without
// direct_dial, or with no extension left, there is no such entry.
func TestIVRDirectDialGolden(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	snap := loadSnap(t)
	m := &snap.IVRMenus[0]
	m.DirectDial, m.DigitLen = true, 1
	m.Options = append(m.Options, IVROption{Digits: "1005", Destination: Destination{Type: "voicemail", Target: "1005"}})
	doc := IVRConf(testOpts, ivrRequest(t, "acme_94"), snap, now)
	wellFormed(t, doc)
	golden(t, "ivr_menu_direct_dial.xml", doc)
	tree := decodeTree(t, doc)
	digits := tree.find("entry", "param", "transfer $1 XML acme", "digits")
	if len(digits) != 1 || digits[0] != "/^(1001|1002|1003|1004)$/" {
		t.Fatalf("direct-dial entry %q", digits)
	}
	if got := tree.find("menu", "", "", "digit-len"); len(got) != 1 || got[0] != "4" {
		t.Fatalf("digit-len %q", got)
	}
	// What FreeSWITCH does with it: match the dialled digits, substitute $1.
	re := regexp.MustCompile(strings.Trim(digits[0], "/"))
	for number, ok := range map[string]bool{"1001": true, "1004": true, "1005": false, "1009": false, "10011": false, "0825550123": false, "*97": false} {
		if re.MatchString(number) != ok {
			t.Errorf("direct dial %s: match %v", number, !ok)
		}
	}
	m.DirectDial = false
	if doc := IVRConf(testOpts, ivrRequest(t, "acme_94"), snap, now); strings.Contains(string(doc), "&#36;1") {
		t.Fatalf("direct dial without direct_dial:\n%s", doc)
	}
	m.DirectDial = true
	for i := range snap.Extensions {
		snap.Extensions[i].Enabled = false
	}
	if doc := IVRConf(testOpts, ivrRequest(t, "acme_94"), snap, now); strings.Contains(string(doc), "&#36;1") {
		t.Fatalf("direct dial with no extension:\n%s", doc)
	}
}

// FuzzHoldMusicEscaping: the fields this file's features render (class
// names in hold_music, moh-sound and the queue's moh-sound, the moderator
// PIN in the conference PIN check, extension numbers in the IVR's
// direct-dial expression) yield well-formed XML whatever they hold, and
// reach it only in their safe forms.
func FuzzHoldMusicEscaping(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("jazz_2")
	f.Add("12345")
	now := at(f, "2026-11-23 10:00")
	stream := regexp.MustCompile(`^local_stream://(moh|acme_[a-z0-9_]{1,32})$`)
	f.Fuzz(func(t *testing.T, s string) {
		snap := holdMusicSnap(t)
		snap.MusicOnHold[0].Name, snap.MusicOnHold[2].Name = s, s
		dir := Directory(testOpts, dirRequest(t, "009", "user", "1001-acme"), snap)
		if err := xmlCheck(dir); err != nil || strings.Contains(string(dir), "$") {
			t.Fatalf("directory: %v\n%s", err, dir)
		}
		for _, v := range decodeTree(t, dir).find("variable", "name", "hold_music", "value") {
			if !stream.MatchString(v) {
				t.Fatalf("hold_music %q", v)
			}
		}
		pub, _ := Public(testOpts, callRequest(t, "public", "+27115550100"), publicFor(snap, "+27115550100"), now)
		checkFuzzDoc(t, pub, "")
		for _, v := range decodeTree(t, pub).find("action", "application", "set", "data") {
			if v, ok := strings.CutPrefix(v, "hold_music="); ok && !stream.MatchString(v) {
				t.Fatalf("public hold_music %q", v)
			}
		}
		if v := queueParam(QueueParams(testOpts, snap, &snap.Queues[1]), "moh-sound"); !stream.MatchString(v) {
			t.Fatalf("queue moh-sound %q", v)
		}

		// A moderated room whose moderator PIN is s.
		c := &snap.ConferenceRooms[0]
		c.EndWhenModeratorLeaves, c.Record, c.MOHClassID, c.ModeratorPIN = true, true, 5, s
		for _, num := range []string{c.Number, confPINPrefix + c.Number} {
			doc, _ := TenantContext(testOpts, callRequest(t, "acme", num), snap, now)
			checkFuzzDoc(t, doc, "")
			for _, e := range decodeTree(t, doc).find("condition", "field", "${sb_conf_pin}", "expression") {
				if !regexp.MustCompile(`^\^[0-9]{3,10}\$$`).MatchString(e) {
					t.Fatalf("PIN condition %q", e)
				}
			}
		}
		conf := ConferenceConf(testOpts, conferenceRequest(t, "profile_name", "acme_91"), snap)
		if err := xmlCheck(conf); err != nil || strings.Contains(string(conf), "$") {
			t.Fatalf("conference.conf: %v\n%s", err, conf)
		}
		for _, v := range decodeTree(t, conf).find("param", "name", "moh-sound", "value") {
			if !stream.MatchString(v) {
				t.Fatalf("moh-sound %q", v)
			}
		}

		// Direct dialling with an extension numbered s.
		m := &snap.IVRMenus[0]
		m.DirectDial = true
		snap.Extensions[0].Name = s
		menu := IVRConf(testOpts, xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "003"), "key_value", "ivr.conf", "Menu-Name", "acme_94")), snap, now)
		if err := xmlCheck(menu); err != nil || strings.Contains(string(menu), "$") {
			t.Fatalf("ivr.conf: %v\n%s", err, menu)
		}
		for _, d := range decodeTree(t, menu).find("entry", "param", "transfer $1 XML acme", "digits") {
			if !regexp.MustCompile(`^/\^\(([0-9]{2,10}\|)*[0-9]{2,10}\)\$/$`).MatchString(d) {
				t.Fatalf("direct-dial digits %q", d)
			}
		}
	})
}
