package fsxml_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// TestInboundCallerNameFromContact: with caller name lookup on, a call to
// a DID from a contact's number (sent national, read with the tenant's
// country) carries the contact's name as effective_caller_id_name, in the
// fetched XML and in the routing trace; a renamed contact shows at once
// (the cached document is dropped by the change); another tenant's
// contact is never used; a hostile name is escaped and cannot expand;
// with lookup off nothing is set.
func TestInboundCallerNameFromContact(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		s.Do(t, "PUT", "/api/tenants/"+tenant, s.Key, map[string]any{"country": "ZA", "crm_caller_name_lookup": true}).Expect(t, 200)
		did := randomDID()
		s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": did, "tenant": tenant}).Expect(t, 201)
		s.Do(t, "POST", base+"/inbound_routes/", s.Key, map[string]any{
			"name": "main", "did": did, "destination": map[string]any{"type": "extension", "target": "1000"},
		}).Expect(t, 201)
		digits := strings.TrimPrefix(did, "+")
		caller := fmt.Sprintf("021%07d", 5500000+len(tenant)) // a Cape Town number, national form
		e164 := "+2721" + caller[3:]
		// Another tenant's contact with the same number must not show.
		other := "/api/tenants/" + s.Tenant(t, "crmo")
		s.Do(t, "POST", other+"/contacts/", s.Key, map[string]any{"first_name": "Wrong", "last_name": "Tenant",
			"phones": []map[string]any{{"label": "work", "number": e164}}}).Expect(t, 201)

		name := func() string {
			t.Helper()
			var got string
			for range 2 { // a render, then the cached document: the same answer
				got = ""
				for _, a := range fetchXML(t, s, callBody(t, "public", digits, caller, "Caller-Caller-ID-Name", "From Header")).actions() {
					if v, ok := strings.CutPrefix(a, "set effective_caller_id_name="); ok {
						got = v
					}
				}
			}
			return got
		}
		if got := name(); got != "" {
			t.Fatalf("unknown caller: effective_caller_id_name %q", got)
		}
		ct := s.Do(t, "POST", base+"/contacts/", s.Key, map[string]any{"first_name": "Thandi", "last_name": "Nkosi",
			"phones": []map[string]any{{"label": "mobile", "number": e164}}}).Expect(t, 201).Map(t)
		if got := name(); got != "Thandi Nkosi" {
			t.Fatalf("known caller: effective_caller_id_name %q, want Thandi Nkosi", got)
		}
		var tr struct {
			Trace map[string]any `json:"trace"`
			XML   string         `json:"xml"`
		}
		s.Do(t, "GET", "/api/routing/trace?did="+digits+"&from="+caller, s.Key, nil).Expect(t, 200).JSON(t, &tr)
		if tr.Trace["caller_contact"] != "Thandi Nkosi" || !strings.Contains(tr.XML, `data="effective_caller_id_name=Thandi Nkosi"`) {
			t.Errorf("trace %v\n%s", tr.Trace, tr.XML)
		}
		path := fmt.Sprintf("%s/contacts/%v", base, ct["id"])
		s.Do(t, "PUT", path, s.Key, map[string]any{"first_name": "${system(id)}", "last_name": "<O'Brien & Co>"}).Expect(t, 200)
		if got := name(); got != "system(id) <O'Brien & Co>" {
			t.Fatalf("hostile name: effective_caller_id_name %q", got)
		}
		s.Do(t, "GET", "/api/routing/trace?did="+digits+"&from="+caller, s.Key, nil).Expect(t, 200).JSON(t, &tr)
		if strings.Contains(tr.XML, "${") || !strings.Contains(tr.XML, `effective_caller_id_name=system(id) &lt;O&apos;Brien &amp; Co&gt;`) {
			t.Errorf("hostile name rendered as:\n%s", tr.XML)
		}
		// The number moves off the contact: the name goes with it.
		s.Do(t, "PUT", path, s.Key, map[string]any{"phones": []map[string]any{{"label": "mobile", "number": "+27215559999"}}}).Expect(t, 200)
		if got := name(); got != "" {
			t.Fatalf("after the number changed: %q", got)
		}
		s.Do(t, "PUT", path, s.Key, map[string]any{"first_name": "Thandi", "last_name": "Nkosi", "phones": []map[string]any{{"label": "mobile", "number": e164}}}).Expect(t, 200)
		if got := name(); got != "Thandi Nkosi" {
			t.Fatalf("number back: %q", got)
		}
		s.Do(t, "PUT", "/api/tenants/"+tenant, s.Key, map[string]any{"crm_caller_name_lookup": false}).Expect(t, 200)
		if got := name(); got != "" {
			t.Fatalf("lookup off: effective_caller_id_name %q", got)
		}
	})
}
