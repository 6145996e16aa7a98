package routes_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// page GETs a manager page with the session and returns status and body.
func getPage(t *testing.T, s *apptest.Server, w webSession, path string) (int, string) {
	t.Helper()
	r := s.DoHeaders(t, "GET", path, w.cookie(), nil)
	if r.Status == 200 || r.Status == 403 || r.Status == 404 || r.Status == 400 {
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: %d answered as %q, want a page", path, r.Status, ct)
		}
	}
	return r.Status, string(r.Body)
}

// The manager's pages over HTTP: the login first, every kind of page for
// a platform administrator, refusals as pages, paging, and what a
// tenant-scoped and a read-only administrator are offered.
func TestManagerPages(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		a, b := s.Tenant(t, "pga"), s.Tenant(t, "pgb")
		ext := "/api/tenants/" + a + "/extensions/"
		for i := 0; i < 55; i++ {
			s.Do(t, "POST", ext, s.Key, map[string]any{"name": fmt.Sprint(2000 + i)}).Expect(t, 201)
		}
		s.Do(t, "POST", "/api/tenants/"+b+"/extensions/", s.Key, map[string]any{"name": "3001"}).Expect(t, 201)

		if r := s.DoHeaders(t, "GET", "/tenants/"+a+"/extensions/", nil, nil).Expect(t, 303); r.Header.Get("Location") != "/login?next=%2Ftenants%2F"+a+"%2Fextensions%2F" {
			t.Errorf("without a session: Location %q", r.Header.Get("Location"))
		}

		boss := signIn(t, s, createAdmin(t, s, "platform_admin", nil), adminPassword)
		_, menu := getPage(t, s, boss, "/")
		for _, want := range []string{`href="/tenants/` + a + `/"`, `href="/manage/"`} {
			if !strings.Contains(menu, want) {
				t.Errorf("the menu lacks %s", want)
			}
		}
		st, list := getPage(t, s, boss, "/tenants/"+a+"/extensions/")
		if st != 200 || !strings.Contains(list, "1–50 of 55") || !strings.Contains(list, `href="/tenants/`+a+`/extensions/2000"`) ||
			!strings.Contains(list, `rel="next"`) || !strings.Contains(list, `href="/tenants/`+a+`/extensions/new"`) {
			t.Errorf("extension list: %d\n%s", st, list)
		}
		if len(list) > 200<<10 {
			t.Errorf("the list page weighs %d bytes", len(list))
		}
		if _, next := getPage(t, s, boss, "/tenants/"+a+"/extensions/?offset=50"); !strings.Contains(next, "51–55 of 55") || !strings.Contains(next, `rel="prev"`) {
			t.Errorf("second page:\n%s", next)
		}
		st, view := getPage(t, s, boss, "/tenants/"+a+"/extensions/2000")
		if st != 200 || !strings.Contains(view, `data-delete="/api/tenants/`+a+`/extensions/2000"`) || !strings.Contains(view, `href="/tenants/`+a+`/extensions/2000/edit"`) {
			t.Errorf("extension page: %d\n%s", st, view)
		}
		st, form := getPage(t, s, boss, "/tenants/"+a+"/extensions/2000/edit")
		if st != 200 || !strings.Contains(form, `data-method="PUT"`) || !strings.Contains(form, `data-action="/api/tenants/`+a+`/extensions/2000"`) {
			t.Errorf("edit form: %d\n%s", st, form)
		}
		if st, _ := getPage(t, s, boss, "/tenants/"+a+"/extensions/new"); st != 200 {
			t.Errorf("create form: %d", st)
		}
		for _, p := range []string{"/tenants/" + a + "/", "/tenants/" + a + "/branding", "/tenants/" + a + "/branding/edit", "/manage/", "/manage/tenants/", "/manage/tenants/new", "/manage/sip_trunks/new"} {
			if st, body := getPage(t, s, boss, p); st != 200 {
				t.Errorf("GET %s: %d\n%s", p, st, body)
			}
		}
		// The tenant switcher offers both tenants and keeps the page.
		if _, home := getPage(t, s, boss, "/tenants/"+a+"/queues/"); !strings.Contains(home, `<option value="`+b+`">`) || !strings.Contains(home, `name="page" value="queues"`) {
			t.Errorf("no switcher to %s on a tenant page", b)
		}
		if r := s.DoHeaders(t, "GET", "/switch-tenant?tenant="+b+"&page=queues", boss.cookie(), nil).Expect(t, 303); r.Header.Get("Location") != "/tenants/"+b+"/queues/" {
			t.Errorf("switch: Location %q", r.Header.Get("Location"))
		}
		for p, want := range map[string]int{
			"/tenants/" + a + "/nothing/":        404,
			"/tenants/" + a + "/extensions/9999": 404,
			"/tenants/nosuchtenant/extensions/":  404,
			"/manage/extensions/":                404, // a tenant resource has no platform page
			"/tenants/" + a + "/sip_trunks/":     404,
			"/tenants/" + a + "/branding/new":    404,
		} {
			if st, body := getPage(t, s, boss, p); st != want {
				t.Errorf("GET %s: %d, want %d\n%s", p, st, want, body)
			}
		}

		// A tenant administrator of a: its pages; b's and the platform's refused.
		scoped := signIn(t, s, createAdmin(t, s, "tenant_admin", []string{a}), adminPassword)
		_, menu = getPage(t, s, scoped, "/")
		if !strings.Contains(menu, `href="/tenants/`+a+`/"`) || strings.Contains(menu, b) || strings.Contains(menu, `href="/manage/"`) {
			t.Errorf("a tenant administrator's menu:\n%s", menu)
		}
		if st, home := getPage(t, s, scoped, "/tenants/"+a+"/"); st != 200 || strings.Contains(home, "/manage/tenants/"+a+"/edit") || strings.Contains(home, b) || strings.Contains(home, `id="switch-tenant"`) {
			t.Errorf("its tenant's page (no tenant settings to edit, no other tenant, no switcher with one tenant): %d\n%s", st, home)
		}
		for _, p := range []string{"/tenants/" + b + "/", "/tenants/" + b + "/extensions/", "/tenants/" + b + "/extensions/3001", "/manage/", "/manage/tenants/"} {
			if st, body := getPage(t, s, scoped, p); st != 403 || !strings.Contains(body, "Not allowed") {
				t.Errorf("tenant admin GET %s: %d, want 403\n%s", p, st, body)
			}
		}
		// A read-only administrator sees and is offered no change.
		reader := signIn(t, s, createAdmin(t, s, "read_only", []string{a}), adminPassword)
		_, list = getPage(t, s, reader, "/tenants/"+a+"/extensions/")
		_, view = getPage(t, s, reader, "/tenants/"+a+"/extensions/2000")
		if strings.Contains(list, "/extensions/new") || strings.Contains(view, "data-delete") || strings.Contains(view, "/edit") {
			t.Errorf("a read-only administrator is offered changes:\n%s\n%s", list, view)
		}
		for _, p := range []string{"/tenants/" + a + "/extensions/new", "/tenants/" + a + "/extensions/2000/edit"} {
			if st, _ := getPage(t, s, reader, p); st != 403 {
				t.Errorf("read-only GET %s: %d, want 403", p, st)
			}
		}
	})
}

