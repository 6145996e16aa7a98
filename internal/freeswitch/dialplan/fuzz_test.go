package dialplan

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

var fuzzSeeds = []string{
	"", "plain", `Eve "<x>" & $${default_password} ${system(id)}`, `<action application="system"/>`,
	"]]><!--", "\x00\x01\x1f\x7f", "\xff\xfe", "é ü 漢字 🎉", "\t\r\n", "&amp;&#36;&#x24;", "'\"",
	"<X-PRE-PROCESS cmd=\"exec\" data=\"id\"/>", "\uFFFE\uFFFF", "\xed\xa0\x80",
}

// carried reports whether s can travel through XML unchanged (xmldoc.EscapeTo only
// alters characters XML 1.0 cannot hold).
func carried(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}

func FuzzDirectoryEscaping(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	snap := loadSnap(f)
	req := xmlcurl.ParseRequest(fakefs.FormWith(capture(f, "013"), "key_value", testDomain, "domain", testDomain, "user", "1001-acme", "action", "reverse-auth-lookup"))
	dirDomainReq := xmlcurl.ParseRequest(fakefs.FormWith(capture(f, "013"), "key_value", naming.DirectoryDomain("acme"), "domain", "", "user", "", "key", ""))
	mailboxReq := xmlcurl.ParseRequest(fakefs.FormWith(capture(f, "009"), "key_value", testDomain, "domain", testDomain, "user", "800-acme"))
	f.Fuzz(func(t *testing.T, s string) {
		x := snap.extension("1001")
		saved := *x
		defer func() { *x = saved }()
		x.FirstName, x.LastName, x.CallerID, x.SIPSecret = s, s, s+" <1001>", s
		x.AccountCode, x.VoicemailEmail, x.VoicemailPIN, x.Language = s, s, s, s
		doc := Directory(testOpts, req, snap)
		if err := xmlCheck(doc); err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, doc)
		}
		if strings.Contains(string(doc), "$") {
			t.Fatal("raw '$' in document")
		}
		tree := decodeTree(t, doc)
		if pass := tree.find("param", "name", "reverse-auth-pass", "value"); carried(s) && (len(pass) != 1 || pass[0] != s) {
			t.Fatalf("secret not intact: %q vs %q", pass, s)
		}
		for _, name := range tree.find("variable", "name", "effective_caller_id_name", "value") {
			if strings.Contains(name, "${") || strings.Contains(name, "$$") {
				t.Fatalf("expandable name %q", name)
			}
		}
		// Voicemail params: the PIN only when it is digits, mail addresses
		// only when valid, never anything expandable.
		for _, v := range tree.find("param", "name", "vm-password", "value") {
			if !validPIN(v) {
				t.Fatalf("vm-password %q", v)
			}
		}
		for _, v := range tree.find("param", "name", "vm-mailto", "value") {
			if strings.ContainsAny(v, "${} ") {
				t.Fatalf("vm-mailto %q", v)
			}
		}
		// The same names in the tenant's dial-by-name domain.
		dir := Directory(testOpts, dirDomainReq, snap)
		if err := xmlCheck(dir); err != nil || strings.Contains(string(dir), "$") {
			t.Fatalf("directory domain: %v\n%s", err, dir)
		}
		for _, name := range decodeTree(t, dir).find("variable", "name", "directory_full_name", "value") {
			if strings.Contains(name, "${") || strings.Contains(name, "$$") {
				t.Fatalf("expandable directory name %q", name)
			}
		}
		// A special mailbox's PIN, addresses and language.
		m := &snap.SpecialMailboxes[0]
		savedBox := *m
		defer func() { *m = savedBox }()
		m.PIN, m.Emails, m.Language, m.Name = s, []string{s, "ok@acme.example"}, s, s
		box := Directory(testOpts, mailboxReq, snap)
		if err := xmlCheck(box); err != nil || strings.Contains(string(box), "$") {
			t.Fatalf("mailbox user: %v\n%s", err, box)
		}
		for _, v := range decodeTree(t, box).find("param", "", "", "value") {
			if v != dialString && (strings.Contains(v, "${") || strings.Contains(v, "$$")) { // the domain's dial-string is ours
				t.Fatalf("mailbox param %q", v)
			}
		}
	})
}

