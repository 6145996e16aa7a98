package routes

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/web/websession"
	"github.com/switchboard/switchboard/internal/web/webui"
)

// The configuration manager's pages: server-rendered (html/template,
// embedded), no script, a stylesheet of their own, usable on a phone.

// Default session expiry when Deps.Sessions is not given.
const (
	DefaultSessionIdle = 30 * time.Minute
	DefaultSessionMax  = 12 * time.Hour
)

// The templates and stylesheet live in webui (webui.Pages, webui.PagesCSS).
var (
	pages    = webui.Pages
	webCSS   = webui.PagesCSS
	manageJS = webui.ManageJS
)

// pageCSP is the policy of every HTML page that sets none of its own: no
// inline script, nothing from elsewhere, never framed.
const pageCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// securityHeaders runs on every request: no content sniffing and no
// referrer beyond this site everywhere; on HTML pages a CSP (a page's own
// policy is kept, with frame-ancestors 'none' added when it lacks one) and
// X-Frame-Options for browsers that ignore frame-ancestors.
func securityHeaders(c *fiber.Ctx) error {
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	// same-origin, not no-referrer: with no-referrer browsers post forms
	// with "Origin: null", which formGuard would refuse.
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	err := c.Next()
	h := &c.Response().Header
	if bytes.HasPrefix(h.ContentType(), []byte(fiber.MIMETextHTML)) {
		switch csp := string(h.Peek(fiber.HeaderContentSecurityPolicy)); {
		case csp == "":
			c.Set(fiber.HeaderContentSecurityPolicy, pageCSP)
		case !strings.Contains(csp, "frame-ancestors"):
			c.Set(fiber.HeaderContentSecurityPolicy, csp+"; frame-ancestors 'none'")
		}
		c.Set(fiber.HeaderXFrameOptions, "DENY")
	}
	return err
}

// webRoutes are the login, the session and the menu.
func (s *server) webRoutes() []Route {
	form, html := fiber.MIMEApplicationForm, fiber.MIMETextHTML
	self := Access{Scope: ScopeSelf}
	return []Route{
		{Method: "GET", Path: "/static/web.css", Summary: "The configuration manager's stylesheet", Tag: "web", Produces: "text/css", Handler: func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, "text/css; charset=utf-8")
			c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
			return c.Send(webCSS)
		}},
		{Method: "GET", Path: "/login", Summary: "The administrators' sign-in form", Tag: "web", Produces: html, Query: []string{"next"}, Handler: s.loginForm},
		{Method: "POST", Path: "/login", Summary: "Sign in (username, password, totp when MFA is on): sets the session cookie and goes to next (default /)",
			Tag: "web", Consumes: form, Request: "LoginForm", Produces: html, Status: fiber.StatusSeeOther, HTMLAnswers: []int{401, 403, 429}, Handler: s.login},
		{Method: "POST", Path: "/logout", Summary: "End the session", Tag: "web", Auth: AuthPage, Access: self,
			Consumes: form, Request: "CSRFForm", Produces: html, Status: fiber.StatusSeeOther, Handler: s.logout},
		{Method: "GET", Path: "/session", Summary: "The signed-in administrator, its scope and the CSRF token for unsafe requests",
			Tag: "web", Auth: AuthSession, Access: self, Response: "Session", Handler: s.sessionInfo},
		{Method: "GET", Path: "/", Summary: "The configuration manager's menu", Tag: "web", Auth: AuthPage, Access: Access{Scope: ScopeVisible}, Produces: html, Handler: s.menu},
		{Method: "POST", Path: "/menu/keys", Summary: "Create an API key from the menu (its value shown once on the answered page)", Tag: "web",
			Auth: AuthPage, Access: keysAccess, Consumes: form, Request: "KeyForm", Produces: html, Status: fiber.StatusCreated, HTMLAnswers: []int{400}, Handler: s.menuCreateKey},
		{Method: "POST", Path: "/menu/keys/:id/revoke", Summary: "Revoke an API key from the menu", Tag: "web",
			Auth: AuthPage, Access: keysAccess, Consumes: form, Request: "CSRFForm", Produces: html, Status: fiber.StatusSeeOther, Handler: s.menuRevokeKey},
	}
}

// webSchemas are the shapes of the web routes.
var webSchemas = obj{
	"LoginForm": obj{"type": "object", "required": []string{"username", "password"}, "properties": obj{
		"username": obj{"type": "string"}, "password": obj{"type": "string"},
		"totp": obj{"type": "string", "description": "the authenticator's current code, when the administrator enabled MFA"},
		"next": obj{"type": "string", "description": "a path on this server to go to after signing in"},
	}},
	"CSRFForm": obj{"type": "object", "required": []string{csrfField}, "properties": obj{
		csrfField: obj{"type": "string", "description": "the session's CSRF token (or send it in " + CSRFHeader + ")"},
	}},
	"KeyForm": obj{"type": "object", "required": []string{csrfField, "name"}, "properties": obj{
		csrfField: obj{"type": "string"}, "name": obj{"type": "string"},
		"tenant": obj{"type": "string"}, "extension": obj{"type": "string"},
		"permissions": obj{"oneOf": []obj{{"type": "string"}, {"type": "array", "items": obj{"type": "string"}}}},
	}},
	"Session": obj{"type": "object", "required": []string{"admin", "role", "tenants", "csrf_token", "expires_at", "idle_timeout_seconds"}, "properties": obj{
		"admin": obj{"type": "string", "description": "the administrator's username"},
		"role":  obj{"type": "string", "enum": []string{"platform_admin", "reseller_admin", "tenant_admin", "read_only"}},
		"tenants": obj{"type": []string{"array", "null"}, "items": obj{"type": "string"},
			"description": "the tenants it may act in; null: every tenant (platform_admin)"},
		"csrf_token":           obj{"type": "string", "description": "send it in " + CSRFHeader + " with every POST, PUT, PATCH and DELETE"},
		"expires_at":           obj{"type": "string", "format": "date-time", "description": "the absolute end of the session"},
		"idle_timeout_seconds": obj{"type": "integer", "description": "the session ends after this long without a request"},
	}},
}

