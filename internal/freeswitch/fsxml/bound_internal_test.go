package fsxml

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// Issue 28: the cache's memory has a bound the operator sets
// (SWITCHBOARD_XML_CACHE_MAX_BYTES). With a bound far below what every
// tenant's models and answers take, fetching every tenant's users and
// calls again and again keeps the accounted size within the bound (least
// recently used tenants and documents go), and every answer stays right.
func TestCacheStaysWithinItsBound(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		const tenants, modelBytes, docBytes = 24, 12 << 10, 256 << 10
		var names []string
		for i := range tenants {
			name := storetest.Name(fmt.Sprintf("bound%02d", i))
			names = append(names, name)
			seedTenant(t, st, name,
				map[string]any{"name": "1000", "sip_secret": "Secret-1000-abcdef"},
				map[string]any{"name": "1001", "sip_secret": "Secret-1001-abcdef"})
		}
		rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		defer rdb.Close()
		svc := New(st, rdb, Config{Domain: "sip.test", ModelBytes: modelBytes, DocBytes: docBytes}, nil)
		defer svc.Close()
		waitLive(t, svc)
		call, err := readCapture("011")
		if err != nil {
			t.Fatal(err)
		}
		largest, docsHeld := 0, 0
		for round := range 2 {
			for _, tenant := range names {
				for _, ext := range []string{"1000", "1001"} {
					user := ext + "-" + tenant
					sum := md5.Sum([]byte(user + ":sip.test:Secret-" + ext + "-abcdef"))
					if doc := fetchUser(t, svc, user); !strings.Contains(doc, `name="a1-hash" value="`+hex.EncodeToString(sum[:])+`"`) {
						t.Fatalf("round %d, %s: wrong or missing a1-hash:\n%s", round, user, doc)
					}
				}
				doc, err := svc.Fetch(context.Background(), fakefs.FormWith(call, "Caller-Context", tenant, "Hunt-Context", tenant,
					"Caller-Destination-Number", "1001", "Hunt-Destination-Number", "1001", "Caller-Caller-ID-Number", "1000", "Hunt-Caller-ID-Number", "1000"))
				if err != nil || !strings.Contains(string(doc), "user/1001-"+tenant+"@sip.test") {
					t.Fatalf("round %d, call in %s: %v\n%s", round, tenant, err, doc)
				}
				m, d := svc.cacheBytes()
				if m > modelBytes || d > docBytes {
					t.Fatalf("after %s: models %d bytes (bound %d), documents %d bytes (bound %d)", tenant, m, modelBytes, d, docBytes)
				}
				largest, docsHeld = max(largest, m), max(docsHeld, d)
			}
		}
		if docsHeld == 0 {
			t.Error("no document was kept")
		}
		if n, _ := svc.models.tenants.stats(); n >= tenants || n < 2 {
			t.Errorf("%d tenant models held; want some, but not all %d", n, tenants)
		}
		if largest < modelBytes/2 {
			t.Errorf("the models never took more than %d bytes of %d: the bound was not tried", largest, modelBytes)
		}
	})
}
