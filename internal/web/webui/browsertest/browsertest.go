// Package browsertest is test support for the browser tests of our pages:
// one headless Chromium (Debian's /usr/bin/chromium) driven with chromedp,
// tabs that record script errors, waits on DOM conditions (never sleeps),
// and the accessibility check: axe-core, pinned from npm, injected into a
// page and run for WCAG 2 A and AA; any violation fails the test.
//
// Tests skip without Chromium or axe-core, unless CI is set (.ci/run
// installs both).
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// AxeEnv names a directory whose node_modules hold axe-core
// (npm install axe-core@4.14.1; .ci/run sets one up).
const AxeEnv = "SWITCHBOARD_TEST_AXE_DIR"

// ChromiumPath finds the browser; without one the test skips, unless CI
// is set (.ci/run installs chromium).
func ChromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{os.Getenv("SWITCHBOARD_CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (apt-get install chromium); CI runs the browser tests")
	}
	t.Skip("chromium is not installed: browser tests skipped")
	return ""
}

// Browser is one headless Chromium; its tabs share the cookie jar.
type Browser struct {
	ctx context.Context
}

// New starts Chromium for the test; it ends with the test.
func New(t testing.TB) *Browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ChromiumPath(t)),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox cannot start
		chromedp.WindowSize(1280, 1000),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	// The first run starts the browser; its context must outlive the test.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &Browser{ctx: ctx}
}

// Tab is one page of the browser. It records every script exception and
// console error (a Content-Security-Policy violation is one).
type Tab struct {
	T   testing.TB
	Ctx context.Context
	// Step bounds each Run (waits included).
	Step time.Duration

	mu     sync.Mutex
	errors []string
}

// Tab opens a new tab for t.
func (b *Browser) Tab(t testing.TB) *Tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	tab := &Tab{T: t, Ctx: ctx, Step: 20 * time.Second}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			tab.record("exception: " + e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				tab.record("console.error: " + strings.Join(parts, " "))
			}
		case *log.EventEntryAdded:
			// A refusal the page asked for and shows (a 4xx answer to a
			// form) is the page working; a 5xx is not.
			refusal := e.Entry.Source == log.SourceNetwork && strings.Contains(e.Entry.Text, "status of 4")
			if e.Entry.Level == log.LevelError && !refusal {
				tab.record("log: " + e.Entry.Text + " " + e.Entry.URL)
			}
		}
	})
	if err := chromedp.Run(ctx, log.Enable(), runtime.Enable()); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	return tab
}

func (tab *Tab) record(msg string) {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	tab.errors = append(tab.errors, msg)
}

// Errors returns what the pages reported so far (the favicon the pages
// do not have aside) and forgets them.
func (tab *Tab) Errors() []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	var out []string
	for _, e := range tab.errors {
		if !strings.Contains(e, "favicon.ico") {
			out = append(out, e)
		}
	}
	tab.errors = nil
	return out
}

// Run performs actions and fails the test at the first that fails.
func (tab *Tab) Run(actions ...chromedp.Action) {
	tab.T.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, tab.Step)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		tab.T.Fatalf("browser: %v (page errors: %q)\npage: %s", err, tab.Errors(), tab.PageText())
	}
}

// Screenshot saves what the tab shows as <name>.png in the directory
// SWITCHBOARD_SCREENSHOTS names (`make screenshots` points it at docs/);
// without it, nothing happens.
func (tab *Tab) Screenshot(name string) {
	tab.T.Helper()
	dir := os.Getenv("SWITCHBOARD_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	tab.Run(chromedp.CaptureScreenshot(&png))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tab.T.Fatalf("save screenshot %s: %v", name, err)
	}
}

// PageText is the address and the start of what the page shows, for
// failure messages.
func (tab *Tab) PageText() string {
	ctx, cancel := context.WithTimeout(tab.Ctx, 5*time.Second)
	defer cancel()
	var s string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`location.href + "\n" + document.body.innerText.slice(0, 1500)`, &s)); err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// WaitJS waits until the JavaScript expression is true: the page's DOM
// reached the state the test expects. The expression is polled on each
// animation frame by Chromium itself.
func (tab *Tab) WaitJS(expr string) {
	tab.T.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, tab.Step)
	defer cancel()
	for {
		err := chromedp.Run(ctx, chromedp.Poll(expr, nil, chromedp.WithPollingInterval(20*time.Millisecond)))
		if err == nil {
			return
		}
		// A navigation ends the document the poll ran in: poll the new one.
		if ctx.Err() == nil && (strings.Contains(err.Error(), "context") || strings.Contains(err.Error(), "navigat")) {
			continue
		}
		tab.T.Fatalf("browser: never true: %s: %v (page errors: %q)\npage: %s", expr, err, tab.Errors(), tab.PageText())
	}
}

