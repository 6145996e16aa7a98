package routes_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// Seen item 8: mfa_enabled was stored but not enforced. An administrator
// with it on enrols once (secret shown once, sealed at rest) and then
// needs the current TOTP code in X-TOTP on every Basic request.
func TestMFAEnforcedForAdministrators(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		h := basicAuth(name, adminPassword)
		// MFA off: the password is enough; enrolment is for administrators only.
		s.DoHeaders(t, "GET", "/api/tenants/", h, nil).Expect(t, 200)
		s.Do(t, "POST", "/api/mfa", s.Key, map[string]any{}).Expect(t, 403)

		// A platform credential switches MFA on: until it enrols, the
		// administrator may do nothing else.
		var admins []map[string]any
		s.Do(t, "GET", "/api/administrators/?limit=1000", s.Key, nil).Expect(t, 200).JSON(t, &admins) // beyond the first page: parallel tests add administrators
		id := ""
		for _, a := range admins {
			if a["username"] == name {
				id = fmt.Sprint(int(a["id"].(float64)))
			}
		}
		s.Do(t, "PUT", "/api/administrators/"+id, s.Key, map[string]any{"mfa_enabled": true}).Expect(t, 200)
		if r := s.DoHeaders(t, "GET", "/api/tenants/", h, nil).Expect(t, 403); r.Code(t) != "mfa_enrolment_required" {
			t.Fatalf("code %q", r.Code(t))
		}
		enrol := s.DoHeaders(t, "POST", "/api/mfa", h, map[string]any{}).Expect(t, 201).Map(t)
		secret, _ := enrol["secret"].(string)
		if len(secret) < 16 || !strings.HasPrefix(enrol["otpauth_url"].(string), "otpauth://totp/Switchboard:") {
			t.Fatalf("enrolment answer %v", enrol)
		}
		// Sealed at rest: the secret is not in the database in clear.
		var stored string
		if err := s.Store.Querier().GetContext(t.Context(), &stored, "SELECT secret FROM admin_mfa WHERE admin_id = ?", id); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stored, secret) {
			t.Fatal("TOTP secret stored in clear")
		}
		// Nor shown anywhere afterwards.
		if r := s.Do(t, "GET", "/api/administrators/"+id, s.Key, nil).Expect(t, 200); strings.Contains(string(r.Body), secret) {
			t.Fatal("administrator record shows the TOTP secret")
		}

		// Now the password alone, or with a wrong code, is refused.
		if r := s.DoHeaders(t, "GET", "/api/tenants/", h, nil).Expect(t, 401); r.Code(t) != "mfa_required" {
			t.Fatalf("code %q", r.Code(t))
		}
		with := func(code string) map[string]string {
			return map[string]string{"Authorization": h["Authorization"], "X-TOTP": code}
		}
		s.DoHeaders(t, "GET", "/api/tenants/", with("000000"), nil).Expect(t, 401)
		old, _ := totp.GenerateCode(secret, time.Now().Add(-5*time.Minute))
		s.DoHeaders(t, "GET", "/api/tenants/", with(old), nil).Expect(t, 401)
		code, err := totp.GenerateCode(secret, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		s.DoHeaders(t, "GET", "/api/tenants/", with(code), nil).Expect(t, 200)
		// The right code with a wrong password is still refused.
		bad := basicAuth(name, "wrong password!!")
		bad["X-TOTP"] = code
		s.DoHeaders(t, "GET", "/api/tenants/", bad, nil).Expect(t, 401)

		// Switching MFA off forgets the authenticator; on again needs a new enrolment.
		s.Do(t, "PUT", "/api/administrators/"+id, s.Key, map[string]any{"mfa_enabled": false}).Expect(t, 200)
		s.DoHeaders(t, "GET", "/api/tenants/", h, nil).Expect(t, 200)
		s.Do(t, "PUT", "/api/administrators/"+id, s.Key, map[string]any{"mfa_enabled": true}).Expect(t, 200)
		s.DoHeaders(t, "GET", "/api/tenants/", with(code), nil).Expect(t, 403)
	})
}

// A TOTP code signs in (or re-enrols) once: the same code again, also from
// another address, at /login or POST /api/mfa is refused.
func TestTOTPCodeNotReplayable(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		id := adminID(t, s, name)
		s.Do(t, "PUT", "/api/administrators/"+id, s.Key, map[string]any{"mfa_enabled": true}).Expect(t, 200)
		secret := s.DoHeaders(t, "POST", "/api/mfa", basicAuth(name, adminPassword), map[string]any{}).Expect(t, 201).Map(t)["secret"].(string)
		code, err := totp.GenerateCode(secret, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if c := setCookie(postLogin(t, s, loginBody(name, adminPassword, code, ""), nil).Expect(t, 303)); c == nil {
			t.Fatal("no session after the first use of the code")
		}
		r := postLogin(t, s, loginBody(name, adminPassword, code, ""), map[string]string{"X-Forwarded-For": "198.51.100.7"}).Expect(t, 401)
		if setCookie(r) != nil || !strings.Contains(string(r.Body), "already used") {
			t.Fatalf("replayed code at /login: %s", r.Body)
		}
		with := basicAuth(name, adminPassword)
		with["X-TOTP"] = code
		if r := s.DoHeaders(t, "POST", "/api/mfa", with, map[string]any{}).Expect(t, 401); r.Code(t) != "mfa_code_used" {
			t.Fatalf("replayed code at /api/mfa: %s", r.Body)
		}
	})
}
