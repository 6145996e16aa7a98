package routes_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/comms/messaging"
)

// An inbound SMS reaches a tenant webhook subscribed to message.received
// once, signed, even when the provider delivers its callback twice; a
// webhook of another event hears nothing of it.
func TestOutboundWebhookMessageReceived(t *testing.T) {
	tw, env := twilioWithHooks(t)
	apptest.EachSerial(t, env, func(t *testing.T, srv *apptest.Server) {
		s := &msgServer{Server: srv, twilio: tw, tenant: srv.Tenant(t, "msgh")}
		recv, other := newReceiver(t), newReceiver(t)
		base := "/api/tenants/" + s.tenant + "/outbound_webhooks/"
		_, secret := createHook(t, srv, base, map[string]any{"name": "sms", "url": recv.URL, "events": []string{"message.received"}})
		createHook(t, srv, base, map[string]any{"name": "calls", "url": other.URL, "events": []string{"call.ended"}})
		ch := s.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000"})
		in := url.Values{"MessageSid": {"SMhook1"}, "From": {"+27825550009"}, "To": {"+27115550000"}, "Body": {"Call me back"}, "NumMedia": {"0"}, "SmsStatus": {"received"}}
		path := fmt.Sprintf("/integration/messaging/twilio/%d", ch)
		for range 2 {
			twilioPost(t, s, path, in, messaging.TwilioSignature(twToken, srv.Cfg.BaseURL+path, in)).Expect(t, 200)
		}
		got := recv.waitFor(t, "message.received", func(g []received) bool { return len(g) >= 1 })
		time.Sleep(300 * time.Millisecond) // a second delivery would show now
		if got = recv.requests(); len(got) != 1 {
			t.Fatalf("%d deliveries, want 1", len(got))
		}
		checkSigned(t, got[0], secret)
		ev := decodeEvent(t, got[0].Body)
		if ev.Type != "message.received" || ev.Tenant != s.tenant || ev.Data["from"] != "+27825550009" || ev.Data["body"] != "Call me back" || ev.Data["direction"] != "inbound" {
			t.Fatalf("event %s", got[0].Body)
		}
		if n := len(other.requests()); n != 0 {
			t.Fatalf("a call.ended webhook got %d requests", n)
		}
	})
}
