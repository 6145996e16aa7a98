package routes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/comms/messaging"
	"github.com/switchboard/switchboard/internal/comms/messaging/providertest"
)

const (
	twSid   = "AC11111111111111111111111111111111"
	twToken = "twilio-token-routes-0001"
	waPNID  = "109876543210987"
	waToken = "EAAB-routes-token"
	waApp   = "meta-app-secret-routes"
	waVerif = "meta-verify-routes"
	kSecret = "kannel-callback-secret-01"
)

// msgServer is a test server whose providers are local fakes.
type msgServer struct {
	*apptest.Server
	twilio *providertest.Twilio
	meta   *providertest.Meta
	tenant string
}

// kannelEnv lets Kannel channels name the tests' loopback sendsms
// listeners (the operator's host list and private ranges).
var kannelEnv = map[string]string{
	"SWITCHBOARD_EGRESS_ALLOWED_HOSTS": "127.0.0.1",
	"SWITCHBOARD_EGRESS_ALLOWED_NETS":  "127.0.0.0/8",
}

func eachMessaging(t *testing.T, fn func(t *testing.T, s *msgServer)) {
	t.Helper()
	eachMessagingWith(t, kannelEnv, fn)
}

// eachMessagingWith is eachMessaging with this server configuration.
func eachMessagingWith(t *testing.T, env map[string]string, fn func(t *testing.T, s *msgServer)) {
	t.Helper()
	tw := providertest.NewTwilio(twSid, twToken)
	meta := providertest.NewMeta(waPNID, waToken)
	t.Cleanup(tw.Close)
	t.Cleanup(meta.Close)
	cfg := map[string]string{"SWITCHBOARD_TWILIO_URL": tw.URL, "SWITCHBOARD_META_URL": meta.URL}
	maps.Copy(cfg, env)
	apptest.Each(t, cfg, func(t *testing.T, s *apptest.Server) {
		fn(t, &msgServer{Server: s, twilio: tw, meta: meta, tenant: s.Tenant(t, "msg")})
	})
}

func (s *msgServer) channel(t *testing.T, fields map[string]any) int64 {
	t.Helper()
	if fields["name"] == nil {
		fields["name"] = fmt.Sprintf("ch%d", time.Now().UnixNano())
	}
	creds := map[string]map[string]any{
		"twilio":     {"account_sid": twSid, "auth_token": twToken},
		"meta_cloud": {"phone_number_id": waPNID, "access_token": waToken, "app_secret": waApp, "verify_token": waVerif},
		"kannel":     {"sendsms_url": "http://127.0.0.1:1/cgi-bin/sendsms", "username": "sb", "password": "pw", "callback_secret": kSecret},
		"vonage":     {"api_key": "k"},
	}
	if fields["credentials"] == nil {
		fields["credentials"] = creds[fields["provider"].(string)]
	}
	if fields["rate_per_second"] == nil {
		fields["rate_per_second"] = 100
	}
	r := s.Do(t, "POST", "/api/tenants/"+s.tenant+"/messaging_channels/", s.Key, fields).Expect(t, 201)
	return int64(r.Map(t)["id"].(float64))
}

