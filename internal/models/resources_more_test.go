package models_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestGuideSectionsAreDeclared lists every configuration section of
// resources.md by its path name: a section without a declaration has no
// routes, validation or schema.
func TestGuideSectionsAreDeclared(t *testing.T) {
	sections := []struct {
		section, name string
		scope         models.Scope
	}{
		{"1.1", "tenants", models.Platform}, {"1.2", "enterprises", models.Platform},
		{"1.3", "administrators", models.Platform}, {"1.4", "resellers", models.Platform},
		{"1.5", "servers", models.Platform}, {"1.6", "locations", models.Platform},
		{"1.7", "dids", models.Platform}, {"1.8", "sip_trunks", models.Platform},
		{"1.9", "key", models.Platform}, {"1.10", "webhooks", models.Platform},
		{"1.11", "system_webhooks", models.Platform},
		{"2.1", "extensions", models.TenantScope}, {"2.2", "agents", models.TenantScope},
		{"2.3", "queues", models.TenantScope}, {"2.4", "hunt_groups", models.TenantScope},
		{"2.5", "pickup_groups", models.TenantScope}, {"2.6", "inbound_routes", models.TenantScope},
		{"2.7", "outbound_routes", models.TenantScope}, {"2.8", "routing_conditions", models.TenantScope},
		{"2.9", "ivr_menus", models.TenantScope}, {"2.10", "schedules", models.TenantScope},
		{"2.11", "feature_extensions", models.TenantScope}, {"2.12", "office_mode", models.TenantScope},
		{"2.13", "special_endpoints", models.TenantScope}, {"2.14", "special_mailboxes", models.TenantScope},
		{"2.15", "conference_rooms", models.TenantScope}, {"2.16", "company_directory", models.TenantScope},
		{"2.16", "company_directory_settings", models.TenantScope}, {"2.17", "devices", models.TenantScope},
		{"2.18", "departments", models.TenantScope}, {"2.19", "emergency_locations", models.TenantScope},
		{"2.20", "tags", models.TenantScope}, {"2.21", "click_to_call_widgets", models.TenantScope},
		{"2.22", "voice_prompts", models.TenantScope}, {"2.23", "music_on_hold", models.TenantScope},
		{"3.1", "chat_channels", models.TenantScope}, {"3.2", "branding", models.TenantScope},
		{"3.3", "messaging_channels", models.TenantScope}, {"3.4", "incoming_webhooks", models.TenantScope},
		{"3.5", "outbound_webhooks", models.TenantScope},
		{"4.1", "contacts", models.TenantScope}, {"4.2", "accounts", models.TenantScope},
		{"4.3", "leads", models.TenantScope}, {"4.4", "lists", models.TenantScope},
		{"4.5", "custom_fields", models.TenantScope}, {"4.6", "activities", models.TenantScope},
		{"4.7", "tasks", models.TenantScope}, {"4.8", "campaigns", models.TenantScope},
		{"4.9", "deals", models.TenantScope},
	}
	reg, err := models.NewRegistry(models.Resources)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sections {
		r := reg.Resource(s.name)
		switch {
		case r == nil:
			t.Errorf("§%s %s is not declared", s.section, s.name)
		case r.Scope != s.scope:
			t.Errorf("§%s %s has scope %v, want %v", s.section, s.name, r.Scope, s.scope)
		}
	}
	clones := map[string]string{
		"ivr_menus": "tenant_menus", "queues": "tenant_queues", "hunt_groups": "tenant_queues",
		"voice_prompts": "tenant_voiceprompts", "music_on_hold": "tenant_voiceprompts",
	}
	for name, flag := range clones {
		if r := reg.Resource(name); r != nil && r.CloneFlag != flag {
			t.Errorf("%s: clone flag %q, want %q", name, r.CloneFlag, flag)
		}
	}
}

