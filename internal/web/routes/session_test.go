package routes_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// webSession is a signed-in browser: its cookie and its CSRF token.
type webSession struct{ id, csrf string }

// cookie sends the session cookie only (a GET, or a forged write).
func (w webSession) cookie() map[string]string {
	return map[string]string{"Cookie": routes.SessionCookie + "=" + w.id}
}

// headers sends the cookie and the CSRF token, as the pages' scripts do.
func (w webSession) headers() map[string]string {
	return map[string]string{"Cookie": routes.SessionCookie + "=" + w.id, routes.CSRFHeader: w.csrf}
}

// formHeaders are a browser's form post, with extra headers.
func formHeaders(extra map[string]string) map[string]string {
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

func loginBody(user, pass, code, next string) string {
	v := url.Values{"username": {user}, "password": {pass}}
	if code != "" {
		v.Set("totp", code)
	}
	if next != "" {
		v.Set("next", next)
	}
	return v.Encode()
}

// setCookie is the session cookie a response sets, or nil.
func setCookie(r *apptest.Response) *http.Cookie {
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == routes.SessionCookie {
			return c
		}
	}
	return nil
}

// postLogin posts the login form; extra headers (a cookie the browser
// already holds) may be added.
func postLogin(t *testing.T, s *apptest.Server, body string, extra map[string]string) *apptest.Response {
	t.Helper()
	return s.DoHeaders(t, "POST", "/login", formHeaders(extra), body)
}

// signIn signs in through the form and reads the CSRF token from /session.
func signIn(t *testing.T, s *apptest.Server, user, pass string) webSession {
	t.Helper()
	r := postLogin(t, s, loginBody(user, pass, "", ""), nil).Expect(t, 303)
	c := setCookie(r)
	if c == nil || c.Value == "" {
		t.Fatalf("login set no session cookie: %v", r.Header)
	}
	w := webSession{id: c.Value}
	info := s.DoHeaders(t, "GET", "/session", w.cookie(), nil).Expect(t, 200).Map(t)
	w.csrf, _ = info["csrf_token"].(string)
	if len(w.csrf) < 32 {
		t.Fatalf("csrf token %q", w.csrf)
	}
	return w
}

// adminID is the id of an administrator by username.
func adminID(t *testing.T, s *apptest.Server, name string) string {
	t.Helper()
	var admins []map[string]any
	s.Do(t, "GET", "/api/administrators/?limit=1000", s.Key, nil).Expect(t, 200).JSON(t, &admins)
	for _, a := range admins {
		if a["username"] == name {
			return fmt.Sprint(int(a["id"].(float64)))
		}
	}
	t.Fatalf("no administrator %s", name)
	return ""
}

