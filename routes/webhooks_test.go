package routes_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// postHook sends a raw webhook post and returns status, content type and body.
func postHook(t *testing.T, e *chatEnv, token, contentType, body string, headers ...string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", e.URL+"/integration/webhooks/"+token, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type") + "|" + resp.Header.Get("Retry-After"), b.String()
}

func formPayload(v any) string {
	js, _ := json.Marshal(v)
	return url.Values{"payload": {string(js)}}.Encode()
}

func TestIncomingWebhookPostsIntoChannel(t *testing.T) {
	eachChatEnv(t, func(t *testing.T, e *chatEnv) {
		base := "/api/tenants/" + e.tenant
		e.Do(t, "POST", base+"/chat_channels/", e.Key, map[string]any{"name": "alerts"}).Expect(t, 201)
		room := e.lower + "-alerts"
		e.waitRoom(t, room)
		reader := e.provision(t, "1001")
		e.waitMember(t, room, e.lower+"-1001@"+chatDomain)

		// A 1×1 PNG picture: stored as 256×256, its URL carried with each post.
		const dot = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
		hook := e.Do(t, "POST", base+"/incoming_webhooks/", e.Key, map[string]any{"channel": "alerts", "name": "Grafana", "picture": dot}).Expect(t, 201).Map(t)
		token, _ := hook["token"].(string)
		if len(token) < 43 || hook["url"] != e.Cfg.BaseURL+"/integration/webhooks/"+token || hook["created_by"] == nil {
			t.Fatalf("create answer %v", hook)
		}
		id := fmt.Sprint(hook["id"])
		got := e.Do(t, "GET", base+"/incoming_webhooks/"+id, e.Key, nil).Expect(t, 200).Map(t)
		if _, shown := got["token"]; shown || strings.Contains(fmt.Sprint(got["url"]), token) || !strings.HasPrefix(fmt.Sprint(got["url"]), e.Cfg.BaseURL+"/integration/webhooks/"+token[:6]) {
			t.Fatalf("read shows the secret: %v", got)
		}

		// The seed's form: a payload field holding JSON, a link and two attachments.
		payload := map[string]any{
			"text": "Build failed: <https://ci.example.com/b/7|build 7> &amp; more",
			"attachments": []any{
				map[string]any{"title": "Disk", "fields": []any{map[string]any{"title": "Host", "value": "db1"}, map[string]any{"title": "Used", "value": "93%"}}, "text": "bottom text one"},
				map[string]any{"title": "Memory", "text": "bottom text two", "title_link": "javascript:alert(1)"},
			},
		}
		status, ct, body := postHook(t, e, token, "application/x-www-form-urlencoded", formPayload(payload))
		if status != 200 || body != "ok" || !strings.HasPrefix(ct, "text/plain") {
			t.Fatalf("post: %d %q %q", status, ct, body)
		}
		cl := login(t, e, reader)
		arch := archiveOf(t, cl, room+"@conference."+chatDomain, 1)
		if len(arch) != 1 {
			t.Fatalf("archive %v", arch)
		}
		m := strings.ReplaceAll(arch[0], "&#xA;", "\n")
		for _, want := range []string{
			">Grafana</nick>",
			"Build failed: build 7 (https://ci.example.com/b/7) &amp; more",
			"*Disk*\n*Host*\ndb1\n*Used*\n93%\nbottom text one\n────────────\n*Memory*\nbottom text two</body>",
			`<a xmlns="http://www.w3.org/1999/xhtml" href="https://ci.example.com/b/7">build 7</a>`,
			`<avatar xmlns="urn:switchboard:avatar:0" url="` + hook["picture"].(string) + `"></avatar>`,
		} {
			if !strings.Contains(m, want) {
				t.Fatalf("archived message lacks %q:\n%s", want, m)
			}
		}
		if strings.Contains(m, `href="javascript`) {
			t.Fatalf("javascript: link rendered: %s", m)
		}

		// The other encodings: JSON, form-encoded raw JSON, multipart.
		js, _ := json.Marshal(map[string]any{"text": "as json"})
		if s, _, b := postHook(t, e, token, "application/json", string(js)); s != 200 || b != "ok" {
			t.Fatalf("json post: %d %s", s, b)
		}
		if s, _, b := postHook(t, e, token, "application/x-www-form-urlencoded", `{"text":"raw json form"}`); s != 200 || b != "ok" {
			t.Fatalf("raw json form post: %d %s", s, b)
		}
		var mp bytes.Buffer
		w := multipart.NewWriter(&mp)
		_ = w.WriteField("payload", `{"text":"multipart"}`)
		_ = w.Close()
		if s, _, b := postHook(t, e, token, w.FormDataContentType(), mp.String()); s != 200 || b != "ok" {
			t.Fatalf("multipart post: %d %s", s, b)
		}

		// Slack's error texts.
		for _, c := range []struct {
			ct, body string
			status   int
			code     string
		}{
			{"application/json", "{nope", 400, "invalid_payload"},
			{"text/plain", `{"text":"x"}`, 400, "invalid_payload"},
			{"application/json", `{"text":"x","attachments":{"title":"t"}}`, 400, "invalid_payload"},
			{"application/json", `{"text":"  "}`, 400, "no_text"},
			{"application/json", `{"attachments":[{"color":"good"}]}`, 400, "no_text"},
		} {
			if s, _, b := postHook(t, e, token, c.ct, c.body); s != c.status || b != c.code {
				t.Errorf("%s %q: %d %q, want %d %q", c.ct, c.body, s, b, c.status, c.code)
			}
		}
		if s, _, b := postHook(t, e, "unknown-token-0000000000000000000000000000000", "application/json", `{"text":"x"}`); s != 404 || b != "no_service" {
			t.Fatalf("unknown token: %d %s", s, b)
		}
		s, ct, b := postHook(t, e, token, "application/json", `{"text":""}`, "Accept", "application/json")
		if s != 400 || !strings.HasPrefix(ct, "application/json") || !strings.Contains(b, `"code":"no_text"`) {
			t.Fatalf("JSON error shape: %d %s %s", s, ct, b)
		}
		if n := e.Do(t, "GET", base+"/incoming_webhooks/"+id, e.Key, nil).Expect(t, 200).Map(t)["message_count"]; fmt.Sprint(n) != "4" {
			t.Fatalf("message_count %v, want 4", n)
		}

		// Disabled: nothing posted, nothing counted.
		e.Do(t, "PUT", base+"/incoming_webhooks/"+id, e.Key, map[string]any{"enabled": false}).Expect(t, 200)
		if s, _, b := postHook(t, e, token, "application/json", `{"text":"while disabled"}`); s != 404 || b != "no_service" {
			t.Fatalf("disabled: %d %s", s, b)
		}
		e.Do(t, "PUT", base+"/incoming_webhooks/"+id, e.Key, map[string]any{"enabled": true}).Expect(t, 200)

		// Regenerate: the old URL dies at once.
		re := e.Do(t, "POST", base+"/incoming_webhooks/"+id+"/regenerate", e.Key, map[string]any{}).Expect(t, 200).Map(t)
		newToken, _ := re["token"].(string)
		if newToken == "" || newToken == token || re["url"] != e.Cfg.BaseURL+"/integration/webhooks/"+newToken {
			t.Fatalf("regenerate answer %v", re)
		}
		if s, _, _ := postHook(t, e, token, "application/json", `{"text":"old"}`); s != 404 {
			t.Fatalf("old token after regenerate: %d", s)
		}
		if s, _, _ := postHook(t, e, newToken, "application/json", `{"text":"new"}`); s != 200 {
			t.Fatalf("new token: %d", s)
		}
		// Tokens never reach the logs (only their first characters).
		for _, line := range e.Logs.Lines(t) {
			if js, _ := json.Marshal(line); bytes.Contains(js, []byte(token)) || bytes.Contains(js, []byte(newToken)) {
				t.Fatalf("a webhook token was logged: %s", js)
			}
		}
		arch = archiveOf(t, cl, room+"@conference."+chatDomain, 5)
		joined := strings.Join(arch, "\n")
		if len(arch) != 5 || strings.Contains(joined, "while disabled") || strings.Contains(joined, ">old<") {
			t.Fatalf("archive after disabled/regenerate has %d messages: %s", len(arch), joined)
		}
	})
}

