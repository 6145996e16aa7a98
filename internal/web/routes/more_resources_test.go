package routes_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// fixtures are objects the minimal bodies refer to.
type fixtures struct {
	tenant, channel  string
	promptID, listID float64
}

// crudCase is one resource's minimal valid body and a change to it.
type crudCase struct {
	name     string
	platform bool
	create   func(fx fixtures) map[string]any
	update   map[string]any
	want     map[string]any // create-answer values that differ from the body (normalised)
}

func uniq(prefix string) string { return storetest.Name(prefix) }

func crudCases() []crudCase {
	ext := map[string]any{"type": "extension", "target": "1001"}
	return []crudCase{
		{name: "enterprises", platform: true, create: func(fx fixtures) map[string]any {
			return map[string]any{"name": uniq("ent"), "sites": []any{map[string]any{"tenant": fx.tenant, "site_code": "1"}}}
		}, update: map[string]any{"intersite_prefix": "9"}},
		{name: "resellers", platform: true, create: func(fixtures) map[string]any { return map[string]any{"name": uniq("res")} },
			update: map[string]any{"max_tenants": 5, "branding": map[string]any{"primary_color": "#112233"}}},
		{name: "webhooks", platform: true, create: func(fx fixtures) map[string]any {
			return map[string]any{"name": uniq("wh"), "url": "https://hooks.example.com/in", "events": []any{"call.ended"}, "tenants": []any{fx.tenant}}
		}, update: map[string]any{"timeout_ms": 2000}},
		{name: "system_webhooks", platform: true, create: func(fixtures) map[string]any {
			return map[string]any{"name": uniq("sys"), "url": "https://ops.example.com/alerts", "events": []any{"server.down"}}
		}, update: map[string]any{"events": []any{"server.down", "server.up"}}},
		{name: "voice_prompts", create: func(fixtures) map[string]any { return map[string]any{"name": "Welcome"} },
			update: map[string]any{"source": "tts", "tts_text": "Hello"}},
		{name: "music_on_hold", create: func(fixtures) map[string]any { return map[string]any{"name": "jazz", "rate": 16000} },
			update: map[string]any{"shuffle": true}},
		{name: "departments", create: func(fixtures) map[string]any { return map[string]any{"name": "Sales"} },
			update: map[string]any{"accountcode": "S1", "manager_extension": "1001"}},
		{name: "tags", create: func(fixtures) map[string]any { return map[string]any{"name": "vip"} },
			update: map[string]any{"color": "#ff0000"}, want: map[string]any{"color": "#808080"}},
		{name: "agents", create: func(fixtures) map[string]any {
			return map[string]any{"name": "Ann", "agent_number": "201", "extension": "1001"}
		}, update: map[string]any{"status": "available"}},
		{name: "queues", create: func(fx fixtures) map[string]any {
			return map[string]any{"name": "Support", "number": "500", "greeting_prompt_id": fx.promptID}
		}, update: map[string]any{"strategy": "ring-all", "exit_key": "0", "exit_destination": ext}},
		{name: "hunt_groups", create: func(fixtures) map[string]any {
			return map[string]any{"name": "Sales", "number": "600", "members": []any{map[string]any{"type": "extension", "target": "1001", "delay_seconds": 0, "timeout_seconds": 20}}}
		}, update: map[string]any{"ring_seconds": 60}},
		{name: "pickup_groups", create: func(fixtures) map[string]any { return map[string]any{"name": "floor1", "members": []any{"1001"}} },
			update: map[string]any{"pickers": []any{"1001"}}},
		{name: "ivr_menus", create: func(fx fixtures) map[string]any {
			return map[string]any{"name": "Main", "number": "700", "greeting_long_prompt_id": fx.promptID,
				"options": []any{map[string]any{"digits": "1", "destination": ext}}}
		}, update: map[string]any{"digit_len": 4}},
		{name: "special_endpoints", create: func(fixtures) map[string]any {
			return map[string]any{"name": "Echo", "number": "9196", "kind": "application", "application": "echo_test"}
		}, update: map[string]any{"ring_seconds": 20}},
		{name: "special_mailboxes", create: func(fixtures) map[string]any { return map[string]any{"name": "After hours", "number": "800"} },
			update: map[string]any{"max_messages": 50}},
		{name: "conference_rooms", create: func(fixtures) map[string]any { return map[string]any{"name": "Board", "number": "900", "pin": "1234"} },
			update: map[string]any{"mute_on_join": true}},
		{name: "company_directory", create: func(fixtures) map[string]any {
			return map[string]any{"display_name": "Reception", "number": "+27110000001"}
		}, update: map[string]any{"speed_dial": "1"}},
		{name: "devices", create: func(fixtures) map[string]any {
			return map[string]any{"mac_address": "00:15:65:AA:BB:CC", "vendor": "yealink"}
		}, update: map[string]any{"label": "desk", "device_lines": []any{map[string]any{"line": 1, "extension": "1001", "shared": false}}},
			want: map[string]any{"mac_address": "001565aabbcc"}},
		{name: "click_to_call_widgets", create: func(fixtures) map[string]any {
			return map[string]any{"name": "Site", "destination": ext, "allowed_origins": []any{"https://www.example.com"}}
		}, update: map[string]any{"button_label": "Ring us"}},
		{name: "chat_channels", create: func(fixtures) map[string]any { return map[string]any{"name": "general"} },
			update: map[string]any{"topic": "Anything"}},
		{name: "messaging_channels", create: func(fixtures) map[string]any {
			return map[string]any{"name": "WhatsApp", "type": "whatsapp", "provider": "meta_cloud", "credentials": map[string]any{
				"phone_number_id": "1055", "access_token": "EAAtoken-abcdef", "app_secret": "app-secret-1234", "verify_token": "verify-me-please"}}
		}, update: map[string]any{"rate_per_second": 5}, want: map[string]any{"max_body_chars": 4096,
			"credentials": map[string]any{"phone_number_id": "****", "access_token": "****cdef", "app_secret": "****1234", "verify_token": "****ease"}}},
		{name: "incoming_webhooks", create: func(fx fixtures) map[string]any { return map[string]any{"channel": fx.channel, "name": "CI bot"} },
			update: map[string]any{"enabled": false}},
		{name: "outbound_webhooks", create: func(fixtures) map[string]any {
			return map[string]any{"name": "crm", "url": "https://hooks.example.com/in", "events": []any{"call.ended"}}
		}, update: map[string]any{"filter": map[string]any{"direction": "inbound"}}},
		{name: "accounts", create: func(fixtures) map[string]any { return map[string]any{"name": "Acme"} },
			update: map[string]any{"industry": "Retail"}}, // custom values: TestCRMCustomFieldsValidated
		{name: "contacts", create: func(fixtures) map[string]any { return map[string]any{"first_name": "Eve"} },
			update: map[string]any{"phones": []any{map[string]any{"label": "mobile", "number": "+27825550001", "primary": true}}}},
		{name: "leads", create: func(fixtures) map[string]any { return map[string]any{"first_name": "Lee"} },
			update: map[string]any{"score": 50}},
		{name: "lists", create: func(fixtures) map[string]any { return map[string]any{"name": "Callers"} },
			update: map[string]any{"purpose": "campaign"}}, // members: TestCRMReferencesEnforced
		{name: "custom_fields", create: func(fixtures) map[string]any {
			return map[string]any{"entity": "contact", "field_key": "shoe_size", "label": "Shoe size", "type": "number"}
		}, update: map[string]any{"required": true}},
		{name: "activities", create: func(fixtures) map[string]any { return map[string]any{"kind": "note", "body": "Called back"} },
			update: map[string]any{"subject": "Follow-up"}},
		{name: "tasks", create: func(fixtures) map[string]any { return map[string]any{"title": "Call back"} },
			update: map[string]any{"status": "done"}},
		{name: "campaigns", create: func(fx fixtures) map[string]any {
			return map[string]any{"name": "Spring", "kind": "call", "list_id": fx.listID, "destination": ext}
		}, update: map[string]any{"pacing_per_minute": 20}},
		{name: "deals", create: func(fixtures) map[string]any { return map[string]any{"name": "Renewal", "amount": "1200.50"} },
			update: map[string]any{"stage": "won"}},
	}
}

