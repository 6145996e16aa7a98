package webui_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/web/webui"
	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// pagesEnv is a server wired to a fake FreeSWITCH node, with two tenants:
// extension 1001 in the first, 2002 in the second.
type pagesEnv struct {
	*apptest.Server
	fs     *fakefs.Server
	tenant [2]string
}

func startPagesEnv(t *testing.T) *pagesEnv {
	t.Helper()
	fs := fakefs.New(fakefs.Options{Hostname: "fs1"})
	if err := fs.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("start fake freeswitch: %v", err)
	}
	t.Cleanup(func() { fs.Close() })
	// One backend pairing: the pages' server side is covered on every
	// backend by the routes tests; the browser run is kept short.
	// The pages' writes carry the browser's Origin, which must be the
	// installation's base URL: the server listens where that says.
	addr := freeAddr(t)
	s := apptest.Start(t, apptest.AnyEnv(t), map[string]string{
		"SWITCHBOARD_ESL_NODES": fs.Addr(), "SWITCHBOARD_RECORDINGS_DIR": "/rec",
		"SWITCHBOARD_LISTEN": addr, "SWITCHBOARD_BASE_URL": "http://" + addr,
	})
	e := &pagesEnv{Server: s, fs: fs}
	for i, ext := range []string{"1001", "2002"} {
		e.tenant[i] = s.Tenant(t, "web")
		s.Do(t, "POST", "/api/tenants/"+e.tenant[i]+"/extensions/", s.Key, map[string]any{"name": ext}).Expect(t, 201)
	}
	s.Do(t, "POST", "/api/tenants/"+e.tenant[0]+"/extensions/", s.Key, map[string]any{"name": "1002"}).Expect(t, 201)
	return e
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

const adminPassword = "a long browser password"

// signIn signs the browser in through the login form as a new platform
// administrator; the pages then act with its session cookie and CSRF token.
func (e *pagesEnv) signIn(b *browser) {
	b.t.Helper()
	name := storetest.Name("ops")
	if _, err := e.Store.SetAdmin(b.t.Context(), name, adminPassword); err != nil {
		b.t.Fatal(err)
	}
	e.signInAs(b, name)
}

// signInTenantAdmin signs the browser in as a new tenant administrator of
// the environment's two tenants: what it sees is this test's alone, never
// the calls and objects of tests running beside it.
func (e *pagesEnv) signInTenantAdmin(b *browser) {
	b.t.Helper()
	name := storetest.Name("tadm")
	e.Do(b.t, "POST", "/api/administrators/", e.Key, map[string]any{
		"username": name, "password": adminPassword, "role": "tenant_admin",
		"tenants": e.tenant[:], "enabled": true,
	}).Expect(b.t, 201)
	e.signInAs(b, name)
}

func (e *pagesEnv) signInAs(b *browser, name string) {
	b.t.Helper()
	b.run(chromedp.Navigate(e.URL + "/login"))
	b.run(
		chromedp.SendKeys(`input[name="username"]`, name, chromedp.ByQuery),
		chromedp.SendKeys(`input[name="password"]`, adminPassword, chromedp.ByQuery),
		chromedp.Submit(`input[name="password"]`, chromedp.ByQuery),
	)
	b.waitText("body", "Sign out")
}