// page is what every template gets.
type page struct {
	Title, Admin, Role, CSRF, Error string
}

// render answers a page.
func render(c *fiber.Ctx, status int, name string, data any) error {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store") // CSRF tokens and one-time secrets
	return c.Status(status).Send(buf.Bytes())
}

type loginView struct {
	page
	Username, Next string
}

func (s *server) loginForm(c *fiber.Ctx) error {
	return render(c, fiber.StatusOK, "login.html", loginView{page: page{Title: "Sign in"}, Next: afterLogin(c.Query("next"))})
}

// afterLogin is where a signed-in browser goes: a path on this server, or the menu.
func afterLogin(next string) string {
	if !localPath(next) {
		return "/"
	}
	return next
}

// login checks the form like a Basic request (the same failed-
// authentication limit per address, the same password and TOTP checks),
// then starts a new session: a session id the browser had before is ended
// (rotation), never adopted.
func (s *server) login(c *fiber.Ctx) error {
	ctx := c.UserContext()
	view := loginView{page: page{Title: "Sign in"}, Username: c.FormValue("username"), Next: afterLogin(c.FormValue("next"))}
	refuse := func(status int, msg string) error {
		view.Error = msg
		return render(c, status, "login.html", view)
	}
	addr := c.IP()
	if retry, blocked := s.auth.limit.authBlocked(ctx, addr); blocked {
		return refuse(s.retryLater(c, retry))
	}
	if retry, blocked := s.auth.limit.accountBlocked(ctx, view.Username, addr); blocked {
		_ = tooMany(c, retry, "") // sets Retry-After
		return refuse(fiber.StatusTooManyRequests, fmt.Sprintf("Too many failed sign-ins to this account: from an address it has not signed in from, try again in %s.", retry.Round(time.Second)))
	}
	adm, p, err := s.auth.checkAdmin(ctx, view.Username, c.FormValue("password"), c.FormValue("totp"), loginAttempt{Addr: addr, Via: "web_login"})
	if errors.Is(err, errUnauthorized) || errors.Is(err, errMFARequired) {
		s.auth.limit.accountFailed(ctx, view.Username)
		if retry, blocked := s.auth.limit.authFailed(ctx, addr); blocked {
			return refuse(s.retryLater(c, retry))
		}
		if errors.Is(err, errMFARequired) {
			return refuse(fiber.StatusUnauthorized, "Enter the current code of your authenticator app.")
		}
		return refuse(fiber.StatusUnauthorized, "Wrong username or password.")
	}
	if err != nil {
		return err
	}
	if p.mfaEnrolOnly {
		return refuse(fiber.StatusForbidden, "Two-factor authentication is switched on for you but no authenticator is enrolled: enrol one first (POST /api/mfa with your password, see the README).")
	}
	if p.totpStep != 0 {
		// A code signs in once: the same one again (from anywhere) is refused.
		if ok, err := s.auth.totp.use(ctx, adm.ID, p.totpStep); err != nil {
			return err
		} else if !ok {
			if retry, blocked := s.auth.limit.authFailed(ctx, addr); blocked {
				return refuse(s.retryLater(c, retry))
			}
			return refuse(fiber.StatusUnauthorized, "This code was already used: enter the next code of your authenticator app.")
		}
	}
	if old := c.Cookies(SessionCookie); old != "" {
		if err := s.auth.sessions.Delete(ctx, old); err != nil {
			return err
		}
	}
	id, _, err := s.auth.sessions.Create(ctx, adm.ID, websession.Fingerprint(adm.PasswordHash))
	if err != nil {
		return err
	}
	s.sessionCookie(c, id)
	s.auth.limit.accountSucceeded(ctx, view.Username, addr)
	logger(c).Info("administrator signed in", "admin", adm.Username)
	return c.Redirect(view.Next, fiber.StatusSeeOther)
}

// retryLater sets Retry-After and words the refusal of a blocked address.
func (s *server) retryLater(c *fiber.Ctx, retry time.Duration) (int, string) {
	_ = tooMany(c, retry, "") // sets Retry-After
	return fiber.StatusTooManyRequests, fmt.Sprintf("Too many failed sign-ins from this address: try again in %s.", retry.Round(time.Second))
}

func (s *server) logout(c *fiber.Ctx) error {
	if err := s.auth.sessions.End(c.UserContext(), principal(c).session); err != nil {
		return err
	}
	s.sessionCookie(c, "")
	return c.Redirect("/login", fiber.StatusSeeOther)
}

func (s *server) sessionInfo(c *fiber.Ctx) error {
	p := principal(c)
	var tenants any // null: every tenant
	if p.Tenants != nil {
		tenants = p.Tenants
	}
	return c.JSON(fiber.Map{
		"admin": p.username, "role": p.role, "tenants": tenants, "csrf_token": p.session.CSRF,
		"expires_at":           p.session.Created.Add(s.auth.sessions.Absolute).UTC().Format(time.RFC3339),
		"idle_timeout_seconds": int(s.auth.sessions.Idle.Seconds()),
	})
}
