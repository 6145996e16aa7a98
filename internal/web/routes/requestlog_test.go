package routes_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// TestRequestLogOneInfoLinePerRequest: every request, refused ones
// included, leaves one info line with status, latency, method, route
// pattern, principal and request id, and never a credential.
func TestRequestLogOneInfoLinePerRequest(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "logs")
		other := s.Tenant(t, "logsother")
		tenantKey := s.KeyFor(t, map[string]any{"tenant": tenant})
		if _, err := s.Store.SetAdmin(t.Context(), "logadmin", "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		basic := func(user, pass string) string {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
		}
		cases := []struct {
			id, method, path string
			headers          map[string]string
			status           int
			route, principal string
		}{
			{"req-ok", "GET", "/api/tenants/" + tenant + "/extensions/", map[string]string{"X-API-Key": s.Key}, 200, "/api/tenants/:tenant/extensions/", "key:" + s.Key[:8]},
			{"req-404", "GET", "/api/tenants/" + tenant + "/extensions/1999", map[string]string{"X-API-Key": s.Key}, 404, "/api/tenants/:tenant/extensions/:key", "key:" + s.Key[:8]},
			{"req-401", "GET", "/api/tenants/", nil, 401, "/api/tenants/", "-"},
			{"req-401-key", "GET", "/api/tenants/", map[string]string{"X-API-Key": "sb_not-a-real-key-at-all"}, 401, "/api/tenants/", "-"},
			{"req-401-basic", "GET", "/api/tenants/", map[string]string{"Authorization": basic("logadmin", "wrong password here")}, 401, "/api/tenants/", "-"},
			{"req-403", "GET", "/api/tenants/" + other + "/extensions/", map[string]string{"X-API-Key": tenantKey}, 403, "/api/tenants/:tenant/extensions/", "key:" + tenantKey[:8]},
			{"req-admin", "GET", "/api/tenants/", map[string]string{"Authorization": basic("logadmin", "correct horse battery")}, 200, "/api/tenants/", "admin:logadmin"},
			{"req-noroute", "GET", "/api/nothing-here", map[string]string{"X-API-Key": s.Key}, 404, "unmatched", "-"},
		}
		for _, c := range cases {
			h := map[string]string{"X-Request-ID": c.id}
			for k, v := range c.headers {
				h[k] = v
			}
			s.DoHeaders(t, c.method, c.path, h, nil).Expect(t, c.status)
		}
		s.DoHeaders(t, "GET", "/healthz", map[string]string{"X-Request-ID": "req-probe"}, nil).Expect(t, 200)

		lines := s.Logs.Lines(t)
		for _, c := range cases {
			var found []map[string]any
			for _, l := range lines {
				if l["request_id"] == c.id && l["msg"] == "http request" {
					found = append(found, l)
				}
			}
			if len(found) != 1 {
				t.Errorf("%s: %d request lines, want 1", c.id, len(found))
				continue
			}
			l := found[0]
			lat, _ := l["latency_ms"].(float64)
			if l["level"] != "INFO" || l["status"] != float64(c.status) || l["method"] != c.method ||
				l["route"] != c.route || l["principal"] != c.principal || lat <= 0 {
				t.Errorf("%s: log line %v; want INFO, status %d, %s, route %s, principal %s, latency > 0",
					c.id, l, c.status, c.method, c.route, c.principal)
			}
		}
		for _, l := range lines {
			if l["request_id"] == "req-probe" {
				t.Errorf("health probes stay at debug, found %v", l)
			}
		}
		text := s.Logs.String()
		for _, secret := range []string{s.Key, tenantKey, "correct horse battery", "wrong password here", "sb_not-a-real-key-at-all"} {
			if strings.Contains(text, secret) {
				t.Errorf("the log contains a credential %q", secret)
			}
		}
	})
}

// Issue 28: FreeSWITCH fetches /fs/xml tens of thousands of times a
// second, so a fetch leaves no log line by default (the metrics count
// it); SWITCHBOARD_XML_ACCESS_LOG samples them at info (every n-th for a
// share of 1/n) and SWITCHBOARD_XML_SLOW_FETCH logs slow ones at warn.
func TestXMLFetchLogLines(t *testing.T) {
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	fetch := func(t *testing.T, s *apptest.Server, id string) {
		h := map[string]string{"X-Request-ID": id}
		for k, v := range form {
			h[k] = v
		}
		s.DoHeaders(t, "POST", "/fs/xml", h, "section=directory&purpose=gateways").Expect(t, 200)
	}
	const fetches = 20
	for _, c := range []struct {
		name   string
		env    map[string]string
		level  any // of every line
		logged int // lines of the fetches
	}{
		{"default", nil, nil, 0},
		{"every fetch", map[string]string{"SWITCHBOARD_XML_ACCESS_LOG": "1"}, "INFO", fetches},
		{"one in four", map[string]string{"SWITCHBOARD_XML_ACCESS_LOG": "0.25"}, "INFO", fetches / 4},
		{"slow", map[string]string{"SWITCHBOARD_XML_SLOW_FETCH": "1ns"}, "WARN", fetches},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := apptest.Start(t, apptest.AnyEnv(t), c.env)
			counted := func() float64 {
				return value(scrape(t, s.URL+"/metrics", s.Key), "switchboard_http_requests_total", map[string]string{"route": "/fs/xml", "status": "200"})
			}
			before := max(counted(), 0)
			ids := map[any]bool{}
			for i := range fetches {
				id := fmt.Sprintf("xml-%d", i)
				ids[id] = true
				fetch(t, s, id)
			}
			got := 0
			for _, l := range s.Logs.Lines(t) {
				if ids[l["request_id"]] {
					got++
					if l["msg"] != "http request" || l["level"] != c.level || l["route"] != "/fs/xml" {
						t.Errorf("log line %v, want an http request line at %v", l, c.level)
					}
				}
			}
			if got != c.logged {
				t.Errorf("%d fetches left %d log lines, want %d", fetches, got, c.logged)
			}
			if n := counted() - before; n != fetches {
				t.Errorf("the metrics counted %v fetches, want %d", n, fetches)
			}
		})
	}
}
