package gateways_test

import (
	"slices"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/gateways"
)

// TestPlan: gone and changed gateways are killed, unchanged ones (and
// ones never fingerprinted) kept; a rescan only when a wanted gateway is
// missing or killed.
func TestPlan(t *testing.T) {
	for _, tt := range []struct {
		name        string
		held        []string
		given, want map[string]string
		kill        []string
		rescan      bool
	}{
		{"in step", []string{"a", "b"}, map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1", "b": "2"}, nil, false},
		{"created", []string{"a"}, map[string]string{"a": "1"}, map[string]string{"a": "1", "n": "9"}, nil, true},
		{"changed", []string{"a", "b"}, map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1", "b": "3"}, []string{"b"}, true},
		{"deleted", []string{"a", "b"}, map[string]string{"a": "1", "b": "2"}, map[string]string{"a": "1"}, []string{"b"}, false},
		{"deleted, never fingerprinted", []string{"a", "x"}, nil, map[string]string{"a": "1"}, []string{"x"}, false},
		{"unknown fingerprint kept", []string{"a"}, nil, map[string]string{"a": "1"}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kill, rescan := gateways.Plan(tt.held, tt.given, tt.want)
			if !slices.Equal(kill, tt.kill) || rescan != tt.rescan {
				t.Errorf("Plan = %q, %v; want %q, %v", kill, rescan, tt.kill, tt.rescan)
			}
		})
	}
}

// TestHeld reads mod_sofia's "sofia xmlstatus gateway" layout (one element
// a line, unescaped fields that need not be valid XML).
func TestHeld(t *testing.T) {
	reply := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<gateways>\n" +
		"  <gateway>\n    <name>carrier</name>\n    <profile>external</profile>\n    <username>a&b</username>\n  </gateway>\n" +
		"  <gateway>\n    <name>other</name>\n    <profile>internal</profile>\n  </gateway>\n" +
		"  <gateway>\n    <name>backup</name>\n    <profile>external</profile>\n  </gateway>\n</gateways>\n"
	got, err := gateways.Held(reply, "external")
	if err != nil || !slices.Equal(got, []string{"backup", "carrier"}) {
		t.Errorf("Held = %q, %v", got, err)
	}
	if _, err := gateways.Held("-ERR no reply\n", "external"); err == nil {
		t.Error("Held accepted a reply without <gateways>")
	}
}

// TestFingerprints: one fingerprint per gateway of the profile, changing
// with any param (the password too).
func TestFingerprints(t *testing.T) {
	doc := func(pw string) []byte {
		return []byte(`<document type="freeswitch/xml"><section name="configuration"><configuration name="sofia.conf"><profiles>` +
			`<profile name="internal"><gateways><gateway name="int"/></gateways></profile>` +
			`<profile name="external"><gateways><gateway name="a"><param name="password" value="` + pw + `"/></gateway>` +
			`<gateway name="b"><param name="proxy" value="x"/></gateway></gateways></profile></profiles></configuration></section></document>`)
	}
	one, err := gateways.Fingerprints(doc("p1"), "external")
	if err != nil || len(one) != 2 || one["a"] == "" || one["b"] == "" {
		t.Fatalf("Fingerprints = %v, %v", one, err)
	}
	two, _ := gateways.Fingerprints(doc("p2"), "external")
	if one["a"] == two["a"] || one["b"] != two["b"] {
		t.Errorf("fingerprints %v then %v: a should change, b not", one, two)
	}
}