// An administrator signs in with the form: a 303 to the menu with an
// HttpOnly, SameSite=Lax session cookie (not Secure on a loopback http base
// URL), and the session then works on the pages, /session and the API.
func TestSessionLogin(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		form := s.DoHeaders(t, "GET", "/login", nil, nil).Expect(t, 200)
		if !strings.Contains(string(form.Body), `name="password"`) || setCookie(form) != nil {
			t.Fatalf("login form: %s", form.Body)
		}
		// Without a session the menu sends the browser to the login.
		if r := s.DoHeaders(t, "GET", "/", nil, nil).Expect(t, 303); r.Header.Get("Location") != "/login" {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
		if r := s.DoHeaders(t, "GET", "/session", nil, nil).Expect(t, 401); r.Header.Get("WWW-Authenticate") != "" {
			t.Fatal("a session refusal must not pop up the browser's Basic dialog")
		}

		r := postLogin(t, s, loginBody(name, adminPassword, "", ""), nil).Expect(t, 303)
		if r.Header.Get("Location") != "/" {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
		c := setCookie(r)
		if c == nil || len(c.Value) < 40 || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure {
			t.Fatalf("session cookie %+v", c)
		}
		w := webSession{id: c.Value}
		info := s.DoHeaders(t, "GET", "/session", w.cookie(), nil).Expect(t, 200).Map(t)
		if info["admin"] != name || info["role"] != "platform_admin" || info["tenants"] != nil {
			t.Fatalf("session %v", info)
		}
		menu := s.DoHeaders(t, "GET", "/", w.cookie(), nil).Expect(t, 200)
		for _, want := range []string{name, `href="/apitest/openapi/"`, `href="/dashboard/calls"`, `action="/logout"`, `name="viewport"`, `<meta name="csrf-token" content="` + info["csrf_token"].(string) + `">`} {
			if !strings.Contains(string(menu.Body), want) {
				t.Fatalf("menu lacks %q:\n%s", want, menu.Body)
			}
		}
		// A platform administrator's session works on the API like its Basic credentials.
		s.DoHeaders(t, "GET", "/api/administrators/", w.cookie(), nil).Expect(t, 200)
		s.DoHeaders(t, "GET", "/metrics", w.cookie(), nil).Expect(t, 200)

		// next takes the browser back to where it was sent from, never off site.
		r = postLogin(t, s, loginBody(name, adminPassword, "", "/apitest/openapi/?tenant=x"), nil).Expect(t, 303)
		if r.Header.Get("Location") != "/apitest/openapi/?tenant=x" {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
		// Browsers drop tabs and newlines and read a backslash as a slash:
		// each of these is //evil.example to them.
		for _, evil := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "/\t/evil.example", "/\n/evil.example",
			"/\r/evil.example", "\\/evil.example", "/ /evil.example", "/\\/evil.example", "/\u00a0/evil.example", "http:/evil.example", "javascript:alert(1)", "/\x00/evil.example"} {
			r = postLogin(t, s, loginBody(name, adminPassword, "", evil), nil).Expect(t, 303)
			if r.Header.Get("Location") != "/" {
				t.Fatalf("next %q: Location %q", evil, r.Header.Get("Location"))
			}
		}
		if r := s.DoHeaders(t, "GET", "/api/tenants/?x=1", nil, nil); r.Status != 401 {
			t.Fatalf("no credential: %d", r.Status)
		}
		if r := s.DoHeaders(t, "GET", "/?x=1", nil, nil).Expect(t, 303); r.Header.Get("Location") != "/login?next=%2F%3Fx%3D1" {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
	})
}

// Behind a public https base URL the cookie is Secure.
func TestSessionCookieSecureOffLoopback(t *testing.T) {
	t.Parallel()
	e := apptest.AnyEnv(t)
	s := apptest.Start(t, e, map[string]string{"SWITCHBOARD_BASE_URL": "https://switchboard.example.net"})
	name := createAdmin(t, s, "platform_admin", nil)
	c := setCookie(postLogin(t, s, loginBody(name, adminPassword, "", ""), nil).Expect(t, 303))
	if c == nil || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("cookie %+v", c)
	}
	// A form posted from another site is refused before any password check.
	before := passwordChecks(t, s)
	r := postLogin(t, s, loginBody(name, adminPassword, "", ""), map[string]string{"Origin": "https://evil.example"}).Expect(t, 403)
	if setCookie(r) != nil || passwordChecks(t, s) != before {
		t.Fatal("a cross-site login was processed")
	}
}

// A wrong password (or unknown user) answers the form again with 401 and
// no cookie; failures count toward the per-address limit, after which even
// the right password is refused with 429 and Retry-After before bcrypt.
func TestSessionWrongPasswordAndRateLimit(t *testing.T) {
	apptest.Each(t, map[string]string{"SWITCHBOARD_AUTH_FAILURE_LIMIT": "3"}, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		for i, body := range []string{
			loginBody(name, "wrong password!!", "", ""),
			loginBody("nobody-"+name, adminPassword, "", ""),
		} {
			r := postLogin(t, s, body, nil).Expect(t, 401)
			if setCookie(r) != nil || !strings.Contains(string(r.Body), "Wrong username or password") ||
				!strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("attempt %d: %v %s", i, r.Header, r.Body)
			}
		}
		postLogin(t, s, loginBody(name, "wrong again!!!", "", ""), nil).Expect(t, 401)
		// The fourth failure is over the limit.
		r := postLogin(t, s, loginBody(name, "wrong again!!!", "", ""), nil).Expect(t, 429)
		if r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), "Too many failed sign-ins") {
			t.Fatalf("429: %v %s", r.Header, r.Body)
		}
		before := passwordChecks(t, s)
		r = postLogin(t, s, loginBody(name, adminPassword, "", ""), nil).Expect(t, 429)
		if setCookie(r) != nil {
			t.Fatal("a blocked address got a session")
		}
		if passwordChecks(t, s) != before {
			t.Fatal("a blocked address still costs a password check")
		}
		// Basic from the same address is blocked too: one limit.
		s.DoHeaders(t, "GET", "/api/tenants/", basicAuth(name, adminPassword), nil).Expect(t, 429)
	})
}

