package routes_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/media/mediatest"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/wait"
	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// Issue 26's "Done when", walked in one browser: an operator signs in,
// creates a tenant, its extension, a greeting uploaded as a prompt, an
// IVR that plays it, a queue with an agent, a DID with an inbound route
// to the IVR and a trunk, all through the pages; then a carrier call to
// the DID shows on the live-calls dashboard, and once it ended its record
// is in the tenant's call report.
func TestBrowserOperatorWalk(t *testing.T) {
	fs := startFake(t)
	s := toolsEnv(t, map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr(), "SWITCHBOARD_RECORDINGS_DIR": "/rec"})
	tab := browsertest.New(t).Tab(t)
	browserSignIn(tab, s, createAdmin(t, s, "platform_admin", nil))
	// Names of our own: the database and the dashboard may be shared
	// with the tests running beside this one.
	tenant := storetest.Name("walk")
	suffix := strings.TrimPrefix(tenant, "walk_")
	// Johannesburg numbers: the DID must be a valid number.
	did := fmt.Sprintf("+2711%07d", time.Now().UnixNano()%1e7)
	caller := fmt.Sprintf("+2721%07d", time.Now().UnixNano()%1e7)
	pages := s.URL + "/tenants/" + tenant + "/"

	createFromForm(tab, s.URL+"/manage/tenants/new", map[string]any{"tenant": tenant})
	tab.WaitText("h1", tenant)
	createFromForm(tab, pages+"extensions/new", map[string]any{"name": "1001", "first_name": "Ann", "last_name": "Smith"})

	// The greeting: a recording chosen in the file picker.
	greeting := filepath.Join(t.TempDir(), "greeting.wav")
	if err := os.WriteFile(greeting, mediatest.Tone(t, "greeting.wav", 1), 0o600); err != nil {
		t.Fatal(err)
	}
	tab.Run(chromedp.Navigate(pages + "voice_prompts/new"))
	fillForm(tab, map[string]any{"name": "greeting"})
	tab.Run(chromedp.SetUploadFiles(`#f-audio_base64-file`, []string{greeting}, chromedp.ByQuery))
	tab.WaitJS(`document.querySelector('.field[data-name="audio_base64"]').dataset.loaded === 'greeting.wav'`)
	submitForm(tab)
	tab.WaitJS(`!location.pathname.endsWith('/new') && !!document.getElementById('prompt-player')`)
	var prompt string
	tab.Eval(`location.pathname.split('/').pop()`, &prompt)

	// The IVR greets with it; 1 rings Ann.
	createFromForm(tab, pages+"ivr_menus/new", map[string]any{"name": "main menu", "number": "500", "greeting_long_prompt_id": prompt,
		"options": []any{map[string]any{"digits": "1", "destination": map[string]any{"type": "extension", "target": "1001"}}}})
	tab.WaitText("#ivr-options", "1001")

	// A queue, and an agent added to it on the queue's page.
	createFromForm(tab, pages+"agents/new", map[string]any{"name": "Ann Agent", "agent_number": "501", "extension": "1001"})
	createFromForm(tab, pages+"queues/new", map[string]any{"name": "support", "number": "600"})
	tab.WaitJS(`!!document.getElementById('queue-agent-add')`)
	tab.Run(chromedp.Click(`#queue-agent-add button[type=submit]`, chromedp.ByQuery))
	tab.WaitText("#queue-agents", "Ann Agent")

	// The DID, its inbound route to the IVR, and a trunk.
	createFromForm(tab, s.URL+"/manage/dids/new", map[string]any{"number": did, "tenant": tenant})
	createFromForm(tab, pages+"inbound_routes/new", map[string]any{"name": "main number", "did": did,
		"destination": map[string]any{"type": "ivr", "target": "500"}})
	createFromForm(tab, s.URL+"/manage/sip_trunks/new", map[string]any{"name": "carrier_" + suffix, "host": "sip.example.net"})
	tab.NoErrors()

	// A carrier call to the DID, on the dashboard while it lasts.
	tab.Run(chromedp.Navigate(s.URL + "/dashboard/calls"))
	tab.WaitJS(`document.getElementById('sb-stream').dataset.state === 'live'`)
	call, err := fs.CreateChannel(fakefs.DIDCall(caller, did, tenant, "500"))
	if err != nil {
		t.Fatal(err)
	}
	// One line, the tenant's: the call entered the tenant from the public
	// dialplan, it is not shown twice (before and after).
	tab.WaitText(fmt.Sprintf(`li.sb-call[data-tenant=%q]`, tenant), caller)
	tab.WaitJS(fmt.Sprintf(`[...document.querySelectorAll('li.sb-call')].filter(li => li.innerText.includes(%q)).length === 1`, caller))
	if err := fs.Hangup(call, "NORMAL_CLEARING"); err != nil {
		t.Fatal(err)
	}
	tab.WaitJS(fmt.Sprintf(`!document.getElementById('sb-calls').innerText.includes(%q)`, caller))

	// Its record, in the call report.
	wait.Until(t, 10*time.Second, "the call's record", func() bool {
		var list []map[string]any
		s.Do(t, "GET", "/api/reports/cdrs?tenant="+tenant, s.Key, nil).Expect(t, 200).JSON(t, &list)
		return len(list) == 1
	})
	tab.Run(chromedp.Navigate(pages + "tools/cdrs"))
	tab.WaitText("#report tbody", caller)
	tab.NoErrors()
}
