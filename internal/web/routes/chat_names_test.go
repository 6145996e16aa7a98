package routes_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/comms/chat/chattest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// TestChatRoomShowsSenderNamesLive: a member in the room as an occupant,
// logged in with its bundle through a real XMPP client library (mellium),
// reads the live groupchat stanzas and sees who wrote each one as the
// sender's nick (the from address's resource, what every client shows): a
// channel message's from_name, an incoming webhook's name (the payload's
// Slack username does not override it). A from_name equal to a member's
// nick is not shown as that member. The archive shows the same names, and
// so do posts after an ejabberd restart.
func TestChatRoomShowsSenderNamesLive(t *testing.T) {
	eachChatEnv(t, func(t *testing.T, e *chatEnv) {
		base := "/api/tenants/" + e.tenant
		e.Do(t, "POST", base+"/chat_channels/", e.Key, map[string]any{"name": "ops"}).Expect(t, 201)
		room := e.lower + "-ops"
		roomJID := room + "@conference." + chatDomain
		e.waitRoom(t, room)
		agent := e.provision(t, "1001")
		e.provision(t, "1002") // a member who is not in the room
		e.waitMember(t, room, e.lower+"-1001@"+chatDomain)
		e.waitMember(t, room, e.lower+"-1002@"+chatDomain)
		hook := e.Do(t, "POST", base+"/incoming_webhooks/", e.Key, map[string]any{"channel": "ops", "name": "Grafana"}).Expect(t, 201).Map(t)
		token, _ := hook["token"].(string)

		join := func() *chattest.Client {
			t.Helper()
			cl := login(t, e, agent)
			if err := cl.Join(context.Background(), roomJID, "1001", 20*time.Second); err != nil {
				t.Fatal(err)
			}
			return cl
		}
		cl := join()
		message := func(name, body string) {
			t.Helper()
			e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"to": "ops", "body": body, "from_name": name}).Expect(t, 200)
		}
		webhook := func(body string) {
			t.Helper()
			js, _ := json.Marshal(map[string]any{"text": body, "username": "1001"})
			if s, _, b := postHook(t, e, token, "application/json", string(js)); s != 200 || b != "ok" {
				t.Fatalf("webhook post: %d %s", s, b)
			}
		}
		seen := func(cl *chattest.Client, body string) string {
			t.Helper()
			m, ok := cl.WaitMessage(30*time.Second, `type="groupchat"`, ">"+body+"</body>")
			if !ok {
				t.Fatalf("no live message %q in the room; received %q\nchat log lines: %q", body, cl.Messages(), e.chatLogLines(t))
			}
			_, rest, _ := strings.Cut(m, ` from="`)
			from, _, _ := strings.Cut(rest, `"`)
			return strings.TrimPrefix(from, roomJID+"/")
		}

		message("NOC", "disk full on db1")
		if got := seen(cl, "disk full on db1"); got != "NOC" {
			t.Fatalf("channel message with from_name NOC shows as %q", got)
		}
		webhook("build 7 failed")
		if got := seen(cl, "build 7 failed"); got != "Grafana" {
			t.Fatalf("webhook post shows as %q, want its name Grafana", got)
		}
		for name, want := range map[string]string{"1001": "1001 (bot)", "1002": "1002 (bot)"} {
			body := "claims to be " + name
			message(name, body)
			if got := seen(cl, body); got != want {
				t.Fatalf("from_name %s (a member's nick) shows as %q, want %q", name, got, want)
			}
		}
		arch := e.archiveOf(t, cl, roomJID, 4)
		for body, want := range map[string]string{"disk full on db1": "NOC", "build 7 failed": "Grafana", "claims to be 1002": "1002 (bot)"} {
			var found bool
			for _, m := range arch {
				found = found || strings.Contains(m, ">"+body+"</body>") && strings.Contains(m, `from="`+roomJID+"/"+want+`"`)
			}
			if !found {
				t.Fatalf("archive has no %q from %s: %q", body, want, arch)
			}
		}

		// After an ejabberd restart the names still show.
		cl.Close()
		e.xmpp.Stop()
		e.xmpp.Restart()
		cl = join()
		wait.Until(t, 20*time.Second, "a channel message accepted after the restart", func() bool {
			return e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"to": "ops", "body": "back again", "from_name": "NOC"}).Status == 200
		})
		if got := seen(cl, "back again"); got != "NOC" {
			t.Fatalf("after the restart a NOC message shows as %q", got)
		}
		webhook("grafana after the restart")
		if got := seen(cl, "grafana after the restart"); got != "Grafana" {
			t.Fatalf("after the restart a webhook post shows as %q", got)
		}
	})
}
