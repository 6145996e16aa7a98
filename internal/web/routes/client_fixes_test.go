package routes_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// Issue 27, item 6: a live-call action checks its body before it looks
// for the channel, and with no FreeSWITCH node connected it answers 503
// freeswitch_unavailable with Retry-After, as calls do (it answered 404
// channel_not_found).
func TestCallActionsCheckBodyThenNode(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		// This server has no node: nothing can be acted on.
		for _, c := range []struct {
			path string
			body map[string]any
		}{
			{"/api/telephony/hangup", map[string]any{"channel": "SIP/1001-acme-00000001"}},
			{"/api/telephony/transfer", map[string]any{"channel": "SIP/1001-acme-00000001", "to": "1002"}},
			{"/api/telephony/record", map[string]any{"channel": "SIP/1001-acme-00000001", "action": "start"}},
		} {
			r := s.Do(t, "POST", c.path, s.Key, c.body).Expect(t, 503)
			if r.Code(t) != "freeswitch_unavailable" || r.Header.Get("Retry-After") == "" {
				t.Errorf("%s: %s, Retry-After %q", c.path, r.Body, r.Header.Get("Retry-After"))
			}
		}
		// A bad body is a 400 naming the field, node or no node.
		for _, c := range []struct {
			path, field string
			body        map[string]any
		}{
			{"/api/telephony/record", "action", map[string]any{"channel": "SIP/nobody", "action": "pause"}},
			{"/api/telephony/record", "filename", map[string]any{"channel": "SIP/nobody", "filename": "../x"}},
			{"/api/telephony/transfer", "to", map[string]any{"channel": "SIP/nobody", "to": "1002 XML default"}},
			{"/api/telephony/hangup", "channel", map[string]any{}},
		} {
			r := s.Do(t, "POST", c.path, s.Key, c.body).Expect(t, 400)
			if f, _ := r.Map(t)["fields"].(map[string]any); f[c.field] == nil {
				t.Errorf("%s: no error on %s: %s", c.path, c.field, r.Body)
			}
		}
	})
}

// Issue 27, item 5: the README's WhatsApp example names its template's
// language as Meta does (en_US), which was refused; Meta's form, the
// hyphenated one and three-letter codes are taken, anything else is a 400
// naming the field.
func TestWhatsAppTemplateLanguageInMetaForm(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		base := "/api/tenants/" + s.Tenant(t, "walang") + "/messaging_channels/"
		channel := func(name, lang string) map[string]any {
			return map[string]any{
				"name": name, "type": "whatsapp", "provider": "meta_cloud", "sender": "+27115550001", "template_only": true,
				"credentials": map[string]any{"phone_number_id": "106540352242922", "access_token": "EAAG-token", "app_secret": "app-secret-value", "verify_token": "pick-one"},
				"templates": []any{map[string]any{"template_id": "order_ready", "name": "order_ready", "language": lang,
					"body": "Hi {{1}}, order {{2}} is ready", "variable_count": 2, "status": "approved"}},
			}
		}
		for i, lang := range []string{"en_US", "en-US", "en", "pt_BR", "fil"} {
			s.Do(t, "POST", base, s.Key, channel(fmt.Sprintf("wa%d", i), lang)).Expect(t, 201)
		}
		for i, lang := range []string{"english", "EN_us", "en_US_x", "e"} {
			r := s.Do(t, "POST", base, s.Key, channel(fmt.Sprintf("bad%d", i), lang)).Expect(t, 400)
			if f, _ := r.Map(t)["fields"].(map[string]any); !strings.Contains(fmt.Sprint(f["templates"]), "item 0: language") {
				t.Errorf("%s: the error does not name the field: %s", lang, r.Body)
			}
		}
	})
}

// Issue 27, item 3: a client generated with openapi-typescript's default
// options made every property with a "default" required, so no create
// compiled, and defaults on *Update schemas said that leaving a field out
// of a PUT resets it. What a client sends carries no default: the value is
// in the description, and the server applies it on create.
func TestRequestSchemasCarryNoDefault(t *testing.T) {
	s := apptest.Start(t, apptest.AnyEnv(t), nil)
	var doc struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	s.Do(t, "GET", "/api/openapi.json", "", nil).Expect(t, 200).JSON(t, &doc)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if k == "default" && !strings.HasSuffix(path, ".properties") {
					t.Errorf("%s carries a default (%v)", path, c)
				}
				walk(path+"."+k, c)
			}
		case []any:
			for i, c := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), c)
			}
		}
	}
	requests := 0
	for name, schema := range doc.Components.Schemas {
		if strings.HasSuffix(name, "Create") || strings.HasSuffix(name, "Update") {
			requests++
			walk(name, schema)
		}
	}
	if requests < 40 {
		t.Fatalf("only %d request schemas found", requests)
	}
	// The default is still told, in words.
	raw, _ := json.Marshal(doc.Components.Schemas)
	if n := strings.Count(string(raw), "Left out on create: "); n < 20 {
		t.Errorf("%d request properties tell their default in words", n)
	}
}
