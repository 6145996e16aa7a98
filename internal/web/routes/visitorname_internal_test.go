package routes

import (
	"strings"
	"testing"
)

// What a widget's visitor may give as a name: letters and digits of any
// script, spaces, dots and hyphens, at most 40 of them; nothing a dial
// string or a channel variable could read as syntax.
func TestValidVisitorName(t *testing.T) {
	for name, want := range map[string]bool{
		"":                        true,
		"Ann Smith":               true,
		"Zoë Ångström-Łukasz Jr.": true,
		"李小龍 ٣":                   true, // Han letters and an Arabic-Indic digit
		strings.Repeat("é", 40):   true,
		strings.Repeat("é", 41):   false,
		"${system(id)}":           false,
		"x},sb_tenant=other,{":    false,
		"Ann\tSmith":              false,
		"Ann_Smith":               false,
		"Ann\xffSmith":            false, // not UTF-8
	} {
		if got := validVisitorName(name); got != want {
			t.Errorf("validVisitorName(%q) = %v; want %v", name, got, want)
		}
	}
}
