package routes_test

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// Failed passwords are limited per account too, not only per address:
// past SWITCHBOARD_ACCOUNT_FAILURE_LIMIT failures the account refuses
// sign-ins (even the right password) from addresses it never signed in
// from, at /login and with Basic; other accounts are not affected.
func TestAccountFailureLimitThrottlesGuessing(t *testing.T) {
	apptest.Each(t, map[string]string{"SWITCHBOARD_AUTH_FAILURE_LIMIT": "1000", "SWITCHBOARD_ACCOUNT_FAILURE_LIMIT": "3"}, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		other := createAdmin(t, s, "platform_admin", nil)
		for range 4 {
			postLogin(t, s, loginBody(name, "wrong password!!", "", ""), nil).Expect(t, 401)
		}
		r := postLogin(t, s, loginBody(name, adminPassword, "", ""), nil).Expect(t, 429)
		if setCookie(r) != nil || r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), "this account") {
			t.Fatalf("guessed-at account: %v %s", r.Header, r.Body)
		}
		s.DoHeaders(t, "GET", "/api/tenants/", basicAuth(name, adminPassword), nil).Expect(t, 429)
		if setCookie(postLogin(t, s, loginBody(other, adminPassword, "", ""), nil).Expect(t, 303)) == nil {
			t.Fatal("another account cannot sign in")
		}
	})
}

// The account limit does not lock its administrator out: an address the
// account signed in from before still signs in while others are refused.
func TestAccountFailureLimitKeepsKnownAddress(t *testing.T) {
	apptest.Each(t, map[string]string{"SWITCHBOARD_AUTH_FAILURE_LIMIT": "1000", "SWITCHBOARD_ACCOUNT_FAILURE_LIMIT": "3"}, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		postLogin(t, s, loginBody(name, adminPassword, "", ""), nil).Expect(t, 303)
		for range 6 {
			postLogin(t, s, loginBody(name, "wrong password!!", "", ""), nil).Expect(t, 401)
		}
		if setCookie(postLogin(t, s, loginBody(name, adminPassword, "", ""), nil).Expect(t, 303)) == nil {
			t.Fatal("the administrator is locked out of its own account")
		}
		s.DoHeaders(t, "GET", "/api/tenants/", basicAuth(name, adminPassword), nil).Expect(t, 200)
	})
}
