package routes_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

func TestTenantAndExtensionLifecycle(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "life")
		base := "/api/tenants/" + tenant + "/extensions/"

		r := s.Do(t, "POST", base, s.Key, map[string]any{
			"name": "1001", "first_name": "Eve", "last_name": "Smith", "email": "eve@example.com", "mobile": "+27825550001",
		}).Expect(t, 201)
		if loc := r.Header.Get("Location"); loc != base+"1001" {
			t.Errorf("Location %q, want %q", loc, base+"1001")
		}
		created := r.Map(t)
		secret, _ := created["sip_secret"].(string)
		if len(secret) != 24 {
			t.Errorf("create answer must show the generated SIP secret once, got %q", secret)
		}
		if created["sip_auth_id"] != "1001-"+tenant || created["callerid"] != "Eve Smith <1001>" {
			t.Errorf("derived fields: sip_auth_id %v callerid %v", created["sip_auth_id"], created["callerid"])
		}

		got := s.Do(t, "GET", base+"1001", s.Key, nil).Expect(t, 200).Map(t)
		for _, secretField := range []string{"sip_secret", "voicemail_pin"} {
			if _, ok := got[secretField]; ok {
				t.Errorf("GET shows the write-only %s", secretField)
			}
		}
		list := s.Do(t, "GET", base, s.Key, nil).Expect(t, 200)
		if strings.Contains(string(list.Body), secret) || strings.Contains(string(list.Body), "sip_secret") {
			t.Errorf("list leaks the SIP secret: %s", list.Body)
		}

		upd := s.Do(t, "PUT", base+"1001", s.Key, map[string]any{"first_name": "Eva", "ring_seconds": 45}).Expect(t, 200).Map(t)
		if upd["first_name"] != "Eva" || upd["ring_seconds"] != float64(45) || upd["last_name"] != "Smith" {
			t.Errorf("PUT changes only the given fields: %v", upd)
		}
		s.Do(t, "DELETE", base+"1001", s.Key, nil).Expect(t, 204)
		if r := s.Do(t, "GET", base+"1001", s.Key, nil).Expect(t, 404); r.Code(t) != "not_found" {
			t.Errorf("code %q", r.Code(t))
		}
	})
}

func TestListPaging(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "page")
		base := "/api/tenants/" + tenant + "/extensions/"
		for i := 0; i < 7; i++ {
			s.Do(t, "POST", base, s.Key, map[string]any{"name": fmt.Sprintf("20%d", 9-i)}).Expect(t, 201)
		}
		r := s.Do(t, "GET", base+"?limit=3&offset=3", s.Key, nil).Expect(t, 200)
		if r.Header.Get("X-Total-Count") != "7" {
			t.Errorf("X-Total-Count %q", r.Header.Get("X-Total-Count"))
		}
		var items []map[string]any
		r.JSON(t, &items)
		var names []string
		for _, it := range items {
			names = append(names, it["name"].(string))
		}
		if strings.Join(names, ",") != "206,207,208" {
			t.Errorf("page 2 is %v, want the stable order 206,207,208", names)
		}
		link := r.Header.Get("Link")
		if !strings.Contains(link, `offset=6>; rel="next"`) || !strings.Contains(link, `offset=0>; rel="prev"`) {
			t.Errorf("Link header %q", link)
		}
		for _, bad := range []string{"limit=0", "limit=1001", "limit=x", "offset=-1"} {
			if r := s.Do(t, "GET", base+"?"+bad, s.Key, nil); r.Status != 400 || r.Code(t) != "validation_failed" {
				t.Errorf("%s: status %d code %s", bad, r.Status, r.Code(t))
			}
		}
	})
}

