package routes_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// crmNames lists the display names of a page of contacts, in order.
func crmNames(t *testing.T, s *apptest.Server, path string) ([]string, string) {
	t.Helper()
	r := s.Do(t, "GET", path, s.Key, nil).Expect(t, 200)
	var list []map[string]any
	r.JSON(t, &list)
	var out []string
	for _, c := range list {
		out = append(out, strings.TrimSpace(fmt.Sprint(c["first_name"], " ", c["last_name"])))
	}
	return out, r.Header.Get("X-Total-Count")
}

// TestCRMListSearchFilterSort: q, filters and sort declared on the
// contacts resource, with paging and X-Total-Count of the filtered list,
// in one tenant only; bad parameters are 400s naming them.
func TestCRMListSearchFilterSort(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant, other := s.Tenant(t, "crml"), s.Tenant(t, "crmo")
		base, otherBase := "/api/tenants/"+tenant, "/api/tenants/"+other
		for _, ext := range []string{"1000", "1001"} {
			s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": ext, "first_name": "E" + ext}).Expect(t, 201)
		}
		add := func(base string, c map[string]any) {
			s.Do(t, "POST", base+"/contacts/", s.Key, c).Expect(t, 201)
		}
		add(base, map[string]any{"first_name": "Ann", "last_name": "Smith", "owner": "1000", "tags": []string{"vip"}})
		add(base, map[string]any{"first_name": "Bob", "last_name": "Smithers", "owner": "1001", "tags": []string{"vip", "gold"}})
		add(base, map[string]any{"first_name": "Carla", "last_name": "Jones", "company_name": "Acme",
			"phones": []map[string]any{{"label": "work", "number": "+27215550123"}}})
		add(base, map[string]any{"first_name": "Dan", "last_name": "Brown", "owner": "1000",
			"emails": []map[string]any{{"label": "work", "address": "dan@example.com"}}})
		add(otherBase, map[string]any{"first_name": "Ann", "last_name": "Smithson", "tags": []string{"vip"}})

		list := base + "/contacts/?"
		for _, tc := range []struct {
			query string
			want  string
			total string
		}{
			{"sort=last_name", "Dan Brown,Carla Jones,Ann Smith,Bob Smithers", "4"},
			{"sort=-last_name", "Bob Smithers,Ann Smith,Carla Jones,Dan Brown", "4"},
			{"q=smith&sort=last_name", "Ann Smith,Bob Smithers", "2"}, // not the other tenant's Smithson
			{"q=SMITH&sort=-first_name", "Bob Smithers,Ann Smith", "2"},
			{"q=" + url.QueryEscape("+2721555"), "Carla Jones", "1"},
			{"q=acme", "Carla Jones", "1"},
			{"q=dan%40example", "Dan Brown", "1"},
			{"q=" + url.QueryEscape("50%"), "", "0"}, // % is literal, not a wildcard
			{"owner=1000&sort=first_name", "Ann Smith,Dan Brown", "2"},
			{"tags=vip&sort=first_name", "Ann Smith,Bob Smithers", "2"},
			{"tags=gold", "Bob Smithers", "1"},
			{"tags=vi", "", "0"}, // a whole tag, not a substring of one
			{"owner=1000&tags=vip", "Ann Smith", "1"},
			{"sort=last_name&limit=2&offset=1", "Carla Jones,Ann Smith", "4"},
			{"q=smith&sort=last_name&limit=1&offset=1", "Bob Smithers", "2"},
			{"updated_since=2000-01-01T00:00:00Z&sort=first_name&limit=1", "Ann Smith", "4"},
			{"updated_since=2999-01-01T00:00:00Z", "", "0"},
		} {
			got, total := crmNames(t, s, list+tc.query)
			if strings.Join(got, ",") != tc.want || total != tc.total {
				t.Errorf("?%s: %v (X-Total-Count %s), want %s (%s)", tc.query, got, total, tc.want, tc.total)
			}
		}
		// The other tenant sees only its own.
		if got, total := crmNames(t, s, otherBase+"/contacts/?q=smith"); strings.Join(got, ",") != "Ann Smithson" || total != "1" {
			t.Errorf("other tenant: %v (%s)", got, total)
		}
		// Link carries the search to the next page.
		r := s.Do(t, "GET", list+"q=smith&limit=1", s.Key, nil).Expect(t, 200)
		if link := r.Header.Get("Link"); !strings.Contains(link, "q=smith") || !strings.Contains(link, "offset=1") {
			t.Errorf("Link %q", link)
		}
		for _, tc := range []struct{ query, field string }{
			{"colour=red", "colour"},
			{"sort=phones", "sort"},
			{"owner=abc", "owner"},
			{"account_id=x", "account_id"},
			{"updated_since=yesterday", "updated_since"},
		} {
			r := s.Do(t, "GET", list+tc.query, s.Key, nil)
			fieldError(t, r, tc.field, "")
			if r.Code(t) == "" {
				t.Errorf("?%s: no error code in %s", tc.query, r.Body)
			}
		}
		// Other resources are declared the same way: deals by stage, leads by score.
		s.Do(t, "POST", base+"/deals/", s.Key, map[string]any{"name": "Big", "stage": "won", "probability": 90}).Expect(t, 201)
		s.Do(t, "POST", base+"/deals/", s.Key, map[string]any{"name": "Small", "stage": "proposal", "probability": 20}).Expect(t, 201)
		var deals []map[string]any
		s.Do(t, "GET", base+"/deals/?stage=won", s.Key, nil).Expect(t, 200).JSON(t, &deals)
		if len(deals) != 1 || deals[0]["name"] != "Big" {
			t.Errorf("deals?stage=won: %v", deals)
		}
		s.Do(t, "GET", base+"/deals/?sort=probability", s.Key, nil).Expect(t, 200).JSON(t, &deals)
		if len(deals) != 2 || deals[0]["name"] != "Small" {
			t.Errorf("deals?sort=probability: %v", deals)
		}
		fieldError(t, s.Do(t, "GET", base+"/deals/?stage=maybe", s.Key, nil), "stage", "one of")
	})
}