// sameJSON compares values as JSON (numbers decode as float64).
func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func setupFixtures(t *testing.T, s *apptest.Server) fixtures {
	t.Helper()
	fx := fixtures{tenant: s.Tenant(t, "more"), channel: "fixtures"}
	base := "/api/tenants/" + fx.tenant
	s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
	fx.promptID = s.Do(t, "POST", base+"/voice_prompts/", s.Key, map[string]any{"name": "Fixture"}).Expect(t, 201).Map(t)["id"].(float64)
	fx.listID = s.Do(t, "POST", base+"/lists/", s.Key, map[string]any{"name": "Fixture"}).Expect(t, 201).Map(t)["id"].(float64)
	s.Do(t, "POST", base+"/chat_channels/", s.Key, map[string]any{"name": fx.channel}).Expect(t, 201)
	return fx
}

func TestMoreResourcesCRUD(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		fx := setupFixtures(t, s)
		other := s.Tenant(t, "other")
		for _, tc := range crudCases() {
			t.Run(tc.name, func(t *testing.T) {
				base := "/api/tenants/" + fx.tenant + "/" + tc.name + "/"
				if tc.platform {
					base = "/api/" + tc.name + "/"
				}
				body := tc.create(fx)
				created := s.Do(t, "POST", base, s.Key, body).Expect(t, 201).Map(t)
				for k, v := range body {
					if w, ok := tc.want[k]; ok {
						v = w
					}
					if !sameJSON(created[k], v) {
						t.Errorf("created %s = %v, want %v", k, created[k], v)
					}
				}
				for k, w := range tc.want {
					if _, inBody := body[k]; !inBody && !sameJSON(created[k], w) {
						t.Errorf("created %s = %v, want default %v", k, created[k], w)
					}
				}
				id := fmt.Sprint(int64(created["id"].(float64)))
				got := s.Do(t, "GET", base+id, s.Key, nil).Expect(t, 200).Map(t)
				if got["created_at"] == nil || !sameJSON(got["id"], created["id"]) {
					t.Errorf("GET %s: %v", id, got)
				}
				if !tc.platform {
					s.Do(t, "GET", "/api/tenants/"+other+"/"+tc.name+"/"+id, s.Key, nil).Expect(t, 404)
				}
				upd := s.Do(t, "PUT", base+id, s.Key, tc.update).Expect(t, 200).Map(t)
				reread := s.Do(t, "GET", base+id, s.Key, nil).Expect(t, 200).Map(t)
				for k, v := range tc.update {
					if !sameJSON(upd[k], v) || !sameJSON(reread[k], v) {
						t.Errorf("after PUT %s = %v (answer) / %v (GET), want %v", k, upd[k], reread[k], v)
					}
				}
				list := s.Do(t, "GET", base+"?limit=1000", s.Key, nil).Expect(t, 200)
				if !strings.Contains(string(list.Body), `"id":`+id+`,`) {
					t.Errorf("list does not hold %s: %s", id, list.Body)
				}
				s.Do(t, "DELETE", base+id, s.Key, nil).Expect(t, 204)
				s.Do(t, "GET", base+id, s.Key, nil).Expect(t, 404)
			})
		}
	})
}