func decode(t *testing.T, js string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestValidateMap(t *testing.T) {
	res := &models.Resource{Name: "m", Table: "m", Fields: []*models.Field{
		{Name: "custom", Type: models.Map, MaxItems: 3, MaxLen: 8, NoExpand: true},
	}}
	if _, err := models.NewRegistry([]*models.Resource{res}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, input string
		want        map[string]any // nil: refused
		msg         string
	}{
		{"flat values", `{"custom":{"a":"x","b":2,"c":true}}`, map[string]any{"a": "x", "b": int64(2), "c": true}, ""},
		{"fraction", `{"custom":{"score":2.5}}`, map[string]any{"score": 2.5}, ""},
		{"empty", `{"custom":{}}`, map[string]any{}, ""},
		{"too many keys", `{"custom":{"a":1,"b":2,"c":3,"d":4}}`, nil, "at most 3 keys"},
		{"nested object", `{"custom":{"a":{"b":1}}}`, nil, "must be a string, number or boolean"},
		{"array value", `{"custom":{"a":[1]}}`, nil, "must be a string, number or boolean"},
		{"null value", `{"custom":{"a":null}}`, nil, "must be a string, number or boolean"},
		{"bad key", `{"custom":{"a b":1}}`, nil, "must be 1-64 letters, digits or . _ -"},
		{"long value", `{"custom":{"a":"123456789"}}`, nil, "at most 8 characters"},
		{"variable syntax", `{"custom":{"a":"${x}"}}`, nil, "${"},
		{"not an object", `{"custom":[1]}`, nil, "must be an object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := models.Validate(res, decode(t, tc.input), models.Create)
			if tc.want == nil {
				var verr *models.ValidationError
				if !errors.As(err, &verr) || !strings.Contains(verr.Fields["custom"], tc.msg) {
					t.Fatalf("got %v, want a custom error containing %q", err, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(rec["custom"])
			want, _ := json.Marshal(tc.want)
			if !bytes.Equal(got, want) {
				t.Errorf("custom = %s, want %s", got, want)
			}
		})
	}
}

// newTenant creates a tenant through the store (with its hooks) and returns its owner.
func newTenant(t *testing.T, st *models.Store) models.Owner {
	t.Helper()
	ctx := t.Context()
	name := storetest.Name("more")
	if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": name}); err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	o, err := st.Tenant(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func mustCreate(t *testing.T, st *models.Store, res string, o models.Owner, js string) models.Record {
	t.Helper()
	rec, err := st.Create(t.Context(), st.Registry().Resource(res), o, decode(t, js))
	if err != nil {
		t.Fatalf("create %s %s: %v", res, js, err)
	}
	return rec
}

func TestDepartmentTreeAndTenantDelete(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		o := newTenant(t, st)
		depts := st.Registry().Resource("departments")
		root := mustCreate(t, st, "departments", o, `{"name":"Sales"}`)
		child := mustCreate(t, st, "departments", o, `{"name":"Inside sales","parent_id":`+jsonID(root)+`}`)
		grandchild := mustCreate(t, st, "departments", o, `{"name":"Renewals","parent_id":`+jsonID(child)+`}`)

		_, err := st.Update(ctx, depts, o, jsonID(root), decode(t, `{"parent_id":`+jsonID(grandchild)+`}`))
		var verr *models.ValidationError
		if !errors.As(err, &verr) || !strings.Contains(verr.Fields["parent_id"], "cycle") {
			t.Fatalf("making the root a child of its grandchild: got %v, want a cycle error", err)
		}
		if _, err := st.Update(ctx, depts, o, jsonID(root), decode(t, `{"parent_id":`+jsonID(root)+`}`)); err == nil {
			t.Fatal("a department may not be its own parent")
		}
		if err := st.Delete(ctx, depts, o, jsonID(root)); !errors.Is(err, models.ErrReferenced) && !errors.Is(err, models.ErrConflict) {
			t.Fatalf("deleting a parent with children: got %v, want a still-referenced error", err)
		}
		mustCreate(t, st, "accounts", o, `{"name":"Acme"}`)

		// The parent row has the lowest id, so a plain DELETE meets it first.
		if err := st.Delete(ctx, st.Registry().Resource("tenants"), models.Owner{}, o.Tenant); err != nil {
			t.Fatalf("delete tenant with a department tree: %v", err)
		}
		var n int
		if err := st.Querier().GetContext(ctx, &n, "SELECT COUNT(*) FROM departments WHERE tenant_id = ?", o.TenantID); err != nil || n != 0 {
			t.Fatalf("departments left after tenant delete: %d (%v)", n, err)
		}
	})
}

func jsonID(rec models.Record) string {
	b, _ := json.Marshal(rec["id"])
	return string(b)
}

func TestNewTenantGetsSingletons(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		o := newTenant(t, st)
		dir, err := st.Get(t.Context(), st.Registry().Resource("company_directory_settings"), o, "")
		if err != nil {
			t.Fatal(err)
		}
		if dir["search_by"] != "last_name" || dir["min_search_digits"] != int64(3) || dir["announce_extension"] != true {
			t.Errorf("directory settings defaults: %v", dir)
		}
		if _, err := st.Get(t.Context(), st.Registry().Resource("branding"), o, ""); err != nil {
			t.Errorf("branding: %v", err)
		}
	})
}