// TestCRMCustomFieldsValidated: custom values obey the tenant's custom
// field definitions for the object's entity: unknown keys, wrong types,
// values outside the options and missing required ones are 400s naming
// the key, and nothing is stored; defaults fill new objects.
func TestCRMCustomFieldsValidated(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		base := "/api/tenants/" + s.Tenant(t, "crmc")
		def := func(m map[string]any) *apptest.Response {
			return s.Do(t, "POST", base+"/custom_fields/", s.Key, m)
		}
		def(map[string]any{"entity": "contact", "field_key": "tier", "label": "Tier", "type": "select", "options": []string{"gold", "silver"}, "required": true}).Expect(t, 201)
		def(map[string]any{"entity": "contact", "field_key": "seats", "label": "Seats", "type": "number"}).Expect(t, 201)
		def(map[string]any{"entity": "contact", "field_key": "renewal", "label": "Renewal", "type": "date"}).Expect(t, 201)
		def(map[string]any{"entity": "contact", "field_key": "active", "label": "Active", "type": "boolean"}).Expect(t, 201)
		def(map[string]any{"entity": "contact", "field_key": "topics", "label": "Topics", "type": "multi_select", "options": []string{"voice", "sms"}}).Expect(t, 201)
		def(map[string]any{"entity": "contact", "field_key": "region", "label": "Region", "type": "string", "default_value": "emea"}).Expect(t, 201)
		fieldError(t, def(map[string]any{"entity": "deal", "field_key": "size", "label": "Size", "type": "number", "default_value": "big"}), "default_value", "number")
		fieldError(t, def(map[string]any{"entity": "deal", "field_key": "lvl", "label": "Level", "type": "select", "options": []string{"a"}, "default_value": "b"}), "default_value", "one of a")

		c := s.Do(t, "POST", base+"/contacts/", s.Key, map[string]any{"first_name": "Ann",
			"custom": map[string]any{"tier": "gold", "seats": 12, "renewal": "2027-03-01", "active": true, "topics": []string{"voice"}}}).Expect(t, 201).Map(t)
		custom, _ := c["custom"].(map[string]any)
		if custom["tier"] != "gold" || fmt.Sprint(custom["seats"]) != "12" || custom["region"] != "emea" || fmt.Sprint(custom["topics"]) != "[voice]" {
			t.Fatalf("custom %v", custom)
		}
		for _, tc := range []struct {
			custom map[string]any
			want   string
		}{
			{map[string]any{"tier": "gold", "colour": "red"}, "custom.colour"},
			{map[string]any{"tier": "gold", "seats": "twelve"}, "custom.seats: must be a number"},
			{map[string]any{"tier": "platinum"}, "custom.tier: must be one of gold, silver"},
			{map[string]any{"tier": "gold", "renewal": "next year"}, "custom.renewal: must be a date"},
			{map[string]any{"tier": "gold", "active": "yes"}, "custom.active: must be true or false"},
			{map[string]any{"tier": "gold", "topics": []string{"fax"}}, "custom.topics"},
			{map[string]any{"seats": 3}, "custom.tier: required"},
		} {
			fieldError(t, s.Do(t, "POST", base+"/contacts/", s.Key, map[string]any{"first_name": "Bad", "custom": tc.custom}), "custom", tc.want)
		}
		// An update is checked the same way, and a refused one changes nothing.
		path := fmt.Sprintf("%s/contacts/%v", base, c["id"])
		fieldError(t, s.Do(t, "PUT", path, s.Key, map[string]any{"custom": map[string]any{"tier": "gold", "seats": false}}), "custom", "custom.seats")
		got := s.Do(t, "GET", path, s.Key, nil).Expect(t, 200).Map(t)
		if fmt.Sprint(got["custom"].(map[string]any)["seats"]) != "12" {
			t.Fatalf("after a refused update: %v", got["custom"])
		}
		var contacts []map[string]any
		s.Do(t, "GET", base+"/contacts/", s.Key, nil).Expect(t, 200).JSON(t, &contacts)
		if len(contacts) != 1 {
			t.Fatalf("refused contacts stored: %v", contacts)
		}
		// Definitions are per entity: an account has none of the contact's.
		fieldError(t, s.Do(t, "POST", base+"/accounts/", s.Key, map[string]any{"name": "Acme", "custom": map[string]any{"tier": "gold"}}), "custom", "none are defined")
		// A type cannot change under stored values.
		var defs []map[string]any
		s.Do(t, "GET", base+"/custom_fields/?entity=contact&sort=field_key", s.Key, nil).Expect(t, 200).JSON(t, &defs)
		if len(defs) != 6 || defs[0]["field_key"] != "active" {
			t.Fatalf("definitions %v", defs)
		}
		var seatsID any
		for _, d := range defs {
			if d["field_key"] == "seats" {
				seatsID = d["id"]
			}
		}
		conflict(t, s.Do(t, "PUT", fmt.Sprintf("%s/custom_fields/%v", base, seatsID), s.Key, map[string]any{"type": "string"}), "seats", "1 contacts")
	})
}

