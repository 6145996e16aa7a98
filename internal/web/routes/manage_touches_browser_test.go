package routes_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

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