func TestMoreSingletons(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "single")
		cases := []struct {
			name    string
			initial map[string]any
			update  map[string]any
		}{
			{"branding", map[string]any{"description": ""}, map[string]any{"product_name": "Acme Voice", "primary_color": "#0a0b0c"}},
			{"company_directory_settings", map[string]any{"search_by": "last_name", "min_search_digits": 3}, map[string]any{"number": "411", "search_by": "both"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				path := "/api/tenants/" + tenant + "/" + tc.name
				got := s.Do(t, "GET", path, s.Key, nil).Expect(t, 200).Map(t)
				for k, v := range tc.initial {
					if !sameJSON(got[k], v) {
						t.Errorf("new tenant's %s = %v, want %v", k, got[k], v)
					}
				}
				s.Do(t, "PUT", path, s.Key, tc.update).Expect(t, 200)
				got = s.Do(t, "GET", path, s.Key, nil).Expect(t, 200).Map(t)
				for k, v := range tc.update {
					if !sameJSON(got[k], v) {
						t.Errorf("after PUT %s = %v, want %v", k, got[k], v)
					}
				}
			})
		}
		// The directory number is in the number plan: an extension cannot take it.
		if r := s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "411"}); r.Status != 409 {
			t.Errorf("extension on the directory's number: %d %s", r.Status, r.Body)
		}
	})
}

