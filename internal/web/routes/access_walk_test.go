package routes_test

import (
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// walker is one kind of caller in the route walk, described by what the
// security model says it may do (independently of the route table).
type walker struct {
	name     string
	headers  map[string]string
	platform bool   // platform key or platform_admin: everything
	inTenant bool   // may act in the walked tenant
	user     string // a user key's extension
	apiKey   bool   // an API key (action endpoints take keys only)
	tenKey   bool   // a tenant key (manages its tenant's keys)
	perms    map[string]bool
	readOnly bool
	session  bool // an administrator's browser session (cookie and CSRF token)
}

func (w walker) can(perm string) bool {
	if w.readOnly && perm != "config.read" && perm != "calls.read" {
		return false
	}
	return w.perms == nil || w.perms[perm]
}

// walkRoute is one route of the OpenAPI document (generated from the route table).
type walkRoute struct{ method, path string }

// TestRouteWalk calls every route of the route table with every kind of
// principal and asserts each status: 403 where the credential may not, the
// route's own answer (list 200, unknown object 404, empty body 400, …)
// where it may. Routes come from /api/openapi.json, which is generated
// from the route table, so a new route is walked automatically and fails
// here until the walk knows who may call it.
func TestRouteWalk(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant, other := s.Tenant(t, "walk"), s.Tenant(t, "walko")
		for _, tn := range []string{tenant, other} {
			for _, ext := range []string{"1001", "1002"} {
				s.Do(t, "POST", "/api/tenants/"+tn+"/extensions/", s.Key, map[string]any{"name": ext}).Expect(t, 201)
			}
		}
		admin := func(role string, tenants []string) map[string]string {
			return basicAuth(createAdmin(t, s, role, tenants), adminPassword)
		}
		// A session has exactly its administrator's rights.
		session := func(role string, tenants []string) map[string]string {
			return signIn(t, s, createAdmin(t, s, role, tenants), adminPassword).headers()
		}
		key := func(fields map[string]any) map[string]string {
			return map[string]string{"X-API-Key": s.KeyFor(t, fields)}
		}
		all := []string{tenant}
		walkers := []walker{
			{name: "platform key", headers: map[string]string{"X-API-Key": s.Key}, platform: true, inTenant: true, apiKey: true},
			{name: "platform key config.read only", headers: key(map[string]any{"permissions": []string{"config.read"}}), platform: true, inTenant: true, apiKey: true, perms: map[string]bool{"config.read": true}},
			{name: "tenant key", headers: key(map[string]any{"tenant": tenant}), inTenant: true, apiKey: true, tenKey: true},
			{name: "tenant key of another tenant", headers: key(map[string]any{"tenant": other}), apiKey: true, tenKey: true},
			{name: "tenant key config.read only", headers: key(map[string]any{"tenant": tenant, "permissions": []string{"config.read"}}), inTenant: true, apiKey: true, tenKey: true, perms: map[string]bool{"config.read": true}},
			{name: "tenant key without calls.control", headers: key(map[string]any{"tenant": tenant, "permissions": []string{"config.read", "config.write", "calls.read"}}), inTenant: true, apiKey: true, tenKey: true, perms: map[string]bool{"config.read": true, "config.write": true, "calls.read": true}},
			{name: "user key 1001", headers: key(map[string]any{"tenant": tenant, "extension": "1001"}), inTenant: true, apiKey: true, user: "1001"},
			{name: "user key 1002 (other extension)", headers: key(map[string]any{"tenant": tenant, "extension": "1002"}), inTenant: true, apiKey: true, user: "1002"},
			{name: "user key of another tenant", headers: key(map[string]any{"tenant": other, "extension": "1001"}), apiKey: true, user: "1001"},
			{name: "platform_admin", headers: admin("platform_admin", nil), platform: true, inTenant: true},
			{name: "tenant_admin with tenant", headers: admin("tenant_admin", all), inTenant: true},
			{name: "tenant_admin without tenants", headers: admin("tenant_admin", nil)},
			{name: "tenant_admin of another tenant", headers: admin("tenant_admin", []string{other})},
			{name: "reseller_admin with tenant", headers: admin("reseller_admin", all), inTenant: true},
			{name: "reseller_admin without tenants", headers: admin("reseller_admin", nil)},
			{name: "read_only with tenant", headers: admin("read_only", all), inTenant: true, readOnly: true},
			{name: "read_only without tenants", headers: admin("read_only", nil), readOnly: true},
			{name: "platform_admin session", headers: session("platform_admin", nil), platform: true, inTenant: true, session: true},
			{name: "tenant_admin session with tenant", headers: session("tenant_admin", all), inTenant: true, session: true},
			{name: "tenant_admin session of another tenant", headers: session("tenant_admin", []string{other}), session: true},
			{name: "read_only session with tenant", headers: session("read_only", all), inTenant: true, readOnly: true, session: true},
			{name: "no credential", headers: map[string]string{}},
		}

		var doc struct {
			Paths map[string]map[string]any `json:"paths"`
		}
		s.Do(t, "GET", "/api/openapi.json", "", nil).Expect(t, 200).JSON(t, &doc)
		var routes []walkRoute
		for p, ops := range doc.Paths {
			for m := range ops {
				routes = append(routes, walkRoute{strings.ToUpper(m), p})
			}
		}
		sort.Slice(routes, func(i, j int) bool { return routes[i].path+routes[i].method < routes[j].path+routes[j].method })
		if len(routes) < 100 {
			t.Fatalf("only %d routes in the OpenAPI document", len(routes))
		}

		for _, r := range routes {
			if _, ok := classify(r); !ok {
				t.Errorf("%s %s: the walk does not know who may call this route; add it to classify", r.method, r.path)
			}
		}
		// The walk's requests change nothing another walker's answer
		// depends on, so the walkers go in parallel (most of a request's
		// time is spent waiting on the database and Redis).
		var checked atomic.Int64
		t.Run("walkers", func(t *testing.T) {
			for _, w := range walkers {
				t.Run(w.name, func(t *testing.T) {
					t.Parallel()
					checked.Add(int64(walk(t, s, routes, tenant, w)))
				})
			}
		})
		t.Logf("walked %d routes, %d requests", len(routes), checked.Load())
	})
}

