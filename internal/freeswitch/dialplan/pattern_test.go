package dialplan

import (
	"regexp"
	"testing"
)

func TestPattern(t *testing.T) {
	tests := []struct {
		name, pattern, number string
		want                  bool
	}{
		{"national", "_0[1-8]XXXXXXXX", "0825550123", true},
		{"national too short", "_0[1-8]XXXXXXXX", "082555012", false},
		{"national class miss", "_0[1-8]XXXXXXXX", "0925550123", false},
		{"no underscore", "0XXXXXXXXX", "0115550123", true},
		{"dot needs one", "00.", "00", false},
		{"dot one or more", "00.", "0044201234567", true},
		{"bang zero or more", "00!", "00", true},
		{"Z excludes 0", "Z", "0", false},
		{"N excludes 1", "NXX", "199", false},
		{"N", "NXX", "299", true},
		{"literal star", "*99X.", "*991001", true},
		{"hash literal", "X#", "1#", true},
		{"plus literal", "+27.", "+27825550123", true},
		{"separator dash", "_1-NXX-XXXX", "12125555", true},
		{"dot then literal backtracks", "_X.5", "12345", true},
		{"class list", "[13]X", "34", true},
		{"class list miss", "[13]X", "24", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MatchPattern(tt.pattern, tt.number); got != tt.want {
				t.Fatalf("MatchPattern(%q, %q) = %v, want %v", tt.pattern, tt.number, got, tt.want)
			}
			re, err := PatternRegexp(tt.pattern)
			if err != nil {
				t.Fatalf("PatternRegexp: %v", err)
			}
			if got := regexp.MustCompile(re).MatchString(tt.number); got != tt.want {
				t.Fatalf("regexp %s on %q = %v, want %v", re, tt.number, got, tt.want)
			}
		})
	}
}

func TestPatternRegexpRejects(t *testing.T) {
	for _, p := range []string{"", "_", "0x", "0(1)", "0[a]", "0[9-1]", "0[", "0XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "^1$"} {
		if re, err := PatternRegexp(p); err == nil {
			t.Errorf("PatternRegexp(%q) = %q, want error", p, re)
		}
		if MatchPattern(p, "01") {
			t.Errorf("MatchPattern(%q) matched", p)
		}
	}
	if got, _ := PatternRegexp("_0[1-8]X."); got != `^0[12345678][0-9].+$` {
		t.Errorf("PatternRegexp = %q", got)
	}
}
