package fsxml

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/faultproxy"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// Seen (issue 29): right after Redis came back, a replica answered "not
// found" for a user another replica had created a few milliseconds
// before: the writer was still skipping Redis after its errors (so it
// neither published nor waited for acknowledgements), while the reader
// had resubscribed and trusted its memory until its next outbox poll.
func TestNoStaleAnswerRightAfterRedisReturns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		tenant := storetest.Name("back")
		o := seedTenant(t, st, tenant, map[string]any{"name": "1000"})
		exts := st.Registry().Resource("extensions")
		m := miniredis.RunT(t)
		url, proxy := faultproxy.URL(t, "redis://"+m.Addr()+"/0")
		client := func() redis.UniversalClient {
			opts, err := redis.ParseURL(url)
			if err != nil {
				t.Fatal(err)
			}
			c := redis.NewClient(opts)
			t.Cleanup(func() { c.Close() })
			return c
		}
		writer := New(st, client(), Config{Domain: "sip.test"}, nil)
		defer writer.Close()
		reader := New(st, client(), Config{Domain: "sip.test"}, nil)
		defer reader.Close()
		st.OnCommit(writer.Committed)
		waitLive(t, writer, reader)
		fetch := func(ext string) string { return fetchUser(t, reader, ext+"-"+tenant) }
		fetch("1000") // the reader holds the tenant's model

		proxy.Cut()
		wait.Until(t, 10*time.Second, "both replicas to notice the outage", func() bool {
			return !writer.note.live.Load() && !reader.note.live.Load()
		})
		writer.warnRedis("test: the writer's last Redis error", errors.New("connection refused"))
		proxy.Restore(t)
		wait.Until(t, 10*time.Second, "the reader to subscribe again", func() bool {
			return m.PubSubNumSub(reader.channel)[reader.channel] >= 2 // both replicas
		})
		if _, err := st.Create(ctx, exts, o, map[string]any{"name": "1001"}); err != nil {
			t.Fatal(err)
		}
		if doc := fetch("1001"); strings.Contains(doc, `result status="not found"`) {
			t.Errorf("an acknowledged create was answered \"not found\" right after Redis returned:\n%s", doc)
		}
	})
}