// TestCRMReferencesEnforced: references between CRM objects (related
// objects of activities and tasks, list members, list filters, deals'
// contacts) must resolve in the same tenant, and a referenced object
// cannot be deleted until its referrers go.
func TestCRMReferencesEnforced(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		base := "/api/tenants/" + s.Tenant(t, "crmr")
		otherBase := "/api/tenants/" + s.Tenant(t, "crmx")
		ct := s.Do(t, "POST", base+"/contacts/", s.Key, map[string]any{"first_name": "Ann"}).Expect(t, 201).Map(t)
		foreign := s.Do(t, "POST", otherBase+"/contacts/", s.Key, map[string]any{"first_name": "Zed"}).Expect(t, 201).Map(t)

		fieldError(t, s.Do(t, "POST", base+"/activities/", s.Key, map[string]any{"kind": "note", "related": map[string]any{"type": "contact", "id": foreign["id"]}}), "related", "does not exist")
		fieldError(t, s.Do(t, "POST", base+"/tasks/", s.Key, map[string]any{"title": "Call", "related": map[string]any{"type": "deal", "id": 999999999}}), "related", "deal 999999999 does not exist")
		fieldError(t, s.Do(t, "POST", base+"/lists/", s.Key, map[string]any{"name": "L", "members": []any{ct["id"], foreign["id"]}}), "members", "members[1]")
		fieldError(t, s.Do(t, "POST", base+"/lists/", s.Key, map[string]any{"name": "D", "kind": "dynamic", "filter": map[string]any{"account_id": 999999999}}), "filter", "account 999999999")
		fieldError(t, s.Do(t, "POST", base+"/deals/", s.Key, map[string]any{"name": "X", "contact_id": foreign["id"]}), "contact_id", "does not exist")

		act := s.Do(t, "POST", base+"/activities/", s.Key, map[string]any{"kind": "note", "related": map[string]any{"type": "contact", "id": ct["id"]}}).Expect(t, 201).Map(t)
		list := s.Do(t, "POST", base+"/lists/", s.Key, map[string]any{"name": "L", "members": []any{ct["id"]}}).Expect(t, 201).Map(t)
		contact := fmt.Sprintf("%s/contacts/%v", base, ct["id"])
		conflict(t, s.Do(t, "DELETE", contact, s.Key, nil), "activity", "list L")
		s.Do(t, "GET", contact, s.Key, nil).Expect(t, 200)
		s.Do(t, "DELETE", fmt.Sprintf("%s/activities/%v", base, act["id"]), s.Key, nil).Expect(t, 204)
		s.Do(t, "PUT", fmt.Sprintf("%s/lists/%v", base, list["id"]), s.Key, map[string]any{"members": []any{}}).Expect(t, 200)
		s.Do(t, "DELETE", contact, s.Key, nil).Expect(t, 204)
	})
}

