package models_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// limitCase is one limited tenant resource and how to make one more of it.
type limitCase struct {
	res, limit string
	body       func(i int) string
}

func limitCases(t *testing.T, st *models.Store, o models.Owner) []limitCase {
	prompt := mustCreate(t, st, "voice_prompts", o, `{"name":"Greeting"}`)
	return []limitCase{
		{"extensions", "max_extensions", func(i int) string { return fmt.Sprintf(`{"name":"%d"}`, 1001+i) }},
		{"queues", "max_queues", func(i int) string { return fmt.Sprintf(`{"name":"Q%d","number":"%d"}`, i, 601+i) }},
		{"ivr_menus", "max_ivr_menus", func(i int) string {
			return fmt.Sprintf(`{"name":"M%d","number":"%d","greeting_long_prompt_id":%s}`, i, 701+i, jsonID(prompt))
		}},
		{"conference_rooms", "max_conference_rooms", func(i int) string { return fmt.Sprintf(`{"name":"C%d","number":"%d"}`, i, 801+i) }},
	}
}

func setTenant(t *testing.T, st *models.Store, o models.Owner, js string) error {
	t.Helper()
	_, err := st.Update(t.Context(), st.Registry().Resource("tenants"), models.Owner{}, o.Tenant, decode(t, js))
	return err
}

func countOf(t *testing.T, st *models.Store, res string, o models.Owner) int {
	t.Helper()
	_, n, err := st.List(t.Context(), st.Registry().Resource(res), o, models.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTenantLimitsRefuseAtTheBoundary: each limited resource can be
// created up to its limit and not once more (nothing stored, the error
// names the limit and its value); a limit lowered below the count keeps
// what exists and refuses new objects; 0 lifts the limit.
func TestTenantLimitsRefuseAtTheBoundary(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		o := newTenant(t, st)
		for _, c := range limitCases(t, st, o) {
			if err := setTenant(t, st, o, fmt.Sprintf(`{"%s":2}`, c.limit)); err != nil {
				t.Fatal(err)
			}
			res := st.Registry().Resource(c.res)
			mustCreate(t, st, c.res, o, c.body(0))
			mustCreate(t, st, c.res, o, c.body(1))
			_, err := st.Create(ctx, res, o, decode(t, c.body(2)))
			var le *models.LimitError
			if !errors.As(err, &le) || le.Limit != c.limit || le.Value != 2 || le.Resource != c.res || le.Tenant != o.Tenant || le.Code() != "tenant_limit_reached" {
				t.Fatalf("%s over the limit: %v (%+v)", c.res, err, le)
			}
			if !strings.Contains(err.Error(), c.limit+" = 2") {
				t.Errorf("message %q does not name the limit", err)
			}
			if n := countOf(t, st, c.res, o); n != 2 {
				t.Fatalf("%s: %d stored after the refusal", c.res, n)
			}
			// Lowered below the count: allowed, both stay, a new one is refused.
			if err := setTenant(t, st, o, fmt.Sprintf(`{"%s":1}`, c.limit)); err != nil {
				t.Fatalf("lower %s: %v", c.limit, err)
			}
			if _, err := st.Create(ctx, res, o, decode(t, c.body(3))); !errors.As(err, &le) || le.Value != 1 {
				t.Fatalf("%s over a lowered limit: %v", c.res, err)
			}
			if n := countOf(t, st, c.res, o); n != 2 {
				t.Fatalf("%s: %d after lowering the limit", c.res, n)
			}
			// 0 = unlimited.
			if err := setTenant(t, st, o, fmt.Sprintf(`{"%s":0}`, c.limit)); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, st, c.res, o, c.body(4))
		}
	})
}

// TestTenantLimitConcurrentCreates: creates racing for the last free
// place under a limit: exactly one wins, the others are refused by the
// limit (not by an error of the database).
func TestTenantLimitConcurrentCreates(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		o := newTenant(t, st)
		if err := setTenant(t, st, o, `{"max_extensions":3}`); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, st, "extensions", o, `{"name":"100"}`)
		mustCreate(t, st, "extensions", o, `{"name":"101"}`)
		const racers = 6
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = st.Create(t.Context(), st.Registry().Resource("extensions"), o, map[string]any{"name": fmt.Sprint(200 + i)})
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			var le *models.LimitError
			switch {
			case err == nil:
				won++
			case !errors.As(err, &le):
				t.Errorf("a racer failed otherwise: %v", err)
			}
		}
		if n := countOf(t, st, "extensions", o); won != 1 || n != 3 {
			t.Fatalf("%d racers won, %d extensions stored; want 1 and 3", won, n)
		}
	})
}