func TestIncomingWebhookRateLimitAndPermission(t *testing.T) {
	eachChatEnv(t, func(t *testing.T, e *chatEnv) {
		base := "/api/tenants/" + e.tenant
		ch := e.Do(t, "POST", base+"/chat_channels/", e.Key, map[string]any{"name": "noisy"}).Expect(t, 201).Map(t)
		e.waitRoom(t, e.lower+"-noisy")

		// Managing webhooks needs incoming_webhooks.manage, in the tenant.
		writer := e.KeyFor(t, map[string]any{"tenant": e.tenant, "permissions": []string{"config.write", "config.read"}})
		e.Do(t, "POST", base+"/incoming_webhooks/", writer, map[string]any{"channel": "noisy", "name": "x"}).Expect(t, 403)
		other := e.KeyFor(t, map[string]any{"tenant": e.Tenant(t, "other")})
		e.Do(t, "POST", base+"/incoming_webhooks/", other, map[string]any{"channel": "noisy", "name": "x"}).Expect(t, 403)
		manager := e.KeyFor(t, map[string]any{"tenant": e.tenant, "permissions": []string{"incoming_webhooks.manage", "config.read"}})
		hook := e.Do(t, "POST", base+"/incoming_webhooks/", manager, map[string]any{"channel": "noisy", "name": "Spammer"}).Expect(t, 201).Map(t)
		token := hook["token"].(string)
		e.Do(t, "POST", base+"/incoming_webhooks/"+fmt.Sprint(hook["id"])+"/regenerate", writer, map[string]any{}).Expect(t, 403)

		// Bursts of ten, then 429 with Retry-After. The bucket refills one
		// post a second, so a slow machine may get one more in per second
		// the burst took; never fewer than ten.
		start := time.Now()
		var s, accepted int
		var ct, b string
		for accepted <= 40 {
			if s, ct, b = postHook(t, e, token, "application/json", fmt.Sprintf(`{"text":"burst %d"}`, accepted)); s != 200 {
				break
			}
			accepted++
		}
		if accepted < 10 || accepted > 10+int(time.Since(start).Seconds())+1 {
			t.Fatalf("%d posts accepted in a burst of %s, want 10 (plus one per second it took)", accepted, time.Since(start))
		}
		if s != 429 || b != "rate_limited" || !strings.HasSuffix(ct, "|1") {
			t.Fatalf("post after the burst: %d %q %q", s, ct, b)
		}

		// An archived channel refuses posts with Slack's code.
		e.Do(t, "PUT", base+"/chat_channels/"+fmt.Sprint(ch["id"]), e.Key, map[string]any{"archived": true}).Expect(t, 200)
		e.Do(t, "POST", base+"/incoming_webhooks/", e.Key, map[string]any{"channel": "noisy", "name": "late"}).Expect(t, 400)
		if s, _, b := postHook(t, e, token, "application/json", `{"text":"x"}`); s != 410 || b != "channel_is_archived" {
			t.Fatalf("archived channel: %d %s", s, b)
		}
	})
}
