package provision

import (
	"fmt"
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// Yealink DSS key types (linekey.N.type). A park key naming a slot of the
// lot is a BLF (16) on park+<slot>; other park keys are Call Park (10).
var yealinkKeyTypes = map[string]int{"speed_dial": 13, "line": 15, "blf": 16, "park": 10, "dnd": 5, "office_mode": 13}

// yealink renders <mac>.cfg: Yealink's "#!version:1.0.0.1" file of
// "key = value" lines.
func yealink(d Device) []byte {
	var b strings.Builder
	b.WriteString("#!version:1.0.0.1\n")
	set := func(key string, v any) { fmt.Fprintf(&b, "%s = %s\n", key, yealinkValue(fmt.Sprint(v))) }
	for _, l := range d.Lines {
		p := fmt.Sprintf("account.%d.", l.Index)
		set(p+"enable", 1)
		set(p+"label", firstNonEmpty(l.Label, l.DisplayName, l.User))
		set(p+"display_name", l.DisplayName)
		set(p+"auth_name", l.User)
		set(p+"user_name", l.User)
		set(p+"password", l.Password)
		set(p+"sip_server.1.address", d.Server)
		shared := 0
		if l.Shared {
			shared = 1
		}
		set(p+"shared_line", shared)
	}
	for _, k := range d.Keys {
		p := fmt.Sprintf("linekey.%d.", k.Position)
		typ, value, label := yealinkKeyTypes[k.Type], k.Value, k.Label
		if slot := parkSlot(k); slot != "" {
			// A park slot is a BLF on valet's presence for it.
			typ, value, label = yealinkKeyTypes["blf"], naming.ParkPresencePrefix+slot, parkKeyLabel(k, slot)
		}
		set(p+"type", typ)
		set(p+"value", value)
		set(p+"label", label)
		set(p+"line", 1)
	}
	return []byte(b.String())
}

// yealinkValue makes v one value on one line: the file is line based, so
// line breaks and other control characters (which could start another
// key) become spaces.
func yealinkValue(v string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return ' '
		}
		return r
	}, v)
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
