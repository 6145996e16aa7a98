package routes_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/comms/chat/chattest"
)

// TestChatWebClientFiles: the login URL serves the embedded client under
// a strict CSP, with its settings generated from the configuration and
// every file from Switchboard itself.
func TestChatWebClientFiles(t *testing.T) {
	t.Parallel()
	env := apptest.AnyEnv(t)
	s := apptest.Start(t, env, map[string]string{
		"SWITCHBOARD_CHAT_API_URL": "http://127.0.0.1:9/api", // not reached by these routes
		"SWITCHBOARD_CHAT_DOMAIN":  "chat.example.net",
		"SWITCHBOARD_CHAT_WS_URL":  "wss://chat.example.net/ws",
	})
	page := s.Do(t, "GET", "/chat/", "", nil).Expect(t, 200)
	if ct := page.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("content type %q", ct)
	}
	csp := page.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self' wss://chat.example.net/ws", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-eval") || strings.Contains(strings.SplitN(csp, "script-src", 2)[1], "unsafe-inline;") {
		t.Errorf("CSP allows inline or eval'd script: %q", csp)
	}
	html := string(page.Body)
	for _, want := range []string{`<script type="module" src="start.js">`, `href="dist/converse.min.css"`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %s:\n%s", want, html)
		}
	}
	if strings.Contains(html, "http://") || strings.Contains(html, "https://") || strings.Contains(html, "<script>") {
		t.Errorf("page loads from elsewhere or has inline script:\n%s", html)
	}
	cfg := s.Do(t, "GET", "/chat/config.json", "", nil).Expect(t, 200).Map(t)
	if cfg["websocket_url"] != "wss://chat.example.net/ws" || cfg["domain"] != "chat.example.net" || cfg["muc_domain"] != "conference.chat.example.net" {
		t.Fatalf("config.json %v", cfg)
	}
	js := s.Do(t, "GET", "/chat/dist/converse.min.js", "", nil).Expect(t, 200)
	if ct := js.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") || len(js.Body) < 500_000 {
		t.Fatalf("converse.min.js: %q, %d bytes", ct, len(js.Body))
	}
	if emoji := s.Do(t, "GET", "/chat/dist/emoji.json", "", nil).Expect(t, 200); emoji.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("emoji.json served as %q", emoji.Header.Get("Content-Type"))
	}
	s.Do(t, "GET", "/chat/dist/nope.js", "", nil).Expect(t, 404)
	s.Do(t, "GET", "/chat/dist/../../go.mod", "", nil).Expect(t, 404)
	s.Do(t, "GET", "/chat/start.js", "", nil).Expect(t, 200)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(s.URL + "/chat")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 308 || resp.Header.Get("Location") != "/chat/" {
		t.Fatalf("/chat answers %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Without a chat server there is nothing to log in to.
	bare := apptest.Start(t, env, nil)
	if c := bare.Do(t, "GET", "/chat/", "", nil).Expect(t, 503).Code(t); c != "chat_unavailable" {
		t.Fatalf("code %s", c)
	}
}

// TestChatWebClientLogin logs into the web client at the bundle's
// login_url in Debian's Chromium with a provisioned agent's username and
// password, and sees a channel message posted through the API (the room
// is joined through the bookmarks Switchboard keeps). Without chromium
// it skips, unless CI is set.
func TestChatWebClientLogin(t *testing.T) {
	t.Parallel()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is required in CI: %v", err)
		}
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	x := chattest.Start(t, chatDomain)
	s, base := startWithChat(t, x)
	tenant := s.Tenant(t, "web")
	s.Do(t, "POST", "/api/tenants/"+tenant+"/chat_channels/", s.Key, map[string]any{"name": "ops", "display_name": "Operations"}).Expect(t, 201)
	bundle := s.Do(t, "POST", "/api/connect/agent/"+tenant, s.Key, map[string]any{"extension": "1001", "first_name": "Ava"}).Expect(t, 201).Map(t)
	conn := bundle["connect"].(map[string]any)
	if conn["login_url"] != base+"/chat/?tenant="+tenant {
		t.Fatalf("login_url %v", conn["login_url"])
	}
	const body = "Deploy 42 finished <green> & live"
	s.Do(t, "POST", "/api/connect/message/"+tenant, s.Key, map[string]any{"to": "ops", "body": body, "from_name": "CI"}).Expect(t, 200)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Run(ctx); err != nil { // the browser starts
		t.Fatalf("start chromium: %v", err)
	}
	rctx := ctx
	ctx, cancel = context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	// The browser's console and its CSP reports, for the failure message
	// and to catch a policy the client does not work under.
	var mu sync.Mutex
	var console []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			for _, a := range e.Args {
				console = append(console, string(e.Type)+": "+string(a.Value)+a.Description)
			}
		case *log.EventEntryAdded:
			console = append(console, string(e.Entry.Level)+": "+e.Entry.Text)
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				console = append(console, fmt.Sprintf("HTTP %d %s", e.Response.Status, e.Response.URL))
			}
		}
	})
	dump := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(console, "\n")
	}
	var text string
	steps := []struct {
		name string
		act  chromedp.Action
	}{
		{"start", chromedp.Tasks{log.Enable(), network.Enable()}},
		{"open the login URL", chromedp.Navigate(conn["login_url"].(string))},
		{"login form", chromedp.WaitVisible(`input[name="jid"]`, chromedp.ByQuery)},
		{"username", chromedp.SendKeys(`input[name="jid"]`, conn["username"].(string), chromedp.ByQuery)},
		{"password and Enter", chromedp.SendKeys(`input[name="password"]`, conn["password"].(string)+kb.Enter, chromedp.ByQuery)},
		{"the channel message", chromedp.Poll(fmt.Sprintf(`document.body.innerText.includes(%q)`, body), nil, chromedp.WithPollingInterval(200*time.Millisecond))},
		{"page text", chromedp.Text("body", &text, chromedp.ByQuery)},
	}
	for _, st := range steps {
		if err = chromedp.Run(ctx, st.act); err != nil {
			err = fmt.Errorf("%s: %w", st.name, err)
			break
		}
		t.Logf("browser: %s done", st.name)
	}
	if err != nil {
		var page string
		_ = chromedp.Run(rctx, chromedp.OuterHTML("html", &page, chromedp.ByQuery))
		t.Fatalf("web client: %v\npage text:\n%s\nconsole:\n%s\nejabberd:\n%s", err, page, dump(), x.LogTail())
	}
	if !strings.Contains(text, "Operations") {
		t.Errorf("the room's name is not shown:\n%s", text)
	}
	// Everything the client loaded came from Switchboard and ejabberd,
	// within the policy.
	if c := dump(); strings.Contains(c, "Content Security Policy") || strings.Contains(c, "HTTP 4") || strings.Contains(c, "HTTP 5") {
		t.Errorf("the client broke the page's CSP or missed a file:\n%s", c)
	}
}

