package keyprefix

import "testing"

func TestPrefixes(t *testing.T) {
	if got := For("3f9c"); got != "sb:3f9c:" {
		t.Errorf("For = %q", got)
	}
	if got := OrDefault(""); got != Default {
		t.Errorf("OrDefault(\"\") = %q", got)
	}
	if got := OrDefault("sb:x:"); got != "sb:x:" {
		t.Errorf("OrDefault kept %q", got)
	}
}
