package fsxml

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models"
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
			for _, name := range []string{tenant, other} {
				if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": name}); err != nil {
					t.Fatal(err)
				}
				o, err := st.Tenant(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				for _, ext := range []string{"1000", "1001"} {
					if _, err := st.Create(ctx, exts, o, map[string]any{"name": ext, "sip_secret": "Secret-" + ext + "-abcdef"}); err != nil {
						t.Fatal(err)
					}
				}
			}
			rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
			defer rdb.Close()
			svc := New(st, rdb, Config{Domain: "sip.test"}, nil)
			defer svc.Close()
			for deadline := time.Now().Add(10 * time.Second); !svc.note.live.Load(); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("change notifications not live")
				}
			}
			raw, err := readCapture("009")
			if err != nil {
				t.Fatal(err)
			}
			dir := func(user string) string {
				t.Helper()
				doc, err := svc.Fetch(ctx, fakefs.FormWith(raw, "user", user, "domain", "sip.test", "key_value", "sip.test"))
				if err != nil {
					t.Fatalf("%s: %v (FreeSWITCH would refuse every fetch)", user, err)
				}
				return string(doc)
			}
			hash := func(user, secret string) string {
				sum := md5.Sum([]byte(user + ":sip.test:" + secret))
				return `name="a1-hash" value="` + hex.EncodeToString(sum[:]) + `"`
			}
			if err := svc.pollHeads(ctx); err != nil {
				t.Fatal(err)
			}
			dir("1000-" + tenant) // the tenant's model is built
			o, err := st.Tenant(ctx, tenant)
			if err != nil {
				t.Fatal(err)
			}
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