// walk sends every classified route's request as one walker and checks
// each status; it returns how many requests it sent.
func walk(t *testing.T, s *apptest.Server, routes []walkRoute, tenant string, w walker) int {
	checked := 0
	for _, r := range routes {
		cls, ok := classify(r)
		if !ok || cls.skip {
			continue
		}
		path := cls.fill(r, tenant)
		want := cls.expect(r, w)
		if cls.skipAllowed && want != 401 && want != 403 {
			continue
		}
		var body any
		if r.method == "POST" || r.method == "PUT" {
			body = map[string]any{}
		}
		got := s.DoHeaders(t, r.method, path, w.headers, body)
		checked++
		if got.Status != want {
			t.Errorf("%s %s as %s: status %d, want %d: %.200s", r.method, path, w.name, got.Status, want, got.Body)
		}
	}
	return checked
}

// routeClass is who may call a kind of route and what it answers then.
type routeClass struct {
	skip bool
	// allowed reports whether a walker may call the route.
	allowed func(r walkRoute, w walker) bool
	// answer is the status of an allowed call with the walk's request.
	answer func(r walkRoute, w walker) int
	// keyOnly routes refuse Basic credentials with 401.
	keyOnly bool
	// orSession lets a keyOnly route take the browser session too (the
	// dashboard's call actions).
	orSession bool
	// skipAllowed leaves allowed calls to another test (they change state
	// the walk depends on).
	skipAllowed bool
}

func (c routeClass) expect(r walkRoute, w walker) int {
	switch {
	case c.allowed == nil:
		return c.answer(r, w)
	case len(w.headers) == 0, c.keyOnly && !w.apiKey && !(c.orSession && w.session):
		return 401
	case !c.allowed(r, w):
		return 403
	}
	return c.answer(r, w)
}

// fill puts the walked tenant and objects into a path template: the
// tenant and its extension 1001 (which exist) for reads and changes,
// unknown ids elsewhere; cross-tenant reads name the tenant in ?tenant=.
func (c routeClass) fill(r walkRoute, tenant string) string {
	p := strings.ReplaceAll(r.path, "{tenant}", tenant)
	if strings.HasPrefix(p, "/manage/") {
		p = strings.ReplaceAll(p, "{resource}", "locations")
	}
	p = strings.ReplaceAll(p, "{resource}", "extensions")
	switch {
	case r.method == "DELETE" && strings.HasPrefix(p, "/api/tenants/{key}"):
		return strings.Replace(p, "{key}", "no_such_tenant", 1)
	case strings.HasPrefix(p, "/api/tenants/{key}"):
		return strings.Replace(p, "{key}", tenant, 1)
	case r.method == "DELETE" && strings.Contains(p, "/extensions/{key}"):
		return strings.Replace(p, "{key}", "1999", 1)
	case strings.Contains(p, "/extensions/{key}"):
		return strings.Replace(p, "{key}", "1001", 1)
	case p == "/api/telephony/channels" || p == "/api/reports/cdrs" || p == "/api/reports/recordings" || p == "/api/telephony/events" || p == "/api/messaging/messages":
		return p + "?tenant=" + tenant
	case strings.HasSuffix(p, "{profile}"):
		return strings.Replace(p, "{profile}", "heap", 1)
	case p == "/api/telephony/channels/{id}":
		return "/api/telephony/channels/SIP%2F1001-" + tenant + "-0000abcd"
	}
	for _, param := range []string{"{key}", "{id}"} {
		p = strings.ReplaceAll(p, param, "999999")
	}
	return p
}