func (s *msgServer) messageCount(t *testing.T) int {
	t.Helper()
	var n int
	if err := s.Store.Querier().GetContext(context.Background(), &n, s.Store.Querier().Rebind("SELECT COUNT(*) FROM messages m JOIN tenants t ON t.id = m.tenant_id WHERE t.tenant = ?"), s.tenant); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitStatus polls a message until it reaches status.
func (s *msgServer) waitStatus(t *testing.T, id any, status string) map[string]any {
	t.Helper()
	return s.waitMessage(t, id, "status "+status, func(m map[string]any) bool { return m["status"] == status })
}

// waitMessage polls a message until done says it is as wanted.
func (s *msgServer) waitMessage(t *testing.T, id any, want string, done func(map[string]any) bool) map[string]any {
	t.Helper()
	// The worker polls, claims and sends off the request path: seconds on
	// a loaded CI host running the race detector.
	deadline := time.Now().Add(15 * time.Second)
	for {
		m := s.Do(t, "GET", fmt.Sprintf("/api/messaging/messages/%v", id), s.Key, nil).Expect(t, 200).Map(t)
		if done(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("message %v: %v, want %s", id, m, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMessagingSendValidation(t *testing.T) {
	eachMessaging(t, func(t *testing.T, s *msgServer) {
		sms := s.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000", "default_country": "ZA", "max_body_chars": 320})
		noCountry := s.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000"})
		short := s.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000", "max_body_chars": 160})
		wa := s.channel(t, map[string]any{"type": "whatsapp", "provider": "meta_cloud", "sender": "+27115550001", "template_only": true, "templates": []any{
			map[string]any{"template_id": "greet", "body": "Hi {{1}}, your code is {{2}}", "variable_count": 2, "status": "approved"},
			map[string]any{"template_id": "promo", "body": "Sale!", "status": "pending"},
		}})
		off := s.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000", "enabled": false})
		vonage := s.channel(t, map[string]any{"type": "sms", "provider": "vonage", "sender": "+27115550000"})
		other := s.Tenant(t, "oth")
		foreign := int64(s.Do(t, "POST", "/api/tenants/"+other+"/contacts/", s.Key, map[string]any{"first_name": "Zed"}).Expect(t, 201).Map(t)["id"].(float64))
		optedOut := int64(s.Do(t, "POST", "/api/tenants/"+s.tenant+"/contacts/", s.Key, map[string]any{"first_name": "Opt", "opt_out_sms": true}).Expect(t, 201).Map(t)["id"].(float64))
		tenantKey := s.KeyFor(t, map[string]any{"tenant": other})

		cases := []struct {
			name   string
			key    string
			body   any
			status int
			code   string
			field  string
		}{
			{"no channel", "", map[string]any{"to": "+27825550001", "body": "x"}, 400, "validation_failed", "channel_id"},
			{"another tenant's channel", tenantKey, map[string]any{"channel_id": sms, "to": "+27825550001", "body": "x"}, 400, "validation_failed", "channel_id"},
			{"unknown field", "", map[string]any{"channel_id": sms, "to": "+27825550001", "body": "x", "bcc": "y"}, 400, "bad_request", ""},
			{"not a number", "", map[string]any{"channel_id": sms, "to": "+999", "body": "x"}, 400, "validation_failed", "to"},
			{"letters", "", map[string]any{"channel_id": sms, "to": "call me", "body": "x"}, 400, "validation_failed", "to"},
			{"national without default country", "", map[string]any{"channel_id": noCountry, "to": "082 555 0001", "body": "x"}, 400, "validation_failed", "to"},
			{"no body", "", map[string]any{"channel_id": sms, "to": "+27825550001"}, 400, "validation_failed", "body"},
			{"blank body", "", map[string]any{"channel_id": sms, "to": "+27825550001", "body": "  "}, 400, "validation_failed", "body"},
			{"body over max_body_chars", "", map[string]any{"channel_id": sms, "to": "+27825550001", "body": strings.Repeat("a", 321)}, 400, "validation_failed", "body"},
			{"ucs2 needs more segments than allowed", "", map[string]any{"channel_id": short, "to": "+27825550001", "body": strings.Repeat("ж", 100)}, 400, "validation_failed", "body"},
			{"variables without template", "", map[string]any{"channel_id": sms, "to": "+27825550001", "body": "x", "variables": []string{"a"}}, 400, "validation_failed", "variables"},
			{"template-only refuses body", "", map[string]any{"channel_id": wa, "to": "+27825550001", "body": "hello"}, 400, "validation_failed", "body"},
			{"template-only needs template_id", "", map[string]any{"channel_id": wa, "to": "+27825550001"}, 400, "validation_failed", "template_id"},
			{"unknown template", "", map[string]any{"channel_id": wa, "to": "+27825550001", "template_id": "nope"}, 400, "validation_failed", "template_id"},
			{"too few variables", "", map[string]any{"channel_id": wa, "to": "+27825550001", "template_id": "greet", "variables": []string{"Eve"}}, 400, "validation_failed", "variables"},
			{"too many variables", "", map[string]any{"channel_id": wa, "to": "+27825550001", "template_id": "greet", "variables": []string{"Eve", "1", "2"}}, 400, "validation_failed", "variables"},
			{"empty variable", "", map[string]any{"channel_id": wa, "to": "+27825550001", "template_id": "greet", "variables": []string{"Eve", ""}}, 400, "validation_failed", "variables"},
			{"pending template", "", map[string]any{"channel_id": wa, "to": "+27825550001", "template_id": "promo"}, 422, "template_not_approved", ""},
			{"contact of another tenant", "", map[string]any{"channel_id": sms, "to": "+27825550001", "body": "x", "contact_id": foreign}, 400, "validation_failed", "contact_id"},
			{"contact opted out", "", map[string]any{"channel_id": sms, "to": "+27825550001", "body": "x", "contact_id": optedOut}, 422, "contact_opted_out", ""},
			{"disabled channel", "", map[string]any{"channel_id": off, "to": "+27825550001", "body": "x"}, 422, "channel_disabled", ""},
			{"provider without adapter", "", map[string]any{"channel_id": vonage, "to": "+27825550001", "body": "x"}, 422, "provider_not_supported", ""},
		}
		for _, c := range cases {
			key := c.key
			if key == "" {
				key = s.Key
			}
			r := s.Do(t, "POST", "/api/messaging/send", key, c.body)
			if r.Status != c.status || r.Code(t) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
				continue
			}
			if c.field != "" {
				var e struct{ Fields map[string]string }
				r.JSON(t, &e)
				if e.Fields[c.field] == "" {
					t.Errorf("%s: error does not name %s: %s", c.name, c.field, r.Body)
				}
			}
		}
		if n := s.messageCount(t); n != 0 {
			t.Errorf("refused sends stored %d messages", n)
		}

		// A national number is read with the channel's country.
		ok := s.Do(t, "POST", "/api/messaging/send", s.Key, map[string]any{"channel_id": sms, "to": "082 555 0001", "body": "Olá"}).Expect(t, 202).Map(t)
		if ok["to"] != "+27825550001" || ok["status"] != "queued" || ok["encoding"] != "ucs2" || ok["segments"] != float64(1) {
			t.Errorf("accepted %v", ok)
		}
		// An edit of the channel applies to the very next send.
		s.Do(t, "PUT", fmt.Sprintf("/api/tenants/%s/messaging_channels/%d", s.tenant, sms), s.Key, map[string]any{"enabled": false}).Expect(t, 200)
		if r := s.Do(t, "POST", "/api/messaging/send", s.Key, map[string]any{"channel_id": sms, "to": "+27825550001", "body": "x"}); r.Status != 422 || r.Code(t) != "channel_disabled" {
			t.Errorf("send right after disabling: %d %s", r.Status, r.Body)
		}
	})
}

func TestMessagingSendStatusAndList(t *testing.T) {
	eachMessaging(t, func(t *testing.T, s *msgServer) {
		ch := s.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000"})
		ch2 := s.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550002"})
		key := s.KeyFor(t, map[string]any{"tenant": s.tenant, "permissions": []string{"messaging.send"}})
		r := s.Do(t, "POST", "/api/messaging/send", key, map[string]any{"channel_id": ch, "to": "+27825550001", "body": "Hello from Switchboard"}).Expect(t, 202)
		var got map[string]any
		r.JSON(t, &got)
		id := got["id"]
		if got["status"] != "queued" || got["channel_id"] != float64(ch) || got["to"] != "+27825550001" || id == nil {
			t.Fatalf("202 body %s", r.Body)
		}
		sent := s.waitStatus(t, id, "sent")
		if !strings.HasPrefix(sent["provider_message_id"].(string), "SM") || sent["tenant"] != s.tenant || sent["direction"] != "outbound" {
			t.Errorf("sent message %v", sent)
		}
		s.Do(t, "POST", "/api/messaging/send", key, map[string]any{"channel_id": ch2, "to": "+27825550002", "body": "Second"}).Expect(t, 202)

		list := s.Do(t, "GET", "/api/messaging/messages?channel_id="+fmt.Sprint(ch), key, nil).Expect(t, 200)
		var items []map[string]any
		list.JSON(t, &items)
		if list.Header.Get("X-Total-Count") != "1" || len(items) != 1 || items[0]["id"] != id {
			t.Errorf("channel filter: total %s %s", list.Header.Get("X-Total-Count"), list.Body)
		}
		all := s.Do(t, "GET", "/api/messaging/messages?limit=1", key, nil).Expect(t, 200)
		if all.Header.Get("X-Total-Count") != "2" || !strings.Contains(all.Header.Get("Link"), `rel="next"`) {
			t.Errorf("paging: total %s link %q", all.Header.Get("X-Total-Count"), all.Header.Get("Link"))
		}
		future := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
		if n := s.Do(t, "GET", "/api/messaging/messages?from="+future, key, nil).Expect(t, 200).Header.Get("X-Total-Count"); n != "0" {
			t.Errorf("date filter: %s", n)
		}
		if n := s.Do(t, "GET", "/api/messaging/messages?status=failed", key, nil).Expect(t, 200).Header.Get("X-Total-Count"); n != "0" {
			t.Errorf("status filter: %s", n)
		}
		s.Do(t, "GET", "/api/messaging/messages?status=bogus", key, nil).Expect(t, 400)

		// Another tenant sees none of it.
		other := s.KeyFor(t, map[string]any{"tenant": s.Tenant(t, "oth")})
		s.Do(t, "GET", fmt.Sprintf("/api/messaging/messages/%v", id), other, nil).Expect(t, 404)
		if n := s.Do(t, "GET", "/api/messaging/messages", other, nil).Expect(t, 200).Header.Get("X-Total-Count"); n != "0" {
			t.Errorf("other tenant lists %s messages", n)
		}
		s.Do(t, "GET", "/api/messaging/messages?tenant="+s.tenant, other, nil).Expect(t, 403)

		// Permission messaging.send is required to send.
		readOnly := s.KeyFor(t, map[string]any{"tenant": s.tenant, "permissions": []string{"config.read"}})
		if r := s.Do(t, "POST", "/api/messaging/send", readOnly, map[string]any{"channel_id": ch, "to": "+27825550001", "body": "x"}); r.Status != 403 || r.Code(t) != "forbidden" {
			t.Errorf("send without messaging.send: %d %s", r.Status, r.Body)
		}
		s.Do(t, "POST", "/api/messaging/send", "", map[string]any{"channel_id": ch, "to": "+27825550001", "body": "x"}).Expect(t, 401)
	})
}

func TestMessagingIdempotencyKey(t *testing.T) {
	eachMessaging(t, func(t *testing.T, s *msgServer) {
		ch := s.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000"})
		body := map[string]any{"channel_id": ch, "to": "+27825550001", "body": "once"}
		h := map[string]string{"X-API-Key": s.Key, "Idempotency-Key": "order-42"}
		first := s.DoHeaders(t, "POST", "/api/messaging/send", h, body).Expect(t, 202)
		again := s.DoHeaders(t, "POST", "/api/messaging/send", h, body).Expect(t, 202)
		if string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay %s vs %s", first.Body, again.Body)
		}
		if r := s.DoHeaders(t, "POST", "/api/messaging/send", h, map[string]any{"channel_id": ch, "to": "+27825550001", "body": "twice"}); r.Status != 422 {
			t.Errorf("same key, other body: %d %s", r.Status, r.Body)
		}
		if n := s.messageCount(t); n != 1 {
			t.Errorf("%d messages stored for one idempotent send", n)
		}
	})
}

func twilioPost(t *testing.T, s *msgServer, path string, form url.Values, sign string) *apptest.Response {
	t.Helper()
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	if sign != "" {
		h["X-Twilio-Signature"] = sign
	}
	return s.DoHeaders(t, "POST", path, h, form.Encode())
}

func TestTwilioCallbacksVerifiedAndOrdered(t *testing.T) {
	eachMessaging(t, func(t *testing.T, s *msgServer) {
		ch := s.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000"})
		id := s.Do(t, "POST", "/api/messaging/send", s.Key, map[string]any{"channel_id": ch, "to": "+27825550001", "body": "track me"}).Expect(t, 202).Map(t)["id"]
		sent := s.waitStatus(t, id, "sent")
		sid := sent["provider_message_id"].(string)
		path := fmt.Sprintf("/integration/messaging/twilio/%d?message_id=%v", ch, id)
		status := func(st string) url.Values {
			return url.Values{"MessageSid": {sid}, "MessageStatus": {st}, "AccountSid": {twSid}, "To": {"+27825550001"}, "From": {"+27115550000"}}
		}
		sign := func(f url.Values) string { return messaging.TwilioSignature(twToken, s.Cfg.BaseURL+path, f) }

		// Missing and wrong signatures change nothing.
		twilioPost(t, s, path, status("delivered"), "").Expect(t, 403)
		twilioPost(t, s, path, status("delivered"), messaging.TwilioSignature("other-token", s.Cfg.BaseURL+path, status("delivered"))).Expect(t, 403)
		tampered := status("delivered")
		twilioPost(t, s, path, status("failed"), sign(tampered)).Expect(t, 403)
		if m := s.Do(t, "GET", fmt.Sprintf("/api/messaging/messages/%v", id), s.Key, nil).Expect(t, 200).Map(t); m["status"] != "sent" {
			t.Fatalf("unverified callbacks changed the status to %v", m["status"])
		}

		// Out of order: delivered arrives, then a late "sent": delivered stays.
		twilioPost(t, s, path, status("delivered"), sign(status("delivered"))).Expect(t, 204)
		twilioPost(t, s, path, status("sent"), sign(status("sent"))).Expect(t, 204)
		twilioPost(t, s, path, status("undelivered"), sign(status("undelivered"))).Expect(t, 204)
		m := s.Do(t, "GET", fmt.Sprintf("/api/messaging/messages/%v", id), s.Key, nil).Expect(t, 200).Map(t)
		if m["status"] != "delivered" || m["delivered_at"] == nil {
			t.Errorf("after out-of-order reports: %v", m)
		}
		twilioPost(t, s, path, status("read"), sign(status("read"))).Expect(t, 204)
		s.waitStatus(t, id, "read")

		// An incoming message (no API key: the signature is the proof).
		in := url.Values{"MessageSid": {"SMabc"}, "From": {"+27825550009"}, "To": {"+27115550000"}, "Body": {"Thanks!"}, "NumMedia": {"0"}, "SmsStatus": {"received"}}
		inPath := fmt.Sprintf("/integration/messaging/twilio/%d", ch)
		r := twilioPost(t, s, inPath, in, messaging.TwilioSignature(twToken, s.Cfg.BaseURL+inPath, in)).Expect(t, 200)
		if !strings.Contains(string(r.Body), "<Response>") {
			t.Errorf("inbound answer %s", r.Body)
		}
		twilioPost(t, s, inPath, in, messaging.TwilioSignature(twToken, s.Cfg.BaseURL+inPath, in)).Expect(t, 200) // redelivered
		var inbound []map[string]any
		s.Do(t, "GET", "/api/messaging/messages?direction=inbound&tenant="+s.tenant, s.Key, nil).Expect(t, 200).JSON(t, &inbound)
		if len(inbound) != 1 || inbound[0]["from"] != "+27825550009" || inbound[0]["body"] != "Thanks!" || inbound[0]["status"] != "received" {
			t.Errorf("inbound %v", inbound)
		}
		// A callback for a channel of another provider is not found.
		meta := s.channel(t, map[string]any{"type": "whatsapp", "provider": "meta_cloud", "sender": "+27115550001"})
		twilioPost(t, s, fmt.Sprintf("/integration/messaging/twilio/%d", meta), in, "x").Expect(t, 404)
	})
}

func metaPost(t *testing.T, s *msgServer, ch int64, payload any, secret string) *apptest.Response {
	t.Helper()
	body, _ := json.Marshal(payload)
	h := map[string]string{}
	if secret != "" {
		h["X-Hub-Signature-256"] = messaging.MetaSignature(secret, body)
	}
	return s.DoHeaders(t, "POST", fmt.Sprintf("/integration/messaging/meta_cloud/%d", ch), h, body)
}

func metaEvent(value map[string]any) map[string]any {
	value["messaging_product"] = "whatsapp"
	value["metadata"] = map[string]any{"display_phone_number": "27115550001", "phone_number_id": waPNID}
	return map[string]any{"object": "whatsapp_business_account", "entry": []any{map[string]any{"id": "WABA1", "changes": []any{map[string]any{"field": "messages", "value": value}}}}}
}

func TestWhatsAppWindowAndMetaWebhooks(t *testing.T) {
	eachMessaging(t, func(t *testing.T, s *msgServer) {
		ch := s.channel(t, map[string]any{"type": "whatsapp", "provider": "meta_cloud", "sender": "+27115550001",
			"inbound_destination": map[string]any{"type": "chat_channel", "target": "support"}})
		base := fmt.Sprintf("/integration/messaging/meta_cloud/%d", ch)

		// The subscription handshake.
		ok := s.Do(t, "GET", base+"?hub.mode=subscribe&hub.verify_token="+waVerif+"&hub.challenge=1158201444", "", nil).Expect(t, 200)
		if string(ok.Body) != "1158201444" {
			t.Errorf("challenge answer %q", ok.Body)
		}
		s.Do(t, "GET", base+"?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1", "", nil).Expect(t, 403)

		// Free text to someone who never wrote: refused, naming the rule.
		send := map[string]any{"channel_id": ch, "to": "+27825550009", "body": "Hi there"}
		r := s.Do(t, "POST", "/api/messaging/send", s.Key, send).Expect(t, 422)
		if r.Code(t) != "whatsapp_window_closed" || !strings.Contains(string(r.Body), "24-hour") {
			t.Errorf("outside the window: %s", r.Body)
		}

		// They write: unsigned and badly signed webhooks are refused.
		inbound := metaEvent(map[string]any{
			"contacts": []any{map[string]any{"profile": map[string]any{"name": "Eve"}, "wa_id": "27825550009"}},
			"messages": []any{map[string]any{"from": "27825550009", "id": "wamid.IN1", "timestamp": "1732460000", "type": "text", "text": map[string]any{"body": "Is my order ready?"}}},
		})
		metaPost(t, s, ch, inbound, "").Expect(t, 403)
		metaPost(t, s, ch, inbound, "not-the-app-secret").Expect(t, 403)
		s.Do(t, "POST", "/api/messaging/send", s.Key, send).Expect(t, 422)
		metaPost(t, s, ch, inbound, waApp).Expect(t, 200)

		// Now the window is open: free text goes out as type text.
		id := s.Do(t, "POST", "/api/messaging/send", s.Key, send).Expect(t, 202).Map(t)["id"]
		sent := s.waitStatus(t, id, "sent")
		var found bool
		for _, m := range s.meta.Accepted() {
			if m.ID == sent["provider_message_id"] {
				found = m.Type == "text" && m.To == "27825550009" && m.Raw["text"].(map[string]any)["body"] == "Hi there"
			}
		}
		if !found {
			t.Errorf("meta did not get the text message %v", sent["provider_message_id"])
		}

		// Statuses out of order: read first, then delivered and sent.
		status := func(st string) map[string]any {
			return metaEvent(map[string]any{"statuses": []any{map[string]any{
				"id": sent["provider_message_id"], "status": st, "timestamp": "1732460100", "recipient_id": "27825550009", "biz_opaque_callback_data": fmt.Sprintf("sb:%v", id),
			}}})
		}
		metaPost(t, s, ch, status("read"), waApp).Expect(t, 200)
		metaPost(t, s, ch, status("delivered"), waApp).Expect(t, 200)
		metaPost(t, s, ch, status("sent"), waApp).Expect(t, 200)
		if m := s.waitStatus(t, id, "read"); m["delivered_at"] == nil {
			t.Errorf("read message without delivered_at: %v", m)
		}
		var inb []map[string]any
		s.Do(t, "GET", "/api/messaging/messages?direction=inbound&tenant="+s.tenant, s.Key, nil).Expect(t, 200).JSON(t, &inb)
		if len(inb) != 1 || inb[0]["from"] != "+27825550009" || inb[0]["body"] != "Is my order ready?" {
			t.Errorf("stored inbound %v", inb)
		}
	})
}

func TestKannelCallbacksNeedTheChannelSecret(t *testing.T) {
	eachMessaging(t, func(t *testing.T, s *msgServer) {
		ch := s.channel(t, map[string]any{"type": "sms", "provider": "kannel", "sender": "+27115550000"})
		// A queued message (the fake sendsms URL is unreachable, so it stays queued).
		id := s.Do(t, "POST", "/api/messaging/send", s.Key, map[string]any{"channel_id": ch, "to": "+27825550001", "body": "hi"}).Expect(t, 202).Map(t)["id"]
		dlr := func(secret, typ string) string {
			return fmt.Sprintf("/integration/messaging/kannel/%d?secret=%s&event=dlr&message_id=%v&type=%s", ch, url.QueryEscape(secret), id, typ)
		}
		s.Do(t, "GET", dlr("wrong-secret-000000", "1"), "", nil).Expect(t, 403)
		s.Do(t, "GET", strings.Replace(dlr("", "1"), "secret=&", "", 1), "", nil).Expect(t, 403)
		s.Do(t, "GET", dlr(kSecret, "1"), "", nil).Expect(t, 200)
		s.Do(t, "GET", dlr(kSecret, "8"), "", nil).Expect(t, 200) // the SMSC's earlier "accepted" arrives late
		s.waitStatus(t, id, "delivered")

		mo := fmt.Sprintf("/integration/messaging/kannel/%d?secret=%s&from=%%2B27825550009&to=%%2B27115550000&text=STOP&id=abc-1", ch, kSecret)
		s.Do(t, "GET", mo, "", nil).Expect(t, 200)
		var inb []map[string]any
		s.Do(t, "GET", "/api/messaging/messages?direction=inbound&tenant="+s.tenant, s.Key, nil).Expect(t, 200).JSON(t, &inb)
		if len(inb) != 1 || inb[0]["body"] != "STOP" || inb[0]["from"] != "+27825550009" {
			t.Errorf("inbound %v", inb)
		}
	})
}

var _ = context.Background