// TestLeadConvertedDealIsAReference: a lead's converted_deal_id must name
// a deal of the same tenant (400 naming the field otherwise, nothing
// stored), and the deal a lead names cannot be deleted (409 naming the
// lead) until the lead lets go of it.
func TestLeadConvertedDealIsAReference(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		base := "/api/tenants/" + s.Tenant(t, "crmlead")
		otherBase := "/api/tenants/" + s.Tenant(t, "crmleadx")
		foreign := s.Do(t, "POST", otherBase+"/deals/", s.Key, map[string]any{"name": "Theirs"}).Expect(t, 201).Map(t)
		deal := s.Do(t, "POST", base+"/deals/", s.Key, map[string]any{"name": "Ours"}).Expect(t, 201).Map(t)

		fieldError(t, s.Do(t, "POST", base+"/leads/", s.Key, map[string]any{"first_name": "Lou", "converted_deal_id": 999999999}), "converted_deal_id", "deal 999999999 does not exist")
		fieldError(t, s.Do(t, "POST", base+"/leads/", s.Key, map[string]any{"first_name": "Lou", "converted_deal_id": foreign["id"]}), "converted_deal_id", "does not exist")
		var leads []map[string]any
		s.Do(t, "GET", base+"/leads/", s.Key, nil).Expect(t, 200).JSON(t, &leads)
		if len(leads) != 0 {
			t.Fatalf("refused leads were stored: %v", leads)
		}

		lead := s.Do(t, "POST", base+"/leads/", s.Key, map[string]any{"first_name": "Lou", "status": "converted", "converted_deal_id": deal["id"]}).Expect(t, 201).Map(t)
		leadURL := fmt.Sprintf("%s/leads/%v", base, lead["id"])
		fieldError(t, s.Do(t, "PUT", leadURL, s.Key, map[string]any{"converted_deal_id": foreign["id"]}), "converted_deal_id", "does not exist")
		dealURL := fmt.Sprintf("%s/deals/%v", base, deal["id"])
		conflict(t, s.Do(t, "DELETE", dealURL, s.Key, nil), "lead")
		s.Do(t, "GET", dealURL, s.Key, nil).Expect(t, 200)
		s.Do(t, "PUT", leadURL, s.Key, map[string]any{"converted_deal_id": nil}).Expect(t, 200)
		s.Do(t, "DELETE", dealURL, s.Key, nil).Expect(t, 204)
	})
}
