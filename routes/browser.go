package routes

import (
	"mime"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// guarded reports whether a route needs browserGuard: state-changing
// methods, except where the clients are not browsers: FreeSWITCH
// (form-encoded mod_xml_curl posts) and integration callbacks.
func guarded(r Route) bool {
	switch r.Method {
	case fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch, fiber.MethodDelete:
		return r.Path != "/fs/xml" && !strings.HasPrefix(r.Path, "/integration/")
	}
	return false
}

// browserGuard keeps other web sites from using a browser's cached Basic
// credentials (CSRF): a state-changing request must carry a JSON body
// (which a cross-site form or a "simple" fetch cannot send without a CORS
// preflight Switchboard never grants) and must not come from a foreign
// Origin. It runs on the routes guarded selects, before authentication.
func browserGuard(baseURL string) fiber.Handler {
	self := origin(baseURL)
	return func(c *fiber.Ctx) error {
		if o := c.Get(fiber.HeaderOrigin); o != "" && !strings.EqualFold(o, self) {
			return newError(fiber.StatusForbidden, "forbidden_origin", "requests from "+o+" are not accepted")
		}
		if c.Method() == fiber.MethodDelete && len(c.Body()) == 0 && c.Get(fiber.HeaderContentType) == "" {
			return c.Next()
		}
		if mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType)); err != nil || mt != fiber.MIMEApplicationJSON {
			return newError(fiber.StatusUnsupportedMediaType, "unsupported_media_type", "send the body as application/json")
		}
		return c.Next()
	}
}

// origin is the scheme://host[:port] of a URL, as browsers send it.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
