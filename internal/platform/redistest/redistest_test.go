package redistest

import "testing"

func TestHashTag(t *testing.T) {
	for key, want := range map[string]string{
		"sb:{calls}:ch:fs1:u": "calls",
		"sb:{gen}:cgen:acme":  "gen",
		"sb:cgen:acme":        "sb:cgen:acme",
		"a{}b{c}":             "a{}b{c}", // an empty first tag: the whole key
		"a{b":                 "a{b",
		"{x}{y}":              "x",
	} {
		if got := HashTag(key); got != want {
			t.Errorf("HashTag(%q) = %q, want %q", key, got, want)
		}
	}
}
