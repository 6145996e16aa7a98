package webui_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// browser is one headless Chromium (Debian's /usr/bin/chromium) driven
// over the DevTools protocol. It records every script exception and
// console error (a Content-Security-Policy violation is one), and answers
// window.prompt with the text set in prompt.
type browser struct {
	t   *testing.T
	ctx context.Context
	// step bounds each run of actions (waits included).
	step time.Duration

	mu     sync.Mutex
	errors []string
	prompt string
}

func newBrowser(t *testing.T, step time.Duration) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browsertest.ChromiumPath(t)),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox cannot start
		chromedp.WindowSize(1280, 1000),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, step: step}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			b.record("exception: " + e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				b.record("console.error: " + strings.Join(parts, " "))
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError {
				b.record("log: " + e.Entry.Text + " " + e.Entry.URL)
			}
		case *page.EventJavascriptDialogOpening:
			b.mu.Lock()
			text := b.prompt
			b.mu.Unlock()
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true).WithPromptText(text)) }()
		}
	})
	// The first run starts the browser; its context must outlive the test.
	if err := chromedp.Run(ctx, log.Enable(), runtime.Enable()); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

func (b *browser) record(msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, msg)
}

// run performs actions and fails the test at the first that fails.
func (b *browser) run(actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.step)
	defer cancel()
	err := chromedp.Run(ctx, actions...)
	// The dashboard re-renders a row on each stream event: an element found
	// just before that is gone when the action reaches it, and the action
	// did nothing, so it is tried again on the new element.
	for try := 0; try < 3 && err != nil && strings.Contains(err.Error(), "Could not find node with given id"); try++ {
		err = chromedp.Run(ctx, actions...)
	}
	if err != nil {
		b.t.Fatalf("browser: %v (page errors: %q)\npage: %s", err, b.pageErrors(), b.pageText())
	}
}

// pageText is the start of what the page shows, for failure messages.
func (b *browser) pageText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	var s string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`location.href + "\n" + document.body.innerText.slice(0, 1500)`, &s)); err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// pageErrors returns what the pages reported so far, ignoring the
// favicon the pages do not have.
func (b *browser) pageErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, e := range b.errors {
		if !strings.Contains(e, "favicon.ico") {
			out = append(out, e)
		}
	}
	return out
}

// noPageErrors fails the test when a page threw, logged an error or had
// something refused by its Content-Security-Policy.
func (b *browser) noPageErrors() {
	b.t.Helper()
	if errs := b.pageErrors(); len(errs) > 0 {
		b.t.Errorf("the page reported errors:\n%s", strings.Join(errs, "\n"))
	}
}

// text returns the text of the first element matching sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	var s string
	b.run(chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

// waitText waits until the element matching sel contains want.
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	deadline := time.Now().Add(b.step)
	for {
		var s string
		ctx, cancel := context.WithTimeout(b.ctx, time.Until(deadline)+time.Second)
		err := chromedp.Run(ctx, chromedp.WaitReady(sel, chromedp.ByQuery), chromedp.Text(sel, &s, chromedp.ByQuery))
		cancel()
		if err == nil && strings.Contains(s, want) {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s never showed %q (last: %q, %v; page errors: %q)", sel, want, s, err, b.pageErrors())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// screenshot saves the visible page as docs/<name>.png when
// SWITCHBOARD_SCREENSHOTS names the directory (make screenshots).
func (b *browser) screenshot(name string) {
	b.t.Helper()
	dir := os.Getenv("SWITCHBOARD_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	b.run(chromedp.CaptureScreenshot(&png))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
