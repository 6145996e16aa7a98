package routes_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// TestCDRReportFilters: the CDR report narrows by direction, extension
// and number (the caller's or the dialled one), as its page offers.
func TestCDRReportFilters(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "cdrq")
		in := cdr("q-1", "+27215550101")
		in["extension"] = "1001"
		out := cdr("q-2", "1002")
		out["src"], out["direction"] = "+27825550001", "inbound"
		s.Do(t, "POST", "/api/tenants/"+tenant+"/imports/cdrs", s.Key, map[string]any{"records": []any{in, out, cdr("q-3", "+27215550103")}}).Expect(t, 200)
		ids := func(q string) []string {
			var list []map[string]any
			s.Do(t, "GET", "/api/reports/cdrs?tenant="+tenant+q, s.Key, nil).Expect(t, 200).JSON(t, &list)
			var out []string
			for _, c := range list {
				out = append(out, c["channel_id"].(string))
			}
			return out
		}
		for q, want := range map[string][]string{
			"&direction=inbound":     {"q-2"},
			"&extension=1001":        {"q-1"},
			"&number=%2B27825550001": {"q-2"},
			"&number=%2B27215550103": {"q-3"},
			"&direction=outbound":    {"q-1", "q-3"},
		} {
			got := ids(q)
			if len(got) != len(want) {
				t.Errorf("%s: %v, want %v", q, got, want)
				continue
			}
			for _, w := range want {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found {
					t.Errorf("%s: %v, want %v", q, got, want)
				}
			}
		}
	})
}

// The tool pages declare their API routes' access: a tenant administrator
// opens its tenant's tools and no other tenant's or the platform's; a
// read-only administrator is neither linked to the imports nor offered a
// replay, an enable or a test send, and the imports page is refused.
func TestToolPagesAccess(t *testing.T) {
	s := apptest.Start(t, apptest.AnyEnv(t), nil)
	a, b := s.Tenant(t, "tla"), s.Tenant(t, "tlb")
	hook := func(tenant string) string {
		m := s.Do(t, "POST", "/api/tenants/"+tenant+"/outbound_webhooks/", s.Key, map[string]any{"name": "crm", "url": "https://crm.example.com/hook", "events": []string{"config.changed"}, "enabled": false}).Expect(t, 201).Map(t)
		return "/tenants/" + tenant + "/outbound_webhooks/" + fmt.Sprint(m["id"])
	}
	hookA, hookB := hook(a), hook(b)
	tools := []string{"/tools/trace", "/tools/cdrs", "/tools/recordings", "/tools/imports"}

	platform := signIn(t, s, createAdmin(t, s, "platform_admin", nil), adminPassword)
	if st, body := getPage(t, s, platform, "/manage/tools/trace"); st != 200 || !strings.Contains(body, `data-api="/api/routing/trace"`) || !strings.Contains(body, `id="in-did"`) {
		t.Errorf("the platform trace: %d\n%s", st, body)
	}
	if _, body := getPage(t, s, platform, "/manage/"); !strings.Contains(body, `href="/manage/tools/trace"`) {
		t.Errorf("the platform page does not link its trace:\n%s", body)
	}

	admin := signIn(t, s, createAdmin(t, s, "tenant_admin", []string{a}), adminPassword)
	_, home := getPage(t, s, admin, "/tenants/"+a+"/")
	for _, p := range tools {
		if !strings.Contains(home, `href="/tenants/`+a+p+`"`) {
			t.Errorf("the tenant's page does not link %s", p)
		}
		if st, _ := getPage(t, s, admin, "/tenants/"+a+p); st != 200 {
			t.Errorf("GET %s in its tenant: %d", p, st)
		}
		if st, _ := getPage(t, s, admin, "/tenants/"+b+p); st != 403 {
			t.Errorf("GET %s in another tenant: %d, want 403", p, st)
		}
	}
	for _, p := range []string{"/manage/tools/trace", hookB + "/deliveries"} {
		if st, _ := getPage(t, s, admin, p); st != 403 {
			t.Errorf("tenant admin GET %s: %d, want 403", p, st)
		}
	}
	if _, view := getPage(t, s, admin, hookA); !strings.Contains(view, `href="`+hookA+`/deliveries"`) {
		t.Errorf("the webhook's page does not link its delivery log:\n%s", view)
	}
	_, log := getPage(t, s, admin, hookA+"/deliveries")
	if !strings.Contains(log, `data-write="/api`+hookA) || !strings.Contains(log, `id="hook-enable"`) || !strings.Contains(log, `id="hook-test"`) {
		t.Errorf("a tenant administrator's delivery log offers no replay, enable or test:\n%s", log)
	}

	reader := signIn(t, s, createAdmin(t, s, "read_only", []string{a}), adminPassword)
	if _, home := getPage(t, s, reader, "/tenants/"+a+"/"); strings.Contains(home, "/tools/imports") || !strings.Contains(home, "/tools/trace") {
		t.Errorf("a read-only administrator's tools:\n%s", home)
	}
	if st, _ := getPage(t, s, reader, "/tenants/"+a+"/tools/imports"); st != 403 {
		t.Errorf("read-only GET the imports: %d, want 403", st)
	}
	if st, log := getPage(t, s, reader, hookA+"/deliveries"); st != 200 || !strings.Contains(log, `data-write=""`) || strings.Contains(log, "hook-enable") || strings.Contains(log, "hook-test") {
		t.Errorf("a read-only administrator's delivery log: %d\n%s", st, log)
	}
}
