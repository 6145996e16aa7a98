package routes

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/web/websession"
)

// Browser sessions of administrators. POST /login checks the password (and
// the TOTP code when the administrator enabled MFA) like Basic does, then
// keeps a server-side session in Redis behind an HttpOnly, SameSite=Lax
// cookie (Secure unless the base URL is plain http on loopback). The session
// is an administrator principal: every request reloads the administrator,
// so it has exactly the role and tenants its Basic credentials would have,
// checked by the same authorize middleware. Unsafe requests must echo the
// session's synchronizer CSRF token (X-CSRF-Token, or the csrf_token form
// field on the server-rendered pages).

const (
	// SessionCookie carries the session id.
	SessionCookie = "sb_session"
	// CSRFHeader carries the session's CSRF token on unsafe API requests.
	CSRFHeader = "X-CSRF-Token"
	// csrfField carries it in the pages' forms.
	csrfField = "csrf_token"
)

var (
	errNoSession = newError(fiber.StatusUnauthorized, "unauthorized", "no session, or it expired or was ended: sign in at /login")
	errCSRF      = newError(fiber.StatusForbidden, "csrf_failed",
		"a request signed in by session cookie that changes something needs the session's token in the "+CSRFHeader+" header (GET /session answers it)")
)

// csrfSource says where a route reads the CSRF token from.
type csrfSource int

const (
	checkCSRFHeader csrfSource = iota // API: the header only
	checkCSRFForm                     // pages: the header or the form field
)

// unsafeMethod reports whether a method may change state (and so needs the
// CSRF token).
func unsafeMethod(m string) bool {
	switch m {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return false
	}
	return true
}

// bySession resolves a session id to its administrator's principal;
// errNoSession when the session is missing, expired, or its administrator
// was deleted, disabled or changed its password since sign-in.
func (a *authenticator) bySession(ctx context.Context, id string) (*Principal, error) {
	if id == "" {
		return nil, errNoSession
	}
	sess, err := a.sessions.Get(ctx, id)
	if errors.Is(err, websession.ErrNoSession) {
		return nil, errNoSession
	}
	if err != nil {
		return nil, err
	}
	adm, err := a.store.AdminByID(ctx, sess.AdminID)
	if err == nil && websession.Fingerprint(adm.PasswordHash) != sess.Password {
		err = models.ErrNotFound
	}
	if errors.Is(err, models.ErrNotFound) {
		// Also ended by the revoker when the change event arrives; ending
		// it here makes the refusal immediate on every replica.
		_ = a.sessions.End(ctx, sess)
		return nil, errNoSession
	}
	if err != nil {
		return nil, err
	}
	p, _, err := a.adminPrincipal(adm)
	if err != nil {
		return nil, err
	}
	p.session = sess
	p.signedIn = func(ctx context.Context) error { return a.stillSignedIn(ctx, sess) }
	return p, nil
}

// stillSignedIn checks a session again without marking it used: it was
// not ended (sign-out, revocation) and has not expired, and its
// administrator still exists, is enabled and has the password it signed
// in with.
func (a *authenticator) stillSignedIn(ctx context.Context, sess *websession.Session) error {
	err := a.sessions.Alive(ctx, sess)
	if errors.Is(err, websession.ErrNoSession) {
		return errNoSession
	}
	if err != nil {
		return err
	}
	adm, err := a.store.AdminByID(ctx, sess.AdminID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && websession.Fingerprint(adm.PasswordHash) != sess.Password) {
		return errNoSession
	}
	return err
}

// csrfValid reports whether the request echoes the session's token.
func csrfValid(c *fiber.Ctx, sess *websession.Session, from csrfSource) bool {
	token := c.Get(CSRFHeader)
	if token == "" && from == checkCSRFForm {
		token = c.FormValue(csrfField)
	}
	return token != "" && constantTimeEqual(token, sess.CSRF)
}

