package routes_test

import (
	"fmt"
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

// A queue's agents with the keyboard alone: the agent to add chosen in
// its list, the level typed, Enter adds; Enter on an agent's Remove
// removes. After each change the page is read again with the focus on the
// queue's agents and the change said, not back at the top of the page.
func TestBrowserQueueAgentsKeyboardOnly(t *testing.T) {
	s := managerEnv(t)
	q := openQueueAgents(t, s, "kqueue")
	api, ann, bob, tab := q.api, q.ann, q.bob, q.tab

	tab.TabTo(`#add-agent`, 120)
	tab.Run(chromedp.KeyEvent("Bob"))
	tab.TabTo(`#add-level`, 3)
	tab.Run(chromedp.KeyEvent(kb.End), chromedp.KeyEvent("\b2"))
	tab.TabTo(`#queue-agent-add button[type=submit]`, 5)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitText("#queue-agents", "Bob Agent")
	tab.WaitText("#queue-agents-result", "Bob Agent added to this queue")
	inAgents := `document.querySelector('[data-touch="queue-agents"]').contains(document.activeElement)`
	tab.WaitJS(inAgents)
	got := s.Do(t, "GET", fmt.Sprintf("%s%v", api, bob["id"]), s.Key, nil).Expect(t, 200).Map(t)
	if tiers, _ := got["queues"].([]any); len(tiers) != 1 || fmt.Sprint(tiers[0].(map[string]any)["level"]) != "2" {
		t.Fatalf("Bob's tiers after the add by keyboard: %v", got["queues"])
	}

	tab.TabTo(fmt.Sprintf(`button[data-remove-agent="%s%v"]`, api, ann["id"]), 20)
	tab.Run(chromedp.KeyEvent(kb.Enter))
	tab.WaitText("#queue-agents-result", "Ann Agent removed from this queue")
	tab.WaitJS(inAgents)
	got = s.Do(t, "GET", fmt.Sprintf("%s%v", api, ann["id"]), s.Key, nil).Expect(t, 200).Map(t)
	if tiers, _ := got["queues"].([]any); len(tiers) != 0 {
		t.Fatalf("Ann's tiers after the remove by keyboard: %v", got["queues"])
	}
	tab.Axe("a queue's agents after a change", browsertest.BestPractice)
	tab.NoErrors()
}