func FuzzDialplanEscaping(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	snap := loadSnap(f)
	snap.InboundRoutes[0].RoutingConditionID = 0
	now := at(f, "2026-11-23 10:00")
	outReq := callRequest(f, "acme", "0825550123")
	f.Fuzz(func(t *testing.T, s string) {
		saved := snap.OutboundRoutes[0]
		savedIn := snap.InboundRoutes[0]
		savedName := snap.Tenant.OutboundCallerIDName
		savedHunt, savedRoom, savedMenu := snap.HuntGroups[0], snap.ConferenceRooms[0], snap.IVRMenus[0]
		savedQueue, savedAgent := snap.Queues[0], snap.Agents[1]
		savedMembers := slices.Clone(savedHunt.Members)
		defer func() {
			snap.OutboundRoutes[0], snap.InboundRoutes[0], snap.Tenant.OutboundCallerIDName = saved, savedIn, savedName
			snap.HuntGroups[0], snap.HuntGroups[0].Members = savedHunt, savedMembers
			snap.ConferenceRooms[0], snap.IVRMenus[0] = savedRoom, savedMenu
			snap.Queues[0], snap.Agents[1] = savedQueue, savedAgent
		}()
		savedTenant, savedTrunks := snap.Tenant, slices.Clone(snap.Trunks)
		defer func() { snap.Tenant, snap.Trunks = savedTenant, savedTrunks }()
		snap.OutboundRoutes[0].Name = s
		snap.Tenant.OutboundCallerIDName = s
		// Trunk settings rendered on the bridges (the gateways' are
		// package sofiaconf's FuzzSofiaEscaping), and the tenant's country
		// and caller id they format.
		snap.Tenant.Country = s
		for i := range snap.Trunks {
			snap.Trunks[i].CallerIDFormat, snap.Trunks[i].DTMFMode = s, s
		}
		doc, _ := TenantContext(testOpts, outReq, snap, now)
		checkFuzzDoc(t, doc, "")
		snap.Tenant.CallerID = s
		doc, _ = TenantContext(testOpts, outReq, snap, now)
		checkFuzzDoc(t, doc, "")
		snap.Tenant.CallerID = savedTenant.CallerID
		snap.InboundRoutes[0].Name = s
		snap.InboundRoutes[0].CallerIDNamePrefix = s
		snap.InboundRoutes[0].Destination = Destination{Type: "external", Target: s}

		doc, _ = TenantContext(testOpts, outReq, snap, now)
		checkFuzzDoc(t, doc, s)

		// A hunt group: its name, caller-name prefix and member targets,
		// and the caller's display name.
		g := &snap.HuntGroups[0]
		g.Name, g.CallerIDNamePrefix = s, s
		g.Members = append(slices.Clone(savedMembers), HuntMember{Type: "extension", Target: s}, HuntMember{Type: "external", Target: s})
		doc, _ = TenantContext(testOpts, callRequest(t, "acme", g.Number, "Caller-Caller-ID-Name", s), snap, now)
		checkFuzzDoc(t, doc, s)

		// A conference room: its name and language in the dialplan, its
		// PINs and quality in conference.conf.
		c := &snap.ConferenceRooms[0]
		c.Name, c.Language, c.PIN, c.ModeratorPIN, c.Quality = s, s, s, s, s
		doc, _ = TenantContext(testOpts, callRequest(t, "acme", c.Number), snap, now)
		checkFuzzDoc(t, doc, s)
		conf := ConferenceConf(testOpts, xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "003"), "key_value", "conference.conf", "profile_name", "acme_91")), snap)
		if err := xmlCheck(conf); err != nil || strings.Contains(string(conf), "$") {
			t.Fatalf("conference.conf: %v\n%s", err, conf)
		}
		for _, pin := range decodeTree(t, conf).find("param", "name", "pin", "value") {
			if !conferencePIN(pin) {
				t.Fatalf("pin %q rendered", pin)
			}
		}
		// An IVR menu: its name and language in the dialplan, option digits
		// and targets in ivr.conf.
		m := &snap.IVRMenus[0]
		m.Name, m.Language = s, s
		m.Options = []IVROption{{Digits: s, Destination: Destination{Type: "extension", Target: "1001"}},
			{Digits: "1", Destination: Destination{Type: "external", Target: s}}, {Digits: "2", Destination: Destination{Type: "hangup", Target: s}}}
		doc, _ = TenantContext(testOpts, callRequest(t, "acme", m.Number), snap, now)
		checkFuzzDoc(t, doc, s)
		menu := IVRConf(testOpts, xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "003"), "key_value", "ivr.conf", "Menu-Name", "acme_94")), snap, now)
		if err := xmlCheck(menu); err != nil || strings.Contains(string(menu), "$") {
			t.Fatalf("ivr.conf: %v\n%s", err, menu)
		}
		for _, param := range decodeTree(t, menu).find("entry", "", "", "param") {
			if strings.ContainsAny(param, "${}") {
				t.Fatalf("entry param %q", param)
			}
		}
		// A queue: its name, caller-name prefix, exit key and strategy in
		// the dialplan and callcenter.conf; an agent's numbers in its
		// contact and name.
		q := &snap.Queues[0]
		q.Name, q.CallerIDNamePrefix, q.ExitKey, q.Strategy, q.TimeBaseScore = s, s, s, s, s
		q.ExitDestination = &Destination{Type: "external", Target: s}
		doc, _ = TenantContext(testOpts, callRequest(t, "acme", q.Number, "Caller-Caller-ID-Name", s), snap, now)
		checkFuzzDoc(t, doc, s)
		doc, _ = TenantContext(testOpts, callRequest(t, "acme", "queue-after-"+q.Number), snap, now)
		checkFuzzDoc(t, doc, "") // named after the queue number, not its name
		a := &snap.Agents[1]
		a.ExternalNumber, a.AgentNumber = s, s
		for _, cc := range [][]byte{
			CallcenterConf(testOpts, callcenterRequest(t, "CC-Queue", "500@acme"), []*TenantSnapshot{snap}),
			CallcenterConf(testOpts, callcenterRequest(t), []*TenantSnapshot{snap}),
		} {
			if err := xmlCheck(cc); err != nil {
				t.Fatalf("callcenter.conf: %v\n%s", err, cc)
			}
			tree := decodeTree(t, cc)
			values := append(tree.find("param", "", "", "value"), tree.find("agent", "", "", "contact")...)
			values = append(values, tree.find("agent", "", "", "name")...)
			for _, v := range values {
				// The record template's ${recordings_dir} and ${uuid} are ours.
				v = strings.NewReplacer("${recordings_dir}", "", "${uuid}", "").Replace(v)
				if strings.ContainsAny(v, "${} ") && !strings.HasPrefix(v, "{^^:toll_allow=") {
					t.Fatalf("callcenter.conf value %q", v)
				}
			}
		}
		// The company directory's settings.
		cd := snap.CompanyDirectory
		savedDir := *cd
		cd.SearchBy, cd.MinSearchDigits = s, len(s)
		doc, _ = TenantContext(testOpts, callRequest(t, "acme", cd.Number, "Caller-Caller-ID-Name", s), snap, now)
		*cd = savedDir
		checkFuzzDoc(t, doc, "")
		for _, data := range decodeTree(t, doc).find("action", "application", "directory", "data") {
			if !strings.HasPrefix(data, "min-digits-") || !strings.HasSuffix(data, " acme.directory.invalid acme") {
				t.Fatalf("directory data %q", data)
			}
		}
		fuzzSpecialEndpoints(t, snap, s, now)
		fuzzPickup(t, snap, s, now)
		req := callRequest(t, "public", "+27115550100", "Caller-Caller-ID-Name", s)
		doc, _ = Public(testOpts, req, publicFor(snap, "+27115550100"), now)
		if !xmldoc.IsNotFound(doc) { // an invalid external target is refused: fine
			checkFuzzDoc(t, doc, s)
		}
	})
}

