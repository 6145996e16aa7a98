package routes_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// Seen (issue 29): an update committed just before a replica died (the
// client saw EOF) and retried on the other replica was applied twice (two
// config.changed events). Configuration writes now take an Idempotency-Key:
// a retry, on any replica, is answered again and applied once.
func TestConfigWritesHonourIdempotencyKey(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		other := s.Replica(t)
		tenant := s.Tenant(t, "idem")
		base := "/api/tenants/" + tenant + "/extensions/"
		with := func(srv *apptest.Server, method, path, key string, body any) *apptest.Response {
			return srv.DoHeaders(t, method, path, map[string]string{"X-API-Key": s.Key, "Idempotency-Key": key}, body)
		}
		events := func() int {
			var n int
			if err := s.Store.Querier().GetContext(t.Context(), &n, "SELECT COUNT(*) FROM outbox WHERE tenant = ? AND resource = 'extensions'", tenant); err != nil {
				t.Fatal(err)
			}
			return n
		}

		first := with(s, "POST", base, "create-1001", map[string]any{"name": "1001"}).Expect(t, 201)
		again := with(other, "POST", base, "create-1001", map[string]any{"name": "1001"}).Expect(t, 201).
			ExpectHeader(t, "Idempotent-Replayed", "true").ExpectHeader(t, "Location", first.Header.Get("Location"))
		if a, b := first.Map(t)["id"], again.Map(t)["id"]; fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("the replayed create names another object: %v, %v", a, b)
		}
		with(s, "PUT", base+"1001", "update-1", map[string]any{"callerid": "Eve <1001>"}).Expect(t, 200)
		before := events()
		r := with(other, "PUT", base+"1001", "update-1", map[string]any{"callerid": "Eve <1001>"}).Expect(t, 200).ExpectHeader(t, "Idempotent-Replayed", "true")
		if r.Map(t)["callerid"] != "Eve <1001>" {
			t.Errorf("replayed update: %s", r.Body)
		}
		if after := events(); after != before {
			t.Errorf("the retried update was applied again: %d change events, then %d", before, after)
		}
		// The same key with another request is a client bug, not a retry.
		if code := with(s, "PUT", base+"1001", "update-1", map[string]any{"callerid": "Mallory <1001>"}).Expect(t, 422).Code(t); code != "idempotency_key_reused" {
			t.Errorf("code %q", code)
		}
		// Retries racing each other: one write, every answer the same.
		var wg sync.WaitGroup
		statuses := make([]int, 4)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				srv := s
				if i%2 == 1 {
					srv = other
				}
				statuses[i] = with(srv, "POST", base, "create-1002", map[string]any{"name": "1002"}).Status
			}()
		}
		wg.Wait()
		for i, st := range statuses {
			if st != 201 {
				t.Errorf("racing retry %d answered %d", i, st)
			}
		}
		s.Do(t, "GET", base, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "2")
		// A failed write stores nothing: the corrected retry runs.
		with(s, "POST", base, "create-bad", map[string]any{"name": "1003", "bogus": 1}).Expect(t, 400)
		with(s, "DELETE", base+"1002", "delete-1002", nil).Expect(t, 204)
		with(other, "DELETE", base+"1002", "delete-1002", nil).Expect(t, 204).ExpectHeader(t, "Idempotent-Replayed", "true")
	})
}
