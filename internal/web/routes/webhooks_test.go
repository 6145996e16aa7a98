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

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/platform/wait"
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
		arch := e.archiveOf(t, cl, room+"@conference."+chatDomain, 1)
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
		arch = e.archiveOf(t, cl, room+"@conference."+chatDomain, 5)
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
			t.Fatalf("%d posts accepted in a burst of %s, want 10 (plus one per second it took); the first refused answered %d %q", accepted, time.Since(start), s, b)
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

// TestIncomingWebhookOversizeAndChatServerDown: a post over 256 KiB is
// refused with 413 (Slack-style plain text, or the JSON error shape) and
// nothing is posted; while the chat server is down posts answer 503
// chat_unavailable and are not kept, posts accepted before the outage was
// noticed are posted once it is back, and the hook's counter counts only
// what was accepted.
func TestIncomingWebhookOversizeAndChatServerDown(t *testing.T) {
	eachChatEnv(t, func(t *testing.T, e *chatEnv) {
		base := "/api/tenants/" + e.tenant
		e.Do(t, "POST", base+"/chat_channels/", e.Key, map[string]any{"name": "alerts"}).Expect(t, 201)
		room := e.lower + "-alerts"
		e.waitRoom(t, room)
		reader := e.provision(t, "1001")
		e.waitMember(t, room, e.lower+"-1001@"+chatDomain)
		hook := e.Do(t, "POST", base+"/incoming_webhooks/", e.Key, map[string]any{"channel": "alerts", "name": "Grafana"}).Expect(t, 201).Map(t)
		token, id := hook["token"].(string), fmt.Sprint(hook["id"])
		post := func(text string, headers ...string) (int, string, string) {
			js, _ := json.Marshal(map[string]any{"text": text})
			return postHook(t, e, token, "application/json", string(js), headers...)
		}

		// Over the limit: a 300 KiB body (attachments padded past 256 KiB).
		big, _ := json.Marshal(map[string]any{"text": "too big", "attachments": []any{map[string]any{"fallback": strings.Repeat("x", 300<<10)}}})
		status, ct, body := postHook(t, e, token, "application/json", string(big))
		if status != 413 || body != "payload_too_large" || !strings.HasPrefix(ct, "text/plain") {
			t.Fatalf("oversize post: %d %q %q", status, ct, body)
		}
		status, ct, body = postHook(t, e, token, "application/json", string(big), "Accept", "application/json")
		var jerr map[string]any
		if status != 413 || !strings.HasPrefix(ct, "application/json") || json.Unmarshal([]byte(body), &jerr) != nil || jerr["code"] != "payload_too_large" || jerr["error"] == "" {
			t.Fatalf("oversize post asking for JSON: %d %q %q", status, ct, body)
		}

		if status, _, body := post("before the outage"); status != 200 || body != "ok" {
			t.Fatalf("post: %d %q", status, body)
		}
		e.xmpp.Stop()
		accepted := []string{"before the outage"}
		wait.Until(t, 10*time.Second, "webhook posts answer 503 during the outage", func() bool {
			text := fmt.Sprintf("during the outage %d", len(accepted))
			status, ct, body := post(text)
			if status == 200 {
				accepted = append(accepted, text)
				time.Sleep(200 * time.Millisecond)
				return false
			}
			if status != 503 || body != "chat_unavailable" || !strings.HasPrefix(ct, "text/plain") || !strings.HasSuffix(ct, "|5") {
				t.Fatalf("post during the outage: %d %q %q", status, ct, body)
			}
			return true
		})
		if status, ct, body := post("refused while down"); status != 503 || body != "chat_unavailable" || !strings.HasSuffix(ct, "|5") {
			t.Fatalf("post while down: %d %q (content type|Retry-After %q)", status, body, ct)
		}
		status, ct, body = post("refused while down", "Accept", "application/json")
		if status != 503 || !strings.Contains(body, `"code":"chat_unavailable"`) || !strings.HasPrefix(ct, "application/json") || !strings.HasSuffix(ct, "|5") {
			t.Fatalf("post while down asking for JSON: %d %q %q", status, ct, body)
		}
		e.xmpp.Restart()
		wait.Until(t, 20*time.Second, "webhook posts accepted again", func() bool {
			status, _, _ := post("after the outage")
			if status == 200 {
				accepted = append(accepted, "after the outage")
			}
			return status == 200
		})

		got := onceEach(t, e.archiveOf(t, login(t, e, reader), room+"@conference."+chatDomain, len(accepted)))
		if len(got) != len(accepted) {
			t.Fatalf("archive has %d messages, want the %d accepted: %q", len(got), len(accepted), got)
		}
		for i, want := range accepted {
			if !strings.Contains(got[i], want) {
				t.Fatalf("archive message %d %q, want %q", i, got[i], want)
			}
		}
		for _, m := range got {
			if strings.Contains(m, "refused while down") || strings.Contains(m, "too big") {
				t.Fatalf("a refused post reached the room: %q", m)
			}
		}
		h := e.Do(t, "GET", base+"/incoming_webhooks/"+id, e.Key, nil).Expect(t, 200).Map(t)
		if fmt.Sprint(h["message_count"]) != fmt.Sprint(len(accepted)) {
			t.Fatalf("message_count %v, want %d", h["message_count"], len(accepted))
		}
	})
}