func TestBadInputWritesNothing(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "bad")
		base := "/api/tenants/" + tenant + "/extensions/"
		cases := []struct {
			name   string
			body   any
			status int
			code   string
			field  string
		}{
			{"malformed JSON", `{"name": "1001",`, 400, "invalid_json", ""},
			{"not an object", `["1001"]`, 400, "invalid_json", ""},
			{"trailing data", `{"name":"1001"} {}`, 400, "invalid_json", ""},
			{"unknown field", map[string]any{"name": "1001", "colour": "red"}, 400, "validation_failed", "colour"},
			{"wrong type", map[string]any{"name": 1001}, 400, "validation_failed", "name"},
			{"over-long value", map[string]any{"name": "1001", "first_name": strings.Repeat("x", 65)}, 400, "validation_failed", "first_name"},
			{"bad pattern", map[string]any{"name": "10a1"}, 400, "validation_failed", "name"},
			{"FreeSWITCH expansion", map[string]any{"name": "1001", "first_name": "${system(id)}"}, 400, "validation_failed", "first_name"},
			{"missing required", map[string]any{"first_name": "Eve"}, 400, "validation_failed", "name"},
			{"read-only field", map[string]any{"name": "1001", "sip_auth_id": "x"}, 400, "validation_failed", "sip_auth_id"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := s.Do(t, "POST", base, s.Key, tc.body)
				if r.Status != tc.status || r.Code(t) != tc.code {
					t.Fatalf("status %d code %q, want %d %q: %s", r.Status, r.Code(t), tc.status, tc.code, r.Body)
				}
				if tc.field != "" {
					fields, _ := r.Map(t)["fields"].(map[string]any)
					if fields[tc.field] == nil {
						t.Errorf("fields does not name %s: %s", tc.field, r.Body)
					}
				}
			})
		}
		t.Run("body too large", func(t *testing.T) {
			status, body := announceBody(t, s, "POST", base, 2<<20)
			if status != 413 || !strings.Contains(body, `"code":"body_too_large"`) {
				t.Fatalf("status %d body %s", status, body)
			}
		})
		if n := s.Do(t, "GET", base, s.Key, nil).Expect(t, 200).Header.Get("X-Total-Count"); n != "0" {
			t.Fatalf("refused requests wrote %s extensions", n)
		}
	})
}

func TestDuplicatesConflict(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "dup")
		if r := s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": strings.ToUpper(tenant)}); r.Status != 409 || r.Code(t) != "conflict" {
			t.Errorf("tenant names are unique case-insensitively: %d %s", r.Status, r.Body)
		}
		base := "/api/tenants/" + tenant
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 409)
		// One number plan: a routing condition cannot take an extension's number.
		r := s.Do(t, "POST", base+"/routing_conditions/", s.Key, map[string]any{
			"name": "night", "number": "1001", "kind": "manual",
			"match_destination":   map[string]any{"type": "hangup"},
			"nomatch_destination": map[string]any{"type": "extension", "target": "1001"},
		}).Expect(t, 409)
		if !strings.Contains(r.Map(t)["error"].(string), "extensions 1001") {
			t.Errorf("409 must name the owner of the number: %s", r.Body)
		}
		// The same number is free in another tenant.
		other := s.Tenant(t, "dup")
		s.Do(t, "POST", "/api/tenants/"+other+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
	})
}

func TestAuthentication(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		r := s.Do(t, "GET", "/api/tenants/", "", nil).Expect(t, 401)
		if r.Code(t) != "unauthorized" || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("missing credentials: code %s, WWW-Authenticate %q", r.Code(t), r.Header.Get("WWW-Authenticate"))
		}
		s.Do(t, "GET", "/api/tenants/", "sb_not-a-key", nil).Expect(t, 401)

		admin := storetest.Name("ops")
		if _, err := s.Store.SetAdmin(t.Context(), admin, "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		// Creating it again resets the password (the CLI's admin create).
		if created, err := s.Store.SetAdmin(t.Context(), admin, "correct horse battery"); err != nil || created {
			t.Fatalf("second admin create: created=%v err=%v", created, err)
		}
		basic := func(user, pass string) map[string]string {
			return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
		}
		s.DoHeaders(t, "GET", "/api/tenants/", basic(admin, "correct horse battery"), nil).Expect(t, 200)
		s.DoHeaders(t, "GET", "/api/tenants/", basic(admin, "wrong password!!"), nil).Expect(t, 401)
		s.DoHeaders(t, "GET", "/api/tenants/", basic("nobody", "correct horse battery"), nil).Expect(t, 401)

		// A revoked key answers 401 on its very next use.
		k := s.Do(t, "POST", "/api/key/", s.Key, map[string]any{"name": "temp"}).Expect(t, 201).Map(t)
		s.Do(t, "GET", "/api/tenants/", k["key"].(string), nil).Expect(t, 200)
		s.Do(t, "DELETE", fmt.Sprintf("/api/key/%v", k["id"]), s.Key, nil).Expect(t, 204)
		s.Do(t, "GET", "/api/tenants/", k["key"].(string), nil).Expect(t, 401)

		// Keys are listed without values, and stored only as hashes.
		list := s.Do(t, "GET", "/api/key/", s.Key, nil).Expect(t, 200)
		if strings.Contains(string(list.Body), k["key"].(string)) {
			t.Error("key list shows a key value")
		}
		var stored int
		if err := s.Store.Querier().GetContext(context.Background(), &stored, "SELECT COUNT(*) FROM api_keys WHERE key_hash = ?", k["key"]); err != nil || stored != 0 {
			t.Errorf("key value found in the database (%d, %v)", stored, err)
		}
	})
}

