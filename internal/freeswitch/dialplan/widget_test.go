package dialplan

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

const testWidgetUser = "w0123456789abcdef01234567-acme"

func testWidget() *Widget {
	return &Widget{PublicID: "pub23456789abcdefghi", Enabled: true, WebRTC: true,
		Destination: Destination{Type: "queue", Target: "600"}, CallerIDNamePrefix: "Web:"}
}

// TestWidgetGolden: a widget visitor's directory user (REGISTER and
// INVITE auth) and the widget's context as FreeSWITCH receives them.
func TestWidgetGolden(t *testing.T) {
	snap := loadSnap(t)
	user := &WidgetUser{ID: testWidgetUser, A1Hash: naming.A1Hash(testWidgetUser, testDomain, "pw"), CallerName: "Ann Smith"}
	for _, c := range []struct{ name, capture string }{{"widget_dir_register", "009"}, {"widget_dir_invite", "010"}} {
		t.Run(c.name, func(t *testing.T) {
			doc := WidgetDirectory(testOpts, dirRequest(t, c.capture, "user", testWidgetUser), testWidget(), user, snap)
			wellFormed(t, doc)
			if xmldoc.IsNotFound(doc) {
				t.Fatal("not found")
			}
			golden(t, c.name+".xml", doc)
		})
	}
	doc, tr := WidgetDialplan(testOpts, callRequest(t, "widget-pub23456789abcdefghi", "600"), testWidget(), snap)
	renderCase(t, "widget_context_queue", doc, tr)
	if tr.Match != "widget" {
		t.Errorf("trace %+v", tr)
	}
}

// TestWidgetRefusals: what a widget user or context must never answer.
func TestWidgetRefusals(t *testing.T) {
	snap := loadSnap(t)
	user := &WidgetUser{ID: testWidgetUser, A1Hash: naming.A1Hash(testWidgetUser, testDomain, "pw")}
	off := testWidget()
	off.Enabled = false
	callback := testWidget()
	callback.WebRTC = false
	for _, c := range []struct {
		name string
		doc  []byte
	}{
		{"user_call", WidgetDirectory(testOpts, dirRequest(t, "014", "user", testWidgetUser), testWidget(), user, snap)},
		{"reverse auth", WidgetDirectory(testOpts, dirRequest(t, "013", "user", testWidgetUser, "action", "reverse-auth-lookup"), testWidget(), user, snap)},
		{"message count", WidgetDirectory(testOpts, dirRequest(t, "013", "user", testWidgetUser, "action", "message-count"), testWidget(), user, snap)},
		{"other domain", WidgetDirectory(testOpts, dirRequest(t, "009", "user", testWidgetUser, "domain", "other.example", "key_value", "other.example"), testWidget(), user, snap)},
		{"other tenant's id", WidgetDirectory(testOpts, dirRequest(t, "009", "user", "w0123456789abcdef01234567-beta"), testWidget(), user, snap)},
		{"no user", WidgetDirectory(testOpts, dirRequest(t, "009", "user", testWidgetUser), testWidget(), nil, snap)},
		{"disabled widget user", WidgetDirectory(testOpts, dirRequest(t, "009", "user", testWidgetUser), off, user, snap)},
		{"callback widget user", WidgetDirectory(testOpts, dirRequest(t, "009", "user", testWidgetUser), callback, user, snap)},
		{"outbound number", first(WidgetDialplan(testOpts, callRequest(t, "widget-pub23456789abcdefghi", "+27215550000"), testWidget(), snap))},
		{"another extension", first(WidgetDialplan(testOpts, callRequest(t, "widget-pub23456789abcdefghi", "1001"), testWidget(), snap))},
		{"feature code", first(WidgetDialplan(testOpts, callRequest(t, "widget-pub23456789abcdefghi", "*98"), testWidget(), snap))},
		{"failover prefix", first(WidgetDialplan(testOpts, callRequest(t, "widget-pub23456789abcdefghi", "fail-600"), testWidget(), snap))},
		{"another widget's context", first(WidgetDialplan(testOpts, callRequest(t, "widget-otherwidget2345678", "600"), testWidget(), snap))},
		{"disabled widget context", first(WidgetDialplan(testOpts, callRequest(t, "widget-pub23456789abcdefghi", "600"), off, snap))},
	} {
		if !xmldoc.IsNotFound(c.doc) {
			t.Errorf("%s: want not found, got\n%s", c.name, c.doc)
		}
	}
}

func first(doc []byte, _ Trace) []byte { return doc }

// FuzzWidgetCallerName: whatever the visitor's name and the widget's
// prefix, the user document is well-formed XML and its caller id name
// holds nothing FreeSWITCH expands.
func FuzzWidgetCallerName(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "Web:")
	}
	f.Add("{x}", "$")
	f.Add("{", "a$")
	snap := loadSnap(f)
	req := xmlcurl.ParseRequest(fakefs.FormWith(capture(f, "009"), "key_value", testDomain, "domain", testDomain, "user", testWidgetUser))
	f.Fuzz(func(t *testing.T, name, prefix string) {
		w := testWidget()
		w.CallerIDNamePrefix = prefix
		doc := WidgetDirectory(testOpts, req, w, &WidgetUser{ID: testWidgetUser, A1Hash: naming.A1Hash(testWidgetUser, testDomain, "pw"), CallerName: name}, snap)
		if err := xmlCheck(doc); err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, doc)
		}
		for _, v := range decodeTree(t, doc).find("variable", "name", "effective_caller_id_name", "value") {
			if strings.Contains(v, "${") || strings.Contains(v, "$$") {
				t.Fatalf("expandable caller name %q from %q %q", v, prefix, name)
			}
		}
	})
}
