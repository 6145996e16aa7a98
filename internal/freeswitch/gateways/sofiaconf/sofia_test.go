package sofiaconf

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

var testServers = []Server{{
	ID: 1, Name: "fs1", Hostname: "fs1", Enabled: true,
	SIPProfiles: []SIPProfile{
		{Name: "internal", SIPIP: "10.0.0.5", SIPPort: 5060, ExtSIPIP: "198.51.100.5", ExtRTPIP: "198.51.100.5", TLSPort: 5061, WSSPort: 7443},
		{Name: "external", SIPIP: "10.0.0.5", SIPPort: 5080, ExtSIPIP: "198.51.100.5", ExtRTPIP: "198.51.100.5"},
	},
}}

func TestSofiaGolden(t *testing.T) {
	trunks := loadTrunks(t)
	tests := []struct {
		name string
		req  xmlcurl.Request
	}{
		{"sofia_all_profiles", xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "003"), "hostname", "fs1"))},
		{"sofia_profile_internal", xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "004"), "hostname", "fs1"))},
		{"sofia_profile_external", xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "004"), "hostname", "fs1", "profile", "external"))},
		{"sofia_unknown_server", xmlcurl.ParseRequest(capture(t, "003"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := Sofia(testOpts, tt.req, testServers, trunks)
			wellFormed(t, doc)
			golden(t, tt.name+".xml", doc)
		})
	}
}

func TestSofiaGatewayValues(t *testing.T) {
	trunks := loadTrunks(t)
	doc := Sofia(testOpts, xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "003"), "hostname", "fs1")), testServers, trunks)
	tree := decodeTree(t, doc)
	if got := tree.find("gateway", "", "", "name"); strings.Join(got, ",") != "carrier_a,carrier_b" {
		t.Fatalf("gateways = %q", got)
	}
	if got := tree.find("param", "name", "password", "value"); len(got) < 1 || got[0] != "pa$$w0rd&<x>" {
		t.Fatalf("password not carried intact: %q", got)
	}
	if strings.Contains(string(doc), "$$") {
		t.Fatal("raw $$ in document")
	}
	// The unknown node only gets trunks meant for every node.
	doc = Sofia(testOpts, xmlcurl.ParseRequest(capture(t, "003")), testServers, trunks)
	if got := decodeTree(t, doc).find("gateway", "", "", "name"); strings.Join(got, ",") != "carrier_a" {
		t.Fatalf("unknown node gateways = %q", got)
	}
	if got := decodeTree(t, doc).find("param", "name", "sip-ip", "value"); strings.Join(got, ",") != "192.0.2.2,192.0.2.2" {
		t.Fatalf("default profiles sip-ip = %q", got)
	}
}

// TestConfiguration: a platform configuration fetch gets sofia.conf, and
// any other file or section not found (FreeSWITCH then uses its own).
func TestConfiguration(t *testing.T) {
	trunks := loadTrunks(t)
	for _, kv := range [][]string{{"key_value", "acl.conf"}, {"section", "directory"}} {
		if !xmldoc.IsNotFound(Configuration(testOpts, xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "003"), kv...)), testServers, trunks)) {
			t.Fatalf("%v: want not found", kv)
		}
	}
	if xmldoc.IsNotFound(Configuration(testOpts, xmlcurl.ParseRequest(capture(t, "003")), testServers, trunks)) {
		t.Fatal("sofia.conf: got not found")
	}
}

var fuzzSeeds = []string{
	"", "plain", `Eve "<x>" & $${default_password} ${system(id)}`, `<action application="system"/>`,
	"]]><!--", "\x00\x01\x1f\x7f", "\xff\xfe", "é ü 漢字 🎉", "\t\r\n", "&amp;&#36;&#x24;", "'\"",
	"<X-PRE-PROCESS cmd=\"exec\" data=\"id\"/>", "\uFFFE\uFFFF", "\xed\xa0\x80",
}

// FuzzSofiaEscaping: whatever a trunk's settings hold, sofia.conf stays
// well-formed XML with nothing FreeSWITCH would expand.
func FuzzSofiaEscaping(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	trunks := loadTrunks(f)
	req := xmlcurl.ParseRequest(fakefs.FormWith(capture(f, "003"), "hostname", "fs1"))
	f.Fuzz(func(t *testing.T, s string) {
		ts := slices.Clone(trunks)
		for i := range ts {
			ts[i].CallerIDFormat, ts[i].DTMFMode = s, s
			ts[i].Password, ts[i].Realm, ts[i].FromUser = s, s, s
		}
		sofia := Sofia(testOpts, req, testServers, ts)
		if err := xmlCheck(sofia); err != nil || strings.Contains(string(sofia), "${") {
			t.Fatalf("sofia.conf: %v\n%s", err, sofia)
		}
	})
}
