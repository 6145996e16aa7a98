package routes_test

import (
	"encoding/base64"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// basicAuth is the header of an HTTP Basic request.
func basicAuth(user, pass string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
}

// createAdmin creates an administrator through the API and returns its name.
func createAdmin(t *testing.T, s *apptest.Server, role string, tenants []string) string {
	t.Helper()
	name := storetest.Name("adm")
	in := map[string]any{"username": name, "password": adminPassword, "role": role, "enabled": true}
	if tenants != nil {
		in["tenants"] = tenants
	}
	s.Do(t, "POST", "/api/administrators/", s.Key, in).Expect(t, 201)
	return name
}

const adminPassword = "correct horse battery staple"

// Seen item 3: the user key of 1001 changed 1000's sip_secret and deleted
// 1000; it may act only as its own extension, and only as a phone user.
func TestUserKeyActsOnlyAsItsExtension(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "usr")
		base := "/api/tenants/" + tenant + "/extensions/"
		for _, n := range []string{"1000", "1001"} {
			s.Do(t, "POST", base, s.Key, map[string]any{"name": n}).Expect(t, 201)
		}
		user := s.KeyFor(t, map[string]any{"tenant": tenant, "extension": "1001"})

		s.Do(t, "PUT", base+"1000", user, map[string]any{"sip_secret": "NewSecret-123456"}).Expect(t, 403)
		s.Do(t, "DELETE", base+"1000", user, nil).Expect(t, 403)
		s.Do(t, "GET", base+"1000", user, nil).Expect(t, 403)
		s.Do(t, "GET", base, user, nil).Expect(t, 403)
		s.Do(t, "POST", base, user, map[string]any{"name": "1005"}).Expect(t, 403)
		s.Do(t, "GET", "/api/tenants/"+tenant+"/inbound_routes/", user, nil).Expect(t, 403)
		s.Do(t, "GET", "/api/key/", user, nil).Expect(t, 403)

		// Its own extension: readable; a phone user's settings changeable,
		// nothing else (not its SIP secret, caller id or call permission).
		s.Do(t, "GET", base+"1001", user, nil).Expect(t, 200)
		s.Do(t, "PUT", base+"1001", user, map[string]any{
			"voicemail_pin": "4711", "dnd": true,
			"forward_all": map[string]any{"enabled": true, "destination": "+27825550009"},
		}).Expect(t, 200)
		got := s.Do(t, "GET", base+"1001", s.Key, nil).Expect(t, 200).Map(t)
		if got["dnd"] != true {
			t.Errorf("dnd not changed by the user key: %v", got["dnd"])
		}
		for _, field := range []map[string]any{
			{"sip_secret": "NewSecret-123456"}, {"call_permission": "international"}, {"callerid": "Boss <1001>"}, {"name": "1009"},
		} {
			if r := s.Do(t, "PUT", base+"1001", user, field).Expect(t, 403); r.Code(t) != "forbidden" {
				t.Errorf("%v: code %q", field, r.Code(t))
			}
		}
		s.Do(t, "DELETE", base+"1001", user, nil).Expect(t, 403)
		s.Do(t, "GET", base+"1000", s.Key, nil).Expect(t, 200)
	})
}

// Seen item 3: a user key outlived its extension and, once 1701 was
// created again for someone else, acted as the new 1701.
func TestDeletingAnExtensionRevokesItsKeys(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "rev")
		base := "/api/tenants/" + tenant + "/extensions/"
		s.Do(t, "POST", base, s.Key, map[string]any{"name": "1701"}).Expect(t, 201)
		user := s.KeyFor(t, map[string]any{"tenant": tenant, "extension": "1701"})
		s.Do(t, "GET", base+"1701", user, nil).Expect(t, 200)

		s.Do(t, "DELETE", base+"1701", s.Key, nil).Expect(t, 204)
		s.Do(t, "GET", base+"1701", user, nil).Expect(t, 401)
		s.Do(t, "POST", "/api/tenants/"+tenant+"/schedules/", user, map[string]any{"name": "x"}).Expect(t, 401)

		s.Do(t, "POST", base, s.Key, map[string]any{"name": "1701", "mobile": "+27825550077"}).Expect(t, 201)
		s.Do(t, "GET", base+"1701", user, nil).Expect(t, 401)
		s.Do(t, "POST", "/api/telephony/call", user, map[string]any{"from": "+27825550077", "to": "1000"}).Expect(t, 401)

		// Renaming an extension also ends its keys: the old number may be
		// given to someone else.
		s.Do(t, "POST", base, s.Key, map[string]any{"name": "1702"}).Expect(t, 201)
		user2 := s.KeyFor(t, map[string]any{"tenant": tenant, "extension": "1702"})
		s.Do(t, "PUT", base+"1702", s.Key, map[string]any{"name": "1703"}).Expect(t, 200)
		s.Do(t, "GET", base+"1703", user2, nil).Expect(t, 401)
	})
}

// Seen item 4: a read_only administrator created without tenants read the
// whole platform; like tenant_admin and reseller_admin without tenants it
// must see nothing.
func TestAdministratorWithoutTenantsSeesNothing(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "globex")
		for _, role := range []string{"read_only", "tenant_admin", "reseller_admin"} {
			t.Run(role, func(t *testing.T) {
				h := basicAuth(createAdmin(t, s, role, nil), adminPassword)
				for _, path := range []string{
					"/api/tenants/" + tenant + "/extensions/", "/api/tenants/" + tenant,
					"/api/administrators/", "/api/sip_trunks/", "/api/dids/", "/api/servers/",
				} {
					if r := s.DoHeaders(t, "GET", path, h, nil); r.Status != 403 {
						t.Errorf("GET %s: status %d, want 403: %s", path, r.Status, r.Body)
					}
				}
				var list []map[string]any
				s.DoHeaders(t, "GET", "/api/tenants/", h, nil).Expect(t, 200).JSON(t, &list)
				if len(list) != 0 {
					t.Errorf("tenant list shows %d tenants", len(list))
				}
			})
		}
		// With the tenant named, read_only reads it and writes nothing.
		h := basicAuth(createAdmin(t, s, "read_only", []string{tenant}), adminPassword)
		s.DoHeaders(t, "GET", "/api/tenants/"+tenant+"/extensions/", h, nil).Expect(t, 200)
		s.DoHeaders(t, "POST", "/api/tenants/"+tenant+"/extensions/", h, map[string]any{"name": "1001"}).Expect(t, 403)
		s.DoHeaders(t, "GET", "/api/administrators/", h, nil).Expect(t, 403)
	})
}
