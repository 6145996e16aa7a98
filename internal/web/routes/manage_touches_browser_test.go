package routes_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/media/mediatest"
	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// The per-resource touches of the configuration manager (issue 26 item 1),
// each in Chromium against what the API stores.

// A prompt created from its form with an audio file chosen in the file
// picker is stored converted, and its page plays it: the player's source
// answers 200 with WAV audio of the uploaded length, and it plays.
func TestBrowserPromptUploadAndPlayer(t *testing.T) {
	s := managerEnv(t)
	tenant := s.Tenant(t, "tprompt")
	tab := browsertest.New(t).Tab(t)
	browserSignIn(tab, s, createAdmin(t, s, "platform_admin", nil))
	file := filepath.Join(t.TempDir(), "welcome.wav")
	if err := os.WriteFile(file, mediatest.Tone(t, "welcome.wav", 2), 0o600); err != nil {
		t.Fatal(err)
	}
	tab.Run(chromedp.Navigate(s.URL + "/tenants/" + tenant + "/voice_prompts/new"))
	fillForm(tab, map[string]any{"name": "welcome"})
	tab.WaitJS(`!!document.getElementById('f-audio_base64-file')`)
	tab.Axe("a prompt's create form with its file picker", browsertest.BestPractice)
	tab.Run(chromedp.SetUploadFiles(`#f-audio_base64-file`, []string{file}, chromedp.ByQuery))
	tab.WaitJS(`document.querySelector('.field[data-name="audio_base64"]').dataset.loaded === 'welcome.wav'`)
	submitForm(tab)
	tab.WaitJS(`!location.pathname.endsWith('/new') && !!document.getElementById('prompt-player')`)

	var list []map[string]any
	s.Do(t, "GET", "/api/tenants/"+tenant+"/voice_prompts/", s.Key, nil).Expect(t, 200).JSON(t, &list)
	if len(list) != 1 || list[0]["name"] != "welcome" || list[0]["format"] != "wav" || list[0]["duration_ms"].(float64) < 1900 {
		t.Fatalf("stored prompts %v", list)
	}
	var path string
	tab.Eval(`location.pathname`, &path)
	if want := fmt.Sprintf("/tenants/%s/voice_prompts/%v", tenant, list[0]["id"]); path != want {
		t.Fatalf("after the create the browser is at %s, want %s", path, want)
	}
	// The player's source, as the browser fetches it with its session.
	var answer struct {
		Status int
		Type   string
		Size   int
	}
	tab.Run(chromedp.Evaluate(`(async () => { const r = await fetch(document.getElementById('prompt-player').src);
		const b = await r.arrayBuffer(); return {status: r.status, type: r.headers.get('Content-Type'), size: b.byteLength}; })()`, &answer,
		awaitPromise))
	if answer.Status != 200 || answer.Type != "audio/wav" || float64(answer.Size) != list[0]["size_bytes"].(float64) {
		t.Fatalf("the player's source answered %+v, the prompt stores %v bytes", answer, list[0]["size_bytes"])
	}
	// The same download through the API with a key.
	r := s.Do(t, "GET", fmt.Sprintf("/api/tenants/%s/voice_prompts/%v/audio", tenant, list[0]["id"]), s.Key, nil).Expect(t, 200)
	if !strings.HasPrefix(string(r.Body), "RIFF") {
		t.Fatalf("the API's download is not a WAV: % x", r.Body[:min(16, len(r.Body))])
	}
	tab.WaitJS(`(() => { const a = document.getElementById('prompt-player'); return a.duration > 1.9 && a.duration < 2.1 })()`)
	// Play, as a person's press of the player's button would start it.
	var playing bool
	tab.Run(chromedp.Evaluate(`document.getElementById('prompt-player').play().then(() => true)`, &playing, awaitPromise,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithUserGesture(true) }))
	tab.WaitJS(`document.getElementById('prompt-player').currentTime > 0.1`)
	tab.Axe("a prompt's page with its player", browsertest.BestPractice)
	tab.NoErrors()
}

