package routes_test

import (
	"net/url"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// A page's script whose session is gone (signed out, expired, revoked)
// gets a 401 without a Basic challenge, which would raise the browser's
// own password box over the page; the page offers its sign-in instead
// (the browser tests show that). A navigation or an API client without
// credentials keeps the challenge (issue 26, also seen).
func TestSignedOutScriptGetsNoBasicChallenge(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		w := signIn(t, s, name, adminPassword)
		s.DoHeaders(t, "POST", "/logout", formHeaders(w.cookie()), "csrf_token="+url.QueryEscape(w.csrf)).Expect(t, 303)

		// What a page's fetch or EventSource sends once its cookie is gone
		// (sign-out clears it) or stale.
		fetch := map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-origin"}
		stale := map[string]string{"Cookie": w.cookie()["Cookie"], "Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-origin"}
		withToken := map[string]string{routes.CSRFHeader: w.csrf}
		for what, h := range map[string]map[string]string{"fetch without cookie": fetch, "fetch with the old cookie": stale, "the old CSRF token": withToken} {
			for _, path := range []string{"/api/tenants/", "/session"} {
				r := s.DoHeaders(t, "GET", path, h, nil).Expect(t, 401)
				if got := r.Header.Get("WWW-Authenticate"); got != "" {
					t.Errorf("%s, GET %s: WWW-Authenticate %q, want none", what, path, got)
				}
				if r.Code(t) != "unauthorized" {
					t.Errorf("%s, GET %s: code %s", what, path, r.Code(t))
				}
			}
		}
		// An API client, or the address bar, is still asked for Basic.
		for what, h := range map[string]map[string]string{"API client": nil, "navigation": {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Site": "none"}} {
			r := s.DoHeaders(t, "GET", "/api/tenants/", h, nil).Expect(t, 401)
			if got := r.Header.Get("WWW-Authenticate"); got == "" {
				t.Errorf("%s without credentials: no Basic challenge", what)
			}
		}
	})
}
