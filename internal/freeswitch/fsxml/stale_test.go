package fsxml_test

import (
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// TestChangedCredentialsNeverServedAfterRedisFault (security issue 9, item
// 2): directory documents are cached on two replicas; Redis fails while a
// SIP secret changes and another extension is disabled (both answer 200);
// once Redis is back, neither replica ever serves the old a1-hash or the
// disabled user again, although the generation bump of the write was lost.
func TestChangedCredentialsNeverServedAfterRedisFault(t *testing.T) {
	for _, e := range apptest.Envs(t) {
		t.Run(e.Name, func(t *testing.T) {
			m := miniredis.RunT(t)
			e.RedisURL = "redis://" + m.Addr() + "/0"
			a := apptest.Start(t, e, nil)
			b := apptest.Start(t, e, nil) // a second replica on the same database and Redis
			tenant := seedExtension(t, a)
			a.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", a.Key, map[string]any{"name": "2999", "first_name": "Zed", "sip_secret": "Secret-2999-abcdef"}).Expect(t, 201)
			auth := func(ext string) []byte {
				user := ext + "-" + tenant
				return fakefs.FormWith(capture(t, "009"), "user", user, "domain", "sip.test", "key_value", "sip.test",
					"sip_auth_username", user, "sip_auth_realm", "sip.test")
			}
			old1000 := a1("1000-"+tenant, "sip.test", secret1000)
			for _, s := range []*apptest.Server{a, b} {
				for range 2 { // the second fetch is served from process memory
					if got := fetchXML(t, s, auth("1000")).param("param", "a1-hash"); got != old1000 {
						t.Fatalf("before: a1-hash %q", got)
					}
					if doc := fetchXML(t, s, auth("2999")); doc.notFound() {
						t.Fatal("before: 2999 not found")
					}
				}
			}

			m.SetError("LOADING Redis is loading the dataset in memory")
			a.Do(t, "PUT", "/api/tenants/"+tenant+"/extensions/1000", a.Key, map[string]any{"sip_secret": "Changed-secret-777"}).Expect(t, 200)
			a.Do(t, "PUT", "/api/tenants/"+tenant+"/extensions/2999", a.Key, map[string]any{"enabled": false}).Expect(t, 200)
			time.Sleep(600 * time.Millisecond) // the outage lasts a while
			m.SetError("")

			new1000 := a1("1000-"+tenant, "sip.test", "Changed-secret-777")
			deadline := time.Now().Add(1500 * time.Millisecond)
			for round := 0; time.Now().Before(deadline); round++ {
				for name, s := range map[string]*apptest.Server{"writer": a, "other replica": b} {
					if got := fetchXML(t, s, auth("1000")).param("param", "a1-hash"); got != new1000 {
						t.Fatalf("round %d, %s: the old a1-hash of 1000 was served after Redis came back (got %q)", round, name, got)
					}
					if doc := fetchXML(t, s, auth("2999")); !doc.notFound() {
						t.Fatalf("round %d, %s: disabled 2999 was served after Redis came back:\n%s", round, name, doc.raw)
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