// TestBundleSIPWebSocketIsOnTheProfile: the bundle's sip.websocket_url
// names the port of the wss-binding Switchboard renders on the internal
// sofia profile FreeSWITCH fetches (SWITCHBOARD_SIP_WSS_PORT; the SIP
// domain is not loopback, so the URL is wss://), beside the plain
// ws-binding (SWITCHBOARD_SIP_WS_PORT); the external profile has neither.
func TestBundleSIPWebSocketIsOnTheProfile(t *testing.T) {
	t.Parallel()
	x := chattest.Start(t, chatDomain)
	s := apptest.Start(t, apptest.AnyEnv(t), map[string]string{
		"SWITCHBOARD_CHAT_API_URL": x.APIURL,
		"SWITCHBOARD_CHAT_DOMAIN":  chatDomain,
		"SWITCHBOARD_CHAT_WS_URL":  x.WSURL,
		"SWITCHBOARD_SIP_WS_PORT":  "5070",
		"SWITCHBOARD_SIP_WSS_PORT": "7444",
	})
	tenant := s.Tenant(t, "sipws")
	bundle := s.Do(t, "POST", "/api/connect/agent/"+tenant, s.Key, map[string]any{"extension": "1001"}).Expect(t, 201).Map(t)
	sip := bundle["sip"].(map[string]any)
	if sip["websocket_url"] != "wss://sip.test:7444" || sip["domain"] != "sip.test" || sip["auth_id"] != "1001-"+tenant {
		t.Fatalf("bundle sip block %v", sip)
	}
	doc := string(s.DoHeaders(t, "POST", "/fs/xml", map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
		xmlCapture(t, "003-configuration-sofia.conf.http")).Expect(t, 200).Body)
	internal, external, ok := strings.Cut(doc, `<profile name="external">`)
	if !ok || !strings.Contains(internal, `<profile name="internal">`) {
		t.Fatalf("sofia.conf without both profiles:\n%s", doc)
	}
	if !strings.Contains(internal, `<param name="ws-binding" value=":5070"/>`) || strings.Contains(external, "ws-binding") {
		t.Fatalf("ws-binding not (only) on the internal profile:\n%s", doc)
	}
	if !strings.Contains(internal, `<param name="wss-binding" value=":7444"/>`) || strings.Contains(external, "wss-binding") {
		t.Fatalf("wss-binding not (only) on the internal profile:\n%s", doc)
	}
}