// WaitText waits until the element matching the CSS selector shows want.
func (tab *Tab) WaitText(sel, want string) {
	tab.T.Helper()
	s, _ := json.Marshal(sel)
	w, _ := json.Marshal(want)
	tab.WaitJS(fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.innerText.includes(%s) })()`, s, w))
}

// Eval evaluates expr and stores its JSON value in out.
func (tab *Tab) Eval(expr string, out any) {
	tab.T.Helper()
	tab.Run(chromedp.Evaluate(expr, out))
}

// TabTo presses Tab in the page of ctx (a chromedp context) until the
// focused element matches the CSS selector sel, as a person without a
// mouse moves through a page; it fails the test when sel is not reached
// within limit presses (not in the tab order, hidden, or outside a modal
// dialog that holds the focus).
func TabTo(t testing.TB, ctx context.Context, sel string, limit int) {
	t.Helper()
	match := fmt.Sprintf(`document.activeElement && document.activeElement.matches(%q)`, sel)
	for i := 0; i <= limit; i++ {
		var on bool
		if err := chromedp.Run(ctx, chromedp.Evaluate(match, &on)); err != nil {
			t.Fatalf("browser: %v", err)
		}
		if on {
			return
		}
		if i == limit {
			break
		}
		if err := chromedp.Run(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatalf("browser: press Tab: %v", err)
		}
	}
	var focused string
	_ = chromedp.Run(ctx, chromedp.Evaluate(`document.activeElement ? document.activeElement.outerHTML.slice(0, 200) : 'nothing'`, &focused))
	t.Fatalf("%q not reached with %d presses of Tab (focus ends on %s)", sel, limit, focused)
}

// TabTo is TabTo in the tab's page.
func (tab *Tab) TabTo(sel string, limit int) {
	tab.T.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, tab.Step)
	defer cancel()
	TabTo(tab.T, ctx, sel, limit)
}

// NoErrors fails the test when a page threw, logged an error or had
// something refused by its Content-Security-Policy.
func (tab *Tab) NoErrors() {
	tab.T.Helper()
	if errs := tab.Errors(); len(errs) > 0 {
		tab.T.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// axeTags are the rule sets checked: WCAG 2.0 and 2.1, levels A and AA.
var axeTags = []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa"}

var (
	axeOnce   sync.Once
	axeSource string
	axeErr    error
)

// axeScript reads axe.min.js from AxeEnv's directory; the test skips
// without it, unless CI is set.
func axeScript(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(AxeEnv)
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is unset: CI must provide axe-core (see .ci/run)", AxeEnv)
		}
		t.Skipf("%s unset: npm install --prefix DIR axe-core@4.14.1 to run the accessibility checks", AxeEnv)
	}
	axeOnce.Do(func() {
		var b []byte
		b, axeErr = os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
		axeSource = string(b)
	})
	if axeErr != nil {
		t.Fatalf("read axe-core: %v", axeErr)
	}
	return axeSource
}

// Violation is one axe rule a page breaks, with the elements that break it.
type Violation struct {
	ID    string `json:"id"`
	Help  string `json:"help"`
	Nodes []struct {
		Target  []any  `json:"target"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", v.ID, v.Help)
	for _, n := range v.Nodes {
		fmt.Fprintf(&b, "\n    %v: %s", n.Target, strings.ReplaceAll(n.Summary, "\n", " "))
	}
	return b.String()
}

// BestPractice is axe-core's tag of the rules beyond WCAG that our own
// pages also keep (one h1, no empty table header, landmarks); pass it to
// CheckAxe where the whole page is ours.
const BestPractice = "best-practice"

// AxeViolations injects axe-core into the page of ctx (a chromedp
// context) and returns what it finds against WCAG 2 A and AA, and the
// rules of the extra tags.
func AxeViolations(t testing.TB, ctx context.Context, extraTags ...string) []Violation {
	t.Helper()
	return axeViolations(t, ctx, nil, extraTags)
}

// axeViolations runs axe-core on the page but the parts matching the
// exclude selectors.
func axeViolations(t testing.TB, ctx context.Context, exclude []string, extraTags []string) []Violation {
	t.Helper()
	src := axeScript(t)
	tags, _ := json.Marshal(append(append([]string{}, axeTags...), extraTags...))
	scope := []byte("document")
	if len(exclude) > 0 {
		sels := make([][]string, len(exclude))
		for i, e := range exclude {
			sels[i] = []string{e}
		}
		scope, _ = json.Marshal(map[string]any{"include": [][]string{{"html"}}, "exclude": sels})
	}
	var raw string
	run := fmt.Sprintf(`(async () => {
		const r = await axe.run(%s, {runOnly: {type: "tag", values: %s}, resultTypes: ["violations"]});
		return JSON.stringify(r.violations);
	})()`, scope, tags)
	err := chromedp.Run(ctx,
		chromedp.Evaluate(`if (!window.axe) { `+src+` }; true`, nil),
		chromedp.Evaluate(run, &raw, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	)
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var out []Violation
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("axe-core answer: %v", err)
	}
	return out
}

// CheckAxe fails the test for every WCAG 2 A/AA violation axe-core finds
// on the page of ctx (and every violation of the rules of extraTags, such
// as BestPractice); what names the page in the message.
func CheckAxe(t testing.TB, ctx context.Context, what string, extraTags ...string) {
	t.Helper()
	reportAxe(t, what, axeViolations(t, ctx, nil, extraTags))
}

// CheckAxeExcept is CheckAxe on the page but the parts matching the
// exclude selectors: a vendored widget (Swagger UI) that is not ours.
func CheckAxeExcept(t testing.TB, ctx context.Context, what string, exclude ...string) {
	t.Helper()
	reportAxe(t, what, axeViolations(t, ctx, exclude, nil))
}

func reportAxe(t testing.TB, what string, vs []Violation) {
	t.Helper()
	if len(vs) == 0 {
		return
	}
	var parts []string
	for _, v := range vs {
		parts = append(parts, "  "+v.String())
	}
	t.Errorf("axe-core: %d accessibility violations on %s:\n%s", len(vs), what, strings.Join(parts, "\n"))
}

// Axe checks the tab's page with CheckAxe.
func (tab *Tab) Axe(what string, extraTags ...string) {
	tab.T.Helper()
	ctx, cancel := context.WithTimeout(tab.Ctx, tab.Step)
	defer cancel()
	CheckAxe(tab.T, ctx, what, extraTags...)
}