func TestTenantScope(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		mine, theirs := s.Tenant(t, "mine"), s.Tenant(t, "theirs")
		s.Do(t, "POST", "/api/tenants/"+theirs+"/extensions/", s.Key, map[string]any{"name": "3001"}).Expect(t, 201)
		tk := s.KeyFor(t, map[string]any{"tenant": mine})

		s.Do(t, "POST", "/api/tenants/"+mine+"/extensions/", tk, map[string]any{"name": "1001"}).Expect(t, 201)
		for _, req := range [][2]string{
			{"GET", "/api/tenants/" + theirs + "/extensions/"},
			{"GET", "/api/tenants/" + theirs + "/extensions/3001"},
			{"DELETE", "/api/tenants/" + theirs + "/extensions/3001"},
			{"GET", "/api/tenants/" + theirs},
			{"POST", "/api/tenants/"},
			{"GET", "/api/dids/"},
			{"GET", "/api/administrators/"},
		} {
			if r := s.Do(t, req[0], req[1], tk, map[string]any{"tenant": "x_y"}); r.Status != 403 || r.Code(t) != "forbidden" {
				t.Errorf("%s %s with another tenant's key: %d %s", req[0], req[1], r.Status, r.Body)
			}
		}
		var tenants []map[string]any
		s.Do(t, "GET", "/api/tenants/", tk, nil).Expect(t, 200).JSON(t, &tenants)
		if len(tenants) != 1 || tenants[0]["tenant"] != mine {
			t.Errorf("a tenant key lists only its tenant, got %v", tenants)
		}
		// A tenant key cannot mint keys for other tenants or platform keys.
		s.Do(t, "POST", "/api/key/", tk, map[string]any{"name": "x", "tenant": theirs}).Expect(t, 403)
		s.Do(t, "POST", "/api/key/", tk, map[string]any{"name": "x"}).Expect(t, 403)
		// A user key is bound to an existing extension of its tenant.
		s.Do(t, "POST", "/api/key/", s.Key, map[string]any{"name": "u", "tenant": mine, "extension": "9999"}).Expect(t, 400)
		s.KeyFor(t, map[string]any{"tenant": mine, "extension": "1001"})
	})
}

func TestTenantClone(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		src := s.Tenant(t, "src")
		base := "/api/tenants/" + src
		s.Do(t, "PUT", "/api/tenants/"+src, s.Key, map[string]any{"max_extensions": 25, "recording_policy": "all"}).Expect(t, 200)
		sched := s.Do(t, "POST", base+"/schedules/", s.Key, map[string]any{
			"name": "office", "timezone": "Africa/Johannesburg",
			"open_periods": []any{map[string]any{"days": []any{"mon", "tue"}, "start": "08:00", "end": "17:00"}},
		}).Expect(t, 201).Map(t)
		s.Do(t, "POST", base+"/routing_conditions/", s.Key, map[string]any{
			"name": "hours", "number": "700", "kind": "schedule", "schedule_id": sched["id"],
			"match_destination": map[string]any{"type": "hangup"}, "nomatch_destination": map[string]any{"type": "hangup"},
		}).Expect(t, 201)
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)

		dst := strings.ToLower("dst_" + src[4:])
		r := s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{
			"tenant": dst, "tenant_to_clone": src, "tenant_limits": "1", "tenant_routes": "1",
		}).Expect(t, 201).Map(t)
		if r["max_extensions"] != float64(25) || r["recording_policy"] != "all" {
			t.Errorf("tenant_limits copies the limits: %v", r)
		}
		report, _ := r["clone_report"].([]any)
		if len(report) != 1 || !strings.Contains(report[0].(string), "schedule_id cleared") {
			t.Errorf("clone_report must list the cleared schedule reference: %v", report)
		}
		var conds []map[string]any
		s.Do(t, "GET", "/api/tenants/"+dst+"/routing_conditions/", s.Key, nil).Expect(t, 200).JSON(t, &conds)
		if len(conds) != 1 || conds[0]["number"] != "700" || conds[0]["schedule_id"] != nil {
			t.Errorf("routing condition copied with its number and without the uncopied schedule: %v", conds)
		}
		if n := s.Do(t, "GET", "/api/tenants/"+dst+"/schedules/", s.Key, nil).Expect(t, 200).Header.Get("X-Total-Count"); n != "0" {
			t.Errorf("schedules were not asked for but %s were copied", n)
		}
		if n := s.Do(t, "GET", "/api/tenants/"+dst+"/extensions/", s.Key, nil).Header.Get("X-Total-Count"); n != "0" {
			t.Errorf("extensions are never cloned, got %s", n)
		}
		var features []map[string]any
		s.Do(t, "GET", "/api/tenants/"+dst+"/feature_extensions/?limit=100", s.Key, nil).Expect(t, 200).JSON(t, &features)
		if len(features) != 17 {
			t.Errorf("feature codes copied: %d, want 17", len(features))
		}
		// A clone source that does not exist refuses the whole create.
		s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": dst + "x", "tenant_to_clone": "nope_nope"}).Expect(t, 400)
		s.Do(t, "GET", "/api/tenants/"+dst+"x", s.Key, nil).Expect(t, 404)
	})
}

