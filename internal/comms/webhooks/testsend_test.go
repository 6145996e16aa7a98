package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/comms/webhooks"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestTestSendIsAttemptedOnce: a test send ("send a test event now") is
// attempted by the request that asked for it and never also by the
// background worker. Seen in CI: a test send to a refused address
// recorded two attempts, and was not yet dead when the answer came (the
// delivery was written pending and held a moment later; the worker took
// it in between).
func TestTestSendIsAttemptedOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var hits atomic.Int64
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.WriteHeader(http.StatusInternalServerError) // a failure the worker would retry
		}))
		defer target.Close()

		tenant := storetest.Name("ts")
		if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant}); err != nil {
			t.Fatal(err)
		}
		o, err := st.Tenant(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		hook, err := st.Create(ctx, st.Registry().Resource("outbound_webhooks"), o, map[string]any{"name": "crm", "url": target.URL + "/in", "events": []any{"config.changed"}})
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		fmt.Sscan(fmt.Sprint(hook["id"]), &id)

		// The worker looks for due deliveries all the time.
		svc := webhooks.New(st, webhooks.Options{Group: storetest.Name("g"), AllowPrivate: true, AllowHTTP: true, Poll: time.Millisecond, RetryMin: time.Millisecond, RetryMax: time.Millisecond})
		go svc.Run(ctx, func() bool { return true })

		const sends = 40
		for i := range sends {
			d, err := svc.Test(ctx, webhooks.KindTenant, tenant, id)
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != webhooks.StatusDead || d.Attempts != 1 {
				t.Fatalf("test send %d answered status %q after %d attempts, want dead after 1", i, d.Status, d.Attempts)
			}
		}
		time.Sleep(200 * time.Millisecond) // a worker that took one would have sent it by now
		if n := hits.Load(); n != sends {
			t.Fatalf("the target got %d requests for %d test sends", n, sends)
		}
	})
}