// A CRM list searches, filters and sorts with the API's own parameters;
// a bad one is refused on the page with the API's reason.
func TestManagerListSearch(t *testing.T) {
	s := apptest.Start(t, apptest.AnyEnv(t), nil)
	tenant := s.Tenant(t, "srch")
	for _, n := range []string{"Alice", "Bob", "Carol"} {
		s.Do(t, "POST", "/api/tenants/"+tenant+"/contacts/", s.Key, map[string]any{"first_name": n}).Expect(t, 201)
	}
	w := signIn(t, s, createAdmin(t, s, "platform_admin", nil), adminPassword)
	_, all := getPage(t, s, w, "/tenants/"+tenant+"/contacts/")
	_, found := getPage(t, s, w, "/tenants/"+tenant+"/contacts/?q=bo&sort=-created_at")
	if !strings.Contains(all, "of 3") || !strings.Contains(found, "1–1 of 1") || !strings.Contains(found, ">Bob<") || strings.Contains(found, ">Alice<") {
		t.Errorf("search:\n%s", found)
	}
	if !strings.Contains(all, `name="q"`) || !strings.Contains(all, `<option>-created_at</option>`) {
		t.Errorf("the list offers no search or sort:\n%s", all)
	}
	if st, bad := getPage(t, s, w, "/tenants/"+tenant+"/contacts/?sort=shoe_size"); st != 400 || !strings.Contains(bad, "sort: must be one of") {
		t.Errorf("a bad sort: %d\n%s", st, bad)
	}
}

// ?dry_run=true runs every check of a write and stores nothing: the
// answer is the write's (with the would-be object), a clash or a bad value
// is refused as the write would be.
func TestDryRunStoresNothing(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "dry")
		base := "/api/tenants/" + tenant + "/extensions/"
		r := s.Do(t, "POST", base+"?dry_run=true", s.Key, map[string]any{"name": "1001", "description": "Ann"}).Expect(t, 201)
		if r.Map(t)["name"] != "1001" || r.Header.Get("Location") != "" {
			t.Errorf("dry-run create: %s, Location %q", r.Body, r.Header.Get("Location"))
		}
		s.Do(t, "GET", base+"1001", s.Key, nil).Expect(t, 404)
		s.Do(t, "POST", base, s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
		if code := s.Do(t, "POST", base+"?dry_run=1", s.Key, map[string]any{"name": "1001"}).Expect(t, 409).Code(t); code != "conflict" {
			t.Errorf("a clash in a dry run: %s", code)
		}
		bad := s.Do(t, "POST", base+"?dry_run=true", s.Key, map[string]any{"name": "x"}).Expect(t, 400).Map(t)
		if f, _ := bad["fields"].(map[string]any); f["name"] == nil {
			t.Errorf("a bad value in a dry run: %v", bad)
		}
		if got := s.Do(t, "PUT", base+"1001?dry_run=true", s.Key, map[string]any{"description": "Bea"}).Expect(t, 200).Map(t); got["description"] != "Bea" {
			t.Errorf("dry-run update answers %v", got)
		}
		if got := s.Do(t, "GET", base+"1001", s.Key, nil).Expect(t, 200).Map(t); got["description"] == "Bea" {
			t.Error("a dry-run update was stored")
		}
		// A dry run is not remembered as the answer of an Idempotency-Key.
		h := map[string]string{"X-API-Key": s.Key, "Idempotency-Key": "dry-then-real"}
		s.DoHeaders(t, "POST", base+"?dry_run=true", h, map[string]any{"name": "1002"}).Expect(t, 201)
		s.DoHeaders(t, "POST", base, h, map[string]any{"name": "1002"}).Expect(t, 201)
		s.Do(t, "GET", base+"1002", s.Key, nil).Expect(t, 200)
		if f := s.Do(t, "POST", base+"?dry_run=maybe", s.Key, map[string]any{"name": "1003"}).Expect(t, 400).Map(t)["fields"].(map[string]any); f["dry_run"] == nil {
			t.Errorf("dry_run=maybe: %v", f)
		}
	})
}