// An administrator with MFA needs the authenticator's code at sign-in;
// the session then needs no code per request. One with MFA switched on
// but no authenticator enrolled cannot sign in to the web.
func TestSessionTOTP(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		id := adminID(t, s, name)
		s.Do(t, "PUT", "/api/administrators/"+id, s.Key, map[string]any{"mfa_enabled": true}).Expect(t, 200)
		r := postLogin(t, s, loginBody(name, adminPassword, "", ""), nil).Expect(t, 403)
		if setCookie(r) != nil || !strings.Contains(string(r.Body), "enrol") {
			t.Fatalf("enrol-only login: %s", r.Body)
		}
		secret := s.DoHeaders(t, "POST", "/api/mfa", basicAuth(name, adminPassword), map[string]any{}).Expect(t, 201).Map(t)["secret"].(string)

		r = postLogin(t, s, loginBody(name, adminPassword, "", ""), nil).Expect(t, 401)
		if setCookie(r) != nil || !strings.Contains(string(r.Body), "authenticator") {
			t.Fatalf("login without code: %s", r.Body)
		}
		postLogin(t, s, loginBody(name, adminPassword, "000000", ""), nil).Expect(t, 401)
		old, _ := totp.GenerateCode(secret, time.Now().Add(-5*time.Minute))
		postLogin(t, s, loginBody(name, adminPassword, old, ""), nil).Expect(t, 401)
		code, err := totp.GenerateCode(secret, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		// The right code with a wrong password is still refused.
		postLogin(t, s, loginBody(name, "wrong password!!", code, ""), nil).Expect(t, 401)
		c := setCookie(postLogin(t, s, loginBody(name, adminPassword, code, ""), nil).Expect(t, 303))
		if c == nil {
			t.Fatal("no session after the right code")
		}
		w := webSession{id: c.Value}
		s.DoHeaders(t, "GET", "/api/tenants/", w.cookie(), nil).Expect(t, 200)
	})
}

// Sessions end after the idle time without requests, and after the
// absolute time however busy; the page then sends the browser to login.
//
// The times leave each request that must still find its session seconds
// to arrive: with an idle time of 1 s, a request right after sign-in met
// an expired session (401) under the race detector on a loaded machine.
func TestSessionExpiry(t *testing.T) {
	const idleTime, maxTime = 3 * time.Second, 6 * time.Second
	apptest.Each(t, map[string]string{"SWITCHBOARD_SESSION_IDLE": idleTime.String(), "SWITCHBOARD_SESSION_MAX": maxTime.String()}, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)

		idle := signIn(t, s, name, adminPassword)
		s.DoHeaders(t, "GET", "/api/tenants/", idle.cookie(), nil).Expect(t, 200)
		time.Sleep(idleTime + 200*time.Millisecond)
		s.DoHeaders(t, "GET", "/api/tenants/", idle.cookie(), nil).Expect(t, 401)
		if r := s.DoHeaders(t, "GET", "/", idle.cookie(), nil).Expect(t, 303); r.Header.Get("Location") != "/login" {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}

		// Used past its idle time, until 2 s before its absolute end (the
		// last request has those to arrive), then not at all: it ends at
		// the absolute time.
		busy := signIn(t, s, name, adminPassword)
		start := time.Now()
		for time.Since(start) < maxTime-2*time.Second {
			s.DoHeaders(t, "GET", "/api/tenants/", busy.cookie(), nil).Expect(t, 200)
			time.Sleep(300 * time.Millisecond)
		}
		time.Sleep(maxTime + 100*time.Millisecond - time.Since(start))
		s.DoHeaders(t, "GET", "/api/tenants/", busy.cookie(), nil).Expect(t, 401)
	})
}

