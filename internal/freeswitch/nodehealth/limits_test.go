package nodehealth_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/freeswitch/nodehealth"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// limitUsage is a limit::usage event as switch_limit_fire_event fires it
// (the parts the watcher reads), from node.
func limitUsage(node, realm, key string, usage, max int) esl.Event {
	return esl.NewEvent(node, map[string]string{
		"Event-Name": "CUSTOM", "Event-Subclass": "limit::usage", "backend": "hash", "realm": realm, "key": key,
		"usage": strconv.Itoa(usage), "rate": "0", "max": strconv.Itoa(max), "ratemax": strconv.Itoa(max),
	}, "")
}

// limitEvents are the limit events in the outbox about the given keys, as
// "type key node". The MySQL test database outlives one run (make test runs
// the suite again against Redis Cluster), so other runs' events are ignored.
func limitEvents(t *testing.T, st *models.Store, keys ...string) []string {
	t.Helper()
	evs, err := st.OutboxAfter(context.Background(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Resource != nodehealth.TrunkCapacityReached && e.Resource != nodehealth.TenantLimitReached {
			continue
		}
		if !slices.Contains(keys, e.Key) {
			continue
		}
		var d map[string]any
		_ = json.Unmarshal(e.After, &d)
		out = append(out, e.Resource+" "+e.Key+" "+d["node"].(string))
	}
	return out
}

// TestLimitReachedOncePerMinuteAcrossReplicas: two replicas (watchers on
// one database: a lease handed over, or a restart) seeing the same full
// trunk and the same tenant at its limit record one event each; usage
// below the maximum, counters without one, unknown trunks and tenants,
// and realms of neither kind record nothing; another node's limit is its
// own.
func TestLimitReachedOncePerMinuteAcrossReplicas(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		tenant := storetest.Name("lim")
		trunk := storetest.Name("trk")
		if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Create(ctx, st.Registry().Resource("sip_trunks"), models.Owner{}, map[string]any{"name": trunk, "host": "sip.example.net"}); err != nil {
			t.Fatal(err)
		}
		a, b := nodehealth.New(st, 0, nil), nodehealth.New(st, 0, nil)
		defer a.Stop()
		defer b.Stop()
		for _, w := range []*nodehealth.Watcher{a, b, a} {
			w.LimitUsage(ctx, limitUsage("fs1", "trunk", trunk, 1, 2))            // below the maximum
			w.LimitUsage(ctx, limitUsage("fs1", "trunk", trunk, 3, -1))           // a counter
			w.LimitUsage(ctx, limitUsage("fs1", "trunk", "not_"+trunk, 1, 1))     // no trunk of ours
			w.LimitUsage(ctx, limitUsage("fs1", "not_"+tenant, "outbound", 1, 1)) // no tenant of ours
			w.LimitUsage(ctx, limitUsage("fs1", tenant, "inbound", 1, 1))         // neither kind
			w.LimitUsage(ctx, limitUsage("fs1", "trunk", trunk, 2, 2))
			w.LimitUsage(ctx, limitUsage("fs1", tenant, "outbound", 5, 5))
		}
		a.LimitUsage(ctx, limitUsage("fs2", "trunk", trunk, 2, 2))
		got := limitEvents(t, st, trunk, tenant)
		want := []string{
			"trunk.capacity_reached " + trunk + " fs1",
			"tenant.limit_reached " + tenant + " fs1",
			"trunk.capacity_reached " + trunk + " fs2",
		}
		if len(got) != len(want) {
			t.Fatalf("events %q, want %q", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("events %q, want %q", got, want)
			}
		}
	})
}
