package routes

import (
	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/web/webui"
)

// sessionPage describes a signed-in administrator to a page's scripts:
// who it is, whether it sees every tenant, and the CSRF token they send
// with every write.
func sessionPage(p *Principal) webui.Page {
	return webui.Page{SignedIn: true, User: p.username, Platform: p.Platform(),
		CSRFHeader: CSRFHeader, CSRFToken: p.session.CSRF}
}

// optionalSession describes the visitor of a public page: signed in when
// its session cookie names a live session, else offered the login.
func (s *server) optionalSession(c *fiber.Ctx) (webui.Page, error) {
	anonymous := webui.Page{LoginURL: loginURL(string(c.Request().URI().RequestURI()))}
	id := c.Cookies(SessionCookie)
	if id == "" {
		return anonymous, nil
	}
	p, err := s.auth.bySession(c.UserContext(), id)
	switch {
	case err == errNoSession:
		return anonymous, nil
	case err != nil:
		return anonymous, err
	}
	return sessionPage(p), nil
}