// Logout (a form post with the CSRF token) ends the session on the server
// and clears the cookie; without the token it is refused.
func TestSessionLogout(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		w := signIn(t, s, name, adminPassword)
		s.DoHeaders(t, "POST", "/logout", formHeaders(w.cookie()), "").Expect(t, 403)
		s.DoHeaders(t, "POST", "/logout", formHeaders(w.cookie()), "csrf_token=wrong").Expect(t, 403)
		s.DoHeaders(t, "GET", "/api/tenants/", w.cookie(), nil).Expect(t, 200)

		r := s.DoHeaders(t, "POST", "/logout", formHeaders(w.cookie()), "csrf_token="+url.QueryEscape(w.csrf)).Expect(t, 303)
		if r.Header.Get("Location") != "/login" {
			t.Fatalf("Location %q", r.Header.Get("Location"))
		}
		if c := setCookie(r); c == nil || c.Value != "" || !c.Expires.Before(time.Now()) {
			t.Fatalf("cookie not cleared: %+v", c)
		}
		// The old cookie, replayed, is worth nothing.
		s.DoHeaders(t, "GET", "/api/tenants/", w.cookie(), nil).Expect(t, 401)
		s.DoHeaders(t, "GET", "/", w.cookie(), nil).Expect(t, 303)
	})
}

// Signing in always issues a new id: the browser's previous session (or a
// value planted by someone else) is ended, never adopted.
func TestSessionRotation(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		first := signIn(t, s, name, adminPassword)
		r := postLogin(t, s, loginBody(name, adminPassword, "", ""), first.cookie()).Expect(t, 303)
		second := setCookie(r)
		if second == nil || second.Value == first.id {
			t.Fatalf("session id not rotated: %+v", second)
		}
		s.DoHeaders(t, "GET", "/api/tenants/", first.cookie(), nil).Expect(t, 401)
		s.DoHeaders(t, "GET", "/api/tenants/", webSession{id: second.Value}.cookie(), nil).Expect(t, 200)

		planted := webSession{id: "attacker-chosen-session-id-0123456789abcdef"}
		c := setCookie(postLogin(t, s, loginBody(name, adminPassword, "", ""), planted.cookie()).Expect(t, 303))
		if c == nil || c.Value == planted.id {
			t.Fatal("a planted session id was adopted")
		}
		s.DoHeaders(t, "GET", "/api/tenants/", planted.cookie(), nil).Expect(t, 401)
	})
}

// waitSessions waits until the revoker has left n sessions of an
// administrator in Redis.
func waitSessions(t *testing.T, s *apptest.Server, id string, n int64) {
	t.Helper()
	prefix, err := s.Store.KeyPrefix(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	key := prefix + "{websession}:admin:" + id
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.Redis.SCard(t.Context(), key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("administrator %s has %d sessions in Redis, want %d", id, got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Changing an administrator's password ends all of its sessions (the
// change-event subscriber removes them from Redis; requests are refused
// at once); other changes and other administrators' sessions are left.
func TestSessionRevokedOnPasswordChange(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name, other := createAdmin(t, s, "platform_admin", nil), createAdmin(t, s, "platform_admin", nil)
		id := adminID(t, s, name)
		a, b, o := signIn(t, s, name, adminPassword), signIn(t, s, name, adminPassword), signIn(t, s, other, adminPassword)
		waitSessions(t, s, id, 2)

		s.Do(t, "PUT", "/api/administrators/"+id, s.Key, map[string]any{"description": "night shift"}).Expect(t, 200)
		s.DoHeaders(t, "GET", "/api/tenants/", a.cookie(), nil).Expect(t, 200)

		s.Do(t, "PUT", "/api/administrators/"+id, s.Key, map[string]any{"password": "a new long password"}).Expect(t, 200)
		// The subscriber alone (no request has touched them) ends both.
		waitSessions(t, s, id, 0)
		s.DoHeaders(t, "GET", "/api/tenants/", a.cookie(), nil).Expect(t, 401)
		s.DoHeaders(t, "GET", "/api/tenants/", b.cookie(), nil).Expect(t, 401)
		s.DoHeaders(t, "GET", "/api/tenants/", o.cookie(), nil).Expect(t, 200)
		// The new password signs in again.
		signIn(t, s, name, "a new long password")
	})
}

// A session is refused the moment its password changes, before the
// change event arrives: the request compares the password fingerprint.
func TestSessionRefusedAtOnceAfterPasswordChange(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		w := signIn(t, s, name, adminPassword)
		// A platform administrator may change its own password with its session.
		s.DoHeaders(t, "PUT", "/api/administrators/"+adminID(t, s, name), w.headers(), map[string]any{"password": "a new long password"}).Expect(t, 200)
		s.DoHeaders(t, "GET", "/api/tenants/", w.cookie(), nil).Expect(t, 401)
	})
}