// TestMapSecretIsSealed: write-only Map values (webhook headers) are shown
// once on create, never on read, and reach the renderer in clear.
func TestMapSecretIsSealed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		o := newTenant(t, st)
		res := st.Registry().Resource("outbound_webhooks")
		rec := mustCreate(t, st, "outbound_webhooks", o,
			`{"name":"crm","url":"https://hooks.example.com/in","events":["call.ended"],"headers":{"Authorization":"Bearer s3cret"}}`)
		if h, _ := rec["headers"].(map[string]any); h["Authorization"] != "Bearer s3cret" {
			t.Errorf("create answer headers %v", rec["headers"])
		}
		if s, _ := rec["secret"].(string); len(s) != 32 {
			t.Errorf("generated signing secret %q", s)
		}
		got, err := st.Get(ctx, res, o, jsonID(rec))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got["headers"]; ok {
			t.Errorf("GET shows write-only headers: %v", got)
		}
		var raw string
		if err := st.Querier().GetContext(ctx, &raw, "SELECT headers FROM outbound_webhooks WHERE id = ?", rec["id"]); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(raw, "s3cret") {
			t.Errorf("headers stored in clear: %s", raw)
		}
		recs, err := st.Records(ctx, res, o, nil)
		if err != nil || len(recs) != 1 {
			t.Fatalf("records: %v %v", recs, err)
		}
		if h, _ := recs[0]["headers"].(string); !strings.Contains(h, `"Bearer s3cret"`) {
			t.Errorf("renderer sees headers %v", recs[0]["headers"])
		}
	})
}

// TestCloneQueuesAndPrompts: prompts are copied before the queues that
// use them, so references point at the copies; hunt groups keep only
// their external members.
func TestCloneQueuesAndPrompts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		src := newTenant(t, st)
		prompt := mustCreate(t, st, "voice_prompts", src, `{"name":"Hello"}`)
		mustCreate(t, st, "queues", src, `{"name":"Support","number":"500","greeting_prompt_id":`+jsonID(prompt)+`}`)
		mustCreate(t, st, "extensions", src, `{"name":"1001"}`)
		mustCreate(t, st, "hunt_groups", src, `{"name":"Sales","number":"600","members":[{"type":"extension","target":"1001"},{"type":"external","target":"+27825550001"}]}`)

		name := storetest.Name("copy")
		if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{
			"tenant": name, "tenant_to_clone": src.Tenant, "tenant_queues": "1", "tenant_voiceprompts": "1",
		}); err != nil {
			t.Fatalf("clone: %v", err)
		}
		dst, err := st.Tenant(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		prompts, _, err := st.List(ctx, st.Registry().Resource("voice_prompts"), dst, models.Page{Limit: 10})
		if err != nil || len(prompts) != 1 {
			t.Fatalf("copied prompts %v (%v)", prompts, err)
		}
		queues, _, err := st.List(ctx, st.Registry().Resource("queues"), dst, models.Page{Limit: 10})
		if err != nil || len(queues) != 1 {
			t.Fatalf("copied queues %v (%v)", queues, err)
		}
		if queues[0]["greeting_prompt_id"] != prompts[0]["id"] || prompts[0]["id"] == prompt["id"] {
			t.Errorf("queue greeting %v, want the copied prompt %v", queues[0]["greeting_prompt_id"], prompts[0]["id"])
		}
		groups, _, err := st.List(ctx, st.Registry().Resource("hunt_groups"), dst, models.Page{Limit: 10})
		if err != nil || len(groups) != 1 {
			t.Fatalf("copied hunt groups %v (%v)", groups, err)
		}
		members, _ := json.Marshal(groups[0]["members"])
		if strings.Contains(string(members), "1001") || !strings.Contains(string(members), "+27825550001") {
			t.Errorf("copied members %s, want only the external one", members)
		}
	})
}