func checkFuzzDoc(t *testing.T, doc []byte, s string) {
	t.Helper()
	if err := xmlCheck(doc); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, doc)
	}
	tree := decodeTree(t, doc)
	if names := tree.find("extension", "", "", "name"); s != "" && carried(s) && (len(names) != 1 || names[0] != s) {
		t.Fatalf("extension name not intact: %q vs %q", names, s)
	}
	for _, data := range tree.find("action", "application", "set", "data") {
		if strings.HasPrefix(data, "effective_caller_id_name=") && (strings.Contains(data, "${") || strings.Contains(data, "$$")) {
			t.Fatalf("expandable caller name %q", data)
		}
	}
	for _, data := range tree.find("action", "application", "bridge", "data") {
		if strings.ContainsAny(data, "${} \t") {
			t.Fatalf("bridge dial string carries expandable or splitting text: %q", data)
		}
	}
	for _, data := range tree.find("action", "application", "limit_execute", "data") {
		f := strings.Split(data, " ")
		if len(f) != 6 || f[0] != "hash" || f[1] != "trunk" || !validTrunkName(f[2]) || f[4] != "bridge" || strings.ContainsAny(f[5], "${}\t") {
			t.Fatalf("limit_execute data %q", data)
		}
	}
	for _, app := range tree.find("action", "", "", "application") {
		switch app {
		case "set", "export", "conference", "ivr", "callcenter", "transfer", "bridge", "limit", "limit_execute", "sched_hangup", "answer", "voicemail", "hangup", "playback", "directory",
			"echo", "sleep", "say", "rxfax", "play_and_get_digits", "pickup", "intercept":
		default:
			t.Fatalf("unexpected application %q", app)
		}
	}
}

