package routes

import (
	"mime"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// guarded reports whether a route needs browserGuard: state-changing
// methods, except where the clients are not browsers: FreeSWITCH
// (form-encoded mod_xml_curl posts) and integration callbacks.
func guarded(r Route) bool {
	switch r.Method {
	case fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch, fiber.MethodDelete:
		// Click-to-call widgets are posted from other sites by design: they
		// check the Origin against the widget's own allow-list.
		return r.Path != "/fs/xml" && !strings.HasPrefix(r.Path, "/integration/") && !strings.HasPrefix(r.Path, "/widgets/") && !browserForm(r)
	}
	return false
}

// browserForm reports whether a route is an HTML form post of the
// configuration manager's pages (login, logout, API keys): formGuard
// instead of browserGuard, and the CSRF token in the form.
func browserForm(r Route) bool {
	return r.Method == fiber.MethodPost && r.Consumes == fiber.MIMEApplicationForm && strings.HasPrefix(r.Produces, fiber.MIMETextHTML)
}

// formGuard is browserGuard for the pages' forms: the body is a form, and
// a foreign Origin (or a cross-site fetch) is refused, so another site can
// neither post the login form (login CSRF) nor the others (which need the
// session's CSRF token besides).
func formGuard(baseURL string) fiber.Handler {
	self := origin(baseURL)
	return func(c *fiber.Ctx) error {
		if o := c.Get(fiber.HeaderOrigin); (o != "" && !strings.EqualFold(o, self)) || c.Get("Sec-Fetch-Site") == "cross-site" {
			return newError(fiber.StatusForbidden, "forbidden_origin", "forms posted from another site are not accepted")
		}
		if mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType)); err != nil || mt != fiber.MIMEApplicationForm {
			return newError(fiber.StatusUnsupportedMediaType, "unsupported_media_type", "send the form as application/x-www-form-urlencoded")
		}
		return c.Next()
	}
}

// browserGuard keeps other web sites from using a browser's cached Basic
// credentials (CSRF): a state-changing request must carry a JSON body
// (which a cross-site form or a "simple" fetch cannot send without a CORS
// preflight Switchboard never grants) and must not come from a foreign
// Origin. It runs on the routes guarded selects, before authentication.
//
// A route may declare other body types (Consumes): types a form cannot send
// without a preflight (text/csv, application/x-ndjson) are taken as they
// are; multipart/form-data, which a cross-site form can send, only with an
// X-API-Key header, which no form can set.
func browserGuard(baseURL string, r Route) fiber.Handler {
	self := origin(baseURL)
	accepted := []string{fiber.MIMEApplicationJSON}
	for _, ct := range strings.Split(r.Consumes, ",") {
		if ct = strings.TrimSpace(ct); ct != "" {
			accepted = append(accepted, ct)
		}
	}
	return func(c *fiber.Ctx) error {
		if o := c.Get(fiber.HeaderOrigin); o != "" && !strings.EqualFold(o, self) {
			return newError(fiber.StatusForbidden, "forbidden_origin", "requests from "+o+" are not accepted")
		}
		if c.Method() == fiber.MethodDelete && len(c.Body()) == 0 && c.Get(fiber.HeaderContentType) == "" {
			return c.Next()
		}
		mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
		if err != nil || !slices.Contains(accepted, mt) {
			return newError(fiber.StatusUnsupportedMediaType, "unsupported_media_type", "send the body as "+strings.Join(accepted, " or "))
		}
		if mt == fiber.MIMEMultipartForm && c.Get("X-API-Key") == "" {
			return newError(fiber.StatusForbidden, "forbidden", "multipart uploads need an X-API-Key header")
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
