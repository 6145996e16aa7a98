package browsertest_test

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// The accessibility check finds what it must: an image without a text
// alternative and a button without a name are violations; the same page
// with them named has none.
func TestAxeFindsViolations(t *testing.T) {
	b := browsertest.New(t)
	tab := b.Tab(t)
	page := func(body string) string {
		return "data:text/html," + url.PathEscape(`<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>T</h1>`+body+`</main></body></html>`)
	}
	tab.Run(chromedp.Navigate(page(`<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><button></button>`)))
	got := map[string]bool{}
	for _, v := range browsertest.AxeViolations(t, tab.Ctx) {
		got[v.ID] = true
	}
	if !got["image-alt"] || !got["button-name"] {
		t.Errorf("violations %v, want image-alt and button-name", got)
	}
	tab.Run(chromedp.Navigate(page(`<img alt="dot" src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><button>Go</button>`)))
	if vs := browsertest.AxeViolations(t, tab.Ctx); len(vs) != 0 {
		t.Errorf("a clean page has violations: %v", vs)
	}
}