// TestWebhookPicture: a webhook's picture is written as a data: URL (PNG,
// JPEG or GIF), stored as a 256×256 PNG and read back as the URL that
// serves it; non-images and oversize uploads are refused with nothing
// stored.
func TestWebhookPicture(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "pic")
		base := "/api/tenants/" + tenant
		s.Do(t, "POST", base+"/chat_channels/", s.Key, map[string]any{"name": "alerts"}).Expect(t, 201)
		var jpg bytes.Buffer
		img := image.NewRGBA(image.Rect(0, 0, 640, 480))
		for i := range img.Pix {
			img.Pix[i] = 200
		}
		_ = jpeg.Encode(&jpg, img, nil)
		upload := "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(jpg.Bytes())
		hook := s.Do(t, "POST", base+"/incoming_webhooks/", s.Key, map[string]any{"channel": "alerts", "name": "CI", "picture": upload}).Expect(t, 201).Map(t)
		pic, _ := hook["picture"].(string)
		if !regexp.MustCompile(`^` + regexp.QuoteMeta(s.Cfg.BaseURL) + `/chat/avatars/webhooks/[0-9]+/[0-9a-f]{16}\.png$`).MatchString(pic) {
			t.Fatalf("picture reads as %q", pic)
		}
		if got := s.Do(t, "GET", fmt.Sprintf("%s/incoming_webhooks/%v", base, hook["id"]), s.Key, nil).Expect(t, 200).Map(t); got["picture"] != pic {
			t.Fatalf("read picture %v, create answered %v", got["picture"], pic)
		}
		path := strings.TrimPrefix(pic, s.Cfg.BaseURL)
		r := s.Do(t, "GET", path, "", nil).Expect(t, 200)
		if r.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("served as %q", r.Header.Get("Content-Type"))
		}
		served, err := png.Decode(bytes.NewReader(r.Body))
		if err != nil || served.Bounds().Dx() != 256 || served.Bounds().Dy() != 256 {
			t.Fatalf("served picture: %v %v", err, served)
		}
		// Another hash or id is not found.
		s.Do(t, "GET", path[:len(path)-6]+"00.png", "", nil).Expect(t, 404)
		s.Do(t, "GET", "/chat/avatars/webhooks/999999/0000000000000000.png", "", nil).Expect(t, 404)

		// Refusals: text dressed as a PNG, an SVG, more than 1 MiB.
		fake := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("not really a png"))
		huge := "data:image/png;base64," + base64.StdEncoding.EncodeToString(make([]byte, 1<<20+1))
		svg := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte("<svg/>"))
		for _, bad := range []string{fake, huge, svg} {
			resp := s.Do(t, "POST", base+"/incoming_webhooks/", s.Key, map[string]any{"channel": "alerts", "name": "Bad", "picture": bad}).Expect(t, 400)
			if resp.Code(t) != "validation_failed" || !strings.Contains(string(resp.Body), "picture") {
				t.Fatalf("refusal %s", resp.Body)
			}
			s.Do(t, "PUT", fmt.Sprintf("%s/incoming_webhooks/%v", base, hook["id"]), s.Key, map[string]any{"picture": bad}).Expect(t, 400)
		}
		var list []map[string]any
		s.Do(t, "GET", base+"/incoming_webhooks/", s.Key, nil).Expect(t, 200).JSON(t, &list)
		if len(list) != 1 || list[0]["picture"] != pic {
			t.Fatalf("after refusals: %v", list)
		}
	})
}
