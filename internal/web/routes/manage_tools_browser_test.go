package routes_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/media/mediatest"
	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// toolsEnv is managerEnv with more settings.
func toolsEnv(t *testing.T, env map[string]string) *apptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	all := map[string]string{"SWITCHBOARD_LISTEN": addr, "SWITCHBOARD_BASE_URL": "http://" + addr}
	maps.Copy(all, env)
	return apptest.Start(t, apptest.AnyEnv(t), all)
}

// toolTab signs a tenant administrator of tenant in and opens the
// tenant's page.
func toolTab(t *testing.T, s *apptest.Server, tenant string) *browsertest.Tab {
	t.Helper()
	tab := browsertest.New(t).Tab(t)
	browserSignIn(tab, s, createAdmin(t, s, "tenant_admin", []string{tenant}))
	tab.Run(chromedp.Navigate(s.URL + "/tenants/" + tenant + "/"))
	tab.WaitText("h1", "Tenant "+tenant)
	return tab
}

// The routing trace page, with the keyboard alone: an operator types who
// calls and the number dialled, presses Enter and reads the steps; a
// trace without a number shows the API's reason beside the field; another
// tenant's trace is refused as a page.
func TestBrowserToolRoutingTrace(t *testing.T) {
	s := toolsEnv(t, nil)
	tenant, other := s.Tenant(t, "trc"), s.Tenant(t, "trc")
	s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001", "first_name": "Eve"}).Expect(t, 201)
	tab := toolTab(t, s, tenant)
	tab.Run(chromedp.Click(`#tools-h + ul a[href$="/tools/trace"]`, chromedp.ByQuery))
	tab.WaitText("h1", "Routing trace")
	tab.Axe("the routing trace page", browsertest.BestPractice)
	// Keys only: focus the first input, type, tab on, type, Enter.
	tab.Run(chromedp.Focus(`#in-from`, chromedp.ByQuery),
		chromedp.KeyEvent("0825550001"), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("1001"), chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`!document.getElementById('trace-result').hidden`)
	var steps string
	tab.Eval(`document.getElementById('trace-steps').innerText`, &steps)
	for _, want := range []string{"Caller: 0825550001", "Dialled: 1001 in tenant " + tenant, "Matched: an extension", "Goes to: extension 1001"} {
		if !strings.Contains(steps, want) {
			t.Errorf("the steps %q lack %q", steps, want)
		}
	}
	var focused string
	tab.Eval(`document.activeElement.id`, &focused)
	if focused != "trace-result" {
		t.Errorf("after the trace the focus is on %q, want the answer", focused)
	}
	tab.Axe("the routing trace's answer", browsertest.BestPractice)
	// The address keeps the question: a reload answers it again.
	tab.Run(chromedp.Reload())
	tab.WaitJS(`!document.getElementById('trace-result').hidden && document.getElementById('in-to').value === '1001'`)
	// No number: the API's reason beside the field.
	tab.Eval(`document.getElementById('in-to').value = ''; document.querySelector('#tool-form button[type=submit]').click(); true`, nil)
	tab.WaitJS(`document.getElementById('in-to-err').textContent.includes('required')`)
	tab.NoErrors()
	tab.Run(chromedp.Navigate(s.URL + "/tenants/" + other + "/tools/trace"))
	tab.WaitText("h1", "Not allowed")
}

