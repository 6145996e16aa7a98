package dialplan

import (
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

func ivrRequest(t testing.TB, menu string) xmlcurl.Request {
	t.Helper()
	return xmlcurl.ParseRequest(fakefs.FormWith(capture(t, "003"), "key_value", "ivr.conf", "Menu-Name", menu))
}

func TestIVRConfGolden(t *testing.T) {
	doc := IVRConf(testOpts, ivrRequest(t, "acme_94"), loadSnap(t), at(t, "2026-11-23 10:00"))
	wellFormed(t, doc)
	if xmldoc.IsNotFound(doc) {
		t.Fatal("not found")
	}
	golden(t, "ivr_menu.xml", doc)
}

func TestIVRConfRefuses(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	for name, menu := range map[string]string{"disabled": "acme_95", "unknown": "acme_99", "other tenant": "other_94", "malformed": "acme94", "none": ""} {
		if doc := IVRConf(testOpts, ivrRequest(t, menu), loadSnap(t), now); !xmldoc.IsNotFound(doc) {
			t.Errorf("%s: want not found, got\n%s", name, doc)
		}
	}
}

// TestIVRCollectsOnlyTheDigitsItsEntriesUse: FreeSWITCH acts on a menu's
// digits only once it holds digit-len of them (or the inter-digit timeout
// passes); on 1.10.12 a one-digit option under the default digit_len 5
// ran seconds after the key press. The menu collects as many digits as its
// longest entry uses.
func TestIVRCollectsOnlyTheDigitsItsEntriesUse(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	for _, c := range []struct {
		name    string
		digits  []string
		setting int
		want    string
	}{
		{"one-digit options, default setting", []string{"1", "2", "0"}, 5, "1"},
		{"two-digit option", []string{"1", "12"}, 5, "2"},
		{"setting shorter than an option", []string{"123"}, 1, "3"},
		{"no usable option", []string{"+1"}, 4, "4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := loadSnap(t)
			m := &snap.IVRMenus[0]
			m.DigitLen, m.DirectDial = c.setting, false
			dest := m.Options[0].Destination
			m.Options = nil
			for _, d := range c.digits {
				m.Options = append(m.Options, IVROption{Digits: d, Destination: dest})
			}
			doc := IVRConf(testOpts, ivrRequest(t, "acme_94"), snap, now)
			wellFormed(t, doc)
			if got := decodeTree(t, doc).find("menu", "", "", "digit-len"); len(got) != 1 || got[0] != c.want {
				t.Fatalf("digit-len %q, want %s\n%s", got, c.want, doc)
			}
		})
	}
}