// TestResellerLimits: a reseller's max_tenants refuses one tenant more
// (created under it or moved to it); its totals refuse a tenant whose
// limits would bring the sum over them, created or raised, and a tenant
// without a limit (0) under a total; lowering stays allowed.
func TestResellerLimits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		tenants := st.Registry().Resource("tenants")
		r := mustCreate(t, st, "resellers", models.Owner{}, fmt.Sprintf(`{"name":"%s","max_tenants":2,"max_extensions_total":10,"max_concurrent_calls_total":5}`, storetest.Name("rs")))
		rid := jsonID(r)
		create := func(extra string) (string, error) {
			name := storetest.Name("rt")
			_, err := st.Create(ctx, tenants, models.Owner{}, decode(t, fmt.Sprintf(`{"tenant":"%s","reseller_id":%s%s}`, name, rid, extra)))
			return name, err
		}
		var le *models.LimitError
		if _, err := create(`,"max_extensions":6,"max_concurrent_calls":2`); err != nil {
			t.Fatal(err)
		}
		// 6 + 5 > 10 extensions.
		if _, err := create(`,"max_extensions":5,"max_concurrent_calls":2`); !errors.As(err, &le) || le.Limit != "max_extensions_total" || le.Value != 10 || le.Code() != "reseller_limit_reached" {
			t.Fatalf("over max_extensions_total: %v", err)
		}
		// No limit of its own under a total.
		if _, err := create(`,"max_concurrent_calls":2`); !errors.As(err, &le) || le.Limit != "max_extensions_total" {
			t.Fatalf("unlimited tenant under a total: %v", err)
		}
		second, err := create(`,"max_extensions":4,"max_concurrent_calls":3`)
		if err != nil {
			t.Fatal(err)
		}
		// A third tenant: max_tenants.
		if _, err := create(`,"max_extensions":1,"max_concurrent_calls":1`); !errors.As(err, &le) || le.Limit != "max_tenants" || le.Value != 2 {
			t.Fatalf("over max_tenants: %v", err)
		}
		// Moving a tenant to the reseller counts too.
		loose := newTenant(t, st)
		if err := setTenant(t, st, loose, `{"max_extensions":1,"max_concurrent_calls":1,"reseller_id":`+rid+`}`); !errors.As(err, &le) || le.Limit != "max_tenants" {
			t.Fatalf("moved over max_tenants: %v", err)
		}
		// Raising the second tenant's calls from 3 to 4: 2 + 4 > 5.
		so, _ := st.Tenant(ctx, second)
		if err := setTenant(t, st, so, `{"max_concurrent_calls":4}`); !errors.As(err, &le) || le.Limit != "max_concurrent_calls_total" || le.Value != 5 {
			t.Fatalf("raised over max_concurrent_calls_total: %v", err)
		}
		if err := setTenant(t, st, so, `{"max_concurrent_calls":0}`); !errors.As(err, &le) {
			t.Fatalf("raised to unlimited under a total: %v", err)
		}
		if got, _ := st.Get(ctx, tenants, models.Owner{}, second); got["max_concurrent_calls"] != int64(3) {
			t.Fatalf("a refused raise was stored: %v", got["max_concurrent_calls"])
		}
		// A clone's copied limits count too.
		big := newTenant(t, st)
		if err := setTenant(t, st, big, `{"max_extensions":9,"max_concurrent_calls":1}`); err != nil {
			t.Fatal(err)
		}
		if err := setTenant(t, st, so, `{"reseller_id":null}`); err != nil {
			t.Fatal(err)
		}
		if _, err := create(`,"max_extensions":1,"max_concurrent_calls":1,"tenant_to_clone":"` + big.Tenant + `","tenant_limits":"1"`); !errors.As(err, &le) || le.Limit != "max_extensions_total" {
			t.Fatalf("clone with copied limits over max_extensions_total: %v", err)
		}
		if err := setTenant(t, st, so, `{"reseller_id":`+rid+`}`); err != nil {
			t.Fatal(err)
		}
		// Lowering, and other changes, stay allowed.
		if err := setTenant(t, st, so, `{"max_concurrent_calls":1,"description":"smaller"}`); err != nil {
			t.Fatal(err)
		}
		if err := setTenant(t, st, so, `{"max_concurrent_calls":3}`); err != nil {
			t.Fatalf("raise within the total: %v", err)
		}
	})
}

// TestLimitReachedEventOncePerWindow: refusals by a limit record one
// tenant.limit_reached system event per limit and window, with the
// tenant, the limit, its value and the resource.
func TestLimitReachedEventOncePerWindow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		o := newTenant(t, st)
		// The window is the clock's minute: keep the refusals inside one.
		if sec := time.Now().Second(); sec >= 57 {
			time.Sleep(time.Duration(61-sec) * time.Second)
		}
		head, err := st.OutboxHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := setTenant(t, st, o, `{"max_extensions":1,"max_queues":1}`); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, st, "extensions", o, `{"name":"100"}`)
		mustCreate(t, st, "queues", o, `{"name":"Q","number":"600"}`)
		for i := range 5 {
			if _, err := st.Create(ctx, st.Registry().Resource("extensions"), o, map[string]any{"name": fmt.Sprint(101 + i)}); err == nil {
				t.Fatal("created over the limit")
			}
		}
		if _, err := st.Create(ctx, st.Registry().Resource("queues"), o, decode(t, `{"name":"R","number":"601"}`)); err == nil {
			t.Fatal("created over the limit")
		}
		chs, err := st.OutboxAfter(ctx, head, 1000)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]map[string]any{}
		for _, c := range chs {
			if c.Op != changes.Event || c.Resource != models.LimitReachedEvent {
				continue
			}
			var d map[string]any
			if err := json.Unmarshal(c.After, &d); err != nil {
				t.Fatal(err)
			}
			if d["tenant"] != o.Tenant {
				continue
			}
			if got[d["limit"].(string)] != nil {
				t.Fatalf("a second event for %s in one window: %v", d["limit"], d)
			}
			got[d["limit"].(string)] = d
		}
		ext := got["max_extensions"]
		if len(got) != 2 || ext["value"] != float64(1) || ext["resource"] != "extensions" || got["max_queues"]["resource"] != "queues" {
			t.Fatalf("limit events %v", got)
		}
	})
}