// Switching MFA on for a signed-in administrator ends its sessions (they
// were opened without a code); the change subscriber removes them.
func TestSessionRevokedOnMFASwitch(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name := createAdmin(t, s, "platform_admin", nil)
		id := adminID(t, s, name)
		w := signIn(t, s, name, adminPassword)
		s.Do(t, "PUT", "/api/administrators/"+id, s.Key, map[string]any{"mfa_enabled": true}).Expect(t, 200)
		waitSessions(t, s, id, 0)
		s.DoHeaders(t, "GET", "/session", w.cookie(), nil).Expect(t, 401)
	})
}

// Deleting (or disabling) an administrator ends its sessions.
func TestSessionRevokedOnDelete(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		gone, off := createAdmin(t, s, "platform_admin", nil), createAdmin(t, s, "platform_admin", nil)
		goneID, offID := adminID(t, s, gone), adminID(t, s, off)
		g, d := signIn(t, s, gone, adminPassword), signIn(t, s, off, adminPassword)
		s.Do(t, "DELETE", "/api/administrators/"+goneID, s.Key, nil).Expect(t, 204)
		s.Do(t, "PUT", "/api/administrators/"+offID, s.Key, map[string]any{"enabled": false}).Expect(t, 200)
		waitSessions(t, s, goneID, 0)
		waitSessions(t, s, offID, 0)
		s.DoHeaders(t, "GET", "/api/tenants/", g.cookie(), nil).Expect(t, 401)
		s.DoHeaders(t, "GET", "/", d.cookie(), nil).Expect(t, 303)
	})
}

// Writes signed in by cookie need the session's CSRF token: without it,
// or with another's, they are refused and change nothing.
func TestSessionCSRF(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		name, other := createAdmin(t, s, "platform_admin", nil), createAdmin(t, s, "platform_admin", nil)
		w, o := signIn(t, s, name, adminPassword), signIn(t, s, other, adminPassword)
		tenant := "csrf" + strings.ToLower(strings.ReplaceAll(name[len(name)-6:], "-", ""))
		body := map[string]any{"tenant": tenant, "callerid": "+27110000000"}
		for _, h := range []map[string]string{
			w.cookie(),
			{"Cookie": routes.SessionCookie + "=" + w.id, routes.CSRFHeader: "wrong"},
			{"Cookie": routes.SessionCookie + "=" + w.id, routes.CSRFHeader: o.csrf},
		} {
			if r := s.DoHeaders(t, "POST", "/api/tenants/", h, body).Expect(t, 403); r.Code(t) != "csrf_failed" {
				t.Fatalf("code %q", r.Code(t))
			}
		}
		s.Do(t, "GET", "/api/tenants/"+tenant, s.Key, nil).Expect(t, 404)
		s.DoHeaders(t, "POST", "/api/tenants/", w.headers(), body).Expect(t, 201)
		s.DoHeaders(t, "DELETE", "/api/tenants/"+tenant, w.cookie(), nil).Expect(t, 403)
		s.Do(t, "GET", "/api/tenants/"+tenant, s.Key, nil).Expect(t, 200)
		s.DoHeaders(t, "DELETE", "/api/tenants/"+tenant, w.headers(), nil).Expect(t, 204)
		// The menu's forms need it too.
		s.DoHeaders(t, "POST", "/menu/keys", formHeaders(w.cookie()), "name=forged").Expect(t, 403)
		var keys []map[string]any
		s.Do(t, "GET", "/api/key/?limit=1000", s.Key, nil).Expect(t, 200).JSON(t, &keys)
		for _, k := range keys {
			if k["name"] == "forged" {
				t.Fatal("a forged form created a key")
			}
		}
		// An explicit API key beside the cookie is the credential used (no token needed).
		h := w.cookie()
		h["X-API-Key"] = s.Key
		s.DoHeaders(t, "POST", "/api/tenants/", h, map[string]any{"tenant": tenant + "k", "callerid": "+27110000000"}).Expect(t, 201)
	})
}

