package messaging_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/comms/messaging"
	"github.com/switchboard/switchboard/internal/comms/messaging/providertest"
)

func TestTwilioSMSExactRequest(t *testing.T) {
	e := newEnv(t)
	svc := e.service(messaging.Config{})
	ch := e.twilioSMS(t, nil)
	m := e.send(t, svc, messaging.SendRequest{ChannelID: ch, To: "+27825550001", Body: ptr("Your table is ready")})
	drain(t, svc)
	acc := e.twilio.Accepted()
	if len(acc) != 1 {
		t.Fatalf("twilio accepted %d messages, want 1", len(acc))
	}
	got := acc[0]
	if got.To != "+27825550001" || got.From != "+27115550000" || got.Body != "Your table is ready" || got.ContentSid != "" {
		t.Errorf("twilio got %+v", got)
	}
	cb, _ := url.Parse(got.StatusCallback)
	if cb.Host != "sb.example.net" || !strings.HasSuffix(cb.Path, "/integration/messaging/twilio/"+itoa(ch)) || cb.Query().Get("message_id") != itoa(m.ID) {
		t.Errorf("StatusCallback %q", got.StatusCallback)
	}
	after := e.message(t, svc, m.ID)
	if after.Status != messaging.StatusSent || after.ProviderMessageID != got.Sid || after.Attempts != 1 || after.SentAtS == nil {
		t.Errorf("message after send: %+v", after)
	}
	if n := outboxRows(t, e.st); n != 0 {
		t.Errorf("outbox keeps %d rows after the send", n)
	}
}

func TestTwilioWhatsAppTemplate(t *testing.T) {
	e := newEnv(t)
	svc := e.service(messaging.Config{})
	const hx = "HX0123456789abcdef0123456789abcdef"
	ch := e.channel(t, map[string]any{"type": "whatsapp", "provider": "twilio", "sender": "+14155238886", "template_only": true,
		"credentials": map[string]any{"account_sid": testSid, "auth_token": testToken},
		"templates":   []any{map[string]any{"template_id": hx, "name": "appointment", "language": "en", "body": "Hi {{1}}, see you {{2}}", "variable_count": json.Number("2"), "status": "approved"}}})
	m := e.send(t, svc, messaging.SendRequest{ChannelID: ch, To: "+27825550001", TemplateID: hx, Variables: []byte(`["Eve","Tuesday"]`)})
	if m.Body != "Hi Eve, see you Tuesday" {
		t.Errorf("rendered body %q", m.Body)
	}
	drain(t, svc)
	acc := e.twilio.Accepted()
	if len(acc) != 1 {
		t.Fatalf("accepted %d", len(acc))
	}
	got := acc[0]
	if got.To != "whatsapp:+27825550001" || got.From != "whatsapp:+14155238886" || got.ContentSid != hx || got.Body != "" ||
		got.ContentVariables["1"] != "Eve" || got.ContentVariables["2"] != "Tuesday" {
		t.Errorf("twilio got %+v", got)
	}
}

func TestMetaTextAndTemplateExactRequest(t *testing.T) {
	e := newEnv(t)
	svc := e.service(messaging.Config{})
	ch := e.metaWA(t, map[string]any{"templates": []any{map[string]any{"template_id": "order_ready", "name": "order_ready", "language": "en-US", "body": "Order {{1}} is ready", "variable_count": json.Number("1"), "status": "approved"}}})
	m := e.send(t, svc, messaging.SendRequest{ChannelID: ch, To: "+27825550001", TemplateID: "order_ready", Variables: []byte(`{"1":"A-17"}`)})
	drain(t, svc)
	acc := e.meta.Accepted()
	if len(acc) != 1 {
		t.Fatalf("meta accepted %d", len(acc))
	}
	raw := acc[0].Raw
	tpl := raw["template"].(map[string]any)
	comps := tpl["components"].([]any)
	param := comps[0].(map[string]any)["parameters"].([]any)[0].(map[string]any)
	if raw["messaging_product"] != "whatsapp" || raw["to"] != "27825550001" || raw["type"] != "template" ||
		tpl["name"] != "order_ready" || tpl["language"].(map[string]any)["code"] != "en_US" ||
		comps[0].(map[string]any)["type"] != "body" || param["type"] != "text" || param["text"] != "A-17" ||
		raw["biz_opaque_callback_data"] != "sb:"+itoa(m.ID) {
		t.Errorf("meta got %v", raw)
	}
	if got := e.message(t, svc, m.ID); got.ProviderMessageID != acc[0].ID || got.Status != messaging.StatusSent {
		t.Errorf("message %+v", got)
	}
}

