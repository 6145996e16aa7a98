package routes_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/comms/messaging"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// eventsOf keeps the requests carrying event type typ, decoded, once per
// event id (a retried delivery has the same id).
func eventsOf(t *testing.T, got []received, typ string) (reqs []received, events []eventBody) {
	t.Helper()
	seen := map[string]bool{}
	for _, g := range got {
		if g.Event != typ || seen[g.ID] {
			continue
		}
		seen[g.ID] = true
		reqs = append(reqs, g)
		events = append(events, decodeEvent(t, g.Body))
	}
	return reqs, events
}

// TestPlatformWebhookTenantFilter: a platform webhook (/api/webhooks/)
// receives configuration events of every tenant, signed with its own
// secret and naming the tenant; one limited to `tenants` receives only
// those tenants' events. Its delivery log and test send work at the
// platform path.
func TestPlatformWebhookTenantFilter(t *testing.T) {
	apptest.EachSerial(t, hookEnv, func(t *testing.T, s *apptest.Server) {
		a, b := s.Tenant(t, "pwa"), s.Tenant(t, "pwb")
		all, only := newReceiver(t), newReceiver(t)
		const base = "/api/webhooks/"
		allID, allSecret := createHook(t, s, base, map[string]any{"name": storetest.Name("all"), "url": all.URL + "/in", "events": []string{"config.changed"}})
		onlyID, onlySecret := createHook(t, s, base, map[string]any{"name": storetest.Name("only"), "url": only.URL + "/in", "events": []string{"config.changed"}, "tenants": []string{a}})
		got := s.Do(t, "GET", fmt.Sprintf("%s%d", base, onlyID), s.Key, nil).Expect(t, 200).Map(t)
		if ts, _ := got["tenants"].([]any); len(ts) != 1 || ts[0] != a {
			t.Fatalf("platform webhook tenants %v, want [%s]", got["tenants"], a)
		}

		s.Do(t, "POST", "/api/tenants/"+a+"/departments/", s.Key, map[string]any{"name": "dep-a"}).Expect(t, 201)
		s.Do(t, "POST", "/api/tenants/"+b+"/departments/", s.Key, map[string]any{"name": "dep-b"}).Expect(t, 201)

		// The unfiltered webhook: both tenants' events.
		recvd := all.waitFor(t, "both departments", func(g []received) bool { return allAnswered(g, "dep-a", "dep-b") })
		for name, tenant := range map[string]string{"dep-a": a, "dep-b": b} {
			ev := about(recvd, "departments", name)[0]
			checkSigned(t, ev, allSecret)
			if e := decodeEvent(t, ev.Body); e.Type != "config.changed" || e.Tenant != tenant || e.Data["op"] != "create" {
				t.Fatalf("platform delivery of %s: %s", name, ev.Body)
			}
		}
		// The filtered one: tenant a only. Tenant b's event was written
		// after a's, so once the unfiltered hook has it, a delivery to the
		// filtered one would have been made too.
		recvd = only.waitFor(t, "dep-a", func(g []received) bool { return allAnswered(g, "dep-a") })
		checkSigned(t, about(recvd, "departments", "dep-a")[0], onlySecret)
		time.Sleep(500 * time.Millisecond)
		for _, g := range only.requests() {
			if e := decodeEvent(t, g.Body); e.Tenant != a {
				t.Fatalf("a webhook limited to %s received an event of %s: %s", a, e.Tenant, g.Body)
			}
		}

		// The delivery log and a test send at the platform path.
		var log []map[string]any
		s.Do(t, "GET", fmt.Sprintf("%s%d/deliveries", base, onlyID), s.Key, nil).Expect(t, 200).JSON(t, &log)
		if len(log) == 0 || log[0]["event_type"] != "config.changed" {
			t.Fatalf("delivery log %v", log)
		}
		tr := s.Do(t, "POST", fmt.Sprintf("%s%d/test", base, allID), s.Key, map[string]any{}).Expect(t, 200).Map(t)
		if tr["status"] != "succeeded" || tr["event_type"] != "webhook.test" {
			t.Fatalf("test send %v", tr)
		}
		// Platform webhooks are the platform's: a tenant key may not see them.
		s.Do(t, "GET", base, s.KeyFor(t, map[string]any{"tenant": a}), nil).Expect(t, 403)

		// Leave no platform webhook behind for the servers of later tests.
		s.Do(t, "DELETE", fmt.Sprintf("%s%d", base, allID), s.Key, nil).Expect(t, 204)
		s.Do(t, "DELETE", fmt.Sprintf("%s%d", base, onlyID), s.Key, nil).Expect(t, 204)
	})
}

