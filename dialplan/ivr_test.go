package dialplan

import (
	"testing"

	"github.com/switchboard/switchboard/esl/fakefs"
)

func ivrRequest(t testing.TB, menu string) Request {
	t.Helper()
	return ParseRequest(fakefs.FormWith(capture(t, "003"), "key_value", "ivr.conf", "Menu-Name", menu))
}

func TestIVRConfGolden(t *testing.T) {
	doc := IVRConf(testOpts, ivrRequest(t, "acme_94"), loadSnap(t), at(t, "2026-11-23 10:00"))
	wellFormed(t, doc)
	if IsNotFound(doc) {
		t.Fatal("not found")
	}
	golden(t, "ivr_menu.xml", doc)
}

func TestIVRConfRefuses(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	for name, menu := range map[string]string{"disabled": "acme_95", "unknown": "acme_99", "other tenant": "other_94", "malformed": "acme94", "none": ""} {
		if doc := IVRConf(testOpts, ivrRequest(t, menu), loadSnap(t), now); !IsNotFound(doc) {
			t.Errorf("%s: want not found, got\n%s", name, doc)
		}
	}
}
