package routes_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestTenantLimitsRefusedOverHTTP: with each tenant limit set to 1, the
// second extension, queue, IVR menu and conference room is answered 422
// tenant_limit_reached naming the limit and its value, and is not stored.
func TestTenantLimitsRefusedOverHTTP(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		ten := s.Tenant(t, "limits")
		base := "/api/tenants/" + ten
		prompt := s.Do(t, "POST", base+"/voice_prompts/", s.Key, map[string]any{"name": "Greeting"}).Expect(t, 201).Map(t)["id"]
		s.Do(t, "PUT", base, s.Key, map[string]any{"max_extensions": 1, "max_queues": 1, "max_ivr_menus": 1, "max_conference_rooms": 1}).Expect(t, 200)
		cases := []struct {
			res, limit string
			body       func(i int) map[string]any
		}{
			{"extensions", "max_extensions", func(i int) map[string]any { return map[string]any{"name": fmt.Sprint(201 + i)} }},
			{"queues", "max_queues", func(i int) map[string]any {
				return map[string]any{"name": fmt.Sprint("Q", i), "number": fmt.Sprint(601 + i)}
			}},
			{"ivr_menus", "max_ivr_menus", func(i int) map[string]any {
				return map[string]any{"name": fmt.Sprint("M", i), "number": fmt.Sprint(701 + i), "greeting_long_prompt_id": prompt}
			}},
			{"conference_rooms", "max_conference_rooms", func(i int) map[string]any {
				return map[string]any{"name": fmt.Sprint("C", i), "number": fmt.Sprint(801 + i)}
			}},
		}
		for _, c := range cases {
			s.Do(t, "POST", base+"/"+c.res+"/", s.Key, c.body(0)).Expect(t, 201)
			r := s.Do(t, "POST", base+"/"+c.res+"/", s.Key, c.body(1)).Expect(t, 422)
			body := r.Map(t)
			if body["code"] != "tenant_limit_reached" || !strings.Contains(fmt.Sprint(body["error"]), c.limit+" = 1") {
				t.Fatalf("%s over the limit: %v", c.res, body)
			}
			var list []map[string]any
			s.Do(t, "GET", base+"/"+c.res+"/", s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "1").JSON(t, &list)
		}
		// Raising the limit lets one more in: of creates racing for that
		// place, exactly one wins and the others are refused by the limit.
		s.Do(t, "PUT", base, s.Key, map[string]any{"max_extensions": 2}).Expect(t, 200)
		statuses := make([]int, 5)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = s.Do(t, "POST", base+"/extensions/", s.Key, cases[0].body(10+i)).Status
			}()
		}
		wg.Wait()
		slices.Sort(statuses)
		if !slices.Equal(statuses, []int{201, 422, 422, 422, 422}) {
			t.Fatalf("racing creates for one place answered %v", statuses)
		}
		s.Do(t, "GET", base+"/extensions/", s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "2")
	})
}

// TestResellerLimitsOverHTTP: a reseller's max_tenants and totals refuse
// a tenant created over them, and a raise of a tenant's limit, with 422
// reseller_limit_reached; nothing is stored.
func TestResellerLimitsOverHTTP(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		rid := s.Do(t, "POST", "/api/resellers/", s.Key, map[string]any{"name": storetest.Name("rs"), "max_tenants": 1,
			"max_extensions_total": 10, "max_concurrent_calls_total": 4}).Expect(t, 201).Map(t)["id"]
		first := storetest.Name("rta")
		if code := s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": first, "reseller_id": rid, "max_extensions": 20, "max_concurrent_calls": 2}).
			Expect(t, 422).Code(t); code != "reseller_limit_reached" {
			t.Fatalf("over max_extensions_total: %s", code)
		}
		s.Do(t, "GET", "/api/tenants/"+first, s.Key, nil).Expect(t, 404)
		s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": first, "reseller_id": rid, "max_extensions": 10, "max_concurrent_calls": 2}).Expect(t, 201)
		t.Cleanup(func() { s.Do(t, "DELETE", "/api/tenants/"+first, s.Key, nil) })
		body := s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": storetest.Name("rtb"), "reseller_id": rid, "max_extensions": 1, "max_concurrent_calls": 1}).
			Expect(t, 422).Map(t)
		if body["code"] != "reseller_limit_reached" || !strings.Contains(fmt.Sprint(body["error"]), "max_tenants = 1") {
			t.Fatalf("over max_tenants: %v", body)
		}
		body = s.Do(t, "PUT", "/api/tenants/"+first, s.Key, map[string]any{"max_concurrent_calls": 5}).Expect(t, 422).Map(t)
		if body["code"] != "reseller_limit_reached" || !strings.Contains(fmt.Sprint(body["error"]), "max_concurrent_calls_total = 4") {
			t.Fatalf("raised over max_concurrent_calls_total: %v", body)
		}
		got := s.Do(t, "GET", "/api/tenants/"+first, s.Key, nil).Expect(t, 200).Map(t)
		if got["max_concurrent_calls"] != float64(2) || got["reseller_id"] != rid {
			t.Fatalf("tenant after a refused raise: %v", got)
		}
	})
}

// TestSystemEventsTenantLimitReached: refusals by a tenant limit reach
// system webhooks as tenant.limit_reached with the tenant, the limit, its
// value and the resource, one event for a storm within a minute; tenant
// webhooks get none.
func TestSystemEventsTenantLimitReached(t *testing.T) {
	apptest.EachSerial(t, hookEnv, func(t *testing.T, s *apptest.Server) {
		ten := s.Tenant(t, "limitev")
		w := watchSystem(t, s, ten, "tenant.limit_reached")
		base := "/api/tenants/" + ten
		s.Do(t, "PUT", base, s.Key, map[string]any{"max_conference_rooms": 1}).Expect(t, 200)
		s.Do(t, "POST", base+"/conference_rooms/", s.Key, map[string]any{"name": "A", "number": "801"}).Expect(t, 201)
		// The window is the clock's minute: keep the storm inside one.
		if sec := time.Now().Second(); sec > 50 {
			time.Sleep(time.Duration(61-sec) * time.Second)
		}
		for i := range 5 {
			s.Do(t, "POST", base+"/conference_rooms/", s.Key, map[string]any{"name": fmt.Sprint("B", i), "number": fmt.Sprint(802 + i)}).Expect(t, 422)
		}
		ev := w.expect(t, "tenant.limit_reached", fieldIs("tenant", ten))
		if ev.Data["limit"] != "max_conference_rooms" || ev.Data["value"] != float64(1) || ev.Data["resource"] != "conference_rooms" || ev.Tenant != "" {
			t.Fatalf("tenant.limit_reached event %+v", ev)
		}
		time.Sleep(500 * time.Millisecond)
		if n := w.count(t, "tenant.limit_reached", fieldIs("tenant", ten)); n != 1 {
			t.Fatalf("five refusals in a minute made %d events, want 1", n)
		}
		w.noneToTenants(t)
	})
}
