package routes_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/switchboard/switchboard/internal/comms/chat/chattest"
	"github.com/switchboard/switchboard/internal/web/webui/browsertest"
)

// TestChatWebClientBranding: the web client at a bundle's login_url is the
// tenant's (issue 26 item 8): its product name as title and heading, its
// colour on the login button, its logo and login message; the account field
// is labelled "Username"; nothing of converse.js's own brand or links;
// no WCAG 2 A/AA violation on the login view; after login the agent is
// shown by its name, not its number. config.json without a tenant names
// the installation and carries no branding.
func TestChatWebClientBranding(t *testing.T) {
	t.Parallel()
	x := chattest.Start(t, chatDomain)
	s, _ := startWithChat(t, x)
	tenant := s.Tenant(t, "brand")
	var logo bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := 0; i < 64; i++ {
		img.Set(i%8, i/8, color.RGBA{122, 31, 92, 255})
	}
	if err := png.Encode(&logo, img); err != nil {
		t.Fatal(err)
	}
	s.Do(t, "PUT", "/api/tenants/"+tenant+"/branding", s.Key, map[string]any{
		"product_name": "Acme Voice", "primary_color": "#7a1f5c", "login_message": "Welcome to Acme's team chat",
		"logo": "data:image/png;base64," + base64.StdEncoding.EncodeToString(logo.Bytes()), "support_url": "https://help.acme.example/chat",
	}).Expect(t, 200)
	bundle := s.Do(t, "POST", "/api/connect/agent/"+tenant, s.Key, map[string]any{"extension": "1001", "first_name": "Ava", "last_name": "Agent"}).Expect(t, 201).Map(t)
	conn := bundle["connect"].(map[string]any)

	// Without a tenant (or with one that does not exist): the installation's name.
	for _, q := range []string{"", "?tenant=nosuchtenant"} {
		if cfg := s.Do(t, "GET", "/chat/config.json"+q, "", nil).Expect(t, 200).Map(t); cfg["name"] != "Switchboard" || cfg["branding"] != nil {
			t.Errorf("config.json%s: %v", q, cfg)
		}
	}

	tab := browsertest.New(t).Tab(t)
	tab.Run(chromedp.Navigate(conn["login_url"].(string)))
	tab.WaitJS(`!!document.querySelector('input[name="jid"]') && !!document.querySelector('label[for="converse-login-jid"]')`)
	var view struct {
		Title, Heading, HeadingColor, Label, Button, Message, Help string
		Upstream                                                   []string
		Logo                                                       bool
		Text                                                       string
	}
	tab.Eval(`(() => { const h = document.querySelector('h1.sb-brand');
		const btn = document.querySelector('#converse-login [type=submit]');
		return {
			title: document.title, heading: h ? h.innerText.trim() : '', headingColor: h ? getComputedStyle(h).color : '',
			label: document.querySelector('label[for="converse-login-jid"]').innerText,
			button: btn ? getComputedStyle(btn).backgroundColor : '',
			message: (document.querySelector('.sb-login-message') || {}).innerText || '',
			help: (document.querySelector('converse-footer a') || {}).href || '',
			upstream: [...document.querySelectorAll('a[href*="conversejs"], a[href*="opkode"], converse-logo, img[src*="conversejs"]')].map(e => e.outerHTML.slice(0, 200)),
			logo: !!document.querySelector('h1.sb-brand img.sb-logo[src^="data:image/png"]'),
			text: document.body.innerText,
		}; })()`, &view)
	const acme = "rgb(122, 31, 92)"
	if !strings.HasPrefix(view.Title, "Acme Voice") || view.Heading != "Acme Voice" || view.HeadingColor != acme || !view.Logo {
		t.Errorf("the tenant's brand is not shown: title %q, heading %q in %s, logo %v", view.Title, view.Heading, view.HeadingColor, view.Logo)
	}
	if view.Button != acme {
		t.Errorf("the login button is %s, not the tenant's colour %s", view.Button, acme)
	}
	if !strings.Contains(view.Label, "Username") || strings.Contains(view.Text, "XMPP") {
		t.Errorf("the account field is labelled %q; the page says:\n%s", view.Label, view.Text)
	}
	if view.Message != "Welcome to Acme's team chat" || view.Help != "https://help.acme.example/chat" {
		t.Errorf("login message %q, help link %q", view.Message, view.Help)
	}
	if len(view.Upstream) != 0 || strings.Contains(strings.ToLower(view.Text), "converse") {
		t.Errorf("links or logos of converse.js: %q; the page says:\n%s", view.Upstream, view.Text)
	}
	tab.Axe("the chat client's login view")

	tab.Run(
		chromedp.SendKeys(`input[name="jid"]`, conn["username"].(string), chromedp.ByQuery),
		chromedp.SendKeys(`input[name="password"]`, conn["password"].(string)+kb.Enter, chromedp.ByQuery),
	)
	tab.WaitText("converse-user-profile", "Ava Agent")
	var profile string
	tab.Eval(`document.querySelector('converse-user-profile').innerText`, &profile)
	if strings.Contains(profile, "1001") {
		t.Errorf("the profile shows the agent's number: %q", profile)
	}
	tab.NoErrors()
}
