package routes_test

import (
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/platform/faultproxy"
)

// Seen (issue 29): with MariaDB stopped every API request answered
// 500 {"error":"internal error"}; a client could not tell an outage from
// a bug, nor when to try again. A database that cannot be reached answers
// 503 database_unavailable with Retry-After, writes change nothing, and
// everything works again once the database is back.
func TestDatabaseOutageAnswers503(t *testing.T) {
	for _, e := range apptest.Envs(t) {
		if e.DB.Name != "mysql" {
			continue // an embedded SQLite file has no outage
		}
		t.Run(e.Name, func(t *testing.T) {
			var proxy *faultproxy.Proxy
			e.DB.URL, proxy = faultproxy.URL(t, e.DB.URL)
			s := apptest.Start(t, e, nil)
			tenant := s.Tenant(t, "outage")
			base := "/api/tenants/" + tenant + "/extensions/"
			s.Do(t, "POST", base, s.Key, map[string]any{"name": "1001"}).Expect(t, 201)

			proxy.Cut()
			for _, r := range []*apptest.Response{
				s.Do(t, "GET", base, s.Key, nil),
				s.Do(t, "GET", base+"1001", s.Key, nil),
				s.Do(t, "POST", base, s.Key, map[string]any{"name": "1002"}),
				s.Do(t, "PUT", base+"1001", s.Key, map[string]any{"callerid": "Eve <1001>"}),
			} {
				r.Expect(t, 503).ExpectHeader(t, "Retry-After", "5")
				if r.Code(t) != "database_unavailable" {
					t.Errorf("code %q, want database_unavailable; body %s", r.Code(t), r.Body)
				}
			}

			proxy.Restore(t)
			list := s.Do(t, "GET", base, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "1")
			_ = list
			if got := s.Do(t, "GET", base+"1001", s.Key, nil).Expect(t, 200).Map(t)["callerid"]; got == "Eve <1001>" {
				t.Error("a write answered 503 was applied")
			}
			s.Do(t, "POST", base, s.Key, map[string]any{"name": "1002"}).Expect(t, 201)
		})
	}
}

// Seen (issue 29): during a Redis outage /readyz answered 503 on every
// replica, though writes and the XML path kept working, so a load
// balancer that checks it took the whole installation out. Readiness now
// says what the replica can still do.
func TestReadinessDuringRedisOutage(t *testing.T) {
	e := apptest.AnyEnv(t)
	m := miniredis.RunT(t)
	var proxy *faultproxy.Proxy
	e.RedisURL, proxy = faultproxy.URL(t, "redis://"+m.Addr()+"/0")
	s := apptest.Start(t, e, nil)
	for _, path := range []string{"/readyz", "/readyz/api", "/readyz/xml"} {
		s.Do(t, "GET", path, "", nil).Expect(t, 200)
	}
	proxy.Cut()
	for _, path := range []string{"/readyz", "/readyz/api", "/readyz/xml"} {
		r := s.Do(t, "GET", path, "", nil).Expect(t, 200)
		checks, _ := r.Map(t)["checks"].(map[string]any)
		if redis, _ := checks["redis"].(string); !strings.HasPrefix(redis, "unavailable") || checks["database"] != "ok" {
			t.Errorf("%s checks during a Redis outage: %v", path, checks)
		}
	}
	// Writes go on meanwhile.
	tenant := s.Tenant(t, "redisdown")
	s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
}

// With the database unreachable the API is not ready, and readiness says
// which part without the driver's text.
func TestReadinessDuringDatabaseOutage(t *testing.T) {
	for _, e := range apptest.Envs(t) {
		if e.DB.Name != "mysql" {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			var proxy *faultproxy.Proxy
			e.DB.URL, proxy = faultproxy.URL(t, e.DB.URL)
			s := apptest.Start(t, e, nil)
			s.Do(t, "GET", "/readyz/api", "", nil).Expect(t, 200)
			proxy.Cut()
			for _, path := range []string{"/readyz", "/readyz/api"} {
				r := s.Do(t, "GET", path, "", nil).Expect(t, 503)
				checks, _ := r.Map(t)["checks"].(map[string]any)
				if checks["database"] != "unavailable" {
					t.Errorf("%s: database check %v", path, checks["database"])
				}
				if strings.Contains(string(r.Body), "dial tcp") || strings.Contains(string(r.Body), "connection refused") {
					t.Errorf("%s: driver text reached the client: %s", path, r.Body)
				}
			}
			proxy.Restore(t)
			s.Do(t, "GET", "/readyz", "", nil).Expect(t, 200)
		})
	}
}