// awaitPromise makes an Evaluate answer with what the promise resolves to.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// A schedule's page shows its open periods in the columns of their days,
// in the week's order, and its holidays.
func TestBrowserScheduleWeek(t *testing.T) {
	s := managerEnv(t)
	tenant := s.Tenant(t, "tweek")
	sched := s.Do(t, "POST", "/api/tenants/"+tenant+"/schedules/", s.Key, map[string]any{"name": "office", "open_periods": []any{
		map[string]any{"days": []string{"mon", "wed"}, "start": "13:00", "end": "17:00"},
		map[string]any{"days": []string{"mon"}, "start": "08:00", "end": "12:00"},
		map[string]any{"days": []string{"sat"}, "start": "10:00", "end": "24:00"},
	}, "holidays": []any{map[string]any{"name": "New year", "date": "2027-01-01"}}}).Expect(t, 201).Map(t)
	tab := browsertest.New(t).Tab(t)
	browserSignIn(tab, s, createAdmin(t, s, "tenant_admin", []string{tenant}))
	tab.Run(chromedp.Navigate(fmt.Sprintf("%s/tenants/%s/schedules/%v", s.URL, tenant, sched["id"])))
	tab.WaitJS(`!!document.getElementById('schedule-week')`)
	// What each column shows, by its heading.
	var week [][]string
	tab.Eval(`(() => { const t = document.getElementById('schedule-week');
		const heads = [...t.tHead.rows[0].cells].map(c => c.innerText.trim());
		return [...t.tBodies[0].rows[0].cells].map((c, i) => [heads[i], ...[...c.querySelectorAll('li')].map(l => l.innerText.trim())]); })()`, &week)
	want := [][]string{{"Monday", "08:00–12:00", "13:00–17:00"}, {"Tuesday"}, {"Wednesday", "13:00–17:00"}, {"Thursday"}, {"Friday"}, {"Saturday", "10:00–24:00"}, {"Sunday"}}
	if fmt.Sprint(week) != fmt.Sprint(want) {
		t.Fatalf("the week shows %v, want %v", week, want)
	}
	tab.WaitText("main", "New year: 2027-01-01")
	tab.Axe("a schedule's week", browsertest.BestPractice)
	tab.NoErrors()
}

// An IVR's page shows its options as the API stores them: the digits, the
// action and the target named and linked to its page.
func TestBrowserIVROptionsTable(t *testing.T) {
	s := managerEnv(t)
	tenant := s.Tenant(t, "tivr")
	e := newExamples(t, s, tenant)
	queue := e.object(resourceByNameT("queues"))
	ext := e.object(resourceByNameT("extensions"))
	body := e.body(resourceByNameT("ivr_menus"))
	body["options"] = []any{
		map[string]any{"digits": "1", "destination": map[string]any{"type": "queue", "target": queue["number"]}},
		map[string]any{"digits": "2", "destination": map[string]any{"type": "extension", "target": ext["name"]}},
		map[string]any{"digits": "*9", "destination": map[string]any{"type": "hangup"}},
	}
	ivr := s.Do(t, "POST", "/api/tenants/"+tenant+"/ivr_menus/", s.Key, body).Expect(t, 201).Map(t)
	stored := s.Do(t, "GET", fmt.Sprintf("/api/tenants/%s/ivr_menus/%v", tenant, ivr["id"]), s.Key, nil).Expect(t, 200).Map(t)
	tab := browsertest.New(t).Tab(t)
	browserSignIn(tab, s, createAdmin(t, s, "tenant_admin", []string{tenant}))
	tab.Run(chromedp.Navigate(fmt.Sprintf("%s/tenants/%s/ivr_menus/%v", s.URL, tenant, ivr["id"])))
	tab.WaitJS(`!!document.getElementById('ivr-options')`)
	var rows [][]string
	tab.Eval(`[...document.querySelectorAll('#ivr-options tbody tr')].map(r => [...r.cells].map(c => c.innerText.trim()).concat([r.querySelector('a') ? r.querySelector('a').pathname : '']))`, &rows)
	opts := stored["options"].([]any)
	if len(rows) != len(opts) {
		t.Fatalf("the table shows %v, the API stores %v", rows, opts)
	}
	links := map[string]string{
		"queue":     fmt.Sprintf("/tenants/%s/queues/%v", tenant, queue["id"]),
		"extension": fmt.Sprintf("/tenants/%s/extensions/%v", tenant, ext["name"]),
		"hangup":    "",
	}
	actions := map[string]string{"queue": "Queue", "extension": "Extension", "hangup": "Hangup"}
	for i, o := range opts {
		opt := o.(map[string]any)
		dest := opt["destination"].(map[string]any)
		typ := dest["type"].(string)
		row := rows[i]
		if row[0] != opt["digits"] || row[1] != actions[typ] || row[3] != links[typ] {
			t.Errorf("row %d shows %q, the API stores %v", i, row, opt)
		}
		if target, ok := dest["target"]; ok && !strings.Contains(row[2], fmt.Sprint(target)) {
			t.Errorf("row %d's target %q does not name %v", i, row[2], target)
		}
	}
	if !strings.Contains(rows[0][2], fmt.Sprint(queue["name"])) {
		t.Errorf("the queue option does not name the queue %v: %q", queue["name"], rows[0][2])
	}
	tab.Axe("an IVR's options", browsertest.BestPractice)
	tab.NoErrors()
}