func perm(method, read, write string) string {
	if method == "GET" {
		return read
	}
	return write
}

// crudAnswer is what an allowed caller gets from the walk's request: lists
// and singletons 200, an unknown object 404, an empty create 400.
func crudAnswer(r walkRoute, _ walker) int {
	item := strings.HasSuffix(r.path, "}")
	switch {
	case r.method == "POST" && strings.HasSuffix(r.path, "/leads/"):
		return 201 // a lead needs no field
	case strings.Contains(r.path, "webhooks/{id}/"):
		return 404 // deliveries, replay, test, enable of webhook 999999
	case r.method == "POST":
		return 400
	case r.method == "DELETE":
		return 404
	case r.method != "DELETE" && (strings.Contains(r.path, "/extensions/{key}") || strings.HasPrefix(r.path, "/api/tenants/{key}")):
		return 200 // extension 1001 and the walked tenant exist
	case item, strings.HasSuffix(r.path, "/voice_prompts/{id}/audio"):
		return 404 // the recording of prompt 999999
	}
	return 200
}

func fixed(status int) func(walkRoute, walker) int {
	return func(walkRoute, walker) int { return status }
}

func classify(r walkRoute) (routeClass, bool) {
	p := r.path
	switch {
	case p == "/healthz" || strings.HasPrefix(p, "/readyz") || p == "/apitest/openapi/" || strings.HasPrefix(p, "/api/openapi."):
		return routeClass{answer: fixed(200)}, true
	case p == "/login" && r.method == "GET" || p == "/static/web.css":
		return routeClass{answer: fixed(200)}, true
	case p == "/assets/{file}":
		// The walk's placeholder names no embedded file.
		return routeClass{answer: fixed(404)}, true
	case p == "/dashboard/calls":
		// A page: sessions that may read calls see it, other sessions are
		// refused, everyone else is sent to the login.
		return routeClass{answer: func(r walkRoute, w walker) int {
			switch {
			case !w.session:
				return 303
			case !w.can("calls.read"):
				return 403
			}
			return 200
		}}, true
	// The team-chat web client is public (it logs in to ejabberd itself):
	// without a chat server its pages answer 503, placeholder files and
	// pictures 404, whoever calls.
	case p == "/chat/" || p == "/chat/config.json" || p == "/chat/start.js":
		return routeClass{answer: fixed(503)}, true
	case strings.HasPrefix(p, "/chat/dist/") || strings.HasPrefix(p, "/chat/avatars/"):
		return routeClass{answer: fixed(404)}, true
	case r.method == "POST" && (p == "/login" || p == "/logout" || strings.HasPrefix(p, "/menu/")):
		// The pages' forms: the walk's JSON body is refused before
		// anything else (their own tests post forms).
		return routeClass{answer: fixed(415)}, true
	case p == "/static/manage.js" || p == "/static/manage_live.js" || p == "/static/manage_touches.js":
		return routeClass{answer: fixed(200)}, true
	case p == "/switch-tenant":
		// Without a tenant chosen the switcher goes back to the menu; no
		// session: to the login.
		return routeClass{answer: fixed(303)}, true
	case strings.HasPrefix(p, "/tenants/{tenant}/") || strings.HasPrefix(p, "/manage/"):
		// The manager's pages (the walk fills extensions and locations):
		// sessions in their scope see them, forms (and the imports tool)
		// only with a right to change; everyone else is sent to the login.
		return routeClass{answer: func(r walkRoute, w walker) int {
			platform := strings.HasPrefix(r.path, "/manage/")
			form := strings.HasSuffix(r.path, "/new") || strings.HasSuffix(r.path, "/edit") || strings.HasSuffix(r.path, "/tools/imports")
			switch {
			case !w.session:
				return 303
			case platform && !w.platform, !platform && !w.inTenant, form && w.readOnly:
				return 403
			case platform && strings.Contains(r.path, "{key}"), strings.HasSuffix(r.path, "/deliveries"):
				return 404 // location or webhook 999999
			}
			return 200
		}}, true
	case p == "/":
		// The menu: sessions see it, everyone else is sent to the login.
		return routeClass{answer: func(r walkRoute, w walker) int {
			if w.session {
				return 200
			}
			return 303
		}}, true
	case p == "/session":
		// The session's own description: other credentials are no session.
		return routeClass{answer: func(r walkRoute, w walker) int {
			if w.session {
				return 200
			}
			return 401
		}}, true
	case p == "/fs/xml" || strings.HasPrefix(p, "/fs/media/") || strings.HasPrefix(p, "/fs/fax/") || strings.HasPrefix(p, "/integration/"):
		// FreeSWITCH's and providers' own credentials (node Basic/allow
		// list, webhook tokens, signatures): their own tests.
		return routeClass{skip: true}, true
	case p == "/widgets/{public_id}/call":
		// Public: a widget's public id and its allowed origins, no
		// credential; "{public_id}" names no widget (widgets_test.go).
		return routeClass{answer: fixed(404)}, true
	case p == "/provision/{file}":
		// Phones' own provisioning credentials, never API ones: the walk's
		// "{file}" names no MAC, so it is not found for anyone (the
		// credentials are tested in provision_test.go).
		return routeClass{answer: fixed(404)}, true
	case p == "/api/tenants/" && r.method == "GET":
		// Everyone but a user key lists the tenants it may see.
		return routeClass{allowed: func(r walkRoute, w walker) bool { return w.can("config.read") && w.user == "" }, answer: fixed(200)}, true
	case p == "/api/tenants/{key}" && r.method == "GET":
		return routeClass{allowed: func(r walkRoute, w walker) bool {
			return w.can("config.read") && w.inTenant && w.user == ""
		}, answer: fixed(200)}, true
	case p == "/integration/webhooks/{token}":
		// The token is the credential: an unknown one is no_service for anyone.
		return routeClass{answer: fixed(404)}, true
	case strings.HasPrefix(p, "/api/tenants/{tenant}/incoming_webhooks/"):
		// Managing incoming webhooks needs incoming_webhooks.manage, not config.write.
		return routeClass{allowed: func(r walkRoute, w walker) bool {
			return w.can(perm(r.method, "config.read", "incoming_webhooks.manage")) && w.inTenant && w.user == ""
		}, answer: func(r walkRoute, w walker) int {
			if strings.HasSuffix(r.path, "/regenerate") {
				return 404 // no webhook 999999
			}
			return crudAnswer(r, w)
		}}, true
	case p == "/api/connect/message/{tenant}":
		// Any key in the tenant with connect.post, user keys as themselves;
		// the empty body is refused (to and body are required).
		return routeClass{keyOnly: true, allowed: func(r walkRoute, w walker) bool { return w.can("connect.post") && w.inTenant }, answer: fixed(400)}, true
	case strings.HasPrefix(p, "/api/connect/agent/{tenant}"):
		// Tenant and platform keys with connect.agents; the walk runs
		// without a chat server, so a valid rotate answers 503.
		return routeClass{keyOnly: true, allowed: func(r walkRoute, w walker) bool {
			return w.can("connect.agents") && w.inTenant && w.user == ""
		}, answer: func(r walkRoute, w walker) int {
			if strings.HasSuffix(r.path, "/rotate") {
				return 503
			}
			return 400 // extension is required
		}}, true
	case p == "/api/tenants/{tenant}/recordedcalls/{id}/audio" || p == "/api/tenants/{tenant}/cdrs/{id}/recording":
		// Recordings are call data: a download reads calls, not
		// configuration, in the tenant (unknown id here: 404).
		return routeClass{allowed: func(r walkRoute, w walker) bool {
			return w.can("calls.read") && w.inTenant && w.user == ""
		}, answer: fixed(404)}, true
	case p == "/api/tenants/{tenant}/routing/trace":
		return routeClass{allowed: func(r walkRoute, w walker) bool {
			return w.can("config.read") && w.inTenant && w.user == ""
		}, answer: fixed(400)}, true // "to" is required
	case strings.HasPrefix(p, "/api/tenants/{tenant}/"):
		return routeClass{allowed: func(r walkRoute, w walker) bool {
			if !w.can(perm(r.method, "config.read", "config.write")) || !w.inTenant {
				return false
			}
			if w.user != "" {
				// A user key reads and changes (phone settings) its own extension only.
				return r.path == "/api/tenants/{tenant}/extensions/{key}" && w.user == "1001" && (r.method == "GET" || r.method == "PUT")
			}
			return true
		}, answer: crudAnswer}, true
	case p == "/metrics" || strings.HasPrefix(p, "/debug/pprof/"):
		// Metrics and profiles: any platform credential. CPU profiles and
		// traces take seconds, so only refusals are walked for those.
		slow := p == "/debug/pprof/profile" || p == "/debug/pprof/trace"
		return routeClass{allowed: func(r walkRoute, w walker) bool { return w.platform }, answer: fixed(200), skipAllowed: slow}, true
	case p == "/api/mfa":
		// An administrator enrols itself; enrolling in the walk would switch
		// MFA on for the walkers, so allowed calls are left to TestMFA.
		return routeClass{allowed: func(r walkRoute, w walker) bool { return !w.apiKey }, answer: fixed(0), skipAllowed: true}, true
	case p == "/api/key/" || p == "/api/key/{id}":
		return routeClass{allowed: func(r walkRoute, w walker) bool {
			return w.can("keys.manage") && (w.platform || w.tenKey)
		}, answer: func(r walkRoute, w walker) int {
			if r.method == "POST" && !w.platform {
				return 403 // a key without "tenant" would be a platform key
			}
			return crudAnswer(r, w)
		}}, true
	case p == "/api/routing/trace":
		return routeClass{allowed: func(r walkRoute, w walker) bool { return w.platform && w.can("config.read") }, answer: fixed(400)}, true
	case p == "/api/telephony/channels" || p == "/api/reports/cdrs" || p == "/api/reports/recordings" || p == "/api/telephony/events":
		return routeClass{allowed: func(r walkRoute, w walker) bool {
			return w.can("calls.read") && (w.platform || w.inTenant) && w.user == ""
		}, answer: func(r walkRoute, w walker) int {
			if r.path == "/api/telephony/events" {
				return 406 // the walk sends no Accept: text/event-stream
			}
			return 200
		}}, true
	case p == "/api/telephony/channels/{id}":
		// Any reader reaches the lookup; the channel's tenant and extension
		// are checked against the channel (unknown here: 404).
		return routeClass{allowed: func(r walkRoute, w walker) bool { return w.can("calls.read") }, answer: fixed(404)}, true
	case p == "/api/telephony/calls/{id}":
		// Like a channel: any reader reaches the lookup, the call's tenant
		// is checked against the call (unknown here: 404).
		return routeClass{allowed: func(r walkRoute, w walker) bool { return w.can("calls.read") }, answer: fixed(404)}, true
	case p == "/api/sip_trunks/{key}/status":
		// As reading a trunk; the walk's trunk does not exist (404).
		return routeClass{allowed: func(r walkRoute, w walker) bool { return w.platform && w.can("config.read") }, answer: fixed(404)}, true
	case p == "/api/telephony/nodes":
		return routeClass{allowed: func(r walkRoute, w walker) bool { return w.platform && w.can("calls.read") }, answer: fixed(200)}, true
	case p == "/api/telephony/hangup" || p == "/api/telephony/transfer" || p == "/api/telephony/record":
		return routeClass{keyOnly: true, orSession: true, allowed: func(r walkRoute, w walker) bool { return w.can("calls.control") }, answer: fixed(400)}, true
	case strings.HasPrefix(p, "/api/telephony/") && r.method == "POST":
		return routeClass{keyOnly: true, allowed: func(r walkRoute, w walker) bool { return w.can("calls.control") }, answer: fixed(400)}, true
	case p == "/api/messaging/send":
		return routeClass{keyOnly: true, allowed: func(r walkRoute, w walker) bool { return w.can("messaging.send") }, answer: fixed(400)}, true
	case p == "/api/messaging/messages":
		// Senders and configuration readers, narrowed by ?tenant=.
		return routeClass{allowed: func(r walkRoute, w walker) bool {
			return (w.can("messaging.send") || w.can("config.read")) && (w.platform || w.inTenant)
		}, answer: fixed(200)}, true
	case p == "/api/messaging/messages/{id}":
		// The message's tenant is checked against the message (unknown here: 404).
		return routeClass{allowed: func(r walkRoute, w walker) bool { return w.can("messaging.send") || w.can("config.read") }, answer: fixed(404)}, true
	case strings.HasPrefix(p, "/api/") && !strings.HasPrefix(p, "/api/tenants/{tenant}"):
		// Platform resources (and creating, changing, deleting tenants).
		return routeClass{allowed: func(r walkRoute, w walker) bool {
			return w.platform && w.can(perm(r.method, "config.read", "config.write"))
		}, answer: crudAnswer}, true
	}
	return routeClass{}, false
}
