package webui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// signOutElsewhere signs the browser out as another tab would: the logout
// form's post, which ends the session and clears the cookie.
func signOutElsewhere(b *browser) {
	b.t.Helper()
	var status int
	b.run(chromedp.Evaluate(`fetch('/logout', {method: 'POST', credentials: 'same-origin', redirect: 'manual',
		headers: {'Content-Type': 'application/x-www-form-urlencoded'},
		body: 'csrf_token=' + encodeURIComponent(document.querySelector('meta[name="csrf-token"]').content)}).then(r => r.type === 'opaqueredirect' ? 303 : r.status)`,
		&status, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if status != 303 {
		b.t.Fatalf("signing out answered %d", status)
	}
}

// expand opens an operation of the reference: a click while Swagger UI
// draws the page again (the authorization it was given) can be lost, so
// it clicks until the operation says it is expanded.
func expand(b *browser, op string) {
	b.t.Helper()
	for try := 0; ; try++ {
		var open bool
		b.run(chromedp.Click(op+" .opblock-summary-control", chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelector('`+op+` .opblock-summary-control').getAttribute('aria-expanded') === 'true'`, &open))
		if open {
			return
		}
		if try == 3 {
			b.t.Fatalf("%s does not expand", op)
		}
	}
}

// signedOutShown waits until the page says it is signed out: the header
// offers the sign-in again and no longer names the administrator.
func signedOutShown(b *browser) {
	b.t.Helper()
	b.run(chromedp.WaitVisible(`#sb-signin`, chromedp.ByQuery))
	var user bool
	b.run(chromedp.Evaluate(`!!document.querySelector('.sb-user') && document.querySelector('.sb-user').offsetParent !== null`, &user))
	if user {
		b.t.Error("the header still shows the administrator after the session ended")
	}
	b.waitText("#sb-status", "signed out")
	var href string
	b.run(chromedp.Evaluate(`document.getElementById('sb-signin').getAttribute('href')`, &href))
	if href == "" || href[:len("/login?next=")] != "/login?next=" {
		b.t.Errorf("the sign-in link goes to %q, want the login coming back here", href)
	}
}

// When the session ends while a page is open, the page says so and offers
// the sign-in again: in the reference after a test request answered 401
// (without the Basic challenge that raised the browser's own password
// box), on the dashboard within a second and without the calls it showed
// (issue 26, also seen).
func TestBrowserSessionEnds(t *testing.T) {
	e := startPagesEnv(t)
	b := newBrowser(t, 40*time.Second)

	t.Run("reference", func(t *testing.T) {
		b.t = t
		e.signIn(b)
		b.run(chromedp.Navigate(e.URL + "/apitest/openapi/"))
		op := "#operations-Tenants-listTenants"
		b.run(chromedp.SendKeys(`input.operation-filter-input`, "listTenants", chromedp.ByQuery))
		b.run(chromedp.WaitVisible(op, chromedp.ByQuery))
		// Signed in, the Authorize button says so (the session works), and
		// the curl snippet carries a key placeholder, not the session.
		b.run(chromedp.WaitVisible(`.auth-wrapper .authorize.locked`, chromedp.ByQuery))
		expand(b, op)
		b.run(chromedp.Click(op+" .try-out__btn", chromedp.ByQuery))
		b.run(chromedp.Click(op+" .execute", chromedp.ByQuery))
		b.waitText(op+" .live-responses-table tr.response .response-col_status", "200")
		curl := b.text(op + " .curl-command")
		if !strings.Contains(curl, "X-API-Key: $KEY") || strings.Contains(curl, "sb_session") || strings.Contains(curl, "X-CSRF-Token") {
			t.Errorf("the curl snippet does not show a key placeholder alone:\n%s", curl)
		}
		signOutElsewhere(b)
		b.run(chromedp.Click(op+" .execute", chromedp.ByQuery))
		b.waitText(op+" .live-responses-table tr.response .response-col_status", "401")
		signedOutShown(b)
		b.run(chromedp.WaitVisible(`.auth-wrapper .authorize.unlocked`, chromedp.ByQuery))
	})

	t.Run("dashboard", func(t *testing.T) {
		b.t = t
		e.signIn(b)
		tenant := e.tenant[0]
		b.run(chromedp.Navigate(e.URL+"/dashboard/calls"), chromedp.WaitVisible(`#sb-stream[data-state="live"]`, chromedp.ByQuery))
		uuid, err := fakefs.SimCall(e.fs, tenant, "1001", "+442071838760", true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.fs.Hangup(uuid, "") })
		b.run(chromedp.WaitVisible(callLine(e.channelID(t, uuid)), chromedp.ByQuery))
		start := time.Now()
		signOutElsewhere(b)
		signedOutShown(b)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("the dashboard showed the sign-out %v after it, want about a second", took)
		}
		b.run(chromedp.WaitNotPresent(`li.sb-call`, chromedp.ByQuery))
		b.waitText("#sb-stream", "signed out")
	})
	// The 401s the pages met are the point; nothing else may go wrong.
	for _, msg := range b.pageErrors() {
		if !strings.Contains(msg, "status of 401") {
			t.Errorf("the page reported: %s", msg)
		}
	}
}
