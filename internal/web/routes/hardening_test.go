package routes_test

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// Seen item 8: reserved context names were accepted as tenant names
// (_platform shared the platform's cache generation key).
func TestReservedTenantNamesRefused(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		for _, name := range []string{"public", "default", "features", "_platform", "_x1", "Public", "DEFAULT"} {
			r := s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": name}).Expect(t, 400)
			if f, _ := r.Map(t)["fields"].(map[string]any); f["tenant"] == nil {
				t.Errorf("%s: no tenant field error: %s", name, r.Body)
			}
			s.Do(t, "GET", "/api/tenants/"+name, s.Key, nil).Expect(t, 404)
		}
		// Names that merely start like a reserved one are fine.
		s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": storetest.Name("public")}).Expect(t, 201)
	})
}

// Seen item 8: SQLite 409 answers carried driver text ("UNIQUE
// constraint failed: tenants.tenant (2067").
func TestConflictAnswerHasNoDriverText(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "dup")
		r := s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": tenant}).Expect(t, 409)
		body := string(r.Body)
		for _, leak := range []string{"UNIQUE", "constraint", "2067", "tenants.", "Duplicate", "entry", "("} {
			if strings.Contains(body, leak) {
				t.Errorf("409 body carries driver text %q: %s", leak, body)
			}
		}
		// The message names the clashing object in the API's words
		// (TestDuplicateNamesAPIFields covers more resources).
		if msg, _ := r.Map(t)["error"].(string); msg != "a tenant named "+tenant+" already exists" {
			t.Errorf("409 message %q, want it to name the clashing key", msg)
		}
	})
}

// Seen item 8: invalid UTF-8 was stored as U+FFFD instead of refused.
func TestInvalidUTF8Refused(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "utf")
		base := "/api/tenants/" + tenant + "/extensions/"
		for name, body := range map[string]string{
			"raw invalid byte":    "{\"name\":\"1001\",\"first_name\":\"Ev\xffe\"}",
			"truncated sequence":  "{\"name\":\"1001\",\"first_name\":\"Ev\xc3\"}",
			"lone high surrogate": `{"name":"1001","first_name":"Ev\ud800e"}`,
			"lone low surrogate":  `{"name":"1001","first_name":"Ev\uDC00e"}`,
			"reversed surrogates": `{"name":"1001","first_name":"\udc00\ud800"}`,
		} {
			r := s.Do(t, "POST", base, s.Key, body)
			if r.Status != 400 || r.Code(t) != "invalid_utf8" {
				t.Errorf("%s: status %d %s, want 400 invalid_utf8", name, r.Status, r.Body)
			}
		}
		s.Do(t, "GET", base+"1001", s.Key, nil).Expect(t, 404)
		if r := s.Do(t, "POST", "/api/telephony/hangup", s.Key, "{\"channel\":\"SIP/\xff\"}"); r.Status != 400 || r.Code(t) != "invalid_utf8" {
			t.Errorf("action: status %d %s", r.Status, r.Body)
		}
		// Real characters, escaped pairs and an escaped backslash before "u" are fine.
		got := s.Do(t, "POST", base, s.Key, `{"name":"1002","first_name":"Zoë \ud83d\ude00","last_name":"a\\ud800"}`).Expect(t, 201).Map(t)
		if got["first_name"] != "Zoë 😀" || got["last_name"] != `a\ud800` {
			t.Errorf("stored %q %q", got["first_name"], got["last_name"])
		}
	})
}
