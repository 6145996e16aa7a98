package fsxml_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

const secret1000 = "Secret-1000-abcdef"

func a1(user, domain, secret string) string {
	sum := md5.Sum([]byte(user + ":" + domain + ":" + secret))
	return hex.EncodeToString(sum[:])
}

// seedExtension creates a tenant with extension 1000 and a default
// emergency location; it returns the tenant name.
func seedExtension(t *testing.T, s *apptest.Server) string {
	t.Helper()
	tenant := s.Tenant(t, "dir")
	base := "/api/tenants/" + tenant
	s.Do(t, "POST", base+"/emergency_locations/", s.Key, map[string]any{
		"name": "HQ", "address_line1": "1 Main Road", "country": "ZA", "emergency_callerid": "+27115550999", "is_default": true,
	}).Expect(t, 201)
	s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{
		"name": "1000", "first_name": "Ann", "sip_secret": secret1000,
	}).Expect(t, 201)
	return tenant
}

func TestDirectoryCaptures(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		user := "1000-" + tenant
		for _, tc := range []struct {
			name, capture string
		}{
			{"sip_auth REGISTER", "009"},
			{"sip_auth INVITE", "010"},
			{"no action (user_exists)", "013"},
			{"user_call", "014"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				body := fakefs.FormWith(capture(t, tc.capture), "user", user, "domain", "sip.test", "key_value", "sip.test",
					"sip_auth_username", user, "sip_auth_realm", "sip.test")
				doc := fetchXML(t, s, body)
				users := doc.all("user")
				if len(users) != 1 || users[0].attr("id") != user {
					t.Fatalf("want the one user %s, got %s", user, doc.raw)
				}
				if got, want := doc.param("param", "a1-hash"), a1(user, "sip.test", secret1000); got != want {
					t.Errorf("a1-hash %q, want %q", got, want)
				}
				if got := doc.param("variable", "user_context"); got != tenant {
					t.Errorf("user_context %q, want %q", got, tenant)
				}
				if got := doc.param("variable", "emergency_caller_id_number"); got != "+27115550999" {
					t.Errorf("emergency_caller_id_number %q (the tenant's default location)", got)
				}
				if doc.all("domain")[0].attr("name") != "sip.test" {
					t.Errorf("domain %s", doc.raw)
				}
			})
		}
		for _, tc := range []struct{ name, user, domain string }{
			{"unknown user", "1999-" + tenant, "sip.test"},
			{"unknown tenant", "1000-nosuchtenant", "sip.test"},
			{"other domain", user, "other.example"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				doc := fetchXML(t, s, fakefs.FormWith(capture(t, "009"), "user", tc.user, "domain", tc.domain, "key_value", tc.domain))
				if !doc.notFound() {
					t.Errorf("want not found, got %s", doc.raw)
				}
			})
		}
	})
}

// TestDirectoryCacheInvalidation shows both that a repeated fetch is served
// from the cache (a change behind the API's back is not seen) and that a
// change through the API is seen on the very next fetch.
func TestDirectoryCacheInvalidation(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		user := "1000-" + tenant
		body := fakefs.FormWith(capture(t, "009"), "user", user, "domain", "sip.test", "key_value", "sip.test")
		if got := fetchXML(t, s, body).param("variable", "effective_caller_id_name"); got != "Ann" {
			t.Fatalf("effective_caller_id_name %q", got)
		}
		// Behind the API's back: no generation bump, so the cache answers.
		o, err := s.Store.Tenant(t.Context(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Store.Querier().ExecContext(context.Background(), "UPDATE extensions SET callerid = ? WHERE tenant_id = ? AND name = ?", "Sneaky <1000>", o.TenantID, "1000"); err != nil {
			t.Fatal(err)
		}
		if got := fetchXML(t, s, body).param("variable", "effective_caller_id_name"); got != "Ann" {
			t.Fatalf("second fetch should come from the cache, got %q", got)
		}
		s.Do(t, "PUT", "/api/tenants/"+tenant+"/extensions/1000", s.Key, map[string]any{"sip_secret": "Another-secret-99", "callerid": "Bob <1000>"}).Expect(t, 200)
		doc := fetchXML(t, s, body)
		if got := doc.param("variable", "effective_caller_id_name"); got != "Bob" {
			t.Errorf("after PUT: effective_caller_id_name %q, want Bob", got)
		}
		if got, want := doc.param("param", "a1-hash"), a1(user, "sip.test", "Another-secret-99"); got != want {
			t.Errorf("after PUT: a1-hash %q, want %q", got, want)
		}
		s.Do(t, "DELETE", "/api/tenants/"+tenant+"/extensions/1000", s.Key, nil).Expect(t, 204)
		if doc := fetchXML(t, s, body); !doc.notFound() {
			t.Errorf("after DELETE: want not found, got %s", doc.raw)
		}
	})
}

// TestDirectoryCarriesNamesIntact follows a hostile first name from the API
// to the XML FreeSWITCH gets: it arrives exactly as typed and adds no
// element or attribute; FreeSWITCH variable syntax is refused at input.
func TestDirectoryCarriesNamesIntact(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "names")
		const name = `Eve "<x>" & 'co'`
		base := "/api/tenants/" + tenant + "/extensions/"
		s.Do(t, "POST", base, s.Key, map[string]any{"name": "1000", "first_name": name, "sip_secret": secret1000}).Expect(t, 201)
		s.Do(t, "PUT", base+"1000", s.Key, map[string]any{"last_name": "${system(id)}"}).Expect(t, 400)
		user := "1000-" + tenant
		doc := fetchXML(t, s, fakefs.FormWith(capture(t, "009"), "user", user, "domain", "sip.test", "key_value", "sip.test",
			"sip_auth_username", user, "sip_auth_realm", "sip.test"))
		if got := doc.param("variable", "effective_caller_id_name"); got != name {
			t.Fatalf("effective_caller_id_name %q, want %q exactly", got, name)
		}
		if n := len(doc.all("user")); n != 1 {
			t.Fatalf("%d users in the document", n)
		}
	})
}

// TestDirectoryGroupCallAndDomainFetch: group_call lists the tenant's
// users (the group is the tenant), a domain-only fetch carries the domain
// and no users.
func TestDirectoryGroupCallAndDomainFetch(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
		body := fakefs.FormWith(capture(t, "013"), "domain", "sip.test", "key_value", "sip.test", "user", "")
		group := fetchXML(t, s, append(body, []byte("&action=group_call&group="+tenant+"&group_name="+tenant)...))
		ids := map[string]bool{}
		for _, u := range group.all("user") {
			ids[u.attr("id")] = true
		}
		if len(ids) != 2 || !ids["1000-"+tenant] || !ids["1001-"+tenant] {
			t.Fatalf("group_call users %v\n%s", ids, group.raw)
		}
		domain := fetchXML(t, s, fakefs.FormWith(capture(t, "013"), "domain", "sip.test", "key_value", "sip.test", "user", "", "purpose", "gateways"))
		if n := len(domain.all("user")); n != 0 || len(domain.all("domain")) != 1 {
			t.Fatalf("domain fetch: %d users\n%s", n, domain.raw)
		}
	})
}
