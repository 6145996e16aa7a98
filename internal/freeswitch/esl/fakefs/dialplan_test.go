package fakefs_test

import (
	"slices"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// TestHuntFollowsModDialplanXMLBreaks: a condition's break decides, as in
// mod_dialplan_xml's parse_exten, whether later conditions are looked at
// (on-false by default, on-true, always, never); an extension that adds no
// action lets hunting go on.
func TestHuntFollowsModDialplanXMLBreaks(t *testing.T) {
	doc := []byte(`<document type="freeswitch/xml"><section name="dialplan">
<context name="pin">
<extension name="no-actions"><condition field="destination_number" expression="^100$"/></extension>
<extension name="pin">
<condition field="destination_number" expression="^100$"/>
<condition field="${pin}" expression="^9$" break="on-true"><action application="log" data="moderator"/></condition>
<condition field="${pin}" expression="^1$" break="on-true"><action application="log" data="member"/></condition>
<condition field="destination_number" expression="^100$"><action application="hangup" data="CALL_REJECTED"/></condition>
</extension>
</context>
<context name="on-false">
<extension name="e">
<condition field="destination_number" expression="^200$"><anti-action application="log" data="anti"/></condition>
<condition field="destination_number" expression="^.*$"><action application="log" data="not reached"/></condition>
</extension>
</context>
<context name="never">
<extension name="e">
<condition field="destination_number" expression="^x$" break="never"><anti-action application="log" data="anti"/></condition>
<condition field="destination_number" expression="^(201)$"><action application="log" data="reached $1"/></condition>
</extension>
</context>
<context name="always">
<extension name="e">
<condition field="destination_number" expression="^202$" break="always"><action application="log" data="first"/></condition>
<condition field="destination_number" expression="^202$"><action application="log" data="not reached"/></condition>
</extension>
</context>
</section></document>`)
	for _, tt := range []struct {
		context, dest, pin string
		want               []string
	}{
		{"pin", "100", "9", []string{"log moderator"}},
		{"pin", "100", "1", []string{"log member"}}, // a failing on-true goes on
		{"pin", "100", "5", []string{"hangup CALL_REJECTED"}},
		{"pin", "100", "", []string{"hangup CALL_REJECTED"}},
		{"on-false", "201", "", []string{"log anti"}},
		{"never", "201", "", []string{"log anti", "log reached 201"}},
		{"always", "202", "", []string{"log first"}},
	} {
		apps, found, err := fakefs.Hunt(doc, tt.context, map[string]string{"destination_number": tt.dest}, map[string]string{"pin": tt.pin})
		if err != nil || !found || !slices.Equal(apps, tt.want) {
			t.Errorf("%s %s with pin %q: %q (found %v, %v), want %q", tt.context, tt.dest, tt.pin, apps, found, err, tt.want)
		}
	}
	// An extension whose conditions pass without actions is no match.
	if apps, found, _ := fakefs.Hunt([]byte(`<document type="freeswitch/xml"><section name="dialplan"><context name="c">
<extension name="e"><condition field="destination_number" expression="^100$"/></extension></context></section></document>`),
		"c", map[string]string{"destination_number": "100"}, nil); found {
		t.Errorf("an extension without actions matched: %q", apps)
	}
}