// The call reports: the operator filters the call records by direction,
// follows a call to its recording and the player's source answers the
// audio.
func TestBrowserToolCallReports(t *testing.T) {
	s := toolsEnv(t, nil)
	tenant := s.Tenant(t, "rpt")
	s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001", "first_name": "Eve"}).Expect(t, 201)
	in := cdr("rp-1", "1001")
	in["src"], in["direction"] = "+27825550001", "inbound"
	s.Do(t, "POST", "/api/tenants/"+tenant+"/imports/cdrs", s.Key, map[string]any{"records": []any{in, cdr("rp-2", "+27215550102")}}).Expect(t, 200)
	rec := recordingBody("rp-1", base64.StdEncoding.EncodeToString(mediatest.Tone(t, "r.wav", 1)))
	rec["src"], rec["dst"], rec["when"] = "+27825550001", "1001", "2026-02-01T10:00:00Z"
	s.Do(t, "POST", "/api/tenants/"+tenant+"/recordedcalls", s.Key, rec).Expect(t, 201)

	tab := toolTab(t, s, tenant)
	tab.Run(chromedp.Click(`nav.side a[href$="/tools/cdrs"]`, chromedp.ByQuery))
	tab.WaitJS(`document.querySelectorAll('#report tbody tr').length === 2`)
	tab.Axe("the call records", browsertest.BestPractice)
	tab.Run(chromedp.SendKeys(`#in-direction`, "inbound", chromedp.ByQuery), chromedp.Click(`#tool-form button[type=submit]`, chromedp.ByQuery))
	tab.WaitJS(`document.querySelectorAll('#report tbody tr').length === 1 && document.getElementById('report-status').textContent.includes('of 1')`)
	var row string
	tab.Eval(`document.querySelector('#report tbody tr').innerText`, &row)
	if !strings.Contains(row, "+27825550001") || !strings.Contains(row, "inbound") {
		t.Errorf("the filtered row: %q", row)
	}
	tab.Run(chromedp.Click(`#report tbody a`, chromedp.ByQuery))
	tab.WaitJS(`location.pathname.endsWith('/tools/recordings') && document.querySelectorAll('#report audio').length === 1`)
	tab.Axe("the call recordings", browsertest.BestPractice)
	var answer string
	tab.Run(chromedp.Evaluate(`(async () => { const a = document.querySelector('#report audio');
		const r = await fetch(a.src, {credentials: 'same-origin'}); return r.status + ' ' + r.headers.get('Content-Type') })()`, &answer,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if !strings.HasPrefix(answer, "200 audio/") {
		t.Errorf("the player's source answers %q", answer)
	}
	// The player loads it.
	tab.Eval(`(() => { const a = document.querySelector('#report audio'); a.preload = 'auto'; a.load(); return true })()`, nil)
	tab.WaitJS(`document.querySelector('#report audio').readyState >= 1 && document.querySelector('#report audio').duration > 0.5`)
	tab.NoErrors()
}

// A live call recorded with the record endpoint plays in the call records
// report when the server sees the nodes' recordings directory: the row's
// player is named for the call and its source answers the audio.
func TestBrowserToolCallRecordingPlays(t *testing.T) {
	fs := startFake(t)
	mount := t.TempDir()
	s := toolsEnv(t, map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr(), "SWITCHBOARD_RECORDINGS_DIR": "/rec", "SWITCHBOARD_RECORDINGS_MOUNT": mount})
	e := setupCallEnv(t, s, fs)
	waitEvents(t, fs, 1)
	recordedCall(t, e, mount, "meeting-3", mediatest.Tone(t, "r.wav", 1))

	tab := toolTab(t, s, e.tenant)
	tab.Run(chromedp.Click(`nav.side a[href$="/tools/cdrs"]`, chromedp.ByQuery))
	tab.WaitJS(`!!document.querySelector('#report tbody tr audio')`)
	tab.Axe("the call records with a recording", browsertest.BestPractice)
	var name string
	tab.Eval(`document.querySelector('#report tbody tr audio').getAttribute('aria-label')`, &name)
	if !strings.HasPrefix(name, "Recording of the call from 1001 to 5551234 at ") {
		t.Errorf("the player is named %q", name)
	}
	var answer string
	tab.Run(chromedp.Evaluate(`(async () => { const a = document.querySelector('#report audio');
		const r = await fetch(a.src, {credentials: 'same-origin'}); return r.status + ' ' + r.headers.get('Content-Type') })()`, &answer,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if answer != "200 audio/wav" {
		t.Errorf("the player's source answers %q", answer)
	}
	tab.Eval(`(() => { const a = document.querySelector('#report audio'); a.preload = 'auto'; a.load(); return true })()`, nil)
	tab.WaitJS(`document.querySelector('#report audio').readyState >= 1 && document.querySelector('#report audio').duration > 0.5`)
	tab.NoErrors()
}

// The delivery log: a failed delivery is replayed with the keyboard and
// its new attempt shows; a disabled webhook is enabled from it.
func TestBrowserToolDeliveryReplay(t *testing.T) {
	s := toolsEnv(t, hookEnv)
	recv := newReceiver(t)
	recv.failFirst = true
	tenant := s.Tenant(t, "dlv")
	base := "/api/tenants/" + tenant + "/outbound_webhooks/"
	id, _ := createHook(t, s, base, map[string]any{"name": "crm", "url": recv.URL + "/hook", "events": []string{"config.changed"}})
	failed := s.Do(t, "POST", fmt.Sprintf("%s%d/test", base, id), s.Key, map[string]any{}).Expect(t, 200).Map(t)
	if failed["status"] == "succeeded" {
		t.Fatalf("the first test send succeeded: %v", failed)
	}
	tab := toolTab(t, s, tenant)
	tab.Run(chromedp.Navigate(fmt.Sprintf("%s/tenants/%s/outbound_webhooks/%d", s.URL, tenant, id)))
	tab.Run(chromedp.Click(`a[href$="/deliveries"]`, chromedp.ByQuery))
	row := fmt.Sprintf(`#report tr[data-id="%v"]`, failed["id"])
	tab.WaitJS(fmt.Sprintf(`!!document.querySelector('%s button[data-replay]')`, row))
	tab.Axe("a webhook's delivery log", browsertest.BestPractice)
	var before string
	tab.Eval(fmt.Sprintf(`document.querySelector('%s').innerText`, row), &before)
	if !strings.Contains(before, "HTTP 500") || !strings.Contains(before, "webhook.test") {
		t.Errorf("the failed delivery shows %q", before)
	}
	tab.Run(chromedp.Focus(row+` button[data-replay]`, chromedp.ByQuery), chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(fmt.Sprintf(`(() => { const r = document.querySelector('%s'); return !!r && r.innerText.includes('succeeded') && r.innerText.includes('HTTP 200') })()`, row))
	tab.WaitText("#report-status", "replayed: succeeded")
	var sent []int
	for _, g := range recv.requests() {
		if g.ID == failed["event_id"] {
			sent = append(sent, g.Status)
		}
	}
	if len(sent) != 2 || sent[0] != 500 || sent[1] != 200 {
		t.Errorf("the receiver answered the test event %v, want 500 then the replay's 200", sent)
	}
	// A disabled webhook is enabled from its log.
	s.Do(t, "PUT", fmt.Sprintf("%s%d", base, id), s.Key, map[string]any{"enabled": false}).Expect(t, 200)
	tab.Run(chromedp.Reload())
	tab.WaitText("#hook-state", "The webhook is disabled")
	tab.Axe("a disabled webhook's delivery log", browsertest.BestPractice)
	tab.Run(chromedp.Focus(`#hook-enable`, chromedp.ByQuery), chromedp.KeyEvent(kb.Enter))
	tab.WaitText("#hook-state", "The webhook is enabled")
	if got := s.Do(t, "GET", fmt.Sprintf("%s%d", base, id), s.Key, nil).Expect(t, 200).Map(t); got["enabled"] != true {
		t.Errorf("after Enable the webhook is %v", got)
	}
	tab.NoErrors()
}

// Imports: the operator picks a call record file, starts it and watches
// the job to its end, refused row included, without reloading; then
// imports a recording through its form.
func TestBrowserToolImportJob(t *testing.T) {
	s := toolsEnv(t, nil)
	tenant := s.Tenant(t, "imp")
	var csv strings.Builder
	csv.WriteString("external_id,start,duration,src,dst,direction,disposition\n")
	for i := range 2000 {
		dir := "inbound"
		if i == 700 {
			dir = "sideways"
		}
		fmt.Fprintf(&csv, "b-%d,2026-02-01T10:%02d:00Z,30,+2782555%04d,1001,%s,answered\n", i, i%60, i, dir)
	}
	file := filepath.Join(t.TempDir(), "calls.csv")
	if err := os.WriteFile(file, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	tab := toolTab(t, s, tenant)
	tab.Run(chromedp.Click(`nav.side a[href$="/tools/imports"]`, chromedp.ByQuery))
	tab.WaitText("h1", "Imports")
	tab.Axe("the imports page", browsertest.BestPractice)
	tab.Run(chromedp.SetUploadFiles(`#imp-cdrs-file`, []string{file}, chromedp.ByQuery),
		chromedp.Click(`#imp-cdrs-h ~ form button[type=submit]`, chromedp.ByQuery))
	tab.WaitJS(`document.getElementById('job').dataset.status === 'done'`)
	var status string
	tab.Eval(`document.getElementById('job-status').textContent`, &status)
	if status != "Done: 2000 rows read, 1999 created, 0 duplicates, 1 refused." {
		t.Errorf("the job's end: %q", status)
	}
	tab.WaitText("#job-errors", "b-700")
	tab.Axe("a finished import job", browsertest.BestPractice)
	// The page's address names the job: a reload shows it again.
	tab.Run(chromedp.Reload())
	tab.WaitJS(`document.getElementById('job').dataset.status === 'done'`)
	s.Do(t, "GET", "/api/reports/cdrs?tenant="+tenant+"&limit=1", s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "1999")

	// A recording: refused without its caller (the API's reason beside
	// the field), then imported.
	wav := filepath.Join(t.TempDir(), "call.wav")
	if err := os.WriteFile(wav, mediatest.Tone(t, "call.wav", 1), 0o600); err != nil {
		t.Fatal(err)
	}
	tab.Run(chromedp.SetUploadFiles(`#imp-recording-file`, []string{wav}, chromedp.ByQuery),
		chromedp.SendKeys(`#imp-recording-external_id`, "old-pbx-1", chromedp.ByQuery),
		chromedp.SetValue(`#imp-recording-when`, "2026-03-01T09:30", chromedp.ByQuery),
		chromedp.SendKeys(`#imp-recording-dst`, "1001", chromedp.ByQuery),
		chromedp.SendKeys(`#imp-recording-duration`, "1", chromedp.ByQuery),
		chromedp.Click(`#imp-recording-h ~ form button[type=submit]`, chromedp.ByQuery))
	tab.WaitJS(`document.getElementById('imp-recording-src-err').textContent.length > 0`)
	tab.Run(chromedp.SendKeys(`#imp-recording-src`, "+27825550001", chromedp.ByQuery),
		chromedp.Click(`#imp-recording-h ~ form button[type=submit]`, chromedp.ByQuery))
	tab.WaitText(`#imp-recording-h ~ form .import-result`, "Imported as #")
	s.Do(t, "GET", "/api/reports/recordings?tenant="+tenant, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "1")
	tab.NoErrors()
}

// The platform's routing trace: a DID no tenant has is traced to nothing,
// with the keyboard.
func TestBrowserToolPlatformTrace(t *testing.T) {
	s := toolsEnv(t, nil)
	tab := browsertest.New(t).Tab(t)
	browserSignIn(tab, s, createAdmin(t, s, "platform_admin", nil))
	tab.Run(chromedp.Navigate(s.URL + "/manage/"))
	tab.Run(chromedp.Click(`#tools-h + ul a[href="/manage/tools/trace"]`, chromedp.ByQuery))
	tab.WaitText("h1", "Routing trace")
	tab.Axe("the platform's routing trace", browsertest.BestPractice)
	tab.Run(chromedp.Focus(`#in-did`, chromedp.ByQuery), chromedp.KeyEvent("+27215559999"), chromedp.KeyEvent(kb.Enter))
	tab.WaitJS(`!document.getElementById('trace-result').hidden`)
	var steps string
	tab.Eval(`document.getElementById('trace-steps').innerText`, &steps)
	for _, want := range []string{"Dialled: +27215559999 in the public context", "Nothing matched", "Why: unknown DID"} {
		if !strings.Contains(steps, want) {
			t.Errorf("the steps %q lack %q", steps, want)
		}
	}
	tab.NoErrors()
}