// A tenant administrator's session acts only in its tenants, like its
// Basic credentials: other tenants' paths are refused, lists and the menu
// show only its own, and it manages no keys.
func TestSessionTenantAdminScope(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		mine, theirs := s.Tenant(t, "mine"), s.Tenant(t, "theirs")
		w := signIn(t, s, createAdmin(t, s, "tenant_admin", []string{mine}), adminPassword)
		s.DoHeaders(t, "GET", "/api/tenants/"+mine+"/extensions/", w.cookie(), nil).Expect(t, 200)
		s.DoHeaders(t, "POST", "/api/tenants/"+mine+"/extensions/", w.headers(), map[string]any{"name": "1001"}).Expect(t, 201)
		s.DoHeaders(t, "GET", "/api/tenants/"+theirs+"/extensions/", w.cookie(), nil).Expect(t, 403)
		s.DoHeaders(t, "GET", "/api/tenants/"+theirs, w.cookie(), nil).Expect(t, 403)
		s.DoHeaders(t, "POST", "/api/tenants/"+theirs+"/extensions/", w.headers(), map[string]any{"name": "1001"}).Expect(t, 403)
		s.Do(t, "GET", "/api/tenants/"+theirs+"/extensions/1001", s.Key, nil).Expect(t, 404)
		s.DoHeaders(t, "GET", "/api/administrators/", w.cookie(), nil).Expect(t, 403)
		s.DoHeaders(t, "GET", "/api/key/", w.cookie(), nil).Expect(t, 403)

		var list []map[string]any
		s.DoHeaders(t, "GET", "/api/tenants/", w.cookie(), nil).Expect(t, 200).JSON(t, &list)
		if len(list) != 1 || list[0]["tenant"] != mine {
			t.Fatalf("tenant list %v", list)
		}
		info := s.DoHeaders(t, "GET", "/session", w.cookie(), nil).Expect(t, 200).Map(t)
		if info["role"] != "tenant_admin" || fmt.Sprint(info["tenants"]) != "["+mine+"]" {
			t.Fatalf("session %v", info)
		}
		menu := string(s.DoHeaders(t, "GET", "/", w.cookie(), nil).Expect(t, 200).Body)
		if !strings.Contains(menu, mine) || strings.Contains(menu, theirs) || strings.Contains(menu, `action="/menu/keys"`) {
			t.Fatalf("menu:\n%s", menu)
		}
		s.DoHeaders(t, "POST", "/menu/keys", formHeaders(w.cookie()), "name=x&csrf_token="+url.QueryEscape(w.csrf)).Expect(t, 403)
	})
}

// A read-only administrator's session reads and never writes.
func TestSessionReadOnly(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "ro")
		w := signIn(t, s, createAdmin(t, s, "read_only", []string{tenant}), adminPassword)
		s.DoHeaders(t, "GET", "/api/tenants/"+tenant+"/extensions/", w.cookie(), nil).Expect(t, 200)
		s.DoHeaders(t, "POST", "/api/tenants/"+tenant+"/extensions/", w.headers(), map[string]any{"name": "1001"}).Expect(t, 403)
	})
}