// A queue's page lists its agents (tiers) with their status; an agent
// added from the page is in the queue by the API, one removed is not.
func TestBrowserQueueAgents(t *testing.T) {
	s := managerEnv(t)
	q := openQueueAgents(t, s, "tqueue")
	queue, api, ann, bob, tab := q.queue, q.api, q.ann, q.bob, q.tab
	var rows [][]string
	agentRows := `[...document.querySelectorAll('#queue-agents tbody tr')].map(r => [...r.cells].slice(0, 5).map(c => c.innerText.trim()))`
	tab.Eval(agentRows, &rows)
	if fmt.Sprint(rows) != "[[Ann Agent 501 Available 2 3]]" {
		t.Fatalf("the queue's agents: %v", rows)
	}
	tab.Axe("a queue's agents", browsertest.BestPractice)

	// A refused add (a level out of range) shows the API's reason and
	// changes nothing; then Bob is added at level 1.
	add := func(level string) {
		tab.Run(chromedp.SetValue(`#add-agent`, fmt.Sprintf("%s%v", api, bob["id"]), chromedp.ByQuery))
		tab.Eval(`document.getElementById('add-level').value = ''; true`, nil)
		tab.Run(chromedp.SendKeys(`#add-level`, level, chromedp.ByQuery), chromedp.Click(`#queue-agent-add button[type=submit]`, chromedp.ByQuery))
	}
	add("99")
	tab.WaitText("#queue-agents-result", "Not added: queues")
	if got, _ := s.Do(t, "GET", fmt.Sprintf("%s%v", api, bob["id"]), s.Key, nil).Expect(t, 200).Map(t)["queues"].([]any); len(got) != 0 {
		t.Fatalf("a refused add stored %v", got)
	}
	add("1")
	tab.WaitText("#queue-agents", "Bob Agent")
	got := s.Do(t, "GET", fmt.Sprintf("%s%v", api, bob["id"]), s.Key, nil).Expect(t, 200).Map(t)
	tiers, _ := got["queues"].([]any)
	if len(tiers) != 1 || fmt.Sprint(tiers[0].(map[string]any)["queue_id"]) != fmt.Sprint(queue["id"]) || fmt.Sprint(tiers[0].(map[string]any)["level"]) != "1" {
		t.Fatalf("Bob's tiers after the add: %v", got["queues"])
	}
	tab.Eval(agentRows, &rows)
	if len(rows) != 2 || rows[0][0] != "Bob Agent" || rows[1][0] != "Ann Agent" {
		t.Fatalf("after the add the queue's agents are %v, want Bob (level 1) before Ann", rows)
	}

	// Remove Ann.
	tab.Run(chromedp.Click(fmt.Sprintf(`button[data-remove-agent="%s%v"]`, api, ann["id"]), chromedp.ByQuery))
	tab.WaitJS(`![...document.querySelectorAll('#queue-agents tbody th')].some(c => c.innerText.includes('Ann Agent'))`)
	got = s.Do(t, "GET", fmt.Sprintf("%s%v", api, ann["id"]), s.Key, nil).Expect(t, 200).Map(t)
	if tiers, _ := got["queues"].([]any); len(tiers) != 0 {
		t.Fatalf("Ann's tiers after the remove: %v", got["queues"])
	}
	tab.NoErrors()
}