// Each provider refusal: permanent ones fail the message at once with the
// provider's code; transient ones are retried and then succeed.
func TestProviderErrors(t *testing.T) {
	cases := []struct {
		name      string
		fault     providertest.Fault
		meta      bool
		wantState string
		wantCode  string
		attempts  int
	}{
		{"twilio invalid number is final", providertest.Fault{Status: 400, Code: 21211, Message: "Invalid 'To' Phone Number"}, false, messaging.StatusFailed, "21211", 1},
		{"twilio rate limit is retried", providertest.Fault{Status: 429, Code: 20429, Message: "Too Many Requests"}, false, messaging.StatusSent, "", 2},
		{"twilio outage is retried", providertest.Fault{Status: 503, Code: 20500, Message: "Service unavailable"}, false, messaging.StatusSent, "", 2},
		{"meta re-engagement is final", providertest.Fault{Status: 400, Code: 131047, Message: "Re-engagement message"}, true, messaging.StatusFailed, "131047", 1},
		{"meta throttling is retried", providertest.Fault{Status: 400, Code: 130429, Message: "Rate limit hit"}, true, messaging.StatusSent, "", 2},
		{"meta server error is retried", providertest.Fault{Status: 500, Code: 131000, Message: "Something went wrong"}, true, messaging.StatusSent, "", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			svc := e.service(messaging.Config{BackoffBase: 1, BackoffMax: 1})
			var ch int64
			var m *messaging.Message
			if c.meta {
				ch = e.metaWA(t, map[string]any{"templates": []any{map[string]any{"template_id": "hello", "body": "Hello", "status": "approved"}}})
				e.meta.FailNext(c.fault)
				m = e.send(t, svc, messaging.SendRequest{ChannelID: ch, To: "+27825550001", TemplateID: "hello"})
			} else {
				ch = e.twilioSMS(t, nil)
				e.twilio.FailNext(c.fault)
				m = e.send(t, svc, messaging.SendRequest{ChannelID: ch, To: "+27825550001", Body: ptr("hi")})
			}
			drain(t, svc)
			got := e.message(t, svc, m.ID)
			if got.Status != c.wantState || got.ErrorCode != c.wantCode || got.Attempts != c.attempts {
				t.Errorf("status %s code %q attempts %d; want %s %q %d (%s)", got.Status, got.ErrorCode, got.Attempts, c.wantState, c.wantCode, c.attempts, got.ErrorMessage)
			}
			// The provider's words are logged, never shown.
			if c.wantState == messaging.StatusFailed && (got.ErrorMessage == "" || strings.Contains(got.ErrorMessage, c.fault.Message)) {
				t.Errorf("error_message %q: want a fixed text, not the provider's %q", got.ErrorMessage, c.fault.Message)
			}
		})
	}
}

// Wrong credentials are the provider's 401, final: retrying cannot help.
func TestWrongCredentialsFail(t *testing.T) {
	e := newEnv(t)
	svc := e.service(messaging.Config{})
	ch := e.channel(t, map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000",
		"credentials": map[string]any{"account_sid": testSid, "auth_token": "wrong-token-0000"}})
	m := e.send(t, svc, messaging.SendRequest{ChannelID: ch, To: "+27825550001", Body: ptr("hi")})
	drain(t, svc)
	if got := e.message(t, svc, m.ID); got.Status != messaging.StatusFailed || got.ErrorCode != "20003" || got.Attempts != 1 {
		t.Errorf("got %+v", got)
	}
	if len(e.twilio.Accepted()) != 0 {
		t.Error("the fake accepted a message with wrong credentials")
	}
}