// The menu creates an API key through the key logic (value shown once,
// only its hash stored) and revokes it. It shows the newest live keys: an
// installation with more keys than the menu lists still finds the one it
// just created (seen: the menu listed the oldest keys, and a new one was
// missing from it once a shared database held more than a page).
func TestMenuAPIKeys(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "menu")
		for i := 0; i < 201; i++ { // more than the menu lists
			if _, err := s.Store.CreateKey(t.Context(), map[string]any{"name": fmt.Sprintf("older %d", i), "tenant": tenant}, "test"); err != nil {
				t.Fatal(err)
			}
		}
		w := signIn(t, s, createAdmin(t, s, "platform_admin", nil), adminPassword)
		if menu := string(s.DoHeaders(t, "GET", "/", w.cookie(), nil).Expect(t, 200).Body); !strings.Contains(menu, "keys shown; <code>GET /api/key/</code> lists them all") {
			t.Fatalf("the menu does not say it shows only some keys:\n%s", menu)
		}
		form := url.Values{"csrf_token": {w.csrf}, "name": {"crm from menu"}, "tenant": {tenant}, "permissions": {"config.read", "calls.read"}}
		r := s.DoHeaders(t, "POST", "/menu/keys", formHeaders(w.cookie()), form.Encode()).Expect(t, 201)
		page := string(r.Body)
		i := strings.Index(page, `<code class="key">`)
		if i < 0 || !strings.Contains(page, "shown only this once") {
			t.Fatalf("no one-time key on the page:\n%s", page)
		}
		value := page[i+len(`<code class="key">`):]
		value = value[:strings.Index(value, "<")]
		// The key works, in its tenant, with the permissions ticked.
		s.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/", value, nil).Expect(t, 200)
		s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", value, map[string]any{"name": "1001"}).Expect(t, 403)
		// Never shown again, nor stored in clear.
		if strings.Contains(string(s.DoHeaders(t, "GET", "/", w.cookie(), nil).Expect(t, 200).Body), value) {
			t.Fatal("the menu shows the key again")
		}
		var stored int
		if err := s.Store.Querier().GetContext(t.Context(), &stored, "SELECT COUNT(*) FROM api_keys WHERE key_hash = ? OR key_prefix = ?", value, value); err != nil {
			t.Fatal(err)
		}
		if stored != 0 {
			t.Fatal("key stored in clear")
		}
		id := strings.TrimPrefix(r.Header.Get("Location"), "/api/key/")
		if !strings.Contains(page, `action="/menu/keys/`+id+`/revoke"`) {
			t.Fatalf("no revoke button for key %s", id)
		}
		// A bad form answers the menu with the reason; nothing is created.
		bad := s.DoHeaders(t, "POST", "/menu/keys", formHeaders(w.cookie()), url.Values{"csrf_token": {w.csrf}, "name": {"x"}, "extension": {"1001"}}.Encode()).Expect(t, 400)
		if !strings.Contains(string(bad.Body), "The key was not created") {
			t.Fatalf("bad form:\n%s", bad.Body)
		}
		s.DoHeaders(t, "POST", "/menu/keys/"+id+"/revoke", formHeaders(w.cookie()), "").Expect(t, 403)
		rv := s.DoHeaders(t, "POST", "/menu/keys/"+id+"/revoke", formHeaders(w.cookie()), "csrf_token="+url.QueryEscape(w.csrf)).Expect(t, 303)
		if rv.Header.Get("Location") != "/#keys" {
			t.Fatalf("Location %q", rv.Header.Get("Location"))
		}
		s.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/", value, nil).Expect(t, 401)
	})
}

// Every HTML page carries a CSP without inline script that forbids
// framing, X-Frame-Options, nosniff and a Referrer-Policy.
func TestPageSecurityHeaders(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		w := signIn(t, s, createAdmin(t, s, "platform_admin", nil), adminPassword)
		for _, r := range []*apptest.Response{
			s.DoHeaders(t, "GET", "/login", nil, nil).Expect(t, 200),
			postLogin(t, s, loginBody("nobody", "wrong password!!", "", ""), nil).Expect(t, 401),
			s.DoHeaders(t, "GET", "/", w.cookie(), nil).Expect(t, 200),
		} {
			csp := r.Header.Get("Content-Security-Policy")
			script := ""
			for _, d := range strings.Split(csp, ";") {
				if f := strings.Fields(d); len(f) > 0 && (f[0] == "script-src" || (script == "" && f[0] == "default-src")) {
					script = d
				}
			}
			if script == "" || strings.Contains(script, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Fatalf("CSP %q", csp)
			}
			if r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Referrer-Policy") == "" {
				t.Fatalf("headers %v", r.Header)
			}
			if strings.Contains(string(r.Body), "<script") || strings.Contains(string(r.Body), " style=") {
				t.Fatal("inline script or style on a page")
			}
		}
		css := s.DoHeaders(t, "GET", "/static/web.css", nil, nil).Expect(t, 200)
		if !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") || css.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("css headers %v", css.Header)
		}
		if r := s.Do(t, "GET", "/api/tenants/", s.Key, nil).Expect(t, 200); r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatal("API answers lack nosniff")
		}
	})
}
