package routes_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

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
	tab.TabTo(`input[name="username"]`, 20)
	tab.Run(chromedp.KeyEvent(name))
	tab.TabTo(`input[name="password"]`, 5)
	tab.Run(chromedp.KeyEvent(adminPassword), chromedp.KeyEvent(kb.Enter))
	tab.WaitText("body", "Sign out")

	tab.Run(chromedp.Navigate(s.URL + "/tenants/" + tenant + "/"))
	tab.TabTo(`a[href$="/tenants/`+tenant+`/extensions/"]`, 120)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`location.pathname.endsWith('/extensions/')`)
	tab.TabTo(`a[href$="/extensions/new"]`, 120)
	tab.Run(chromedp.KeyEvent(kb.Enter))

	// The create form: the number and a first name typed, Enter sends it.
	tab.WaitJS(`document.querySelector('#object-form') && document.querySelector('#object-form').dataset.ready === '1'`)
	tab.TabTo(`#f-name`, 60)
	tab.Run(chromedp.KeyEvent("3001"))
	tab.TabTo(`#f-first_name`, 10)
	tab.Run(chromedp.KeyEvent("Kay"), chromedp.KeyEvent(kb.Enter))
	// The secrets are shown once, with the way on in reach.
	tab.WaitJS(`(() => { const s = document.getElementById('secrets'); return s && !s.hidden })()`)
	tab.TabTo(`#secrets-done`, 30)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`location.pathname.endsWith('/extensions/3001')`)
	var ext map[string]any
	s.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/3001", s.Key, nil).Expect(t, 200).JSON(t, &ext)
	if ext["first_name"] != "Kay" {
		t.Fatalf("created by keyboard: first_name %v, want Kay", ext["first_name"])
	}

	// Edit: the first name replaced, Enter saves.
	tab.TabTo(`a.button[href$="/extensions/3001/edit"]`, 120)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`document.querySelector('#object-form') && document.querySelector('#object-form').dataset.ready === '1'`)
	tab.TabTo(`#f-first_name`, 60)
	tab.Run(chromedp.KeyEvent("\b\b\b"), chromedp.KeyEvent("Kim"), chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`location.pathname.endsWith('/extensions/3001')`)
	tab.WaitText("main", "Kim")
	s.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/3001", s.Key, nil).Expect(t, 200).JSON(t, &ext)
	if ext["first_name"] != "Kim" {
		t.Fatalf("edited by keyboard: first_name %v, want Kim", ext["first_name"])
	}

	// Delete: the confirmation takes the focus; Enter confirms.
	tab.TabTo(`button[data-delete]`, 120)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`document.activeElement && document.activeElement.textContent.startsWith('Yes, delete')`)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`location.pathname.endsWith('/extensions/')`)
	s.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/3001", s.Key, nil).Expect(t, 404)
	tab.NoErrors()
}
