package fsxml

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/faultproxy"
)

// Seen (issue 29): with MariaDB stopped, 27 % of /fs/xml fetches answered
// 500, and after one extension of a tenant was written just before the
// outage every user of that tenant did, the cached ones included. While
// the database is unavailable, what the models prove current is served
// (the tenant's other users), and what they cannot is "not found", never
// an error.
func TestDatabaseOutageServesWhatMemoryProves(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		if b.Name != "mysql" {
			continue // an embedded SQLite file has no outage
		}
		t.Run(b.Name, func(t *testing.T) {
			var proxy *faultproxy.Proxy
			b.URL, proxy = faultproxy.URL(t, b.URL)
			st := storetest.Open(t, b)
			ctx := context.Background()
			exts := st.Registry().Resource("extensions")
			tenant, other := storetest.Name("down"), storetest.Name("cold")
			users := []map[string]any{{"name": "1000", "sip_secret": "Secret-1000-abcdef"}, {"name": "1001", "sip_secret": "Secret-1001-abcdef"}}
			o := seedTenant(t, st, tenant, users...)
			seedTenant(t, st, other, users...)
			rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
			defer rdb.Close()
			svc := New(st, rdb, Config{Domain: "sip.test"}, nil)
			defer svc.Close()
			waitLive(t, svc)
			// FreeSWITCH would refuse every fetch answered with an error.
			dir := func(user string) string { return fetchUser(t, svc, user) }
			hash := func(user, secret string) string {
				sum := md5.Sum([]byte(user + ":sip.test:" + secret))
				return `name="a1-hash" value="` + hex.EncodeToString(sum[:]) + `"`
			}
			if err := svc.pollHeads(ctx); err != nil {
				t.Fatal(err)
			}
			dir("1000-" + tenant) // the tenant's model is built
			if _, err := st.Update(ctx, exts, o, "1001", map[string]any{"sip_secret": "Secret-1001-changed"}); err != nil {
				t.Fatal(err)
			}
			if err := svc.pollHeads(ctx); err != nil { // the write is known, not yet read
				t.Fatal(err)
			}

			proxy.Cut()
			before := ReadStats()
			if doc := dir("1000-" + tenant); !strings.Contains(doc, hash("1000-"+tenant, "Secret-1000-abcdef")) {
				t.Errorf("an unchanged user of the tenant is not served from memory:\n%s", doc)
			}
			for _, user := range []string{"1001-" + tenant, "1000-" + other} {
				if doc := dir(user); !strings.Contains(doc, `result status="not found"`) {
					t.Errorf("%s: what memory cannot prove current must be \"not found\":\n%s", user, doc)
				}
			}
			if after := ReadStats(); after.Unavailable == before.Unavailable || after.Degraded == before.Degraded {
				t.Errorf("stats: %+v then %+v", before, after)
			}

			proxy.Restore(t)
			if doc := dir("1001-" + tenant); !strings.Contains(doc, hash("1001-"+tenant, "Secret-1001-changed")) {
				t.Errorf("after the outage the changed user is not served with the write:\n%s", doc)
			}
			if doc := dir("1000-" + other); !strings.Contains(doc, hash("1000-"+other, "Secret-1000-abcdef")) {
				t.Errorf("after the outage another tenant's user is not served:\n%s", doc)
			}
		})
	}
}