// fuzzSpecialEndpoints puts s in every text field of each special endpoint
// (and as its kind and application): what renders is well-formed, named
// intact, and carries s in no action but as a validated value.
func fuzzSpecialEndpoints(t *testing.T, snap *TenantSnapshot, s string, now time.Time) {
	t.Helper()
	for i := range snap.SpecialEndpoints {
		e := &snap.SpecialEndpoints[i]
		saved := *e
		for _, edit := range []func(){
			func() { e.Name, e.ExternalNumber, e.SIPURI, e.FaxEmail, e.CallerIDPolicy = s, s, s, s, s },
			func() { e.Kind = s },
			func() { e.Application = s },
		} {
			*e = saved
			edit()
			// The fetch's Unique-ID (the fax upload is signed for it) is
			// FreeSWITCH's, but checked as if it were anyone's.
			doc, _ := TenantContext(testOpts, callRequest(t, "acme", e.Number, "Caller-Caller-ID-Name", s, "Unique-ID", s), snap, now)
			if xmldoc.IsNotFound(doc) {
				continue
			}
			checkFuzzDoc(t, doc, e.Name)
			tree := decodeTree(t, doc)
			for _, data := range tree.find("action", "application", "transfer", "data") {
				if n, ctx, _ := strings.Cut(data, " "); !validDialable(n) || ctx != "XML acme" {
					t.Fatalf("transfer data %q", data)
				}
			}
			for _, data := range tree.find("action", "application", "say", "data") {
				if data != "en CURRENT_TIME pronounced ${strepoch()}" {
					t.Fatalf("say data %q", data)
				}
			}
			for _, data := range tree.find("action", "application", "rxfax", "data") {
				checkFaxActions(t, tree, e.ID, data, s)
			}
		}
		*e = saved
	}
}

