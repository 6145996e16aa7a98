package dialplan

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// The fuzz tests below put one string in every tenant-controlled field
// that reaches a document the other fuzz tests do not render:
// local_stream.conf, callcenter.conf, voicemail.conf and directory.conf,
// feature-code extensions, and the ring order of random and round-robin
// hunt groups. Each document must be well-formed, hold only the elements
// and attributes the renderer writes (nothing injected), never carry a raw
// '$' (the preprocessor's $${...}), and carry no "${" or "$$" from user
// data where FreeSWITCH expands values at run time.

// shape lists, per element, the attributes it may carry.
type shape map[string][]string

// checkShape fails when doc is not well-formed, holds a raw '$', or holds
// an element or attribute outside allowed.
func checkShape(t *testing.T, what string, doc []byte, allowed shape) xmlNode {
	t.Helper()
	if err := xmlCheck(doc); err != nil {
		t.Fatalf("%s not well-formed: %v\n%s", what, err, doc)
	}
	if strings.Contains(string(doc), "$") {
		t.Fatalf("%s: raw '$' in the document\n%s", what, doc)
	}
	tree := decodeTree(t, doc)
	var walk func(n xmlNode)
	walk = func(n xmlNode) {
		attrs, ok := allowed[n.XMLName.Local]
		if !ok {
			t.Fatalf("%s: element <%s> injected\n%s", what, n.XMLName.Local, doc)
		}
		for _, a := range n.Attrs {
			if !slices.Contains(attrs, a.Name.Local) {
				t.Fatalf("%s: attribute %s on <%s> injected\n%s", what, a.Name.Local, n.XMLName.Local, doc)
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(tree)
	return tree
}

// expandable reports whether v holds text FreeSWITCH would expand.
func expandable(v string) bool { return strings.Contains(v, "${") || strings.Contains(v, "$$") }

var confShape = shape{
	"document":      {"type"},
	"section":       {"name", "description"},
	"configuration": {"name", "description"},
	"settings":      {},
	"param":         {"name", "value"},
	"result":        {"status"},
}

func with(base shape, more shape) shape {
	out := shape{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// FuzzLocalStreamConf: a music-on-hold class's tenant, name and chime file,
// and the node's media directory, in local_stream.conf.
func FuzzLocalStreamConf(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 8000)
	}
	f.Add("jazz", 16000)
	f.Add("a..b", 0)
	f.Add("..", 0)
	f.Add("closed_holiday.wav", -1)
	allowed := with(confShape, shape{"directory": {"name", "path"}})
	f.Fuzz(func(t *testing.T, s string, n int) {
		good := MOHClass{Tenant: "acme", Name: "jazz", Rate: n, ChimeFile: "chime.wav", ChimeFrequency: n, ChimeMax: n, TenantEnabled: true}
		classes := []MOHClass{good}
		for _, edit := range []func(c *MOHClass){
			func(c *MOHClass) { c.Tenant = s },
			func(c *MOHClass) { c.Name = s },
			func(c *MOHClass) { c.ChimeFile = s },
			func(c *MOHClass) { c.Tenant, c.Name, c.ChimeFile = s, s, s },
		} {
			c := good
			edit(&c)
			classes = append(classes, c)
		}
		for _, media := range []MediaURLs{testMedia, {}} {
			for _, dir := range []string{testOpts.MediaDir, s, "/media/" + s} {
				doc := LocalStreamConf(dir, "", media, classes)
				tree := checkShape(t, "local_stream.conf", doc, allowed)
				names := tree.find("directory", "", "", "name")
				if len(names) > len(classes) {
					t.Fatalf("%d directories from %d classes", len(names), len(classes))
				}
				for _, v := range append(append(names, tree.find("directory", "", "", "path")...), tree.find("param", "", "", "value")...) {
					if strings.ContainsAny(v, "${} ,!") {
						t.Fatalf("local_stream.conf value %q", v)
					}
				}
				// Below the media directory (the operator's), tenant data
				// never climbs out of the tenant's own directory.
				for _, v := range tree.find("directory", "", "", "path") {
					rel, ok := strings.CutPrefix(v, strings.TrimRight(dir, "/")+"/")
					if !ok || !strings.HasPrefix(rel, "acme/moh/") && !strings.HasPrefix(rel, s+"/moh/") || slices.Contains(strings.Split(rel, "/"), "..") {
						t.Fatalf("class path %q below %q", v, dir)
					}
				}
				if dir == testOpts.MediaDir && (len(names) == 0 || names[0] != "acme_jazz") {
					t.Fatalf("the valid class is missing: %q", names)
				}
			}
		}
		// The platform's default stream from a default directory s: only a
		// safe absolute path, and only the three moh streams.
		def := checkShape(t, "local_stream.conf", LocalStreamConf(testOpts.MediaDir, s, testMedia, nil), allowed)
		for _, v := range def.find("directory", "", "", "path") {
			if !SafeNodePath(v) || !strings.HasPrefix(v, strings.TrimRight(s, "/")+"/") {
				t.Fatalf("default stream path %q from %q", v, s)
			}
		}
		if names := def.find("directory", "", "", "name"); len(names) != 0 && !slices.Equal(names, []string{"moh/8000", "moh/16000", "moh"}) {
			t.Fatalf("default streams %q", names)
		}
	})
}

// FuzzCallcenterConf: every string of a queue and an agent, the queue's
// music-on-hold class name and its prompts' file names, in callcenter.conf
// (one queue, and module load).
func FuzzCallcenterConf(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("round-robin")
	f.Add("external")
	snap := loadSnap(f)
	allowed := with(confShape, shape{
		"queues": {}, "queue": {"name"}, "agents": {}, "tiers": {},
		"agent": {"name", "type", "contact", "max-no-answer", "wrap-up-time", "reject-delay-time", "busy-delay-time", "no-answer-delay-time", "status"},
		"tier":  {"agent", "queue", "level", "position"},
	})
	f.Fuzz(func(t *testing.T, s string) {
		saved := *snap
		savedQ, savedA := slices.Clone(snap.Queues), slices.Clone(snap.Agents)
		savedM, savedP := slices.Clone(snap.MusicOnHold), slices.Clone(snap.VoicePrompts)
		defer func() {
			*snap = saved
			snap.Queues, snap.Agents, snap.MusicOnHold, snap.VoicePrompts = savedQ, savedA, savedM, savedP
		}()
		snap.Queues, snap.Agents = slices.Clone(savedQ), slices.Clone(savedA)
		snap.MusicOnHold, snap.VoicePrompts = slices.Clone(savedM), slices.Clone(savedP)
		q := &snap.Queues[1]
		q.Name, q.Number, q.Strategy, q.TimeBaseScore, q.ExitKey, q.CallerIDNamePrefix = s, s, s, s, s, s
		q.Record, q.MOHClassID, q.GreetingPromptID, q.AnnouncePromptID, q.AnnounceFrequencySeconds = true, 5, 31, 31, 45
		snap.MusicOnHold[0].Name, snap.VoicePrompts[0].Filename = s, s
		for i := range snap.Agents {
			a := &snap.Agents[i]
			a.Extension, a.ContactType, a.Status = s, s, s
			if i == 0 {
				a.AgentNumber, a.ExternalNumber = s, s
			}
		}
		snap.Agents = append(snap.Agents, Agent{ID: 64, AgentNumber: "204", Extension: "1003", ContactType: s, ExternalNumber: s, Status: s, Enabled: true,
			Queues: []AgentTier{{QueueID: 72, Level: len(s), Position: -len(s)}}})
		for _, req := range []xmlcurl.Request{
			callcenterRequest(t, "CC-Queue", "500@acme"),
			callcenterRequest(t, "CC-Queue", s+"@acme"),
			callcenterRequest(t, "CC-Queue", "500@"+s),
			callcenterRequest(t),
		} {
			doc := CallcenterConf(testOpts, req, []*TenantSnapshot{snap})
			if xmldoc.IsNotFound(doc) {
				continue
			}
			tree := checkShape(t, "callcenter.conf", doc, allowed)
			for _, v := range tree.find("param", "", "", "value") {
				// The record template's ${recordings_dir} and ${uuid} are ours.
				v = strings.NewReplacer("${recordings_dir}", "", "${uuid}", "").Replace(v)
				if strings.ContainsAny(v, "${} ,") {
					t.Fatalf("queue param %q", v)
				}
			}
			for _, c := range tree.find("agent", "", "", "contact") {
				if expandable(c) || strings.ContainsAny(c, " '") || !strings.HasPrefix(c, "user/") && !strings.HasPrefix(c, "{^^:toll_allow=") {
					t.Fatalf("agent contact %q", c)
				}
			}
			for _, attr := range []string{"name", "status"} {
				for _, v := range tree.find("agent", "", "", attr) {
					if strings.ContainsAny(v, "${}'") {
						t.Fatalf("agent %s %q", attr, v)
					}
				}
			}
			for _, v := range append(tree.find("queue", "", "", "name"), tree.find("tier", "", "", "queue")...) {
				if _, _, ok := naming.SplitCallcenterName(v); !ok {
					t.Fatalf("queue name %q", v)
				}
			}
		}
	})
}

// FuzzVoicemailDirectoryConf: voicemail.conf from the special mailboxes'
// message lengths (the only tenant data it holds) and the node media
// directory; directory.conf, which holds no tenant data at all (the
// dial-by-name settings reach the dialplan and the directory domain, both
// fuzzed above).
func FuzzVoicemailDirectoryConf(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 120, -5)
	}
	f.Add("/var/lib/switchboard/media", 1<<40, 999)
	allowed := with(confShape, shape{"profiles": {}, "profile": {"name"}, "email": {}})
	dirShape := with(confShape, shape{"profiles": {}, "profile": {"name"}})
	fixed := DirectoryConf()
	f.Fuzz(func(t *testing.T, dir string, a, b int) {
		if d := DirectoryConf(); string(d) != string(fixed) {
			t.Fatal("directory.conf varies")
		}
		for _, v := range checkShape(t, "directory.conf", fixed, dirShape).find("param", "", "", "value") {
			if strings.ContainsAny(v, "${}") {
				t.Fatalf("directory.conf value %q", v)
			}
		}
		opts := testOpts
		opts.MediaDir = dir
		doc := VoicemailConf(opts, []int{a, b, a, 0})
		tree := checkShape(t, "voicemail.conf", doc, allowed)
		profiles := tree.find("profile", "", "", "name")
		if len(profiles) < 1 || len(profiles) > 3 || profiles[0] != naming.VoicemailProfile {
			t.Fatalf("profiles %q", profiles)
		}
		for _, p := range profiles[1:] {
			if n, ok := strings.CutPrefix(p, "sb_len_"); !ok || !validNumber(n) {
				t.Fatalf("profile %q", p)
			}
		}
		for _, v := range tree.find("param", "", "", "value") {
			if v != "${voicemail_account}@${voicemail_domain}" && strings.ContainsAny(v, "${}") {
				t.Fatalf("voicemail.conf value %q", v)
			}
		}
		for _, v := range tree.find("param", "name", "max-record-len", "value") {
			if n, err := strconv.Atoi(v); err != nil || n < minRecordSeconds || n > maxRecordSeconds {
				t.Fatalf("max-record-len %q", v)
			}
		}
	})
}

var dialplanShape = shape{
	"document": {"type"}, "section": {"name", "description"}, "result": {"status"},
	"context": {"name"}, "extension": {"name"}, "condition": {"field", "expression", "break"},
	"action": {"application", "data", "inline"}, "anti-action": {"application", "data", "inline"},
}

// featureNames is the feature enum of resources.md §2.11.
var featureNames = []string{"voicemail_own", "voicemail_any", "voicemail_direct", "group_pickup", "directed_pickup", "dnd_toggle",
	"forward_all_on", "forward_all_off", "office_mode_toggle", "office_mode_day", "office_mode_night", "agent_login_logout",
	"agent_pause_toggle", "record_prompt", "echo_test", "moh_test", "park"}

// ourExpansions are the run-time variables the renderer writes itself
// (channel variables it set or FreeSWITCH's own), never user data.
var ourExpansions = strings.NewReplacer("${sb_ext}", "", "${uuid}", "", "${sb_vm_box}", "", "${hold_music}", "", "${sb_called_ext}", "")

// FuzzFeatureCodes: a feature extension's code and feature name, the
// digits dialled after a code, and the caller's variables, in the tenant
// context. Only feature-code applications appear; the feature event names
// a known feature and at most a dialable argument (its data is a list of
// headers split at ','); nothing expandable but our own variables. Call
// parking (the code followed by s, park+s, park-return-s) parks only in the
// tenant's own lot, in a slot of the lot or one valet chooses in its range.
func FuzzFeatureCodes(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range []string{"*732", "**", "*72", "1001", "0825550123", "*22", "record_prompt", "forward_all_on", "park", "5", "20", "21", "05", "1002"} {
		f.Add(s)
	}
	snap := loadSnap(f)
	now := at(f, "2026-11-23 10:00")
	body := capture(f, "011") // read once: callRequest reads the file each time
	call := func(number string, kv ...string) xmlcurl.Request {
		return xmlcurl.ParseRequest(fakefs.FormWith(body, append([]string{"Hunt-Context", "acme", "Caller-Context", "acme",
			"Hunt-Destination-Number", number, "Caller-Destination-Number", number}, kv...)...))
	}
	f.Fuzz(func(t *testing.T, s string) {
		saved := snap.FeatureExtensions
		defer func() { snap.FeatureExtensions = saved }()
		// The default set: every feature, PIN asked on every other one.
		all := make([]FeatureExtension, 0, len(featureNames)+2)
		codes := map[string]string{}
		for i, name := range featureNames {
			code := "*" + itoa(40+i)
			switch name {
			case "directed_pickup":
				code = "**"
			case "voicemail_direct", "forward_all_on":
				code = "*" + itoa(60+i)
			}
			codes[name] = code
			all = append(all, FeatureExtension{ID: int64(i + 1), Feature: name, Code: code, PINRequired: i%2 == 1, Enabled: true})
		}
		// A code and a feature name that are s.
		all = append(all, FeatureExtension{ID: 98, Feature: "dnd_toggle", Code: s, Enabled: true}, FeatureExtension{ID: 99, Feature: s, Code: "*39", Enabled: true})
		snap.FeatureExtensions = all
		numbers := []string{s, "*39", "*39" + s, "**" + s, s + "1001", naming.ParkPresencePrefix + s, parkReturnPrefix + s}
		for _, code := range codes {
			numbers = append(numbers, code, code+s)
		}
		for _, number := range numbers {
			for _, kv := range [][]string{nil, {"variable_sb_ext", s, "variable_sb_tenant", "acme", "Caller-Caller-ID-Name", s, "Unique-ID", s}} {
				doc, tr := TenantContext(testOpts, call(number, kv...), snap, now)
				if xmldoc.IsNotFound(doc) || tr.Match != "feature" && tr.Match != "park_return" {
					continue
				}
				checkFeatureDoc(t, doc)
			}
		}
	})
}

func checkFeatureDoc(t *testing.T, doc []byte) {
	t.Helper()
	tree := checkShape(t, "feature code", doc, dialplanShape)
	var check func(n xmlNode)
	check = func(n xmlNode) {
		if n.XMLName.Local == "condition" {
			for _, a := range n.Attrs {
				if a.Name.Local == "field" && a.Value != "destination_number" && a.Value != "${sb_called_ext}" {
					t.Fatalf("condition on %q", a.Value)
				}
			}
		}
		if n.XMLName.Local == "action" || n.XMLName.Local == "anti-action" {
			var app, data string
			for _, a := range n.Attrs {
				switch a.Name.Local {
				case "application":
					app = a.Value
				case "data":
					data = a.Value
				}
			}
			checkFeatureAction(t, app, data)
		}
		for _, c := range n.Children {
			check(c)
		}
	}
	check(tree)
}

func checkFeatureAction(t *testing.T, app, data string) {
	t.Helper()
	switch app {
	case "answer", "echo", "park", "hangup", "playback", "set", "read", "record", "event", "voicemail", "play_and_get_digits",
		"transfer", "pickup", "intercept", "bridge", "export", "sleep", "valet_park":
	default:
		t.Fatalf("application %q", app)
	}
	if expandable(ourExpansions.Replace(data)) {
		t.Fatalf("%s data %q expands user text", app, data)
	}
	switch app {
	case "event":
		rest, ok := strings.CutPrefix(data, "Event-Name=CUSTOM,Event-Subclass=switchboard::feature,sb_feature=")
		feature, arg, hasArg := strings.Cut(rest, ",sb_arg=")
		if !ok || !slices.Contains(featureNames, feature) || hasArg && !validDialable(arg) {
			t.Fatalf("event data %q", data)
		}
	case "valet_park":
		lot, slot, _ := strings.Cut(data, " ")
		if lot != "acme_lot@"+testDomain || slot != "auto in 1 20" && !validParkSlot(slot) {
			t.Fatalf("valet_park data %q", data)
		}
	case "record":
		if data != "/var/lib/switchboard/media/acme/phone/${uuid}.wav 300 200 3" {
			t.Fatalf("record data %q", data)
		}
	case "transfer":
		if n, ctx, _ := strings.Cut(data, " "); !validDialable(n) || ctx != "XML acme" {
			t.Fatalf("transfer data %q", data)
		}
	case "voicemail":
		f := strings.Fields(data)
		if len(f) < 3 || !strings.HasSuffix(data, "-acme") || strings.Count(data, " ") != len(f)-1 {
			t.Fatalf("voicemail data %q", data)
		}
	case "set":
		if name, _, _ := strings.Cut(data, "="); !validToken(name, "") {
			t.Fatalf("set data %q", data)
		}
	}
}

// FuzzHuntOrder: a hunt group's strategy, member targets and turn. The
// bridge holds only validated legs, one per dialable member whatever the
// order, and a random or round-robin render is never cacheable.
func FuzzHuntOrder(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint64(0))
	}
	f.Add("random", uint64(1<<63))
	f.Add("round_robin", uint64(7))
	snap := loadSnap(f)
	now := at(f, "2026-11-23 10:00")
	f.Fuzz(func(t *testing.T, s string, n uint64) {
		g := &snap.HuntGroups[0]
		saved := *g
		defer func() { *g = saved }()
		for _, strategy := range []string{s, "random", "round_robin"} {
			g.Strategy = strategy
			g.Members = append(slices.Clone(saved.Members), HuntMember{Type: "extension", Target: s}, HuntMember{Type: s, Target: "1003"},
				HuntMember{Type: "external", Target: s, DelaySeconds: int(n % 1000), TimeoutSeconds: -int(n % 7)})
			var want int
			for _, m := range g.Members {
				want += boolInt(m.Type == "extension" && validNumber(m.Target) && m.Target != "1009" || m.Type == "external" && validDialable(m.Target))
			}
			doc, tr := TenantContext(testOpts, callRequest(t, "acme", g.Number, "Caller-Caller-ID-Name", s), snap.WithHuntTurn(g.ID, n), now)
			checkFuzzDoc(t, doc, "")
			checkShape(t, "hunt group", doc, dialplanShape)
			bridges := decodeTree(t, doc).find("action", "application", "bridge", "data")
			if len(bridges) != 1 {
				t.Fatalf("bridges %q", bridges)
			}
			// Each leg is "[<its variables>]<endpoint>", joined by the
			// strategy's separator.
			sep := map[string]string{"": ",", "simultaneous": ",", "enterprise": ":_:"}[strategy]
			if sep == "" {
				sep = "|"
			}
			if strings.Count(bridges[0], "[") != want || !strings.HasPrefix(bridges[0], "[") || strings.Count(bridges[0], sep+"[") != want-1 {
				t.Fatalf("strategy %q: want %d legs joined by %q: %q", strategy, want, sep, bridges[0])
			}
			if live := strategy == "random" || strategy == "round_robin"; tr.LiveDependent != live {
				t.Fatalf("strategy %q: live dependent %v", strategy, tr.LiveDependent)
			}
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
