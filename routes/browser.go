package routes

import (
	"mime"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// browserGuard keeps other web sites from using a browser's cached Basic
// credentials (CSRF): a state-changing request must carry a JSON body
// (which a cross-site form or a "simple" fetch cannot send without a CORS
// preflight Switchboard never grants) and must not come from a foreign
// Origin. FreeSWITCH's form posts and integration callbacks, which carry
// their own credentials, are exempt.
func browserGuard(baseURL string) fiber.Handler {
	self := origin(baseURL)
	return func(c *fiber.Ctx) error {
		switch c.Method() {
		case fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch, fiber.MethodDelete:
		default:
			return c.Next()
		}
		if guardExempt(c.Path()) {
			return c.Next()
		}
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

// guardExempt names the paths whose clients are not browsers: FreeSWITCH
// (form-encoded mod_xml_curl posts) and integration callbacks.
func guardExempt(path string) bool {
	return path == "/fs/xml" || strings.HasPrefix(path, "/integration/")
}

// origin is the scheme://host[:port] of a URL, as browsers send it.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