// TestIncomingWebhookManageOwn: incoming_webhooks.manage_own lets a user
// key create webhooks only for chat channels its extension belongs to, and
// change, regenerate and delete only the webhooks it created; a user key
// without the grant, and a tenant key with only it, manage none.
func TestIncomingWebhookManageOwn(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "own")
		base := "/api/tenants/" + tenant
		for _, ext := range []string{"1001", "1002"} {
			s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": ext}).Expect(t, 201)
		}
		s.Do(t, "POST", base+"/chat_channels/", s.Key, map[string]any{"name": "open"}).Expect(t, 201)
		s.Do(t, "POST", base+"/chat_channels/", s.Key, map[string]any{"name": "inner", "visibility": "private", "members": []string{"1001"}}).Expect(t, 201)
		own := []string{"incoming_webhooks.manage_own"}
		k1001 := s.KeyFor(t, map[string]any{"tenant": tenant, "extension": "1001", "permissions": own})
		k1002 := s.KeyFor(t, map[string]any{"tenant": tenant, "extension": "1002", "permissions": own})
		plainUser := s.KeyFor(t, map[string]any{"tenant": tenant, "extension": "1001"})
		ownTenantKey := s.KeyFor(t, map[string]any{"tenant": tenant, "permissions": own})
		hooks := base + "/incoming_webhooks/"
		code := func(r *apptest.Response, status int, want string) {
			t.Helper()
			if c := r.Expect(t, status).Code(t); c != want {
				t.Fatalf("code %q, want %q", c, want)
			}
		}

		mine := s.Do(t, "POST", hooks, k1001, map[string]any{"channel": "inner", "name": "Mine"}).Expect(t, 201).Map(t)
		if mine["created_by"] == nil || mine["url"] == nil {
			t.Fatalf("create answer %v", mine)
		}
		s.Do(t, "POST", hooks, k1002, map[string]any{"channel": "open", "name": "Public one"}).Expect(t, 201)
		code(s.Do(t, "POST", hooks, k1002, map[string]any{"channel": "inner", "name": "Sneaky"}), 403, "not_in_channel")
		code(s.Do(t, "POST", hooks, ownTenantKey, map[string]any{"channel": "open", "name": "No channel of its own"}), 403, "not_in_channel")
		code(s.Do(t, "POST", hooks, plainUser, map[string]any{"channel": "open", "name": "No grant"}), 403, "forbidden")

		id := fmt.Sprint(mine["id"])
		code(s.Do(t, "PUT", hooks+id, k1002, map[string]any{"name": "Taken"}), 403, "not_owner")
		code(s.Do(t, "POST", hooks+id+"/regenerate", k1002, map[string]any{}), 403, "not_owner")
		code(s.Do(t, "DELETE", hooks+id, k1002, nil), 403, "not_owner")
		admins := s.Do(t, "POST", hooks, s.Key, map[string]any{"channel": "open", "name": "Admin's"}).Expect(t, 201).Map(t)
		code(s.Do(t, "DELETE", hooks+fmt.Sprint(admins["id"]), k1001, nil), 403, "not_owner")

		if got := s.Do(t, "PUT", hooks+id, k1001, map[string]any{"name": "Still mine"}).Expect(t, 200).Map(t); got["name"] != "Still mine" {
			t.Fatalf("update answer %v", got)
		}
		code(s.Do(t, "PUT", hooks+id, k1002, map[string]any{"name": "x"}), 403, "not_owner")
		regen := s.Do(t, "POST", hooks+id+"/regenerate", k1001, map[string]any{}).Expect(t, 200).Map(t)
		if regen["token"] == nil {
			t.Fatalf("regenerate answer %v", regen)
		}
		s.Do(t, "DELETE", hooks+id, k1001, nil).Expect(t, 204)
		s.Do(t, "GET", hooks+id, s.Key, nil).Expect(t, 404)
		// The full grant still covers every webhook of the tenant.
		s.Do(t, "DELETE", hooks+fmt.Sprint(admins["id"]), s.Key, nil).Expect(t, 204)
	})
}