// sessionRequest authenticates a request by its session cookie.
func (a *authenticator) sessionRequest(c *fiber.Ctx, id string, from csrfSource) error {
	p, err := a.bySession(c.UserContext(), id)
	if err != nil {
		return err
	}
	return a.admitSession(c, p, from)
}

// admitSession checks a session principal's CSRF token (unsafe methods)
// and request rate, then runs the route.
func (a *authenticator) admitSession(c *fiber.Ctx, p *Principal, from csrfSource) error {
	ctx := c.UserContext()
	if unsafeMethod(c.Method()) && !csrfValid(c, p.session, from) {
		return errCSRF
	}
	if retry, ok := a.limit.request(ctx, p.limitID()); !ok {
		return tooMany(c, retry, "requests with this credential")
	}
	c.Locals(principalKey, p)
	return c.Next()
}

// sessionOnly authenticates AuthSession routes: the session cookie, 401
// without one.
func (a *authenticator) sessionOnly() fiber.Handler {
	return func(c *fiber.Ctx) error {
		return a.sessionRequest(c, c.Cookies(SessionCookie), checkCSRFHeader)
	}
}

// keyOrSession authenticates AuthKeyOrSession routes: the session cookie
// when the request names no other credential, else an API key only. The
// session may act where Basic may not because the browser sends its
// cookie only same-site (SameSite=Lax) and a write needs the CSRF token
// another site cannot read; cached Basic credentials have neither guard.
func (a *authenticator) keyOrSession() fiber.Handler {
	keyOnly := a.middleware(false)
	return func(c *fiber.Ctx) error {
		if c.Get("X-API-Key") == "" && c.Get(fiber.HeaderAuthorization) == "" {
			if id := c.Cookies(SessionCookie); id != "" {
				return a.sessionRequest(c, id, checkCSRFHeader)
			}
		}
		return keyOnly(c)
	}
}

// pageAuth authenticates AuthPage routes: without a live session the
// browser is sent to the login page (and back here afterwards).
func (a *authenticator) pageAuth() fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, err := a.bySession(c.UserContext(), c.Cookies(SessionCookie))
		if errors.Is(err, errNoSession) {
			next := ""
			if c.Method() == fiber.MethodGet {
				next = string(c.Request().URI().RequestURI())
			}
			return c.Redirect(loginURL(next), fiber.StatusSeeOther)
		}
		if err != nil {
			return err
		}
		return a.admitSession(c, p, checkCSRFForm)
	}
}

// loginURL is the login page that returns to next afterwards.
func loginURL(next string) string {
	if !localPath(next) || next == "/" {
		return "/login"
	}
	return "/login?next=" + url.QueryEscape(next)
}

// localPath accepts only an absolute path on this server as a place to
// return to after login: no open redirect. Browsers drop tabs and newlines
// from a Location and read a backslash as a slash ("/\t/evil.example" and
// "/\\evil.example" are //evil.example to them), so any control character,
// space, backslash or non-ASCII character refuses it (a genuine request URI
// has them percent-encoded), as do //host and a scheme.
func localPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return false
		}
	}
	u, err := url.Parse(p)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil && u.Opaque == "" &&
		strings.HasPrefix(u.Path, "/") && !strings.HasPrefix(u.Path, "//")
}

// secureCookies reports whether session cookies carry Secure: always,
// unless the base URL is plain http on a loopback host (development),
// where a browser would drop a Secure cookie.
func secureCookies(baseURL string) bool {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "http" {
		return true
	}
	host := u.Hostname()
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// sessionCookie sets (value != "") or clears the session cookie.
func (s *server) sessionCookie(c *fiber.Ctx, value string) {
	ck := &fiber.Cookie{Name: SessionCookie, Value: value, Path: "/", HTTPOnly: true,
		Secure: secureCookies(s.BaseURL), SameSite: fiber.CookieSameSiteLaxMode}
	if value == "" {
		ck.Expires = time.Unix(1, 0) // in the past: the browser drops it
	} else {
		ck.MaxAge = int(s.auth.sessions.Absolute.Seconds())
	}
	c.Cookie(ck)
}
