package routes_test

import (
	"net"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// managerEnv is a server whose base URL is where it listens (the pages'
// writes carry the browser's Origin, which must be the installation's).
func managerEnv(t *testing.T) *apptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return apptest.Start(t, apptest.AnyEnv(t), map[string]string{"SWITCHBOARD_LISTEN": addr, "SWITCHBOARD_BASE_URL": "http://" + addr})
}

// browserSignIn signs the tab in through the login form as the administrator
// named (created by the caller).
func browserSignIn(tab *browsertest.Tab, s *apptest.Server, name string) {
	tab.T.Helper()
	tab.Run(chromedp.Navigate(s.URL+"/login"),
		chromedp.SendKeys(`input[name="username"]`, name, chromedp.ByQuery),
		chromedp.SendKeys(`input[name="password"]`, adminPassword, chromedp.ByQuery),
		chromedp.Submit(`input[name="password"]`, chromedp.ByQuery),
	)
	tab.WaitText("body", "Sign out")
}

// The sign-in form and the menu have no WCAG 2 A/AA violations (issue 26:
// axe-core found no h1 in the menu and an empty header cell).
func TestBrowserLoginAndMenuAccessible(t *testing.T) {
	s := managerEnv(t)
	s.Tenant(t, "axe")
	tab := browsertest.New(t).Tab(t)
	tab.Run(chromedp.Navigate(s.URL + "/login"))
	tab.WaitText("h1", "Sign in")
	tab.Axe("the sign-in form", browsertest.BestPractice)
	browserSignIn(tab, s, createAdmin(t, s, "platform_admin", nil))
	tab.Axe("the menu", browsertest.BestPractice)
	tab.NoErrors()
}