// fuzzPickup puts s in a pickup group's name and members, the picker's
// variables and the tracker's UUIDs: pickup keys stay the tenant's, and an
// intercept only ever names a UUID.
func fuzzPickup(t *testing.T, snap *TenantSnapshot, s string, now time.Time) {
	t.Helper()
	g := &snap.PickupGroups[0]
	saved := *g
	defer func() { *g = saved }()
	g.Name, g.Members = s, append(slices.Clone(saved.Members), s)
	for _, req := range []xmlcurl.Request{
		callRequest(t, "acme", "1001"),
		callRequest(t, "acme", "*8", "variable_sb_ext", s, "variable_sb_tenant", "acme"),
		callRequest(t, "acme", "*8", "variable_sb_ext", "1002", "variable_sb_tenant", s),
	} {
		doc, _ := TenantContext(testOpts, req, snap, now)
		checkFuzzDoc(t, doc, "")
		tree := decodeTree(t, doc)
		for _, data := range tree.find("action", "application", "pickup", "data") {
			if !strings.HasPrefix(data, "acme_") || !allIn(data, "abcdefghijklmnopqrstuvwxyz0123456789_") {
				t.Fatalf("pickup key %q", data)
			}
		}
		for _, data := range tree.find("action", "application", "bridge", "data") {
			for _, leg := range strings.Split(data, ",") {
				if key, ok := strings.CutPrefix(leg, "pickup/"); ok && (!strings.HasPrefix(key, "acme_") || !allIn(key, "abcdefghijklmnopqrstuvwxyz0123456789_")) {
					t.Fatalf("pickup leg %q", leg)
				}
			}
		}
	}
	*g = saved
	ringing := snap.WithRinging("1001", []RingingCall{{UUID: s, CallUUID: s, Node: s}})
	for _, req := range []xmlcurl.Request{
		callRequest(t, "acme", "**1001", "variable_sb_ext", "1002", "variable_sb_tenant", "acme"),
		callRequest(t, "acme", "**1001", "variable_sb_ext", s, "variable_sb_tenant", "acme"),
	} {
		doc, _ := TenantContext(testOpts, req, ringing, now)
		checkFuzzDoc(t, doc, "")
		for _, data := range decodeTree(t, doc).find("action", "application", "intercept", "data") {
			if !validUUID(strings.TrimPrefix(data, "-bleg ")) {
				t.Fatalf("intercept %q", data)
			}
		}
	}
}

// checkFaxActions: rxfax writes under the tenant's fax directory, named by
// the fetch's call id only when it is a UUID (else by ${uuid}, and nothing
// is uploaded); the hangup hook PUTs exactly that file to the signed URL.
func checkFaxActions(t *testing.T, tree xmlNode, endpointID int64, file, callID string) {
	t.Helper()
	const dir = "/var/lib/switchboard/media/acme/fax/"
	var hooks []string
	for _, data := range tree.find("action", "application", "set", "data") {
		if v, ok := strings.CutPrefix(data, "api_hangup_hook="); ok {
			hooks = append(hooks, v)
		}
	}
	if !naming.ValidCallUUID(callID) {
		if file != dir+"${uuid}.tif" || len(hooks) != 0 {
			t.Fatalf("rxfax data %q, hooks %q for call id %q", file, hooks, callID)
		}
		return
	}
	url := testMedia.FaxUploadURL("acme", endpointID, callID)
	if file != dir+callID+".tif" || len(hooks) != 1 || hooks[0] != "http_put "+url+" "+file || url == "" {
		t.Fatalf("rxfax data %q, hooks %q", file, hooks)
	}
}
