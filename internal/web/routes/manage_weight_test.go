package routes_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// pageBudget is what a configuration-manager page may transfer on a cold
// load, its API calls included (issue 26).
const pageBudget = 200 << 10

// pageCost is what one page load cost in the browser.
type pageCost struct {
	Bytes     int     `json:"bytes"`     // transferred: document, assets and API calls
	Requests  int     `json:"requests"`  // how many
	ReadyMS   float64 `json:"readyMs"`   // navigation start → the page's script is set up
	PickersMS float64 `json:"pickersMs"` // navigation start → every picker's list is loaded
}

// costJS reads what the page cost from the Performance API once its
// pickers are loaded (switchboard:pickers) or, on a page without any,
// once it is set up (switchboard:ready).
const costJS = `(() => {
  const mark = (n) => { const m = performance.getEntriesByName(n); return m.length ? m[0].startTime : 0; };
  const nav = performance.getEntriesByType('navigation')[0];
  const res = performance.getEntriesByType('resource');
  return {
    bytes: nav.transferSize + res.reduce((s, r) => s + r.transferSize, 0),
    requests: 1 + res.length,
    readyMs: mark('switchboard:ready') || nav.domContentLoadedEventEnd,
    pickersMs: mark('switchboard:pickers'),
  };
})()`

// The configuration manager's pages stay light with 1,000 objects in the
// list they show or pick from: each transfers under 200 KB on a cold
// load. The time to interactive is printed (SWITCHBOARD_BENCH_PAGES=1,
// `make bench`) for BENCHMARKS.md rather than asserted: a loaded test
// host says nothing about a browser's speed.
func TestBrowserManagerPagesStayLightWithAThousandObjects(t *testing.T) {
	s := managerEnv(t)
	tenant := s.Tenant(t, "weight")
	o, err := s.Store.Tenant(t.Context(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	exts := resourceByNameT("extensions")
	var first string
	for i := 0; i < 1000; i++ {
		rec, err := s.Store.Create(t.Context(), exts, o, map[string]any{
			"name": fmt.Sprint(2000 + i), "first_name": "Agent", "last_name": fmt.Sprintf("Number %04d", i),
			"email": fmt.Sprintf("agent%04d@example.com", i),
		})
		if err != nil {
			t.Fatalf("create extension %d: %v", i, err)
		}
		if i == 0 {
			first = fmt.Sprint(rec[exts.KeyField()])
		}
	}
	picking, field := pickingResource(t, "extensions")
	picker := fmt.Sprintf(`#object-form .field[data-name=%q] input`, field)

	tab := browsertest.New(t).Tab(t)
	browserSignIn(tab, s, createAdmin(t, s, "tenant_admin", []string{tenant}))
	tab.Run(network.SetCacheDisabled(true), chromedp.EmulateViewport(1280, 800))
	base := s.URL + "/tenants/" + tenant + "/"
	// shot names the page's picture in docs/ (`make screenshots`).
	pages := []struct{ what, url, shot string }{
		{"extension list (page 1 of 20)", base + "extensions/", "manager-list"},
		{"extension list, searched", base + "extensions/?q=Number+0999", ""},
		{"extension view", base + "extensions/" + first, "manager-view"},
		{"extension edit form", base + "extensions/" + first + "/edit", "manager-form"},
		{picking.Title + " create form (picks from 1,000 extensions)", base + picking.Name + "/new", ""},
		{"the tenant's page", base, "manager-tenant"},
	}
	var report []string
	for _, p := range pages {
		tab.Run(chromedp.Navigate(p.url))
		tab.WaitJS(`performance.getEntriesByName('switchboard:ready').length > 0 &&
			(!document.querySelector('#object-form input[list]') || performance.getEntriesByName('switchboard:pickers').length > 0)`)
		var c pageCost
		tab.Eval(costJS, &c)
		if c.Bytes > pageBudget {
			t.Errorf("%s transferred %d KB in %d requests, want under %d KB", p.what, c.Bytes>>10, c.Requests, pageBudget>>10)
		}
		if p.shot != "" {
			tab.Screenshot(p.shot)
		}
		line, _ := json.Marshal(c)
		report = append(report, fmt.Sprintf("%s: %s", p.what, line))
	}
	// The picker reaches every one of the 1,000 extensions: typing asks
	// the API for the ones not among the first page.
	tab.Run(chromedp.Navigate(base + picking.Name + "/new"))
	tab.WaitJS(`performance.getEntriesByName('switchboard:pickers').length > 0`)
	tab.Run(chromedp.SendKeys(picker, "2999", chromedp.ByQuery))
	tab.WaitJS(`(() => { const i = document.querySelector('` + picker + `'), dl = document.getElementById(i.getAttribute('list'));
		return Array.from(dl.options).some(o => o.value === '2999') })()`)
	tab.NoErrors()
	if os.Getenv("SWITCHBOARD_BENCH_PAGES") != "" {
		for _, l := range report {
			fmt.Println("page cost:", l)
		}
	}
}

// pickingResource is a tenant resource whose form has a field that always
// picks one object of target.
func pickingResource(t *testing.T, target string) (*models.Resource, string) {
	t.Helper()
	for _, res := range models.Resources {
		if res.Scope != models.TenantScope || res.Singleton || res.Custom() {
			continue
		}
		for _, f := range res.Fields {
			if f.Ref == target && f.RefBy == "" && !f.ReadOnly && f.Type == models.String && f.RefWhen[0] == "" {
				return res, f.Name
			}
		}
	}
	t.Fatalf("no tenant resource picks %s", target)
	return nil, ""
}