func TestMoreResourcesRefuseBadInput(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		fx := setupFixtures(t, s)
		base := "/api/tenants/" + fx.tenant + "/"
		s.Do(t, "PUT", base+"chat_channels/"+fmt.Sprint(
			int64(s.Do(t, "POST", base+"chat_channels/", s.Key, map[string]any{"name": "old"}).Expect(t, 201).Map(t)["id"].(float64))),
			s.Key, map[string]any{"archived": true}).Expect(t, 200)
		custom := map[string]any{}
		for i := range 51 {
			custom[fmt.Sprintf("k%d", i)] = i
		}
		cases := []struct {
			name, res string
			body      map[string]any
			status    int
			field     string
		}{
			{"enum", "queues", map[string]any{"name": "Q", "number": "501", "strategy": "fastest"}, 400, "strategy"},
			{"pattern", "tags", map[string]any{"name": "red", "color": "red"}, 400, "color"},
			{"range", "ivr_menus", map[string]any{"name": "M", "number": "701", "greeting_long_prompt_id": fx.promptID, "timeout_ms": 10}, 400, "timeout_ms"},
			{"map too many keys", "contacts", map[string]any{"first_name": "Eve", "custom": custom}, 400, "custom"},
			{"map nested value", "contacts", map[string]any{"first_name": "Eve", "custom": map[string]any{"a": map[string]any{}}}, 400, "custom"},
			{"required by kind", "special_endpoints", map[string]any{"name": "Mobile", "number": "9000", "kind": "external"}, 400, "external_number"},
			{"required rule", "ivr_menus", map[string]any{"name": "M", "number": "702"}, 400, "greeting_long_prompt_id"},
			{"unknown prompt", "queues", map[string]any{"name": "Q", "number": "502", "greeting_prompt_id": 999999999}, 400, "greeting_prompt_id"},
			{"no contact name", "contacts", map[string]any{"title": "CEO"}, 400, "first_name"},
			{"money pattern", "deals", map[string]any{"name": "D", "amount": "12.345678"}, 400, "amount"},
			{"lost needs reason", "deals", map[string]any{"name": "D", "stage": "lost"}, 400, "lost_reason"},
			{"archived channel", "incoming_webhooks", map[string]any{"channel": "old", "name": "bot"}, 400, "channel"},
			{"missing channel", "incoming_webhooks", map[string]any{"channel": "nope", "name": "bot"}, 400, "channel"},
			{"duplicate IVR digits", "ivr_menus", map[string]any{"name": "M", "number": "703", "greeting_long_prompt_id": fx.promptID,
				"options": []any{map[string]any{"digits": "1", "destination": map[string]any{"type": "hangup"}}, map[string]any{"digits": "1", "destination": map[string]any{"type": "hangup"}}}}, 400, "options"},
			{"bad MAC", "devices", map[string]any{"mac_address": "00:15:65:AA:BB", "vendor": "snom"}, 400, "mac_address"},
			{"moh rate", "music_on_hold", map[string]any{"name": "odd", "rate": 11025}, 400, "rate"},
			{"widget destination type", "click_to_call_widgets", map[string]any{"name": "W", "destination": map[string]any{"type": "hangup"}, "allowed_origins": []any{"https://a.example"}}, 400, "destination"},
			{"webhook event", "outbound_webhooks", map[string]any{"name": "w", "url": "https://h.example.com", "events": []any{"server.down"}}, 400, "events"},
			{"webhook url userinfo", "outbound_webhooks", map[string]any{"name": "w", "url": "https://u:p@h.example.com", "events": []any{"call.ended"}}, 400, "url"},
			{"number plan clash", "queues", map[string]any{"name": "Q", "number": "1001"}, 409, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := s.Do(t, "POST", base+tc.res+"/", s.Key, tc.body)
				if r.Status != tc.status {
					t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
				}
				if tc.field == "" {
					return
				}
				if r.Code(t) != "validation_failed" {
					t.Errorf("code %q", r.Code(t))
				}
				if fields, _ := r.Map(t)["fields"].(map[string]any); fields[tc.field] == nil {
					t.Errorf("fields does not name %s: %s", tc.field, r.Body)
				}
			})
		}
	})
}