// TestOutboundWebhookMessageStatus: a provider's delivery report reaches a
// tenant webhook subscribed to message.status as one signed event naming
// the message and its new status; a repeated report that changes nothing
// sends nothing, the next status another event.
func TestOutboundWebhookMessageStatus(t *testing.T) {
	tw, env := twilioWithHooks(t)
	apptest.EachSerial(t, env, func(t *testing.T, srv *apptest.Server) {
		s := &msgServer{Server: srv, twilio: tw, tenant: srv.Tenant(t, "msgst")}
		recv := newReceiver(t)
		_, secret := createHook(t, srv, "/api/tenants/"+s.tenant+"/outbound_webhooks/", map[string]any{"name": "status", "url": recv.URL, "events": []string{"message.status"}})
		ch := s.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000"})
		id := s.Do(t, "POST", "/api/messaging/send", s.Key, map[string]any{"channel_id": ch, "to": "+27825550001", "body": "track me"}).Expect(t, 202).Map(t)["id"]
		sid := s.waitStatus(t, id, "sent")["provider_message_id"].(string)

		path := fmt.Sprintf("/integration/messaging/twilio/%d?message_id=%v", ch, id)
		report := func(st string) {
			f := url.Values{"MessageSid": {sid}, "MessageStatus": {st}, "AccountSid": {twSid}, "To": {"+27825550001"}, "From": {"+27115550000"}}
			twilioPost(t, s, path, f, messaging.TwilioSignature(twToken, srv.Cfg.BaseURL+path, f)).Expect(t, 204)
		}
		report("delivered")
		report("delivered") // the provider repeats itself: nothing changes
		recv.waitFor(t, "message.status delivered", func(g []received) bool { _, e := eventsOf(t, g, "message.status"); return len(e) >= 1 })
		report("read")
		got := recv.waitFor(t, "message.status read", func(g []received) bool { _, e := eventsOf(t, g, "message.status"); return len(e) >= 2 })
		time.Sleep(300 * time.Millisecond) // a third event would show now
		reqs, events := eventsOf(t, recv.requests(), "message.status")
		if len(events) != 2 {
			t.Fatalf("%d message.status events, want delivered and read: %v", len(events), got)
		}
		for i, want := range []string{"delivered", "read"} {
			checkSigned(t, reqs[i], secret)
			e := events[i]
			if e.Type != "message.status" || e.Tenant != s.tenant || e.Data["status"] != want ||
				fmt.Sprint(e.Data["message_id"]) != fmt.Sprint(id) || e.Data["channel_id"] != float64(ch) {
				t.Fatalf("event %d: %s; want status %s of message %v on channel %d", i, reqs[i].Body, want, id, ch)
			}
		}
	})
}

// TestOutboundWebhookChatMessage: a post into a chat channel, through the
// API and through an incoming webhook, reaches a tenant webhook subscribed
// to chat.message as a signed event with the channel, the sender's name and
// the text, once the chat server took it.
func TestOutboundWebhookChatMessage(t *testing.T) {
	eachChatEnvWith(t, hookEnv, func(t *testing.T, e *chatEnv) {
		recv := newReceiver(t)
		base := "/api/tenants/" + e.tenant
		_, secret := createHook(t, e.Server, base+"/outbound_webhooks/", map[string]any{"name": "chat", "url": recv.URL, "events": []string{"chat.message"}})
		e.Do(t, "POST", base+"/chat_channels/", e.Key, map[string]any{"name": "ops"}).Expect(t, 201)
		e.waitRoom(t, e.lower+"-ops")

		e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"to": "ops", "body": "deploy done", "from_name": "CI bot"}).Expect(t, 200)
		hook := e.Do(t, "POST", base+"/incoming_webhooks/", e.Key, map[string]any{"channel": "ops", "name": "Grafana"}).Expect(t, 201).Map(t)
		js, _ := json.Marshal(map[string]any{"text": "disk full on db1"})
		if status, _, body := postHook(t, e, hook["token"].(string), "application/json", string(js)); status != 200 || body != "ok" {
			t.Fatalf("incoming webhook post: %d %s", status, body)
		}

		recv.waitFor(t, "two chat.message events", func(g []received) bool { _, ev := eventsOf(t, g, "chat.message"); return len(ev) >= 2 })
		time.Sleep(300 * time.Millisecond) // a third event would show now
		reqs, events := eventsOf(t, recv.requests(), "chat.message")
		if len(events) != 2 {
			t.Fatalf("%d chat.message events, want 2", len(events))
		}
		want := map[string]string{"CI bot": "deploy done", "Grafana": "disk full on db1"}
		for i, ev := range events {
			checkSigned(t, reqs[i], secret)
			from, _ := ev.Data["from_name"].(string)
			if ev.Type != "chat.message" || ev.Tenant != e.tenant || ev.Data["channel"] != "ops" || want[from] == "" || ev.Data["body"] != want[from] {
				t.Fatalf("chat.message event %s", reqs[i].Body)
			}
			delete(want, from)
		}
	})
}