func TestRequestIDAndHealth(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		r := s.DoHeaders(t, "GET", "/healthz", map[string]string{"X-Request-ID": "abc-123"}, nil).Expect(t, 200)
		if r.Header.Get("X-Request-ID") != "abc-123" {
			t.Errorf("X-Request-ID not echoed: %q", r.Header.Get("X-Request-ID"))
		}
		if id := s.Do(t, "GET", "/healthz", "", nil).Header.Get("X-Request-ID"); len(id) < 16 {
			t.Errorf("generated request id %q", id)
		}
		ready := s.Do(t, "GET", "/readyz", "", nil).Expect(t, 200).Map(t)
		checks := ready["checks"].(map[string]any)
		if checks["database"] != "ok" || checks["redis"] != "ok" || checks["outbox"] != "ok" {
			t.Errorf("readyz checks: %v", checks)
		}
		if d, ok := ready["outbox_depth"].(float64); !ok || d < 0 {
			t.Errorf("readyz outbox_depth: %v", ready["outbox_depth"])
		}
		if r := s.Do(t, "GET", "/api/nope", s.Key, nil); r.Status != 404 || r.Code(t) != "not_found" {
			t.Errorf("unknown route: %d %s", r.Status, r.Body)
		}
	})
}

func TestTenantDeleteRemovesItsConfiguration(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "gone")
		base := "/api/tenants/" + tenant
		loc := s.Do(t, "POST", base+"/emergency_locations/", s.Key, map[string]any{
			"name": "HQ", "address_line1": "1 Main Rd", "country": "ZA", "emergency_callerid": "+27110000001",
		}).Expect(t, 201).Map(t)
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001", "emergency_location_id": loc["id"]}).Expect(t, 201)
		tk := s.KeyFor(t, map[string]any{"tenant": tenant})
		// A tenant key may read its tenant but not change or delete it.
		s.Do(t, "GET", "/api/tenants/"+tenant, tk, nil).Expect(t, 200)
		s.Do(t, "PUT", "/api/tenants/"+tenant, tk, map[string]any{"max_extensions": 0}).Expect(t, 403)
		s.Do(t, "DELETE", "/api/tenants/"+tenant, tk, nil).Expect(t, 403)

		s.Do(t, "DELETE", "/api/tenants/"+tenant, s.Key, nil).Expect(t, 204)
		s.Do(t, "GET", "/api/tenants/"+tenant, s.Key, nil).Expect(t, 404)
		s.Do(t, "GET", "/api/tenants/", tk, nil).Expect(t, 401)
		// The name and the numbers are free again.
		s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": tenant}).Expect(t, 201)
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
	})
}

// announceBody sends only the headers of a request whose Content-Length
// announces size bytes and reads the answer. The server must refuse it
// from the header alone; writing megabytes it will not read would only
// race its close (connection reset) on loopback.
func announceBody(t *testing.T, s *apptest.Server, method, path string, size int) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: test\r\nX-API-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", method, path, s.Key, size)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
