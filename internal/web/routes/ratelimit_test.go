package routes_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// Seen item 6: 300 wrong Basic passwords in a row all got 401 (each a
// bcrypt check) and the right one still worked. Now an address is limited
// after AUTH_FAILURE_LIMIT failures, before any bcrypt check, on every
// replica.
func TestFailedAuthenticationLimitedBeforeBcrypt(t *testing.T) {
	apptest.Each(t, map[string]string{"SWITCHBOARD_AUTH_FAILURE_LIMIT": "10"}, func(t *testing.T, s *apptest.Server) {
		replica := s.Replica(t)
		admin := storetest.Name("ops")
		if _, err := s.Store.SetAdmin(t.Context(), admin, adminPassword); err != nil {
			t.Fatal(err)
		}
		before := passwordChecks(t, s, replica)
		start := time.Now()
		counts := map[int]int{}
		var retry string
		for i := 0; i < 300; i++ {
			srv := s
			if i%2 == 1 {
				srv = replica
			}
			r := srv.DoHeaders(t, "GET", "/api/tenants/", basicAuth(admin, "wrong password "+strconv.Itoa(i)), nil)
			counts[r.Status]++
			if r.Status == 429 {
				retry = r.Header.Get("Retry-After")
				if r.Code(t) != "rate_limited" {
					t.Fatalf("429 code %q", r.Code(t))
				}
			}
		}
		// Ten failures a minute: a slow run (the race detector, a loaded
		// machine) earns one more allowed failure every six seconds.
		allowed := 10 + int(time.Since(start)/(6*time.Second))
		if counts[401] > allowed || counts[429] < 300-allowed || counts[401]+counts[429] != 300 {
			t.Fatalf("300 wrong passwords answered %v, want at most %d×401 then 429", counts, allowed)
		}
		if n, err := strconv.Atoi(retry); err != nil || n < 1 || n > 60 {
			t.Fatalf("Retry-After %q", retry)
		}
		// The allowed failures and the one that crossed the limit; on a
		// slow run, each block that ends as a token refills may cost one
		// more check (the guess that meets the end of the block is checked,
		// and refused if the token is not there yet).
		if checks := passwordChecks(t, s, replica) - before; checks > int64(allowed+(allowed-10))+1 {
			t.Errorf("%d bcrypt checks for 300 guesses: the limit must act before the check", checks)
		}
		// The right password waits too, and wrong keys are refused the same
		// way, while the next token is still a second or more away (seen
		// in CI: a slow run's last 429 said Retry-After: 1, and the token
		// came before the right password did).
		wait, _ := strconv.Atoi(retry)
		if wait >= 2 {
			s.DoHeaders(t, "GET", "/api/tenants/", basicAuth(admin, adminPassword), nil).Expect(t, 429)
			replica.Do(t, "GET", "/api/tenants/", "sb_wrong-key", nil).Expect(t, 429)
		}
		// After Retry-After the right password works again.
		time.Sleep(time.Duration(wait)*time.Second + 200*time.Millisecond)
		s.DoHeaders(t, "GET", "/api/tenants/", basicAuth(admin, adminPassword), nil).Expect(t, 200)
	})
}

// Seen item 6 (requests): a credential's requests are limited across all
// replicas, with 429 and Retry-After; other credentials are not affected.
func TestRequestsLimitedPerCredentialAcrossReplicas(t *testing.T) {
	// Serial: the 20 requests must fall within the one second the burst
	// lasts, which parallel tests on two cores do not leave them.
	// One request a second after a burst of 5: a slow machine's refill
	// during the 20 requests stays small, and is allowed for below.
	apptest.EachSerial(t, map[string]string{"SWITCHBOARD_RATE_LIMIT": "1", "SWITCHBOARD_RATE_BURST": "5"}, func(t *testing.T, s *apptest.Server) {
		replica := s.Replica(t)
		tenant := s.Tenant(t, "rl")
		key := s.KeyFor(t, map[string]any{"tenant": tenant})
		other := s.KeyFor(t, map[string]any{"tenant": tenant})
		counts := map[int]int{}
		start := time.Now()
		for i := 0; i < 20; i++ {
			srv := s
			if i%2 == 1 {
				srv = replica
			}
			r := srv.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/", key, nil)
			counts[r.Status]++
			if r.Status == 429 && r.Header.Get("Retry-After") != "1" {
				t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
			}
		}
		refill := int(time.Since(start).Seconds()) + 1 // tokens that came back while they ran
		if counts[200] < 5 || counts[200] > 5+refill || counts[429] != 20-counts[200] {
			t.Fatalf("20 requests over two replicas in %s answered %v, want 5×200 (+%d refilled) then 429", time.Since(start), counts, refill)
		}
		replica.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/", other, nil).Expect(t, 200)
		time.Sleep(1100 * time.Millisecond)
		s.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/", key, nil).Expect(t, 200)
	})
}
