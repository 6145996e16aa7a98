package webui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// callLine is the selector of the dashboard's line of the call whose first
// leg is the channel id.
func callLine(id string) string { return `li.sb-call[data-channel="` + id + `"]` }

// The dashboard during simulated calls (issue 26, item 7): a call shows
// who calls whom by name, the queue it is in; hanging up asks first (a
// dialog, and cancelling sends nothing); transfer is a dialog searching the
// tenant's extensions; every button is named for its call; new calls are
// announced; the tenant filter and the search narrow the list.
func TestBrowserDashboard(t *testing.T) {
	e := startPagesEnv(t)
	tenant, other := e.tenant[0], e.tenant[1]
	base := "/api/tenants/" + tenant
	e.Do(t, "PUT", base+"/extensions/1001", e.Key, map[string]any{"first_name": "Ann", "last_name": "Smith"}).Expect(t, 200)
	e.Do(t, "PUT", base+"/extensions/1002", e.Key, map[string]any{"first_name": "Bob", "last_name": "Jones"}).Expect(t, 200)
	e.Do(t, "POST", base+"/queues/", e.Key, map[string]any{"name": "support", "number": "601"}).Expect(t, 201)
	b := newBrowser(t, 40*time.Second)
	e.signIn(b)
	b.run(chromedp.Navigate(e.URL+"/dashboard/calls"), chromedp.WaitVisible(`#sb-stream[data-state="live"]`, chromedp.ByQuery))

	a, err := fakefs.SimCall(e.fs, tenant, "1001", "+442071838750", true)
	if err != nil {
		t.Fatal(err)
	}
	line := callLine(e.channelID(t, a))
	b.waitText(line+" .sb-to", "Ann Smith (1001)")
	b.waitText(line+" .sb-from", "+442071838750")
	// Names come from the tenant's extensions, loaded when its first call
	// shows: the announcement may come before them.
	b.waitText("#sb-announce", "New call from +442071838750 to ")
	var legs string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b.run(chromedp.AttributeValue(line, "data-legs", &legs, nil, chromedp.ByQuery))
		if len(strings.Fields(legs)) == 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(strings.Fields(legs)) != 2 {
		t.Fatalf("the call shows legs %q, want both legs of the bridged call", legs)
	}
	want := "Hang up call from +442071838750 to Ann Smith (1001)"
	var label string
	b.run(chromedp.AttributeValue(line+` button[data-action="hangup"]`, "aria-label", &label, nil, chromedp.ByQuery))
	if label != want {
		t.Errorf("the hang-up button is named %q, want %q", label, want)
	}

	// Record start and stop through the buttons.
	b.run(chromedp.Click(line+` button[data-action="record"]`, chromedp.ByQuery))
	if got := e.waitCommand(t, "api uuid_record"); !strings.HasPrefix(got, "api uuid_record "+a+" start /rec/"+tenant+"/") {
		t.Errorf("record button sent %q", got)
	}
	b.waitText(line+" .sb-state", "recording")
	b.screenshot("dashboard")
	b.run(chromedp.Click(line+` button[data-action="record"]`, chromedp.ByQuery))
	if got := e.waitCommand(t, "api uuid_record"); !strings.HasPrefix(got, "api uuid_record "+a+" stop ") {
		t.Errorf("stop-recording button sent %q", got)
	}
	b.waitText(line+` button[data-action="record"]`, "Record")

	// A call to the queue says so.
	q, err := e.fs.CreateChannel(fakefs.ChannelSpec{CIDNum: "1002", Dest: "601", Context: tenant, Answer: true,
		Vars: []fakefs.Header{{Name: "sb_tenant", Value: tenant}, {Name: "sb_ext", Value: "1002"}}})
	if err != nil {
		t.Fatal(err)
	}
	qline := callLine(e.channelID(t, q))
	b.waitText(qline+" .sb-where", "Queue support")
	b.waitText(qline+" .sb-from", "Bob Jones (1002)")

	// Filter by tenant, and search.
	o, err := fakefs.SimCall(e.fs, other, "2002", "+442071838799", true)
	if err != nil {
		t.Fatal(err)
	}
	oline := callLine(e.channelID(t, o))
	b.run(chromedp.WaitVisible(oline, chromedp.ByQuery))
	b.run(chromedp.SetValue(`#sb-filter-tenant`, tenant, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById('sb-filter-tenant').dispatchEvent(new Event('change'))`, nil))
	b.run(chromedp.WaitNotPresent(oline, chromedp.ByQuery), chromedp.WaitVisible(qline, chromedp.ByQuery))
	b.run(chromedp.SendKeys(`#sb-search`, "support", chromedp.ByQuery))
	b.run(chromedp.WaitNotPresent(line, chromedp.ByQuery), chromedp.WaitVisible(qline, chromedp.ByQuery))
	b.waitText("#sb-total", "1 of 2 calls")
	browsertest.CheckAxe(t, b.ctx, "the dashboard with calls")
	b.run(chromedp.Evaluate(`const s = document.getElementById('sb-search'); s.value = ''; s.dispatchEvent(new Event('input'))`, nil))
	b.run(chromedp.WaitVisible(line, chromedp.ByQuery))

	// Hang up asks first: cancelled, nothing is sent; confirmed, the call
	// ends and leaves the page.
	b.run(chromedp.Click(line+` button[data-action="hangup"]`, chromedp.ByQuery), chromedp.WaitVisible(`#sb-confirm[open]`, chromedp.ByQuery))
	b.waitText("#sb-confirm-text", "call from +442071838750 to Ann Smith (1001)")
	browsertest.CheckAxe(t, b.ctx, "the dashboard's hang-up confirmation")
	b.run(chromedp.Click(`#sb-confirm button[value="cancel"]`, chromedp.ByQuery), chromedp.WaitNotPresent(`#sb-confirm[open]`, chromedp.ByQuery))
	// The button stays busy (aria-disabled) until the dialog's close event
	// is handled, a moment after the dialog is gone; a press before that
	// does nothing (seen in CI on a loaded host).
	b.run(chromedp.WaitNotPresent(line+` button[data-action="hangup"][aria-disabled]`, chromedp.ByQuery))
	b.run(chromedp.Click(line+` button[data-action="hangup"]`, chromedp.ByQuery), chromedp.WaitVisible(`#sb-confirm[open]`, chromedp.ByQuery))
	b.run(chromedp.Click(`#sb-confirm-ok`, chromedp.ByQuery))
	if got := e.waitCommand(t, "api uuid_kill"); got != "api uuid_kill "+a {
		t.Errorf("hang-up sent %q (after a cancelled one), want one uuid_kill of %s", got, a)
	}
	b.run(chromedp.WaitNotPresent(line, chromedp.ByQuery))
	b.waitText("#sb-announce", "Ended: call from +442071838750")

	// Transfer: the dialog finds Bob by name.
	b.run(chromedp.Click(qline+` button[data-action="transfer"]`, chromedp.ByQuery), chromedp.WaitVisible(`#sb-transfer[open]`, chromedp.ByQuery))
	b.run(chromedp.SendKeys(`#sb-transfer-to`, "bob", chromedp.ByQuery))
	b.run(chromedp.Click(`#sb-transfer-list button[data-extension="1002"]`, chromedp.ByQuery))
	b.run(chromedp.Click(`#sb-transfer-ok`, chromedp.ByQuery))
	if got, want := e.waitCommand(t, "api uuid_transfer"), "api uuid_transfer "+q+" 1002 XML "+tenant; got != want {
		t.Errorf("transfer sent %q, want %q", got, want)
	}
	b.noPageErrors()
}

// Fifty calls fit a laptop's screen (1440×900) without scrolling, and at a
// phone's 390 px no control is off-screen (issue 26, item 7).
func TestBrowserDashboardFits(t *testing.T) {
	e := startPagesEnv(t)
	b := newBrowser(t, 60*time.Second)
	// A tenant administrator: a platform administrator's dashboard also
	// carries the calls of tests running beside this one, and their
	// lines (bridged legs, longer names) changed what fits (seen in CI:
	// 34 of 50).
	e.signInTenantAdmin(b)
	b.run(chromedp.EmulateViewport(1440, 900), chromedp.Navigate(e.URL+"/dashboard/calls"),
		chromedp.WaitVisible(`#sb-stream[data-state="live"]`, chromedp.ByQuery))
	// Single-leg calls: this test is about the layout
	// (TestBrowserDashboard covers the grouping of legs).
	for i := 0; i < 50; i++ {
		tenant, ext := e.tenant[i%2], []string{"1001", "2002"}[i%2]
		if _, err := e.fs.CreateChannel(fakefs.ChannelSpec{CIDNum: fmt.Sprintf("+4420718%05d", i), Dest: ext, Context: tenant, Answer: true,
			Vars: []fakefs.Header{{Name: "sb_tenant", Value: tenant}}}); err != nil {
			t.Fatal(err)
		}
	}
	b.run(chromedp.Poll(`document.querySelectorAll('li.sb-call').length === 50`, nil, chromedp.WithPollingTimeout(60*time.Second)))
	var fit int
	b.run(chromedp.Evaluate(`Array.from(document.querySelectorAll('li.sb-call')).filter(li => li.getBoundingClientRect().bottom <= window.innerHeight).length`, &fit))
	if fit < 50 {
		t.Errorf("%d calls fit a 1440×900 screen, want 50", fit)
	}
	b.screenshot("dashboard-50")

	b.run(chromedp.EmulateViewport(390, 844))
	var off []string
	b.run(chromedp.Evaluate(`Array.from(document.querySelectorAll('button, input, select, a')).filter(el => {
		const r = el.getBoundingClientRect();
		return r.width > 0 && (r.left < 0 || r.right > document.documentElement.clientWidth);
	}).map(el => el.getAttribute('aria-label') || el.textContent || el.id)`, &off))
	if len(off) > 0 {
		t.Errorf("at 390 px these controls are off-screen: %q", off)
	}
	var wide bool
	b.run(chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth`, &wide))
	if wide {
		t.Error("at 390 px the page scrolls sideways")
	}
	b.noPageErrors()
}

// focused waits until the focused element matches sel: where a dialog
// put the focus, or gave it back.
func (b *browser) focused(sel string) {
	b.t.Helper()
	b.run(chromedp.Poll(fmt.Sprintf(`document.activeElement && document.activeElement.matches(%q)`, sel), nil,
		chromedp.WithPollingInterval(20*time.Millisecond)))
}

// tabTo moves the focus to sel with Tab alone (browsertest.TabTo).
func (b *browser) tabTo(sel string, limit int) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.step)
	defer cancel()
	browsertest.TabTo(b.t, ctx, sel, limit)
}

// The dashboard's hang-up and transfer dialogs with the keyboard alone
// (issue 26: every flow works with the keyboard alone): each control is
// reached with Tab, acted on with Enter or typing; Escape closes a dialog
// and sends nothing; Tab stays inside an open dialog; closing gives the
// focus back to the call's button, or to the list when the call ended.
func TestBrowserDashboardKeyboardOnly(t *testing.T) {
	e := startPagesEnv(t)
	tenant := e.tenant[0]
	e.Do(t, "PUT", "/api/tenants/"+tenant+"/extensions/1002", e.Key, map[string]any{"first_name": "Bob", "last_name": "Jones"}).Expect(t, 200)
	b := newBrowser(t, 20*time.Second)
	e.signInTenantAdmin(b)
	b.run(chromedp.Navigate(e.URL+"/dashboard/calls"), chromedp.WaitVisible(`#sb-stream[data-state="live"]`, chromedp.ByQuery))
	a, err := e.fs.CreateChannel(fakefs.ChannelSpec{CIDNum: "+442071838750", Dest: "1001", Context: tenant, Answer: true,
		Vars: []fakefs.Header{{Name: "sb_tenant", Value: tenant}}})
	if err != nil {
		t.Fatal(err)
	}
	line := callLine(e.channelID(t, a))
	hangup, transfer := line+` button[data-action="hangup"]`, line+` button[data-action="transfer"]`
	b.run(chromedp.WaitVisible(hangup, chromedp.ByQuery))

	// Hang up: Enter opens the confirmation with the focus on its answer;
	// Escape closes it, nothing is sent, the focus is back on the button.
	b.tabTo(hangup, 40)
	b.run(chromedp.KeyEvent(kb.Enter))
	b.run(chromedp.WaitVisible(`#sb-confirm[open]`, chromedp.ByQuery))
	b.focused(`#sb-confirm-ok`)
	b.run(chromedp.KeyEvent(kb.Escape), chromedp.WaitNotPresent(`#sb-confirm[open]`, chromedp.ByQuery))
	b.focused(hangup)
	// Tab cycles inside the open dialog: ten presses never leave it.
	b.run(chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`#sb-confirm[open]`, chromedp.ByQuery))
	for i := 0; i < 10; i++ {
		b.run(chromedp.KeyEvent(kb.Tab))
		var inside bool
		b.run(chromedp.Evaluate(`document.getElementById('sb-confirm').contains(document.activeElement)`, &inside))
		if !inside {
			t.Fatalf("Tab press %d left the open hang-up dialog", i+1)
		}
	}
	b.tabTo(`#sb-confirm button[value="cancel"]`, 5)
	b.run(chromedp.KeyEvent(kb.Enter), chromedp.WaitNotPresent(`#sb-confirm[open]`, chromedp.ByQuery))
	b.focused(hangup)
	if cmds := e.fs.Commands(); strings.Contains(strings.Join(cmds, "\n"), "uuid_kill") {
		t.Fatalf("a cancelled hang-up sent %q", cmds)
	}

	// Transfer: Escape cancels; typing a name and picking the match with
	// Tab and Enter sends the call there.
	b.tabTo(transfer, 5)
	b.run(chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`#sb-transfer[open]`, chromedp.ByQuery))
	b.focused(`#sb-transfer-to`)
	b.run(chromedp.KeyEvent(kb.Escape), chromedp.WaitNotPresent(`#sb-transfer[open]`, chromedp.ByQuery))
	b.focused(transfer)
	b.run(chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`#sb-transfer[open]`, chromedp.ByQuery))
	b.focused(`#sb-transfer-to`)
	b.run(chromedp.KeyEvent("bob"))
	b.tabTo(`#sb-transfer-list button[data-extension="1002"]`, 5)
	b.run(chromedp.KeyEvent(kb.Enter))
	b.focused(`#sb-transfer-ok`)
	b.run(chromedp.KeyEvent(kb.Enter))
	if got, want := e.waitCommand(t, "api uuid_transfer"), "api uuid_transfer "+a+" 1002 XML "+tenant; got != want {
		t.Errorf("transfer sent %q, want %q", got, want)
	}
	// The button is busy until the API answered.
	b.focused(transfer + `:not([aria-disabled])`)
	// A number typed and Enter: the transfer goes there (Enter in the
	// field is the dialog's Transfer, not its Cancel).
	b.run(chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`#sb-transfer[open]`, chromedp.ByQuery))
	b.focused(`#sb-transfer-to`)
	b.run(chromedp.KeyEvent("1001"), chromedp.KeyEvent(kb.Enter))
	if got, want := e.waitCommand(t, "api uuid_transfer"), "api uuid_transfer "+a+" 1001 XML "+tenant; got != want {
		t.Errorf("transfer sent %q, want %q", got, want)
	}

	// Hang up confirmed with Enter: the call ends and the focus, whose
	// button left with it, is on the list of calls, not lost.
	b.tabTo(hangup, 10)
	b.run(chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(`#sb-confirm[open]`, chromedp.ByQuery))
	b.focused(`#sb-confirm-ok`)
	b.run(chromedp.KeyEvent(kb.Enter))
	if got := e.waitCommand(t, "api uuid_kill"); got != "api uuid_kill "+a {
		t.Errorf("hang-up sent %q, want uuid_kill of %s", got, a)
	}
	b.run(chromedp.WaitNotPresent(line, chromedp.ByQuery))
	b.focused(`#sb-calls`)
	b.noPageErrors()
}
