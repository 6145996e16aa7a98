package routes_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// tabTo presses Tab until the focused element matches sel, as a person
// without a mouse moves through a page; it fails when sel is not reached
// within limit presses (not in the tab order, or hidden).
func tabTo(tab *browsertest.Tab, sel string, limit int) {
	tab.T.Helper()
	match := fmt.Sprintf(`document.activeElement && document.activeElement.matches(%q)`, sel)
	for i := 0; i < limit; i++ {
		var on bool
		tab.Eval(match, &on)
		if on {
			return
		}
		tab.Run(chromedp.KeyEvent(kb.Tab))
	}
	tab.T.Fatalf("%q not reached with %d presses of Tab\npage: %s", sel, limit, tab.PageText())
}

// An operator without a mouse signs in, finds the extensions, creates
// one, reads its secrets once, edits it and deletes it, with Tab, typing
// and Enter alone; what the API then answers is what the keys did
// (issue 26: every flow works with the keyboard alone).
func TestBrowserManagerKeyboardOnly(t *testing.T) {
	s := managerEnv(t)
	tenant := s.Tenant(t, "keys")
	tab := browsertest.New(t).Tab(t)
	name := createAdmin(t, s, "tenant_admin", []string{tenant})

	tab.Run(chromedp.Navigate(s.URL + "/login"))
	tabTo(tab, `input[name="username"]`, 20)
	tab.Run(chromedp.KeyEvent(name))
	tabTo(tab, `input[name="password"]`, 5)
	tab.Run(chromedp.KeyEvent(adminPassword), chromedp.KeyEvent(kb.Enter))
	tab.WaitText("body", "Sign out")

	tab.Run(chromedp.Navigate(s.URL + "/tenants/" + tenant + "/"))
	tabTo(tab, `a[href$="/tenants/`+tenant+`/extensions/"]`, 120)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`location.pathname.endsWith('/extensions/')`)
	tabTo(tab, `a[href$="/extensions/new"]`, 120)
	tab.Run(chromedp.KeyEvent(kb.Enter))

	// The create form: the number and a first name typed, Enter sends it.
	tab.WaitJS(`document.querySelector('#object-form') && document.querySelector('#object-form').dataset.ready === '1'`)
	tabTo(tab, `#f-name`, 60)
	tab.Run(chromedp.KeyEvent("3001"))
	tabTo(tab, `#f-first_name`, 10)
	tab.Run(chromedp.KeyEvent("Kay"), chromedp.KeyEvent(kb.Enter))
	// The secrets are shown once, with the way on in reach.
	tab.WaitJS(`(() => { const s = document.getElementById('secrets'); return s && !s.hidden })()`)
	tabTo(tab, `#secrets-done`, 30)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`location.pathname.endsWith('/extensions/3001')`)
	var ext map[string]any
	s.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/3001", s.Key, nil).Expect(t, 200).JSON(t, &ext)
	if ext["first_name"] != "Kay" {
		t.Fatalf("created by keyboard: first_name %v, want Kay", ext["first_name"])
	}

	// Edit: the first name replaced, Enter saves.
	tabTo(tab, `a.button[href$="/extensions/3001/edit"]`, 120)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`document.querySelector('#object-form') && document.querySelector('#object-form').dataset.ready === '1'`)
	tabTo(tab, `#f-first_name`, 60)
	tab.Run(chromedp.KeyEvent("\b\b\b"), chromedp.KeyEvent("Kim"), chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`location.pathname.endsWith('/extensions/3001')`)
	tab.WaitText("main", "Kim")
	s.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/3001", s.Key, nil).Expect(t, 200).JSON(t, &ext)
	if ext["first_name"] != "Kim" {
		t.Fatalf("edited by keyboard: first_name %v, want Kim", ext["first_name"])
	}

	// Delete: the confirmation takes the focus; Enter confirms.
	tabTo(tab, `button[data-delete]`, 120)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`document.activeElement && document.activeElement.textContent.startsWith('Yes, delete')`)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`location.pathname.endsWith('/extensions/')`)
	s.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/3001", s.Key, nil).Expect(t, 404)
	tab.NoErrors()
}
