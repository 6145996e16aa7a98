package fsxml

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// Issue 28: right after a restart every tenant's first fetch builds its
// model. A fetch waits for its own tenant's build only: while one
// tenant's rows are being read (here: held until released), other
// tenants' directory and dialplan fetches, first ones included, are
// answered, and the held tenant's fetches all answer once its one build
// ends.
func TestTenantBuildStallsNoOtherTenant(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		slow := storetest.Name("heldbuild")
		others := []string{storetest.Name("quicka"), storetest.Name("quickb"), storetest.Name("quickc")}
		users := []map[string]any{{"name": "1000", "sip_secret": "Secret-1000-abcdef"}, {"name": "1001", "sip_secret": "Secret-1001-abcdef"}}
		for _, tenant := range append([]string{slow}, others...) {
			seedTenant(t, st, tenant, users...)
		}
		rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		defer rdb.Close()
		entered, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		var mu sync.Mutex
		builds := map[string]int{}
		hook := func(_ context.Context, tenant string) {
			mu.Lock()
			builds[strings.ToLower(tenant)]++
			mu.Unlock()
			if strings.EqualFold(tenant, slow) {
				once.Do(func() { close(entered) })
				<-release
			}
		}
		svc := New(st, rdb, Config{Domain: "sip.test", buildHook: hook}, nil)
		defer svc.Close()
		waitLive(t, svc)
		dir, err := readCapture("009")
		if err != nil {
			t.Fatal(err)
		}
		call, err := readCapture("011")
		if err != nil {
			t.Fatal(err)
		}
		directory := func(tenant string) []byte {
			return fakefs.FormWith(dir, "user", "1000-"+tenant, "domain", "sip.test", "key_value", "sip.test")
		}
		local := func(tenant string) []byte {
			return fakefs.FormWith(call, "Caller-Context", tenant, "Hunt-Context", tenant, "Caller-Destination-Number", "1001",
				"Hunt-Destination-Number", "1001", "Caller-Caller-ID-Number", "1000", "Hunt-Caller-ID-Number", "1000")
		}
		type answer struct {
			doc string
			err error
		}
		fetch := func(body []byte) <-chan answer {
			ch := make(chan answer, 1)
			go func() {
				doc, err := svc.Fetch(context.Background(), body)
				ch <- answer{string(doc), err}
			}()
			return ch
		}
		// A stalled fetch would never answer: the deadline only turns a
		// hang into a failure.
		await := func(what string, ch <-chan answer) answer {
			t.Helper()
			select {
			case a := <-ch:
				if a.err != nil {
					t.Fatalf("%s: %v", what, a.err)
				}
				return a
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: no answer while %s's model build is held", what, slow)
			}
			return answer{}
		}

		held := []<-chan answer{fetch(directory(slow)), fetch(directory(slow)), fetch(local(slow))}
		select {
		case <-entered:
		case <-time.After(20 * time.Second):
			t.Fatal("the held tenant's build never started")
		}
		for _, tenant := range others {
			if a := await("directory "+tenant, fetch(directory(tenant))); !strings.Contains(a.doc, `id="1000-`+tenant+`"`) {
				t.Errorf("directory %s: no user 1000:\n%s", tenant, a.doc)
			}
			if a := await("dialplan "+tenant, fetch(local(tenant))); !strings.Contains(a.doc, "user/1001-"+tenant+"@sip.test") {
				t.Errorf("dialplan %s: no bridge to 1001:\n%s", tenant, a.doc)
			}
		}
		for i, ch := range held {
			select {
			case a := <-ch:
				t.Fatalf("held fetch %d answered before its tenant's build was released: %v\n%s", i, a.err, a.doc)
			default:
			}
		}
		close(release)
		for i, ch := range held {
			a := await(fmt.Sprintf("held fetch %d", i), ch)
			want := `id="1000-` + slow + `"`
			if i == 2 {
				want = "user/1001-" + slow + "@sip.test"
			}
			if !strings.Contains(a.doc, want) {
				t.Errorf("held fetch %d: no %s:\n%s", i, want, a.doc)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		// The directory part once (the held fetches shared it) and the
		// routing part once.
		if n := builds[strings.ToLower(slow)]; n != 2 {
			t.Errorf("%s's rows were read %d times, want 2 (its directory part once, its routing part once)", slow, n)
		}
	})
}