// An IVR option's target is a picker of the tenant's objects of the
// option's type: choosing "queue" offers the tenant's queues by number
// and name, "extension" its extensions, "hangup" nothing (the types and
// what they name come from models.DestinationRef).
func TestBrowserIVROptionTargetPicker(t *testing.T) {
	s := managerEnv(t)
	tenant := s.Tenant(t, "tpick")
	s.Do(t, "POST", "/api/tenants/"+tenant+"/queues/", s.Key, map[string]any{"name": "support", "number": "600"}).Expect(t, 201)
	s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001", "first_name": "Ann"}).Expect(t, 201)
	tab := browsertest.New(t).Tab(t)
	browserSignIn(tab, s, createAdmin(t, s, "tenant_admin", []string{tenant}))
	tab.Run(chromedp.Navigate(s.URL + "/tenants/" + tenant + "/ivr_menus/new"))
	tab.WaitJS(`document.querySelector('#object-form') && document.querySelector('#object-form').dataset.ready === '1'`)
	tab.Run(chromedp.Click(`.field[data-name="options"] table.rows + button`, chromedp.ByQuery))
	dest := `.field[data-name="options"] table.rows tbody tr:last-child .dest`
	choose := func(typ string) {
		tab.Run(chromedp.SetValue(dest+" select", typ, chromedp.ByQuery))
		tab.Eval(fmt.Sprintf(`document.querySelector(%q).dispatchEvent(new Event('change', {bubbles: true})); true`, dest+" select"), nil)
	}
	offers := func(value, label string) string {
		return fmt.Sprintf(`(() => { const i = document.querySelector(%q); const dl = i.list;
			return !!dl && [...dl.options].some(o => o.value === %q && o.label.includes(%q)) })()`, dest+" input", value, label)
	}
	choose("queue")
	tab.WaitJS(offers("600", "support"))
	choose("extension")
	tab.WaitJS(offers("1001", "1001"))
	choose("hangup")
	tab.WaitJS(fmt.Sprintf(`!document.querySelector(%q).hasAttribute('list')`, dest+" input"))
	tab.Axe("an IVR form's option with its target picker", browsertest.BestPractice)
	tab.NoErrors()
}

// queueAgents is a queue's page open in a tenant administrator's tab,
// with two of the tenant's agents: Ann in the queue (available, level 2,
// position 3) and Bob not.
type queueAgents struct {
	tenant, api, page string
	queue, ann, bob   map[string]any
	tab               *browsertest.Tab
}

func openQueueAgents(t *testing.T, s *apptest.Server, prefix string) queueAgents {
	t.Helper()
	q := queueAgents{tenant: s.Tenant(t, prefix)}
	q.queue = newExamples(t, s, q.tenant).object(resourceByNameT("queues"))
	q.api = "/api/tenants/" + q.tenant + "/agents/"
	q.ann = s.Do(t, "POST", q.api, s.Key, map[string]any{"name": "Ann Agent", "agent_number": "501", "status": "available",
		"queues": []any{map[string]any{"queue_id": q.queue["id"], "level": 2, "position": 3}}}).Expect(t, 201).Map(t)
	q.bob = s.Do(t, "POST", q.api, s.Key, map[string]any{"name": "Bob Agent", "agent_number": "502"}).Expect(t, 201).Map(t)
	q.tab = browsertest.New(t).Tab(t)
	browserSignIn(q.tab, s, createAdmin(t, s, "tenant_admin", []string{q.tenant}))
	q.page = fmt.Sprintf("%s/tenants/%s/queues/%v", s.URL, q.tenant, q.queue["id"])
	q.tab.Run(chromedp.Navigate(q.page))
	q.tab.WaitJS(`!!document.getElementById('queue-agents') && !!document.getElementById('queue-agent-add')`)
	return q
}
