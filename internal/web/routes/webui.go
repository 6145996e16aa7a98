package routes

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/web/webui"
)

// The configuration manager's browser pages that are not forms: the
// interactive API reference and the live-calls dashboard, with their
// embedded scripts, style and the vendored Swagger UI (package webui).
func (s *server) webUIRoutes() []Route {
	return []Route{
		{Method: "GET", Path: "/apitest/openapi/", Summary: "Interactive API reference (Swagger UI): tenant selector, test requests with the configuration-manager session", Tag: "web", Produces: "text/html", Handler: s.apiReference},
		{Method: "GET", Path: "/dashboard/calls", Summary: "Live-calls dashboard of the configuration-manager session's tenants", Tag: "web", Auth: AuthPage, Access: Access{Perm: "calls.read", Scope: ScopeVisible}, Produces: "text/html", Handler: s.callsDashboard},
		{Method: "GET", Path: "/assets/*", Wildcard: "file", Summary: "Scripts and styles of the web pages (embedded; Swagger UI vendored)", Tag: "web", Produces: "text/javascript, text/css", Handler: serveAsset},
	}
}

// pageSecurityPolicy allows the pages' own embedded scripts only (no
// inline script, nothing from elsewhere). Swagger UI's React components
// set style attributes, hence inline styles; its icons are data: images.
const pageSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func sendHTML(c *fiber.Ctx, name string, p webui.Page) error {
	body, err := webui.Render(name, p)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Content-Security-Policy", pageSecurityPolicy)
	return c.Send(body)
}

// apiReference serves the reference to everyone (the document is public);
// with a session it can send test requests, without one it offers the
// login.
func (s *server) apiReference(c *fiber.Ctx) error {
	p, err := s.optionalSession(c)
	if err != nil {
		return err
	}
	return sendHTML(c, "apiref.html", p)
}

// callsDashboard is an AuthPage: pageAuth sent visitors without a session
// to the login. What it shows is decided by the API its script calls
// (channels and the event stream), under the session's declared access.
func (s *server) callsDashboard(c *fiber.Ctx) error {
	return sendHTML(c, "dashboard.html", sessionPage(principal(c)))
}

// serveAsset answers /assets/<file> from the embedded files. The Swagger
// UI files are versioned in their path and cached for good; the pages' own
// files are revalidated on every load.
func serveAsset(c *fiber.Ctx) error {
	name := strings.Clone(c.Params("*"))
	a, ok := webui.Lookup(name)
	if !ok {
		return newError(fiber.StatusNotFound, "not_found", "no asset "+name)
	}
	c.Set(fiber.HeaderContentType, a.ContentType)
	c.Set(fiber.HeaderETag, a.ETag)
	c.Set("X-Content-Type-Options", "nosniff")
	if strings.HasPrefix(name, "swagger-ui-") {
		c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	} else {
		c.Set(fiber.HeaderCacheControl, "no-cache")
	}
	return c.Send(a.Body)
}