// channelID waits until the API lists the channel with uuid and returns
// its id.
func (e *pagesEnv) channelID(t *testing.T, uuid string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var list []map[string]any
		e.Do(t, "GET", "/api/telephony/channels?limit=1000", e.Key, nil).Expect(t, 200).JSON(t, &list)
		for _, ch := range list {
			if ch["uuid"] == uuid {
				return ch["id"].(string)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("channel %s never listed", uuid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *pagesEnv) waitCommand(t *testing.T, prefix string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd, err := e.fs.WaitCommand(ctx, prefix)
	if err != nil {
		t.Fatalf("the fake FreeSWITCH never received %q: %v (got %q)", prefix, err, e.fs.Commands())
	}
	return cmd
}

// The interactive reference in a real browser: sign in, pick a tenant and
// send "list extensions" with the test button (the dashboard has its own
// tests, dashboard_test.go).
func TestBrowserReferenceAndDashboard(t *testing.T) {
	e := startPagesEnv(t)
	b := newBrowser(t, 40*time.Second)
	e.signIn(b)

	t.Run("reference", func(t *testing.T) {
		b.t = t
		var doc map[string]any
		e.Do(t, "GET", "/api/openapi.json", "", nil).Expect(t, 200).JSON(t, &doc)
		list := doc["paths"].(map[string]any)["/api/tenants/{tenant}/extensions/"].(map[string]any)["get"].(map[string]any)
		op := "#operations-" + list["tags"].([]any)[0].(string) + "-" + list["operationId"].(string)

		chosen := e.tenant[1]
		b.run(chromedp.Navigate(e.URL + "/apitest/openapi/"))
		// Swagger UI renders the operations in view only: the search
		// brings "list extensions" up (by its operation id, which the
		// page's search matches beside the tag).
		b.run(chromedp.SendKeys(`input.operation-filter-input`, list["operationId"].(string), chromedp.ByQuery))
		b.run(chromedp.WaitVisible(op, chromedp.ByQuery))
		var shown int
		b.run(chromedp.Evaluate(`document.querySelectorAll('.opblock').length`, &shown))
		if shown != 1 {
			t.Errorf("the search for %s shows %d operations, want 1", list["operationId"], shown)
		}
		b.run(
			chromedp.WaitReady(`#sb-tenant option[value="`+chosen+`"]`, chromedp.ByQuery),
			chromedp.SetValue(`#sb-tenant`, chosen, chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById('sb-tenant').dispatchEvent(new Event('change'))`, nil),
		)
		b.run(chromedp.Click(op+" .opblock-summary-control", chromedp.ByQuery))
		b.run(chromedp.Click(op+" .try-out__btn", chromedp.ByQuery))
		var param string
		b.run(chromedp.Value(op+` tr[data-param-name="tenant"] select`, &param, chromedp.ByQuery))
		if param != chosen {
			t.Fatalf("the tenant parameter of the test form is %q, want the selected %q", param, chosen)
		}
		b.run(chromedp.Click(op+" .execute", chromedp.ByQuery))
		b.waitText(op+" .live-responses-table tr.response .response-col_status", "200")
		if got := b.text(op + " .request-url"); !strings.Contains(got, "/api/tenants/"+chosen+"/extensions/") {
			t.Errorf("the test request went to %q, want the chosen tenant's extensions", got)
		}
		body := b.text(op + " .live-responses-table tr.response .response-col_description")
		if !strings.Contains(body, `"2002"`) || strings.Contains(body, `"1001"`) {
			t.Errorf("the answer shown is not the chosen tenant's extension list: %s", body)
		}
		b.screenshot("apiref")
		// Our part of the reference (header, tenant selector, session
		// state); Swagger UI's own markup is vendored, not ours.
		browsertest.CheckAxeExcept(t, b.ctx, "the API reference", ".swagger-ui")
		b.noPageErrors()
	})
}

// The pages themselves are not secret, but what they run is: without a
// session the dashboard sends the visitor to the login and the reference
// offers it, read-only.
func TestPagesWithoutSession(t *testing.T) {
	e := startPagesEnv(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(e.URL + "/dashboard/calls")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fdashboard%2Fcalls" {
		t.Errorf("dashboard without a session: %d Location %q, want 303 to the login", resp.StatusCode, resp.Header.Get("Location"))
	}
	// A stale cookie is no session either.
	r := e.DoHeaders(t, "GET", "/apitest/openapi/", map[string]string{"Cookie": "sb_session=stale"}, nil).Expect(t, 200)
	page := string(r.Body)
	for _, want := range []string{`href="/login?next=%2Fapitest%2Fopenapi%2F"`, `data-signed-in="no"`, `/assets/swagger-ui-` + webui.SwaggerUIVersion + `/swagger-ui-bundle.js`, `/assets/apiref.js`} {
		if !strings.Contains(page, want) {
			t.Errorf("the reference without a session lacks %s", want)
		}
	}
	if strings.Contains(page, "csrf-token") || strings.Contains(page, "<script>") {
		t.Errorf("the reference without a session carries a token or inline script:\n%s", page)
	}
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("reference CSP %q", csp)
	}
}
