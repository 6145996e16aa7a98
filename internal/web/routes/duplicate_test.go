package routes_test

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// A duplicate create or rename answers in the API's words: which object
// exists already, by the fields of the resource's declared unique key and
// their values, with those fields in "fields" — never a table's columns
// (tenant_id), index names or driver text (issue 26: "already exists:
// tenant_id, name").
func TestDuplicateNamesAPIFields(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "dupe")
		base := "/api/tenants/" + tenant
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1002"}).Expect(t, 201)
		s.Do(t, "POST", base+"/queues/", s.Key, map[string]any{"name": "support", "number": "601"}).Expect(t, 201)
		field := map[string]any{"entity": "contact", "field_key": "tier", "label": "Tier", "type": "string"}
		s.Do(t, "POST", base+"/custom_fields/", s.Key, field).Expect(t, 201)

		for _, c := range []struct {
			what, method, path string
			body               map[string]any
			msg                string
			fields             []string
		}{
			{"tenant", "POST", "/api/tenants/", map[string]any{"tenant": tenant}, "a tenant named " + tenant + " already exists", []string{"tenant"}},
			{"extension", "POST", base + "/extensions/", map[string]any{"name": "1001"}, "an extension named 1001 already exists", []string{"name"}},
			{"extension renamed", "PUT", base + "/extensions/1002", map[string]any{"name": "1001"}, "an extension named 1001 already exists", []string{"name"}},
			{"queue", "POST", base + "/queues/", map[string]any{"name": "support", "number": "602"}, "a queue named support already exists", []string{"name"}},
			{"custom field", "POST", base + "/custom_fields/", field, "a custom field with entity contact and field_key tier already exists", []string{"entity", "field_key"}},
		} {
			r := s.Do(t, c.method, c.path, s.Key, c.body).Expect(t, 409)
			var got struct {
				Error, Code string
				Fields      map[string]string
			}
			r.JSON(t, &got)
			if got.Error != c.msg || got.Code != "conflict" {
				t.Errorf("%s: %q (%s), want %q (conflict)", c.what, got.Error, got.Code, c.msg)
			}
			if strings.Contains(string(r.Body), "tenant_id") || strings.Contains(string(r.Body), "uq_") {
				t.Errorf("%s: the answer names a column or index: %s", c.what, r.Body)
			}
			if len(got.Fields) != len(c.fields) {
				t.Errorf("%s: fields %v, want %v", c.what, got.Fields, c.fields)
			}
			for _, f := range c.fields {
				if got.Fields[f] == "" {
					t.Errorf("%s: fields %v lack %s", c.what, got.Fields, f)
				}
			}
		}
	})
}
