package routes_test

import (
	"slices"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// mailboxReport fires what mod_voicemail's update_mwi fires when a box's
// inbox changes.
func mailboxReport(e *callEnv, account, waiting, counts string) {
	e.fs.EmitEvent("MESSAGE_WAITING", []fakefs.Header{
		{Name: "MWI-Messages-Waiting", Value: waiting}, {Name: "Update-Reason", Value: "NEW"},
		{Name: "MWI-Message-Account", Value: account}, {Name: "MWI-Voice-Message", Value: counts},
	}, "")
}

// mwiSent are the MESSAGE_WAITING events the fake received by sendevent,
// as "<account> <waiting> <counts>".
func mwiSent(fs *fakefs.Server) []string {
	var out []string
	for _, ev := range fs.SentEvents() {
		if ev.Name == "MESSAGE_WAITING" && ev.Known {
			out = append(out, ev.Get("MWI-Message-Account")+" "+ev.Get("MWI-Messages-Waiting")+" "+ev.Get("MWI-Voice-Message"))
		}
	}
	return out
}

// TestSpecialMailboxMessageWaiting: when mod_voicemail reports a change of a
// special mailbox, each of its notify extensions (of that tenant only) gets
// a MESSAGE_WAITING event over the event socket with the box's counts; a
// report for an extension's own box, a disabled mailbox, or another
// tenant's mailbox of the same number sends nothing more, and the fired
// events' echo is not taken for a mailbox report.
func TestSpecialMailboxMessageWaiting(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		base := "/api/tenants/" + e.tenant
		e.Do(t, "POST", base+"/special_mailboxes/", e.Key, map[string]any{
			"name": "Support", "number": "820", "notify_extensions": []string{"1001", "1002"},
		}).Expect(t, 201)
		other := e.Tenant(t, "mwiother")
		e.Do(t, "POST", "/api/tenants/"+other+"/extensions/", e.Key, map[string]any{"name": "1005"}).Expect(t, 201)
		e.Do(t, "POST", "/api/tenants/"+other+"/special_mailboxes/", e.Key, map[string]any{
			"name": "Other", "number": "820", "notify_extensions": []string{"1005"},
		}).Expect(t, 201)

		mailboxReport(e, "820-"+e.tenant+"@sip.test", "yes", "2/1")
		want := []string{"1001-" + e.tenant + "@sip.test yes 2/1", "1002-" + e.tenant + "@sip.test yes 2/1"}
		wait.Until(t, 10*time.Second, "message waiting for the notify extensions", func() bool { return len(mwiSent(e.fs)) >= 2 })
		// Nothing else comes: not the other tenant's, not an echo loop.
		time.Sleep(300 * time.Millisecond)
		if got := mwiSent(e.fs); !slices.Equal(got, want) {
			t.Fatalf("sent %q, want %q", got, want)
		}
		for _, ev := range e.fs.SentEvents() {
			if ev.Get("sb_mwi_mailbox") != "820" {
				t.Errorf("event without its source marker: %+v", ev)
			}
		}

		// Not a special mailbox, or a foreign domain: nothing.
		mailboxReport(e, "1001-"+e.tenant+"@sip.test", "yes", "1/0")
		mailboxReport(e, "820-"+e.tenant+"@elsewhere.test", "yes", "1/0")
		// The other tenant's box lights only its own extension; read
		// messages turn the lamps off.
		mailboxReport(e, "820-"+other+"@sip.test", "no", "0/3")
		wantOther := append(want, "1005-"+other+"@sip.test no 0/3")
		wait.Until(t, 10*time.Second, "the other tenant's notify extension", func() bool { return len(mwiSent(e.fs)) >= 3 })
		time.Sleep(300 * time.Millisecond)
		if got := mwiSent(e.fs); !slices.Equal(got, wantOther) {
			t.Fatalf("sent %q, want %q", got, wantOther)
		}
	})
}
