package fsxml

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// registryWith returns the registry with one declaration changed by edit
// (on copies: the shared declarations are not touched).
func registryWith(t *testing.T, resource string, edit func(r *models.Resource)) *models.Registry {
	t.Helper()
	var list []*models.Resource
	for _, r := range models.Resources {
		if r.Name == resource {
			c := *r
			c.Fields = make([]*models.Field, len(r.Fields))
			for i, f := range r.Fields {
				fc := *f
				c.Fields[i] = &fc
			}
			edit(&c)
			r = &c
		}
		list = append(list, r)
	}
	reg, err := models.NewRegistry(list)
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	return reg
}

func field(r *models.Resource, name string) *models.Field {
	for _, f := range r.Fields {
		if f.Name == name {
			return f
		}
	}
	panic("no field " + name)
}

// TestRendererContract: every field the renderer's types read is declared
// in the registry with a fitting type; renaming, removing or retyping one
// (including a member of an object list) is caught when the loader is
// built, naming the field.
func TestRendererContract(t *testing.T) {
	reg, err := models.NewRegistry(models.Resources)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newTables(reg, nil); err != nil {
		t.Fatalf("the renderer does not fit today's registry: %v", err)
	}
	for _, tc := range []struct {
		name, resource string
		edit           func(r *models.Resource)
		want           string
	}{
		{"renamed field", "extensions", func(r *models.Resource) { field(r, "sip_secret").Name = "sip_password" }, `"sip_secret"`},
		{"removed field", "tenants", func(r *models.Resource) {
			r.Fields = slicesDelete(r.Fields, "emergency_numbers")
		}, `"emergency_numbers"`},
		{"retyped field", "dids", func(r *models.Resource) { field(r, "enabled").Type = models.String }, `"enabled"`},
		{"renamed member", "outbound_routes", renameMember("patterns", "strip_digits", "strip"), `"strip_digits"`},
		{"renamed hunt member", "hunt_groups", renameMember("members", "timeout_seconds", "timeout"), `"timeout_seconds"`},
		{"hashed secret", "sip_trunks", func(r *models.Resource) { field(r, "password").Secret = models.Hashed }, `"password"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newTables(registryWith(t, tc.resource, tc.edit), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.resource) {
				t.Fatalf("want an error naming %s %s, got %v", tc.resource, tc.want, err)
			}
		})
	}
}

// renameMember renames one member of an object-list field, on copies of
// the members so the shared registry declaration is untouched.
func renameMember(list, member, to string) func(r *models.Resource) {
	return func(r *models.Resource) {
		f := field(r, list)
		props := make([]*models.Field, len(f.Props))
		for i, p := range f.Props {
			pc := *p
			props[i] = &pc
		}
		field(&models.Resource{Fields: props}, member).Name = to
		f.Props = props
	}
}

func slicesDelete(fs []*models.Field, name string) []*models.Field {
	var out []*models.Field
	for _, f := range fs {
		if f.Name != name {
			out = append(out, f)
		}
	}
	return out
}

// TestTypedLoadMatchesRecords: the typed loader reads exactly what the
// generic record reader (with secrets opened) gives, field for field, for
// objects with every rendered field set, on both dialects.
func TestTypedLoadMatchesRecords(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		reg := st.Registry()
		tables, err := newTables(reg, st.Sealer())
		if err != nil {
			t.Fatal(err)
		}
		defer tables.close()
		create := func(res string, o models.Owner, in string) models.Record {
			t.Helper()
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(in))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				t.Fatal(err)
			}
			rec, err := st.Create(ctx, reg.Resource(res), o, m)
			if err != nil {
				t.Fatalf("create %s: %v", res, err)
			}
			return rec
		}
		tenant := storetest.Name("typed")
		create("tenants", models.Owner{}, `{"tenant":"`+tenant+`","callerid":"+27110000000","emergency_callerid":"+27110000999",
			"outbound_callerid_name":"Acme","timezone":"Africa/Johannesburg","language":"en","emergency_numbers":["112","10111"],
			"max_concurrent_calls":7,"recording_policy":"none"}`)
		o, err := st.Tenant(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		loc := create("emergency_locations", o, `{"name":"HQ","address_line1":"1 Main","country":"ZA","emergency_callerid":"+27115550999","is_default":true}`)
		create("extensions", o, `{"name":"1000","first_name":"Ann","last_name":"Lee","email":"ann@example.com","mobile":"+27825550001",
			"sip_secret":"Secret-1000-abcdef","voicemail_pin":"123456","voicemail_email":"vm@example.com","ring_seconds":25,
			"forward_busy":{"enabled":true,"destination":"0825550123"},"dnd":true,"max_registrations":3,"call_permission":"national",
			"outbound_callerid":"+27215550000","emergency_location_id":`+jsonNum(loc["id"])+`,"language":"en","timezone":"UTC","accountcode":"acc-1"}`)
		sched := create("schedules", o, `{"name":"hours","timezone":"UTC","open_periods":[{"days":["mon","tue"],"start":"08:00","end":"17:00"}],
			"holidays":[{"name":"NY","date":"2027-01-01","yearly":true,"all_day":true}]}`)
		create("routing_conditions", o, `{"name":"c","number":"700","kind":"schedule","schedule_id":`+jsonNum(sched["id"])+`,
			"match_destination":{"type":"extension","target":"1000"},"nomatch_destination":{"type":"hangup","target":""}}`)
		create("sip_trunks", models.Owner{}, `{"name":"`+strings.ToLower(tenant)+`","host":"carrier.example","password":"trunk-pass","tenants":["`+tenant+`"],"codecs":["PCMA"]}`)
		create("outbound_routes", o, `{"name":"n","priority":5,"trunks":["`+strings.ToLower(tenant)+`"],"callerid_policy":"tenant",
			"patterns":[{"match":"0XXXXXXXXX","strip_digits":1,"prepend":"+27"}],"max_duration_seconds":3600}`)
		did := fmt.Sprintf("+2786%07d", rand.IntN(10000000))
		create("dids", models.Owner{}, `{"number":"`+did+`","tenant":"`+tenant+`","caller_id_name":"Main"}`)
		create("inbound_routes", o, `{"name":"main","did":"`+did+`","destination":{"type":"extension","target":"1000"},
			"night_destination":{"type":"voicemail","target":"1000"},"callerid_name_prefix":"Acme"}`)

		db := st.Querier()
		compare := func(res string, o models.Owner, where map[string]any, got any) {
			t.Helper()
			recs, err := st.Records(ctx, reg.Resource(res), o, where)
			if err != nil {
				t.Fatal(err)
			}
			var want []map[string]any
			roundTrip(t, recs, &want)
			var have []map[string]any
			roundTrip(t, got, &have)
			if len(want) == 0 || len(have) != len(want) {
				t.Fatalf("%s: %d typed rows, %d records", res, len(have), len(want))
			}
			for i := range have {
				for k, v := range have[i] {
					if !same(v, want[i][k]) {
						t.Errorf("%s[%d].%s: typed %#v, record %#v", res, i, k, v, want[i][k])
					}
				}
			}
		}
		byT := "tenant_id = ?"
		ts, _, err := tables.tenants.query(ctx, db, "tenant = ?", tenant)
		if err != nil || len(ts) != 1 || ts[0].ID != o.TenantID {
			t.Fatalf("tenant row %+v %v", ts, err)
		}
		compare("tenants", models.Owner{}, map[string]any{"tenant": tenant}, []dialplan.Tenant{ts[0].Tenant})
		check := func(res string, q func() (any, error)) {
			t.Helper()
			v, err := q()
			if err != nil {
				t.Fatalf("%s: %v", res, err)
			}
			compare(res, o, nil, v)
		}
		check("extensions", func() (any, error) { v, _, err := tables.extensions.query(ctx, db, byT, o.TenantID); return v, err })
		check("schedules", func() (any, error) { v, _, err := tables.schedules.query(ctx, db, byT, o.TenantID); return v, err })
		check("routing_conditions", func() (any, error) { v, _, err := tables.conditions.query(ctx, db, byT, o.TenantID); return v, err })
		check("outbound_routes", func() (any, error) { v, _, err := tables.outbound.query(ctx, db, byT, o.TenantID); return v, err })
		check("inbound_routes", func() (any, error) { v, _, err := tables.inbound.query(ctx, db, byT, o.TenantID); return v, err })
		check("feature_extensions", func() (any, error) { v, _, err := tables.features.query(ctx, db, byT, o.TenantID); return v, err })
		check("emergency_locations", func() (any, error) { v, _, err := tables.emergency.query(ctx, db, byT, o.TenantID); return v, err })
		check("office_mode", func() (any, error) { v, _, err := tables.officeMode.query(ctx, db, byT, o.TenantID); return v, err })
		trunks, _, err := tables.trunks.query(ctx, db, "name = ?", strings.ToLower(tenant))
		if err != nil || len(trunks) != 1 || trunks[0].Password != "trunk-pass" {
			t.Fatalf("trunk %+v %v (the sealed password must be opened)", trunks, err)
		}
		compare("sip_trunks", models.Owner{}, map[string]any{"name": strings.ToLower(tenant)}, trunks)
		dids, _, err := tables.dids.query(ctx, db, "number = ?", did)
		if err != nil {
			t.Fatal(err)
		}
		compare("dids", models.Owner{}, map[string]any{"number": did}, dids)
		exts, _, _ := tables.extensions.query(ctx, db, byT, o.TenantID)
		if exts[0].SIPSecret != "Secret-1000-abcdef" || exts[0].VoicemailPIN != "123456" || !exts[0].ForwardBusy.Enabled || !exts[0].DND {
			t.Errorf("extension read %+v", exts[0])
		}
	})
}

func jsonNum(v any) string { b, _ := json.Marshal(v); return string(b) }

func roundTrip(t *testing.T, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// same compares a typed value with a record's (both through JSON): an
// absent or null record value reads as the zero value.
func same(v, w any) bool {
	if v == nil || w == nil {
		return zeroish(v) && zeroish(w)
	}
	switch x := v.(type) {
	case map[string]any:
		y, ok := w.(map[string]any)
		if !ok {
			return false
		}
		for k, e := range x {
			if !same(e, y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := w.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(v, w)
}

func zeroish(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !zeroish(e) {
				return false
			}
		}
		return true
	}
	return false
}
